"""The hand-read sample of issue 48: N vendor-listed APIs drawn uniformly by a fixed seed.

Lists the APIs the shipped Ascend docs give for a torch version exactly as
``benchmarks/coverage.py`` does (``torchparity.app.check_vendor.listed_apis`` over
``tests/data/ascend-native-api-docs``) and draws ``random.Random(seed).sample(names, n)``:
uniform over the whole list, not stratified and not chosen. Prints one name a line, in the
order drawn. ``tests/data/hand-read-48.yaml`` holds the reading of ``--seed 48 --n 40``;
``tests/test_hand_read_48.py`` checks that its API list is this draw.

    python benchmarks/hand_sample.py --seed 48 --n 40 [--torch-version 2.13.0] [--docs DIR]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "data" / "ascend-native-api-docs"


def draw(seed: int, n: int, docs: Path = DOCS, torch_version: str = "2.13.0") -> List[str]:
    """``n`` listed APIs drawn uniformly with ``random.Random(seed)``, in draw order."""
    from torchparity.app.check_vendor import listed_apis

    names, _ = listed_apis(str(docs), torch_version)
    return random.Random(seed).sample(list(names), n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True, help="the draw's random seed")
    parser.add_argument("--n", type=int, required=True, help="how many APIs to draw")
    parser.add_argument("--docs", type=Path, default=DOCS, help="vendor docs folder")
    parser.add_argument("--torch-version", default="2.13.0")
    args = parser.parse_args()
    for name in draw(args.seed, args.n, args.docs, args.torch_version):
        print(name)


if __name__ == "__main__":
    main()
