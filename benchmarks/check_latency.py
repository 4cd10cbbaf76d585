"""Where a one-API `torchparity check` spends its time, as ratios to a bare
`python -c "import torch"` measured in the same run (issue 47, point 5).

Each round runs, in fresh processes one after the other: the bare torch import; three
refusals (a name outside torch's namespaces, a bad --out, an unknown torch name); the
one-op check on the CPU with its whole bundle (`--out`); and the same check instrumented
in one process, which splits it into phases: the command line's import (then a spare worker
starts, as the command line starts one), the heavy import
(app.check: torch and the sources), planning (resolve, sources, cases), worker start and
cases (the pool's warm-up reported apart), evidence and each writer of the bundle.
The median of the rounds is printed; rounds alternate so load from other work lands on all.

    python benchmarks/check_latency.py [--api torch.abs] [--rounds 3] [--json OUT.json] \
        [--base OTHER_CHECKOUT/src]

Targets on a quiet 2-core machine: unknown name <= 1.5x, one-op check with its bundle
<= 4x the bare import.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
marks = {}
import torchparity.cli  # noqa: F401  the command line's own imports
marks["cli import"] = time.perf_counter()
try:  # as the command line does: a worker starts before this process imports torch
    from torchparity.app.spare import spare_worker
    spare = spare_worker("local")
except ImportError:  # a tree from before the spare worker
    spare = None
from torchparity.app import check as C
from torchparity.app.deliverables import deliverable_writers
from torchparity.deliver import bundle
marks["heavy import (torch, sources)"] = time.perf_counter()

api, out = sys.argv[1], sys.argv[2]
seen = {}

class P:
    def start(self, total, description):
        seen.setdefault("start", time.perf_counter())
    def advance(self, result, api):
        seen.setdefault("first", time.perf_counter())
    def stop(self):
        seen["stop"] = time.perf_counter()

writer_s = {}
def timed(w, name):
    def run(report, folder):
        s = time.perf_counter()
        w(report, folder)
        writer_s[name] = writer_s.get(name, 0.0) + time.perf_counter() - s
    return run

writers = deliverable_writers(gentest_styles=["npu"])
names = [getattr(w, "__name__", "writer") for w in writers]
names = ["screenshot" if n == "<lambda>" else n for n in names]
writers = [timed(w, n) for w, n in zip(writers, names)]
render = bundle.write_bundle
bundle_s = {}
def write_bundle(*a, **k):
    s = time.perf_counter()
    try:
        return render(*a, **k)
    finally:
        bundle_s["all"] = time.perf_counter() - s
C.write_bundle = write_bundle if hasattr(C, "write_bundle") else None
bundle.write_bundle = write_bundle
before = time.perf_counter()
extra = {"spare": spare} if spare is not None else {}
try:
    report = C.check([api], "cpu", out=out, progress=P(), writers=writers, **extra)
finally:
    if spare is not None:
        spare.close()
end = time.perf_counter()
warm = float(report.options.get("worker_warmup_s") or 0.0)
phase = {
    "cli import": marks["cli import"] - t0,
    "heavy import (torch, sources)": marks["heavy import (torch, sources)"] - marks["cli import"],
    "planning (resolve, sources, cases)": seen["start"] - before,
    "worker start (incl. its warm-up)": seen["first"] - seen["start"],
    "  of which the worker's warm-up": warm,
    "cases after the first": seen["stop"] - seen["first"],
    "evidence": end - seen["stop"] - bundle_s.get("all", 0.0),
    "bundle (json, md, writers)": bundle_s.get("all", 0.0),
}
for name, s in writer_s.items():
    phase[f"  writer {name}"] = s
phase["total (in process)"] = end - t0
print(json.dumps(phase))
"""


SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def _env(src=None):
    env = dict(os.environ)
    src = src or SRC
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(src), env.get("PYTHONPATH")) if p)
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    return env


def wall(cmd, ok=(0, 1, 2), src=None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(src))
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(cmd[:6])}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return elapsed


def commands(api: str, src=None, tag=""):
    tp = [sys.executable, "-m", "torchparity"]
    row = {}
    # a name outside torch: the code before issue 47 imports it (exit 0 or 1); now exit 2
    row[f"refusal: name outside torch (this.s){tag}"] = wall(tp + ["check", "this.s", "-q"], src=src)
    row[f"refusal: bad --out{tag}"] = wall(tp + ["check", api, "-q", "--device", "cpu", "--out",
                                                 "/proc/self/no/such"], ok=(2,), src=src)
    row[f"refusal: unknown torch name{tag}"] = wall(tp + ["check", api + "_no_such", "-q"], ok=(2,),
                                                    src=src)
    with tempfile.TemporaryDirectory() as out:
        row[f"check {api} --device cpu --out (bundle){tag}"] = wall(
            tp + ["check", api, "--device", "cpu", "-q", "--out", out], src=src)
    return row


def one_round(api: str, base=None):
    row = {"bare import torch": wall([sys.executable, "-c", "import torch"], ok=(0,))}
    row.update(commands(api))
    if base:
        row.update(commands(api, src=base, tag=" [base]"))
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([sys.executable, "-c", PHASES, api, out], capture_output=True,
                              text=True, env=_env())
        if proc.returncode != 0:
            sys.exit(f"instrumented check failed: {proc.stderr.strip()[-800:]}")
        phases = json.loads(proc.stdout.strip().splitlines()[-1])
    return row, phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", default="torch.abs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the medians here too")
    parser.add_argument("--base", help="another checkout's src/ (e.g. the code before a change): "
                                       "its commands run in the same rounds, tagged [base]")
    args = parser.parse_args()
    rows, phases = [], []
    for _ in range(args.rounds):
        r, p = one_round(args.api, os.path.abspath(args.base) if args.base else None)
        rows.append(r)
        phases.append(p)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    base = med["bare import torch"]
    print(f"{args.rounds} round(s); medians; ratio to a bare `python -c \"import torch\"` ({base:.2f} s)")
    for k, v in med.items():
        print(f"  {k:52s} {v:7.2f} s  {v / base:5.2f}x")
    pmed = {k: statistics.median(p.get(k, 0.0) for p in phases) for k in phases[0]}
    print("phases of the instrumented one-API check (in one process):")
    for k, v in pmed.items():
        print(f"  {k:52s} {v:7.2f} s  {v / base:5.2f}x")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"commands": med, "phases": pmed, "rounds": rows, "phase_rounds": phases}, fh, indent=1)


if __name__ == "__main__":
    main()
