"""Every scenario of the generated sources over a vendor docs list, in this process.

For each source (``module``, ``optim``, ``distribution``, ``member``, ``runtime`` by default) and each
API of the docs list that the source covers: every scenario, every dtype, through
``run.execute.execute`` on one device. Prints, per source, how many of the listed APIs it
covers, the scenario x dtype counts per status and the wall time; ``--show`` prints every
non-passing case. On ``--device cpu`` (the CPU against itself) any fail or error is the
tool's own, and the exit status is 1.

    python benchmarks/sources_parity.py [--device cpu] [--sources module,optim]
        [--docs tests/data/ascend-native-api-docs] [--version 2.13.0] [--prefix torch.optim]
        [--skip API,API] [--show]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

DEFAULT_SOURCES = ("module", "optim", "distribution", "member", "runtime")


@dataclass
class SourceRun:
    name: str
    listed: int = 0
    covered: int = 0
    statuses: Dict[str, int] = field(default_factory=collections.Counter)
    bad: List[Tuple[str, str, str, str, str]] = field(default_factory=list)
    seconds: float = 0.0


def run_sources(names: Sequence[str], device: str = "cpu",
                sources: Sequence[str] = DEFAULT_SOURCES) -> List[SourceRun]:
    from torchparity.devices import get_adapter
    from torchparity.run.execute import execute
    from torchparity.scenarios.sources import source

    adapter = get_adapter(device)
    reason = adapter.unavailable_reason()
    if reason:
        raise SystemExit(f"device {device}: {reason}")
    adapter.setup()
    runs = []
    for src in sources:
        mod = source(src)
        run = SourceRun(src, listed=len(names))
        start = time.perf_counter()
        for api in names:
            found = mod.scenarios(api, None)
            if not found:
                continue
            run.covered += 1
            for sc in found:
                for dt in sc.dtypes:
                    result, _ = execute(sc, dt, adapter)
                    status = str(result.status)
                    run.statuses[status] += 1
                    if status != "pass":
                        run.bad.append((api, sc.id, dt, status, result.detail[:300]))
        run.seconds = time.perf_counter() - start
        runs.append(run)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sources", default=",".join(DEFAULT_SOURCES))
    parser.add_argument("--docs", default="tests/data/ascend-native-api-docs")
    parser.add_argument("--version", default="2.13.0")
    parser.add_argument("--prefix", default="", help="only APIs whose name starts with this")
    parser.add_argument("--show", action="store_true", help="print every non-passing case")
    parser.add_argument("--skip", default="", help="comma-separated APIs to leave out (one that "
                        "crashes the process: this script runs in-process, without workers)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    from torchparity.evidence.vendor_docs import load_vendor_docs

    names = [e.name for e in load_vendor_docs(args.docs, args.version).entries
             if e.name.startswith(args.prefix) and e.name not in args.skip.split(",")]
    runs = run_sources(names, args.device, [s for s in args.sources.split(",") if s])
    own = 0
    print(f"{len(names)} APIs listed ({args.docs} {args.version}), device {args.device}")
    print("| source | APIs covered | scenario x dtype results | wall s |")
    print("|---|---:|---|---:|")
    for run in runs:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(run.statuses.items()))
        print(f"| {run.name} | {run.covered} | {counts} | {run.seconds:.1f} |")
        if args.device == "cpu":
            own += run.statuses.get("fail", 0) + run.statuses.get("error", 0)
        for bad in run.bad if args.show else ():
            print("   ", *bad)
    if own:
        print(f"{own} fails or errors of the CPU against itself: the tool's own", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
