"""False-fail rate of the ``random`` standard's two-sample test on a correct device.

A correct device with its own generator draws other numbers from the same distribution:
pairs of independent draws are judged by ``judge.standards.judge_random`` and the fails
and warnings counted, per distribution and sample size.

    python benchmarks/ks_false_fail.py [--trials N] [--seed S]
"""

from __future__ import annotations

import argparse

import torch

from torchparity.judge import standards
from torchparity.results.models import Status

DRAWS = {
    "uniform": lambda n, g: torch.rand(n, generator=g),
    "normal": lambda n, g: torch.randn(n, generator=g),
    "exponential": lambda n, g: torch.empty(n).exponential_(generator=g),
    "bernoulli(0.3)": lambda n, g: torch.bernoulli(torch.full((n,), 0.3), generator=g),
}
SIZES = (64, 256, 1024, 4096)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    g = torch.Generator().manual_seed(args.seed)
    total = fails = warns = 0
    for name, draw in DRAWS.items():
        for n in SIZES:
            f = w = 0
            for _ in range(args.trials):
                j = standards.judge_random(draw(n, g), draw(n, g), "o")
                f += j.status == Status.FAIL
                w += j.warn
            total, fails, warns = total + args.trials, fails + f, warns + w
            print(f"{name:15} n={n:5}: {f} fails, {w} warnings in {args.trials}")
    print(f"all: {fails} fails ({fails / total:.2e}), {warns} warnings ({warns / total:.2e}) in {total} pairs")


if __name__ == "__main__":
    main()
