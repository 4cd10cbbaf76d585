"""How long `torchparity check` takes to stop after Ctrl-C, mid-run (issue 47, point 6).

Each round starts a multi-API check in a process group of its own (as a terminal does),
waits until its store (``OUT/results.sqlite``) holds at least ``--after`` judged cases, and
sends SIGINT to the whole group, as Ctrl-C in a terminal does. It measures the time from
the signal to the process's exit, and checks what the user sees: exit 130, no traceback on
stderr, and the cases already recorded still in the store.

    python benchmarks/interrupt_latency.py [--rounds 3] [--device cpu] [--after 2]

Target on a quiet 2-core machine: the check has exited within 5 s of the signal.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

APIS = ["torch.mm", "torch.add", "torch.nn.functional.normalize", "torch.cumsum", "torch.sort",
        "torch.nn.Linear", "torch.optim.SGD", "torch.distributions.Normal"]


def recorded(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT count(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0  # not made yet, or being written


def one_round(device: str, after: int, limit: float) -> dict:
    out = Path(tempfile.mkdtemp(prefix="interrupt-")) / "out"
    proc = subprocess.Popen([sys.executable, "-m", "torchparity", "check", *APIS, "--device", device,
                             "--out", str(out), "--no-html", "--no-screenshot"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        started = time.monotonic()
        while recorded(out / "results.sqlite") < after:
            if proc.poll() is not None:
                raise SystemExit(f"the check ended (rc {proc.returncode}) before {after} cases were recorded")
            if time.monotonic() - started > limit:
                raise SystemExit(f"no {after} recorded cases within {limit:.0f} s")
            time.sleep(0.1)
        before = recorded(out / "results.sqlite")
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        took = time.monotonic() - sent
    finally:  # the check runs in a session of its own: nothing of it outlives this script
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return {"seconds": took, "rc": proc.returncode, "traceback": "Traceback" in err,
            "recorded_before": before, "recorded_after": recorded(out / "results.sqlite"),
            "last_line": err.strip().splitlines()[-1] if err.strip() else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--after", type=int, default=2, help="recorded cases before the signal")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds to wait for them")
    args = parser.parse_args()
    rows = []
    for i in range(args.rounds):
        row = one_round(args.device, args.after, args.limit)
        rows.append(row)
        print(f"round {i + 1}: exit {row['rc']} {row['seconds']:.2f} s after SIGINT; traceback: "
              f"{'yes' if row['traceback'] else 'no'}; recorded {row['recorded_before']} -> "
              f"{row['recorded_after']}; last line: {row['last_line'][:100]}", flush=True)
    secs = [r["seconds"] for r in rows]
    print(f"median {statistics.median(secs):.2f} s, max {max(secs):.2f} s after SIGINT over "
          f"{len(rows)} round(s); load average {os.getloadavg()[0]:.1f}")
    ok = all(r["rc"] == 130 and not r["traceback"] and r["recorded_after"] >= r["recorded_before"]
             for r in rows)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
