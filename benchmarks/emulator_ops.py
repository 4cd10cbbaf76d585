"""Per-op cost of the emulated device against the CPU, measured in one process.

    python benchmarks/emulator_ops.py [--profile allow-all] [--repeat 5]

Each case runs the same code on CPU tensors and on emulated-device tensors; the table
shows the best-of-``repeat`` mean time per call and the ratio. Targets (2 vCPU,
single-threaded): add 4x4 <= 30 us, mm 512x512 <= 1.1x the CPU.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable, Dict, List, Tuple

import torch

TARGETS_US = {"add 4x4": 30.0}
TARGET_RATIO = {"mm 512x512": 1.1}


def _cases(device: str) -> List[Tuple[str, Callable[[], object], int]]:
    a = torch.rand(4, 4).to(device)
    b = torch.rand(4, 4).to(device)
    x16 = torch.rand(16, 16).to(device).requires_grad_()
    m1 = torch.rand(512, 512).to(device)
    m2 = torch.rand(512, 512).to(device)

    def add():
        return a + b

    def add_():
        return a.add_(b, alpha=0.0)

    def index():
        return a[0]

    def fwd_bwd():
        y = (x16 * x16).sum()
        y.backward()
        return y

    def mm():
        return torch.mm(m1, m2)

    return [("add 4x4", add, 2000), ("add_ 4x4", add_, 2000), ("a[0]", index, 2000),
            ("(x*x).sum() fwd+bwd 16x16", fwd_bwd, 500), ("mm 512x512", mm, 50)]


def _time(fn: Callable[[], object], number: int, repeat: int) -> float:
    for _ in range(max(1, number // 10)):
        fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def measure(devices: List[str], repeat: int = 7) -> Dict[str, Dict[str, float]]:
    """{case: {device: seconds per call}}; the devices take turns case by case, so that
    drift of the machine affects both sides alike."""
    cases = {device: _cases(device) for device in devices}
    out: Dict[str, Dict[str, float]] = {}
    for i, (name, _, number) in enumerate(cases[devices[0]]):
        out[name] = {device: _time(cases[device][i][1], number, repeat) for device in devices}
    return out


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:9.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:9.2f} ms"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="allow-all")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)

    from torchparity.devices.emulator import activate
    from torchparity.devices.profiles import load_profile

    profile = load_profile(args.profile)
    activate(profile)
    torch.set_num_threads(1)
    times = measure(["cpu", profile.device_type], args.repeat)
    print(f"torch {torch.__version__}, 1 thread, profile {profile.name}, best of {args.repeat}")
    print(f"{'case':28} {'cpu':>12} {'emulated':>12} {'ratio':>8}  target")
    failed = 0
    for name, t in times.items():
        cpu, emu = t["cpu"], t[profile.device_type]
        ratio = emu / cpu
        target = ""
        if name in TARGETS_US:
            ok = emu * 1e6 <= TARGETS_US[name]
            target = f"<= {TARGETS_US[name]:.0f} us {'ok' if ok else 'MISSED'}"
            failed += not ok
        if name in TARGET_RATIO:
            ok = ratio <= TARGET_RATIO[name]
            target = f"<= {TARGET_RATIO[name]}x {'ok' if ok else 'MISSED'}"
            failed += not ok
        print(f"{name:28} {_fmt(cpu)} {_fmt(emu)} {ratio:7.2f}x  {target}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
