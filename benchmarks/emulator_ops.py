"""Per-op cost of the emulated device against the CPU, measured in one process.

    python benchmarks/emulator_ops.py [--profile allow-all] [--repeat 30] [--clock cpu|wall]

Each case runs the same code on CPU tensors and on emulated-device tensors; the table
shows the best mean time per call over ``repeat`` rounds and the ratio. The two devices
take turns in short chunks, round after round, so that a loaded machine slows both sides
alike: only the ratio means something, never the absolute time. Targets (emulated / CPU,
single-threaded, in the same run): add 4x4 <= 8x, (x*x).sum() fwd+bwd 16x16 <= 6x,
mm 512x512 <= 1.1x.

Every chunk is timed on two clocks: ``wall`` (perf_counter) and ``cpu`` (the process's CPU
time, every thread: the autograd engine runs a device's backward on a thread of its own).
On a machine shared with other work the wall clock also counts the time the scheduler
gave to others, and more so for the longer (emulated) chunk and for the emulated backward,
which hands its work to the device thread and back (two wake-ups per backward); the CPU
clock counts only what this process computed. Both ratios are printed; ``--clock`` says
which one the targets (and the exit status) are judged on (default ``cpu``; on a quiet
machine the two agree but for the backward's two thread wake-ups).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable, Dict, List, Tuple

import torch

TARGET_RATIO = {"add 4x4": 8.0, "(x*x).sum() fwd+bwd 16x16": 6.0, "mm 512x512": 1.1}


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

    # (name, function, calls per chunk)
    return [("add 4x4", add, 200), ("add_ 4x4", add_, 200), ("a[0]", index, 200),
            ("(x*x).sum() fwd+bwd 16x16", fwd_bwd, 40), ("mm 512x512", mm, 3)]


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _chunk(fn: Callable[[], object], number: int) -> Dict[str, float]:
    wall, cpu = time.perf_counter, time.process_time
    w0, c0 = wall(), cpu()
    for _ in range(number):
        fn()
    c1, w1 = cpu(), wall()
    return {"wall": (w1 - w0) / number, "cpu": (c1 - c0) / number}


def measure(devices: List[str], repeat: int = 30) -> Dict[str, Dict[str, Dict[str, float]]]:
    """{clock: {case: {device: best seconds per call}}}: ``repeat`` rounds, in each of which
    every device runs a chunk of every case in turn (after one warm-up round); each clock
    keeps its own best."""
    cases = {device: _cases(device) for device in devices}
    names = [name for name, _, _ in cases[devices[0]]]
    best = {clock: {name: {d: float("inf") for d in devices} for name in names} for clock in CLOCKS}
    for rnd in range(repeat + 1):
        for i, name in enumerate(names):
            for device in devices:
                _, fn, number = cases[device][i]
                t = _chunk(fn, number)
                if rnd:
                    for clock in CLOCKS:
                        best[clock][name][device] = min(best[clock][name][device], t[clock])
    return best


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:9.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:9.2f} ms"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="allow-all")
    parser.add_argument("--repeat", type=int, default=30, help="rounds (best of)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="the clock the targets are judged on (both are printed)")
    args = parser.parse_args(argv)

    from torchparity.devices.emulator import activate
    from torchparity.devices.profiles import load_profile

    profile = load_profile(args.profile)
    activate(profile)
    torch.set_num_threads(1)
    times = measure(["cpu", profile.device_type], args.repeat)
    print(f"torch {torch.__version__}, 1 thread, profile {profile.name}, best of {args.repeat} "
          f"interleaved rounds (ratios only: same run, same load); targets on the {args.clock} clock")
    other = "wall" if args.clock == "cpu" else "cpu"
    print(f"{'case':28} {'cpu':>12} {'emulated':>12} {'ratio':>8}  {other + ' ratio':>10}  target")
    failed = 0
    for name, t in times[args.clock].items():
        cpu, emu = t["cpu"], t[profile.device_type]
        ratio = emu / cpu
        o = times[other][name]
        other_ratio = o[profile.device_type] / o["cpu"]
        target = ""
        if name in TARGET_RATIO:
            ok = ratio <= TARGET_RATIO[name]
            target = f"<= {TARGET_RATIO[name]}x {'ok' if ok else 'MISSED'}"
            failed += not ok
        print(f"{name:28} {_fmt(cpu)} {_fmt(emu)} {ratio:7.2f}x  {other_ratio:9.2f}x  {target}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
