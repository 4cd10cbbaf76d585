"""What one replayed upstream test costs: sides forked from the worker vs fresh interpreters.

Writes the small upstream-style tree of the tests (tests/upstream_tree.py: five tests of
torch.mm, six cases) and runs ``check torch.mm --tests TREE`` on a device twice: each
side forked from the pool worker (the default for the CPU and the emulated device), and
each side in a fresh interpreter (the baseline; what a real npu or cuda needs). Prints
the per-case seconds (the pool's clock, both sides of one test) and whether the two runs
agree on every case.

    python benchmarks/upstream_replay.py [--device emu:ascend-a2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def run(device: str, tree: Path, isolation: str):
    from torchparity.app.check import check
    from torchparity.scenarios.sources import upstream

    start = time.monotonic()
    with upstream.configured(None, isolation=isolation):
        report = check(["torch.mm"], device, tests_dir=str(tree), dtypes=["float32", "float64"],
                       max_samples=1)
    wall = time.monotonic() - start
    rows = [s for s in report.apis[0].scenarios if s.source == "upstream"]
    return wall, {(s.id, s.dtype): s.status for s in rows}, [s.duration_s for s in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="emu:ascend-a2")
    args = parser.parse_args()
    from upstream_tree import write_tree

    with tempfile.TemporaryDirectory() as tmp:
        tree = write_tree(Path(tmp) / "test")
        results = {mode: run(args.device, tree, mode) for mode in ("fork", "spawn")}
    print(f"| {args.device} | cases | median s/case | max s/case | check wall s |")
    print("|---|---:|---:|---:|---:|")
    for mode, (wall, _, secs) in results.items():
        print(f"| {mode} | {len(secs)} | {statistics.median(secs):.2f} | {max(secs):.2f} | {wall:.1f} |")
    same = results["fork"][1] == results["spawn"][1]
    print(f"\nsame status on every case: {same}")
    for key, status in sorted(results["fork"][1].items()):
        print(f"- {key[0]} [{key[1]}]: {status}")


if __name__ == "__main__":
    main()
