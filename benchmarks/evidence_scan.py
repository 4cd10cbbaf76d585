"""Benchmark: the upstream test census over a whole test tree.

    python benchmarks/evidence_scan.py /path/to/Ascend-pytorch/test
    python benchmarks/evidence_scan.py TREE --api torch.autograd.gradcheck --processes 1

Prints the time of each phase (torch import, census: parse + resolve + wrappers + count)
and the per-API counts. Target on a 2-core machine: census <= 20 s for Ascend/pytorch
test/ (~860 files, 12.6 MB of Python).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

DEFAULT_APIS = [
    "torch.autograd.forward_ad.unpack_dual",
    "torch.autograd.forward_ad.enter_dual_level",
    "torch.autograd.gradcheck",
    "torch.autograd.profiler.emit_itt",
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests_dir", nargs="?", default=os.environ.get("TORCHPARITY_ASCEND_TESTS"),
                        help="an Ascend/pytorch test/ tree (default: $TORCHPARITY_ASCEND_TESTS)")
    parser.add_argument("--api", action="append", help="API to count (repeatable)")
    parser.add_argument("--processes", type=int, default=None)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--backend", default="npu")
    args = parser.parse_args(argv)

    if not args.tests_dir:
        print("error: give an Ascend/pytorch test/ tree or set TORCHPARITY_ASCEND_TESTS",
              file=sys.stderr)
        return 2
    wall = time.perf_counter()
    import torch  # noqa: F401  (timed: the census needs it loaded anyway)

    t_import = time.perf_counter() - wall
    from torchparity.errors import TorchparityError
    from torchparity.evidence.census import census, main_locations

    apis = args.api or DEFAULT_APIS
    try:
        result = census(args.tests_dir, apis, backend=args.backend, depth=args.depth,
                        processes=args.processes)
    except TorchparityError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    total = time.perf_counter() - wall
    print(f"tree: {args.tests_dir}")
    print(f"files: {result.files}  parse errors: {len(result.parse_errors)}  "
          f"distinct names resolved: {result.names}  cpus: {os.cpu_count()}")
    print(f"torch import: {t_import:.2f} s  census: {result.seconds:.2f} s  "
          f"total: {total:.2f} s")
    print("census phases: " + "  ".join(f"{k} {v:.2f} s" for k, v in result.phases.items()))
    usage = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    print(f"cpu time (this process + workers): {cpu:.2f} s  "
          f"load average: {os.getloadavg()[0]:.2f} (other work on the machine slows the wall time)")
    for api, ev in result.evidence.items():
        tests = [t for t in ev.tests if t.kind == "test"]
        print(f"\n{api}")
        print(f"  direct {ev.direct_sites}  indirect {ev.indirect_sites}  files {ev.files}  "
              f"tests {len(tests)}  device-generic sites {ev.device_generic_sites} "
              f"(backend runs {ev.backend_runnable_sites})")
        for loc, cls in zip(main_locations(ev, 3), ev.classes):
            flag = ""
            if cls.device_generic:
                flag = f"  [device-generic only_for={cls.only_for} except_for={cls.except_for}]"
            print(f"  {loc}: direct {cls.direct} indirect {cls.indirect}{flag}")
        for via in ev.via[:3]:
            print(f"  via {via}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
