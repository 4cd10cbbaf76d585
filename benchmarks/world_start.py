"""What an emulated 2-rank world costs over a CPU one, and what the zygote's warm-up saves.

Two measurements, each a ratio within this one run:

1. the emulated device's set-up in a process forked the way a world's rank is (from a
   process that imported ``world.PRELOAD``): first rounds without ``devices.prefork``,
   then rounds with it run once before the forks (a warmed process cannot be un-warmed);
2. ``world.run_world`` of one collective body, one case, in alternating rounds: on
   ``cpu``; on ``emu:ascend-a2`` with its CPU reference in a world of its own
   (``TORCHPARITY_WORLD_PAIR=0``), as a check's case ran before; and with both in one
   paired world, as a check's case runs now.

    python benchmarks/world_start.py [--rounds 5] [--body all_reduce_sum]
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import importlib, os, sys, time
from torchparity.scenarios.sources import world
for module in world.PRELOAD:
    importlib.import_module(module)
from torchparity.devices import get_adapter, prefork


def forked_setup():
    pid = os.fork()
    if pid == 0:
        t = time.perf_counter()
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        adapter.collective_backend()
        os.write(1, b"%f\n" % (time.perf_counter() - t))
        os._exit(0)
    os.waitpid(pid, 0)

rounds = int(sys.argv[1])
for _ in range(rounds):
    sys.stdout.write("cold ")
    sys.stdout.flush()
    forked_setup()
t = time.perf_counter()
prefork("emu:ascend-a2")
print(f"prefork {time.perf_counter() - t:f}", flush=True)
for _ in range(rounds):
    sys.stdout.write("warm ")
    sys.stdout.flush()
    forked_setup()
"""


def setup_times(rounds: int) -> dict:
    """Rank set-up seconds forked from a process without the warm-up, then with it: the
    child process runs them (a process that ran ``prefork`` stays warmed)."""
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    out = subprocess.run([sys.executable, "-c", CHILD, str(rounds)], capture_output=True,
                         text=True, env=env, timeout=600, check=True).stdout
    times: dict = {"cold": [], "warm": [], "prefork": []}
    for line in out.split("\n"):
        kind, _, value = line.strip().partition(" ")
        if kind in times and value:
            times[kind].append(float(value))
    return times


def world_times(rounds: int, body: str) -> dict:
    """Seconds per case of ``body`` on the CPU alone, and on the emulated device with its
    CPU reference: in two worlds (``TORCHPARITY_WORLD_PAIR=0``), then in one paired world."""
    import torch

    from torchparity.devices import get_adapter

    world = importlib.import_module("torchparity.scenarios.sources.world")
    emu = get_adapter("emu:ascend-a2")
    emu.setup()
    batch = ("float32",)
    times: dict = {"cpu": [], "emu, two worlds": [], "emu, one paired world": []}
    world.run_world(body, "cpu", torch.float32)  # the zygote's own start, off the clock
    for _ in range(rounds):
        for name in times:
            os.environ[world.PAIR_ENV] = "0" if name == "emu, two worlds" else "1"
            world.forget_batches()  # every round starts its worlds anew
            t = time.perf_counter()
            world.run_world(body, "cpu", torch.float32, batch=batch)  # the case's CPU reference
            if name != "cpu":
                world.run_world(body, emu.torch_device, torch.float32, batch=batch)
            times[name].append(time.perf_counter() - t)
    os.environ.pop(world.PAIR_ENV)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--body", default="all_reduce_sum")
    args = ap.parse_args()
    med = statistics.median
    setup = setup_times(args.rounds)
    print(f"emulated rank set-up, forked: without prefork median {med(setup['cold']):.3f} s, "
          f"with it {med(setup['warm']):.3f} s ({med(setup['warm']) / med(setup['cold']):.2f}x); "
          f"the warm-up itself {setup['prefork'][0]:.2f} s once per zygote")
    worlds = world_times(args.rounds, args.body)
    cpu = med(worlds["cpu"])
    print(f"world {args.body!r} (one case): cpu median {cpu:.3f} s; emu:ascend-a2 with its CPU "
          f"reference: " + ", ".join(f"{name.split(', ')[1]} {med(worlds[name]):.3f} s "
                                     f"({med(worlds[name]) / cpu:.2f}x)"
                                     for name in list(worlds)[1:]))

if __name__ == "__main__":
    main()
