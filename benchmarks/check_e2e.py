"""Cold end-to-end time of `torchparity check` on the five seed APIs.

Runs the console command in a fresh process (cold: imports, worker start, scenarios,
footprints, reports) and prints the wall time per device. Target on the 2-core CI
machine: <= 45 s on the CPU.

    python benchmarks/check_e2e.py [--device cpu] [--device emu:ascend-a2] [--repeat 1]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

SEED_APIS = [
    "torch.autograd.gradcheck",
    "torch.autograd.gradgradcheck",
    "torch.autograd.profiler.emit_itt",
    "torch.autograd.forward_ad.enter_dual_level",
    "torch.autograd.forward_ad.unpack_dual",
]


def run_once(device: str) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "torchparity", "check", *SEED_APIS,
                               "--device", device, "--out", out, "--quiet"],
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"check on {device} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", action="append", help="device spec (repeatable)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    for device in args.device or ["cpu"]:
        times = [run_once(device) for _ in range(args.repeat)]
        print(f"check, five seed APIs, --device {device}: "
              f"{min(times):.1f} s (best of {len(times)}; all: {', '.join(f'{t:.1f}' for t in times)})")


if __name__ == "__main__":
    main()
