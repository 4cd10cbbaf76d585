"""Sweep cost against a bare loop over the same OpInfo ops, samples and dtypes.

    python benchmarks/sweep.py                       # op_db x 7 dtypes on the CPU
    python benchmarks/sweep.py --device emu:allow-all --dtypes float32 --limit 100

The bare loop runs in this process, one case after another: seeded samples made on the
CPU, moved to the device, the op called once per sample; no worker processes, no CPU
reference, no golden, no gradients, no judging, no store. Its time excludes importing
op_db (which the sweep's workers pay), so the ratio errs against the sweep. The sweep is
``torchparity sweep`` as users run it (worker pool, one worker per core by default,
SQLite store, matrix files), timed wall-clock from start to matrix written.

Targets on the 2-core development machine: sweep <= 1.5 x bare loop, and the whole
op_db x 7 dtypes <= 3 minutes. Other processes on a shared machine distort both
timings; the load average before and after is printed so a noisy run can be told apart.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

DEFAULT_DTYPES = "bool,int32,int64,float16,bfloat16,float32,float64"


def bare_loop(cases, device: str) -> tuple:
    import torch

    from torchparity.devices import get_adapter
    from torchparity.scenarios import opinfo as oi

    adapter = get_adapter(device)
    adapter.setup()
    dev = adapter.torch_device

    def move(t):
        return t.to(dev) if dev != "cpu" else t

    n_samples = 0
    start = time.perf_counter()
    for case in cases:
        op = case.entry.opinfo
        fn = case.entry.callable()
        try:
            samples = oi.make_samples(op, getattr(torch, case.dtype))
        except Exception:
            continue
        for s in samples:
            n_samples += 1
            inp, args, kwargs = oi.sample_parts(s)
            try:
                fn(oi.map_tensors(inp, move), *oi.map_tensors(args, move),
                   **oi.map_tensors(kwargs, move))
                adapter.synchronize()
            except Exception:
                pass
    return time.perf_counter() - start, n_samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtypes", default=DEFAULT_DTYPES)
    ap.add_argument("--jobs", type=int, default=None, help="sweep workers (default: one per core)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N op_db entries")
    ap.add_argument("--skip-bare", action="store_true")
    ap.add_argument("--out", default=None, help="keep the sweep's output here")
    opts = ap.parse_args()
    warnings.simplefilter("ignore")

    from torchparity.app.sweep import default_jobs, plan, sweep
    from torchparity.scenarios import opinfo as oi

    dtypes = [d.strip() for d in opts.dtypes.split(",") if d.strip()]
    t0 = time.perf_counter()
    keys = [e.key for e in oi.entries()]
    import_s = time.perf_counter() - t0
    only = keys[: opts.limit] if opts.limit else None
    cases = plan(catalogue=True, dtypes=dtypes, only=only).cases
    jobs = opts.jobs or default_jobs()
    print(f"op_db entries: {len(only or keys)}, dtypes: {len(dtypes)} ({', '.join(dtypes)}), "
          f"cases: {len(cases)}, device {opts.device}, sweep jobs {jobs}, cores {default_jobs()}")
    print(f"load average before: {os.getloadavg()[0]:.2f}")

    bare = None
    if not opts.skip_bare:
        bare, n = bare_loop(cases, opts.device)
        print(f"bare loop: {bare:.1f} s for {n} samples (+{import_s:.1f} s importing op_db, not counted)")

    out = opts.out or tempfile.mkdtemp(prefix="tp-bench-")
    t = time.perf_counter()
    summary = sweep(out=out, device=opts.device, catalogue=True, dtypes=dtypes, jobs=jobs,
                    only=only)
    swept = time.perf_counter() - t
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.totals.items()))
    print(f"sweep: {swept:.1f} s for {summary.planned} cases ({counts}); output in {out}")
    if summary.ran != summary.planned:
        print(f"  note: {summary.already_done} case(s) were already done in {out}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if bare:
        ratio = swept / bare
        print(f"ratio sweep / bare loop: {ratio:.2f} x (target <= 1.5): "
              f"{'met' if ratio <= 1.5 else 'NOT met'}")
    if not opts.limit and len(dtypes) == 7:
        print(f"whole op_db x 7 dtypes: {swept / 60:.1f} min (target <= 3): "
              f"{'met' if swept <= 180 else 'NOT met'}")
    if opts.device == "cpu":
        print(f"CPU-vs-CPU wrong results / errors: {summary.totals.get('fail', 0)} / "
              f"{summary.totals.get('error', 0)} (must be 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
