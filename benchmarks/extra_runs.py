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
and run in this process through the worker's own handlers, each stage timed where it is
called (``run.execute``, ``run.opinfo_handler``). Printed: per stage the cases that ran
it, its seconds and its share of the total case wall. Ratios only (same run, same load).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from typing import Any, Callable, Dict, List

DEFAULT_APIS = (
    "torch.mm", "torch.add", "torch.cumsum", "torch.nn.functional.softmax", "torch.where",
    "torch.rand", "torch.randn", "torch.bernoulli", "torch.nn.functional.dropout",
    "torch.multinomial", "torch.autograd.gradcheck", "torch.nn.functional.conv2d",
    "torch.linalg.svd", "torch.cuda.memory_allocated", "torch.autograd.grad",
)
STAGES = ("footprint", "scaffolding", "draws", "path", "opinfo footprint")


def _timed(module: Any, name: str, stage: str, spent: Dict[str, float], runs: Dict[str, int],
           when: Callable[..., bool] = lambda *a, **k: True) -> None:
    fn = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[stage] += time.perf_counter() - start
            if when(*args, **kwargs):
                runs[stage] += 1

    setattr(module, name, wrapper)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="emu:ascend-a2")
    parser.add_argument("--apis", default=",".join(DEFAULT_APIS), help="comma-separated API names")
    parser.add_argument("--dtypes", default="float32", help="comma-separated (default: float32)")
    parser.add_argument("--max-samples", type=int, default=2)
    args = parser.parse_args(argv)

    from torchparity.api.resolve import resolve
    from torchparity.app.check import plan_scenarios
    from torchparity.devices import get_adapter
    from torchparity.results.models import Status
    from torchparity.run import execute as ex
    from torchparity.run import handlers, opinfo_handler
    from torchparity.scenarios import sources

    adapter = get_adapter(args.device)
    adapter.setup()
    handlers._load_builtin_handlers()
    context = handlers.WorkerContext(adapter=adapter)
    spent: Dict[str, float] = defaultdict(float)
    runs: Dict[str, int] = defaultdict(int)
    # the stages run only where their condition holds: count those, time every call
    _timed(ex, "record_footprint", "footprint", spent, runs)
    _timed(ex, "explain_scaffolding", "scaffolding", spent, runs,
           lambda sc, dt, ad, judgement, *a: judgement.status == Status.UNSUPPORTED)
    _timed(ex, "repeat_draws", "draws", spent, runs,
           lambda sc, dt, ad, dev, judgement: not dev.raised and bool(ex.draws_in(dev.value))
           and judgement.status in (Status.PASS, Status.FAIL))
    _timed(ex, "explain_by_path", "path", spent, runs,
           lambda sc, dt, ad, judgement: judgement.cause in (ex.Cause.MISMATCH, ex.Cause.METADATA))
    _timed(opinfo_handler, "sample_footprint", "opinfo footprint", spent, runs)

    dtypes = [d for d in args.dtypes.split(",") if d]
    cases: List[Dict[str, Any]] = []
    for name in [a for a in args.apis.split(",") if a]:
        offer = plan_scenarios(name, resolve(name).obj, dtypes)
        for sc in offer.scenarios:
            for dtype in sc.dtypes:
                cases.append(sources.case_for(sc, name, dtype, max_samples=args.max_samples,
                                              footprint=True))
    total = 0.0
    for case in cases:
        start = time.perf_counter()
        try:
            handlers.handle(context, case)
        except Exception:  # a harness failure is a row elsewhere; here only the clock counts
            pass
        total += time.perf_counter() - start
    print(f"{len(cases)} case(s) of {len(args.apis.split(','))} API(s) on {adapter.spec}, "
          f"dtypes {','.join(dtypes)}: {total:.1f} s of case wall (ratios only)")
    print(f"{'stage':18} {'cases run':>10} {'seconds':>9} {'share':>7}")
    for stage in STAGES:
        print(f"{stage:18} {runs[stage]:10d} {spent[stage]:9.2f} {spent[stage] / total:7.1%}")
    extra = sum(spent.values())
    print(f"{'all extra runs':18} {'':10} {extra:9.2f} {extra / total:7.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
