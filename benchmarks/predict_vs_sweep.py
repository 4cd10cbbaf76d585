"""How often `predict` agrees with a sweep on the profile's emulated device, per footprint source.

    python benchmarks/predict_vs_sweep.py                          # ~40 ops x 4 dtypes, ascend-a2
    python benchmarks/predict_vs_sweep.py --opinfo --jobs 2        # all of op_db
    python benchmarks/predict_vs_sweep.py --profile p.yaml --dtypes float32,float64

One run: a sweep of the ops on ``emu:<profile>`` into a temporary folder
(``app.sweep.sweep``, as ``torchparity sweep`` runs it), then ``app.predict.predict`` of
the same ops for the same profile three times, with ``trace="cpu"`` without the vendor's
registered-op list (the dispatch-mode footprint on the CPU) and with it (the footprint the
vendor's device receives), and ``trace="emulated"`` (the ops reaching ``emu:allow-all``
after decomposition), each held against the sweep rows (``against_sweep``: the same (api,
variant, dtype), all / some / none samples supported). Prints each agreement rate, the
disagreement counts and a few disagreements of each source, and the time each took.

The default op list mixes single-kernel ops with composites whose kernels decompose on a
device without their own kernel (allclose, isclose, new_full, cdist, normalize, ...),
where the two sources are expected to differ.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

DEFAULT_DTYPES = "float32,float16,bfloat16,float64"
DEFAULT_OPS = [
    # composites (CompositeExplicit / CompositeImplicit kernels)
    "torch.allclose", "torch.isclose", "torch.Tensor.new_full", "torch.Tensor.new_zeros",
    "torch.nn.functional.normalize", "torch.cdist", "torch.linalg.vector_norm", "torch.norm",
    "torch.dist", "torch.addmm", "torch.addmv", "torch.baddbmm", "torch.nn.functional.linear",
    "torch.nn.functional.softmax", "torch.nn.functional.log_softmax", "torch.logsumexp",
    "torch.var", "torch.std", "torch.nn.functional.layer_norm", "torch.nn.functional.gelu",
    "torch.nn.functional.silu", "torch.nn.functional.mse_loss", "torch.repeat_interleave",
    "torch.Tensor.repeat", "torch.index_put", "torch.trace", "torch.kron", "torch.inner",
    "torch.outer", "torch.einsum", "torch.cumsum", "torch.clamp",
    # single kernels
    "torch.mm", "torch.bmm", "torch.matmul", "torch.dot", "torch.mv", "torch.nn.functional.relu",
    "torch.sum", "torch.mean", "torch.add", "torch.mul", "torch.exp", "torch.sort",
]


def _examples(conf, n: int) -> None:
    """Up to ``n`` disagreements, one per API first."""
    seen, first, rest = set(), [], []
    for d in conf.disagreements:
        (rest if d["api"] in seen else first).append(d)
        seen.add(d["api"])
    for d in (first + rest)[:n]:
        print(f"    {d['api']} [{d['variant']}] {d['dtype']}: predicted {d['predicted']} "
              f"({d['predicted_reason'][:110]}); observed {d['observed']} "
              f"({d['observed_cause']}: {(d['observed_detail'] or '')[:90]})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="ascend-a2", help="shipped profile name or YAML file")
    ap.add_argument("--dtypes", default=DEFAULT_DTYPES)
    ap.add_argument("--ops", default=None, help="comma-separated API names (default: a fixed list)")
    ap.add_argument("--opinfo", action="store_true", help="every op_db entry instead of the list")
    ap.add_argument("--jobs", type=int, default=None, help="workers (default: one per core)")
    ap.add_argument("--max-samples", type=int, default=None)
    ap.add_argument("--examples", type=int, default=8, help="disagreements shown per source")
    ap.add_argument("--out", default=None, help="keep the sweep's output here")
    opts = ap.parse_args()
    warnings.simplefilter("ignore")

    from torchparity.app.predict import against_sweep, predict
    from torchparity.app.sweep import default_jobs, sweep
    from torchparity.scenarios import opinfo as oi

    dtypes = [d.strip() for d in opts.dtypes.split(",") if d.strip()]
    if opts.opinfo:
        names = oi.all_opinfo_apis()
    elif opts.ops:
        names = [n.strip() for n in opts.ops.split(",") if n.strip()]
    else:
        names = [n for n in DEFAULT_OPS if oi.opinfo_for(n, include_refs=False)]
        missing = [n for n in DEFAULT_OPS if n not in names]
        if missing:
            print(f"not in this torch's op_db (left out): {', '.join(missing)}")
    jobs = opts.jobs or default_jobs()
    out = opts.out or tempfile.mkdtemp(prefix="tp-predict-")
    device = f"emu:{opts.profile}"
    print(f"APIs: {len(names)}, dtypes: {', '.join(dtypes)}, profile {opts.profile}, "
          f"jobs {jobs}, cores {default_jobs()}")

    t = time.perf_counter()
    if opts.opinfo:
        summary = sweep(out=out, device=device, catalogue=True, dtypes=dtypes, jobs=jobs,
                        max_samples=opts.max_samples, write_matrix=False)
    else:
        summary = sweep(out=out, device=device, apis=names, dtypes=dtypes, jobs=jobs,
                        max_samples=opts.max_samples, write_matrix=False)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.totals.items()))
    print(f"sweep on {device}: {time.perf_counter() - t:.1f} s, {summary.planned} cases "
          f"({counts}); output in {out}")

    results = {}
    for trace, registered in (("cpu", False), ("cpu", None), ("emulated", None)):
        t = time.perf_counter()
        preds = predict(names, opts.profile, dtypes=dtypes, trace=trace, jobs=jobs,
                        max_samples=opts.max_samples, registered=registered)
        seconds = time.perf_counter() - t
        conf = against_sweep(preds, out)
        label = "cpu, no vendor op list" if registered is False else trace
        results[label] = conf
        rate = f"{conf.rate:.1%}" if conf.rate is not None else "n/a"
        print(f"predict --trace {label}: {seconds:.1f} s, {len(preds)} predictions; agree "
              f"{conf.agree} of {conf.compared} ({rate}), disagree {len(conf.disagreements)}, "
              f"not comparable {conf.not_compared}")
        _examples(conf, opts.examples)

    cpu, emu = results["cpu"], results["emulated"]
    key = ("api", "variant", "dtype")
    cpu_bad = {tuple(d[k] for k in key) for d in cpu.disagreements}
    emu_bad = {tuple(d[k] for k in key) for d in emu.disagreements}
    print(f"fixed by --trace emulated: {len(cpu_bad - emu_bad)}; new with it: "
          f"{len(emu_bad - cpu_bad)}; disagree either way: {len(cpu_bad & emu_bad)}")
    if cpu.rate is not None and emu.rate is not None:
        print(f"agreement cpu -> emulated: {cpu.rate:.1%} -> {emu.rate:.1%} "
              f"({(emu.rate - cpu.rate) * 100:+.1f} points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
