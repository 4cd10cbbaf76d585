"""A fresh worker's first case against its later ones (issue 10, false timeouts).

Runs the same seed case (``gradcheck`` ``fast_mul``, float64, with its footprint) three
times on one fresh CPU worker and prints each case's clock and the worker's warm-up.
Before the warm-up existed, the first case carried the worker's one-time imports
(``torch._dynamo``, reached by the footprint recorder) on its clock; the later cases of
the same run are the baseline.

    python benchmarks/first_case.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from torchparity.run.pool import WorkerPool

CASE = {"kind": "suite", "api": "torch.autograd.gradcheck", "scenario": "fast_mul",
        "dtype": "float64", "footprint": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="cases on the one worker")
    args = parser.parse_args()
    events = []
    start = time.monotonic()
    pool = WorkerPool({"device": "cpu", "modules": []}, jobs=1)
    pool.run([CASE] * args.repeat, [120] * args.repeat, events.append)
    total = time.monotonic() - start
    clocks = [e.seconds for e in sorted(events, key=lambda e: e.index)]
    print(f"first case: {clocks[0]:.2f} s; later cases: "
          f"{', '.join(f'{c:.2f}' for c in clocks[1:])} s (baseline)")
    print(f"worker warm-up, off every case's clock: {max(pool.warmups):.2f} s; "
          f"whole run: {total:.1f} s")


if __name__ == "__main__":
    main()
