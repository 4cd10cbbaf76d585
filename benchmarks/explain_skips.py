"""Time of `explain-skips` on an evenly spread sample of a disabled list, extrapolated.

Runs ``app.explain_skips.explain_skips`` on ``--sample N`` entries of the list (default:
the shipped 307-entry fixture of Ascend's list) into a fresh folder, then prints the
count per category, the entries per kind (@ops rows / replay / unparsed) and the wall
seconds; the whole-list time is extrapolated from the sample (entries × seconds per
entry of each kind), and says so. The per-op capability rows and the float64 error are
shared by the entries of one (op, dtype), so a larger sample costs less per entry: the
extrapolation is an upper bound for the @ops part.

    python benchmarks/explain_skips.py [--disabled FILE] [--tests DIR] [--sample 300]
        [--device emu:ascend-a2] [--total 32068]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "explain_skips" / "pytorch-disabled-tests.fixture.json"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--disabled", default=str(FIXTURE))
    ap.add_argument("--tests", default=None)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--device", default="emu:ascend-a2")
    ap.add_argument("--total", type=int, default=32068, help="entries of the whole list")
    args = ap.parse_args()
    from torchparity.app.explain_skips import CATEGORIES, explain_skips

    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        r = explain_skips(disabled=args.disabled, tests=args.tests, device=args.device, out=out,
                          sample=args.sample)
        wall = time.perf_counter() - start
    counts = r.counts()
    kinds = collections.Counter(e.kind for e in r.entries)
    n = len(r.entries)
    print(json.dumps({"entries": n, "wall_s": round(wall, 1), "per_entry_s": round(wall / n, 3),
                      "kinds": dict(kinds), "counts": {c: counts[c] for c in CATEGORIES},
                      "extrapolated_whole_list_s (from this sample)": round(wall / n * args.total)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
