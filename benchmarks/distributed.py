"""The torch.distributed APIs through the 2-rank harness: counts and wall time per device.

Runs ``torchparity check`` on every API the ``distributed`` source covers (its ``APIS``)
in a fresh process per device and prints, per device, the APIs and cases, the case
statuses and causes, the APIs' verdicts and the wall time; on ``cpu`` (the device run is
a second CPU world, so every non-pass is the harness's own) it lists the non-passes.
How many of the torch.distributed entries the Ascend docs list (every
``torch-distributed*.md``) the source covers is printed first.

    python benchmarks/distributed.py [--device cpu] [--device emu:ascend-a2] [--jobs 1] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "data" / "ascend-native-api-docs"


def docs_coverage(apis) -> str:
    from torchparity.evidence.vendor_docs import load_vendor_docs

    index = load_vendor_docs(DOCS, "2.13.0")
    listed = sorted({e.name for e in index if e.name.startswith("torch.distributed.")})
    covered = [a for a in apis if a in listed]
    return (f"Ascend docs (torch 2.13.0): {len(listed)} torch.distributed entries; the "
            f"distributed source runs {len(apis)} APIs, {len(covered)} of them listed there")


def run_device(apis, device: str, jobs: int, keep: str = "") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(keep) / device.replace(":", "-")) if keep else tmp
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "torchparity", "check", *apis,
                               "--device", device, "--out", out, "--quiet", "--jobs", str(jobs)],
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode not in (0, 1):
            sys.exit(f"check on {device} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
        report = json.loads((Path(out) / "report.json").read_text(encoding="utf-8"))
    rows = [(a["name"], s) for a in report["apis"] for s in a["scenarios"]]
    statuses = Counter(s["status"] for _, s in rows)
    causes = Counter(s["cause"] for _, s in rows if s["cause"])
    verdicts = Counter(a["verdict"]["status"] for a in report["apis"])
    print(f"--device {device}: {len(report['apis'])} APIs, {len(rows)} cases in {elapsed:.0f} s "
          f"(--jobs {jobs})")
    print(f"  cases: {dict(sorted(statuses.items()))}; causes: {dict(sorted(causes.items()))}")
    print(f"  API verdicts: {dict(sorted(verdicts.items()))}")
    if device == "cpu":
        for name, s in rows:
            if s["status"] != "pass":
                print(f"  not a pass on the CPU: {name} {s['id']}[{s['dtype']}]: {s['detail'][:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", action="append", help="device spec (repeatable)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="", help="keep each device's reports in OUT/<device>")
    args = parser.parse_args()
    from torchparity.scenarios.sources.distributed import APIS, PREFIX

    apis = [PREFIX + name for name in APIS]
    print(docs_coverage(apis))
    for device in args.device or ["cpu", "emu:ascend-a2"]:
        run_device(apis, device, args.jobs, args.out)


if __name__ == "__main__":
    main()
