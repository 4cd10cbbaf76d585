"""What the extra device runs of a case cost: the share of a check's case wall they take.

    python benchmarks/extra_runs.py [--device emu:ascend-a2] [--apis torch.mm,...] [--dtypes float32]

A case (one scenario x one dtype) runs the CPU reference and the judged device run; some
cases run the scenario again on the device:

- ``footprint``: once more under the footprint recorder (check, sweep and the vendor-list
  mode ask every case for it: the row's evidence);
- ``scaffolding``: once more under the recorder after a refusal (``unsupported``), to tell
  the scenario's own ops from the API's;
- ``draws``: once more for a scenario returning draws, which must repeat bit for bit;
- ``path``: once more on the CPU and on the device for a differing result (``device_path``);
- ``opinfo footprint``: an OpInfo case's first sample once more under the recorder.

The cases are planned as ``check`` plans them (``app.check.plan_scenarios``, footprint on)
and run in this process through the worker's own handlers. Every device run is timed
where it is made (``run.execute._run`` / ``_recorded_run``, ``run.opinfo_handler
.sample_footprint``) and booked to the stage that made it. Printed: per stage the runs,
their seconds and their share of the total case wall (the reference and judged runs of
source cases for scale; OpInfo cases' own runs are not split out). Ratios only (same
run, same load). ``--sample N`` takes the vendor list's stratified sample of
``benchmarks/coverage.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_APIS = (
    "torch.mm", "torch.cumsum", "torch.nn.functional.softmax", "torch.rand", "torch.bernoulli",
    "torch.nn.functional.dropout", "torch.autograd.gradcheck", "torch.nn.functional.conv2d",
    "torch.distributions.normal.Normal.sample", "torch.distributions.bernoulli.Bernoulli.sample",
    "torch.distributions.half_normal.HalfNormal.rsample",
    "torch.nn.Dropout", "torch.optim.SGD", "torch.cuda.memory_allocated", "torch.autograd.grad",
)
# where a device run is made -> the stage it belongs to (innermost wins)
STAGE_OF = {"explain_scaffolding": "scaffolding", "repeat_draws": "draws", "explain_by_path": "path"}
STAGES = ("reference", "judged", "footprint", "scaffolding", "draws", "path", "opinfo footprint")


def _sample(size: int, seed: int) -> List[str]:
    """The stratified sample of benchmarks/coverage.py (same list, same seed, same names)."""
    spec = importlib.util.spec_from_file_location("tp_coverage_bench", ROOT / "benchmarks" / "coverage.py")
    cov = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cov)
    from torchparity.app.check_vendor import listed_apis

    names, _ = listed_apis(str(cov.DOCS), "2.13.0")
    return cov.stratified(names, size, seed)


class Clock:
    """Seconds and device runs per stage: every device run of a case is timed where it is
    made and booked to the stage it is made in (outside any: the judged run or, for a
    recorded run, the footprint)."""

    def __init__(self):
        self.stack: List[str] = []
        self.spent: Dict[str, float] = defaultdict(float)
        self.runs: Dict[str, int] = defaultdict(int)

    def stage(self, module: Any, name: str) -> None:
        fn, label, clock = getattr(module, name), STAGE_OF[name], self

        def wrapper(*args, **kwargs):
            clock.stack.append(label)
            try:
                return fn(*args, **kwargs)
            finally:
                clock.stack.pop()
        setattr(module, name, wrapper)

    def run(self, module: Any, name: str, default: Callable[..., str]) -> None:
        fn, clock = getattr(module, name), self

        def wrapper(*args, **kwargs):
            label = clock.stack[-1] if clock.stack else default(*args, **kwargs)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if label:
                    clock.spent[label] += time.perf_counter() - start
                    clock.runs[label] += 1
        setattr(module, name, wrapper)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="emu:ascend-a2")
    parser.add_argument("--apis", default=None, help="comma-separated API names (default: a fixed mix)")
    parser.add_argument("--sample", type=int, default=0,
                        help="instead: N APIs of the vendor list, sampled as benchmarks/coverage.py does")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtypes", default="", help="comma-separated (default: each scenario's own)")
    parser.add_argument("--max-samples", type=int, default=2)
    args = parser.parse_args(argv)

    from torchparity.api.resolve import resolve
    from torchparity.app.check import plan_scenarios
    from torchparity.devices import get_adapter
    from torchparity.run import execute as ex
    from torchparity.run import handlers, opinfo_handler
    from torchparity.scenarios import sources

    adapter = get_adapter(args.device)
    adapter.setup()
    names = (_sample(args.sample, args.seed) if args.sample
             else [a for a in (args.apis or ",".join(DEFAULT_APIS)).split(",") if a])
    clock = Clock()
    for name in ("explain_scaffolding", "repeat_draws", "explain_by_path"):
        clock.stage(ex, name)
    clock.run(opinfo_handler, "sample_footprint", lambda *a, **k: "opinfo footprint")
    clock.run(ex, "_run", lambda fn, device, *a: "judged" if device != "cpu" else "reference")
    clock.run(ex, "_recorded_run", lambda *a, **k: "footprint")

    dtypes = [d for d in args.dtypes.split(",") if d] or None
    cases: List[Dict[str, Any]] = []
    for name in names:
        try:
            offer = plan_scenarios(name, resolve(name).obj, dtypes)
        except Exception:  # unresolvable on this torch: not a case
            continue
        for sc in offer.scenarios:
            for dtype in sc.dtypes:
                cases.append(sources.case_for(sc, name, dtype, max_samples=args.max_samples,
                                              footprint=True))
    context = handlers.WorkerContext(adapter=adapter)
    total = 0.0
    kinds: Dict[str, int] = defaultdict(int)
    for case in cases:
        kinds[case["kind"]] += 1
        start = time.perf_counter()
        try:
            handlers.handle(context, case)
        except Exception:  # a harness failure is a row elsewhere; here only the clock counts
            pass
        total += time.perf_counter() - start
    print(f"{len(cases)} case(s) ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) of "
          f"{len(names)} API(s) on {adapter.spec}: {total:.1f} s of case wall (ratios only)")
    print(f"{'stage':18} {'device runs':>11} {'seconds':>9} {'share':>7}")
    for stage in STAGES:
        print(f"{stage:18} {clock.runs[stage]:11d} {clock.spent[stage]:9.2f} {clock.spent[stage] / total:7.1%}")
    extra = sum(clock.spent[s] for s in STAGES[2:])
    print(f"{'extra device runs':18} {sum(clock.runs[s] for s in STAGES[2:]):11d} {extra:9.2f} "
          f"{extra / total:7.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
