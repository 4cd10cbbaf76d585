"""Draw (op, chip, facts) kernel cells for reading by hand (issue 44, item 5), by a fixed seed.

    python benchmarks/kernel_hand_sample.py --seed 44 --n 110
    python benchmarks/kernel_hand_sample.py --seed 44 --n 110 --yaml   # skeleton entries

The population is every (op, chip) cell of both shipped facts files (newest =
ascend-kernels.yaml, cann8.5.0 = ascend-kernels-cann8.5.0.yaml) whose op names a kernel,
less the cells already in tests/data/kernels-hand-verified.yaml. The draw is stratified so
that every kernel repository and chip is drawn: strata are (facts, repository, chip), each
stratum shuffled by ``random.Random(seed)``, and cells are taken round-robin over the
strata (in sorted order) until N are drawn. The draw depends only on the seed, N and the
facts files, so the cells are not chosen by the reader.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "src" / "torchparity" / "devices" / "profiles" / "sources"
FACTS = {"newest": SOURCES / "ascend-kernels.yaml", "cann8.5.0": SOURCES / "ascend-kernels-cann8.5.0.yaml"}
VERIFIED = ROOT / "tests" / "data" / "kernels-hand-verified.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def population(exclude_verified: bool = True):
    done = set()
    if exclude_verified and VERIFIED.exists():
        data = yaml.load(VERIFIED.read_text(encoding="utf-8"), Loader=_LOADER)
        # cells drawn by this script stay in the population, so a re-draw gives the same cells
        done = {(v["op"], v["chip"], v["facts"]) for v in data["facts"] if "drawn" not in v}
    cells = []
    for name, path in FACTS.items():
        facts = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        for op, k in facts["ops"].items():
            repo, file = k["kernel"].split(" ", 1)
            for chip, ck in k["chips"].items():
                if (op, chip, name) in done:
                    continue
                cells.append({"op": op, "chip": chip, "facts": name, "repo": repo, "path": file,
                              "commit": facts["repos"][repo], "extracted": ck})
    return cells


def draw(seed: int, n: int):
    rng = random.Random(seed)
    strata = {}
    for c in population():
        strata.setdefault((c["facts"], c["repo"], c["chip"]), []).append(c)
    for key in sorted(strata):
        rng.shuffle(strata[key])
    keys = sorted(strata)
    total = sum(len(v) for v in strata.values())
    want = {k: n * len(strata[k]) / total for k in keys}
    take = {k: min(len(strata[k]), max(2, int(want[k]))) for k in keys}
    for k in sorted(keys, key=lambda k: (-(want[k] - int(want[k])), k)):
        if sum(take.values()) >= n:
            break
        if take[k] < len(strata[k]):
            take[k] += 1
    out = [c for k in keys for c in strata[k][:take[k]]]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--yaml", action="store_true", help="print skeleton entries to fill by hand")
    a = ap.parse_args(argv)
    if a.n <= 0:
        print("--n must be positive", file=sys.stderr)
        return 2
    cells = draw(a.seed, a.n)
    if a.yaml:
        print(yaml.safe_dump([{k: c[k] for k in ("op", "chip", "facts", "repo", "commit", "path")}
                              | {"drawn": f"seed {a.seed}, #{i}"} for i, c in enumerate(cells)],
                             sort_keys=False, width=110))
        return 0
    for i, c in enumerate(cells):
        ck = c["extracted"]
        what = ck.get("dtypes") if "dtypes" in ck and not ck.get("refused") else (
            "refused" if ck.get("refused") else "unchecked" if ck.get("unchecked") else "undecided")
        print(f"{i:3d} {c['facts']:9s} {c['chip']} {c['op']:40s} {c['repo']} {c['path']}  "
              f"extracted: {what}  [{ck.get('source')}]")
    strata = sorted({(c["facts"], c["repo"], c["chip"]) for c in cells})
    print(f"{len(cells)} cells over {len(strata)} strata (facts, repository, chip)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
