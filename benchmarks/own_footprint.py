"""What taking the API away changes: per source, the share of cases that observe their API,
the APIs whose evidence or category moved against the frames' attribution, and the hollow
cases left (issue 48).

A stratified sample of the vendor-listed APIs (``--sample N --seed S``: every namespace
keeps its share, as ``benchmarks/coverage.py`` draws it) is checked twice on one device,
each run in a process of its own: with the API taken away (``run.takeaway``, the default)
and with ``TORCHPARITY_TAKEAWAY=0`` (the frames' attribution alone). From the two
report.json files it prints:

- per source: cases whose API was taken away, of them observing / hollow / undecided, and
  cases left to the frames (with the reasons, counted);
- the APIs whose evidence, category or verdict moved, each with the moves of its cases
  (``op: frames -> takeaway (n)``) as the reason;
- every hollow case (API, case id, source, why);
- the share of sampled APIs left without a case that observes them.

Cases of the database sources (OpInfo samples, upstream replays) call the API directly
and are not taken away; they are counted apart.

    python benchmarks/own_footprint.py --sample 200 --seed 0 [--device emu:ascend-a2]
                                       [--out DIR] [--jobs 2] [--max-samples 2]
    python benchmarks/own_footprint.py --apis torch.distributed.send torch.distributed.all_gather ...
    python benchmarks/own_footprint.py --api-list benchmarks/data/value-apis-48.txt

``--apis`` (names, or files of names) and ``--api-list FILE`` (one a line, ``#`` comments)
check the APIs named instead of a sample: a before/after of one change restricted to the
APIs it is about.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from coverage import DOCS, stratified  # noqa: E402


def run_check(names: List[str], device: str, out: Path, takeaway: bool, jobs: int,
              max_samples: int) -> float:
    env = dict(os.environ, TORCHPARITY_TAKEAWAY="1" if takeaway else "0")
    cmd = [sys.executable, "-m", "torchparity", "check", *names, "--device", device,
           "--out", str(out), "--jobs", str(jobs), "--max-samples", str(max_samples), "-q"]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if not (out / "report.json").exists():
        sys.exit(f"check wrote no report ({'takeaway' if takeaway else 'frames'}): "
                 f"{proc.stderr[-2000:]}")
    return time.monotonic() - start


def summarise(report: Dict[str, Any]) -> Dict[str, Any]:
    by_source: Dict[str, Counter] = defaultdict(Counter)
    frames_why: Counter = Counter()
    hollow: List[Dict[str, str]] = []
    # taken_observed: observed by a case taken away (or a database case), not by the frames alone
    observed_apis, taken_observed, apis, empty_apis = set(), set(), [], set()
    for api in report["apis"]:
        apis.append(api["name"])
        for s in api["scenarios"]:
            src = s.get("source") or "hand"
            own = s.get("own")
            if own is None:
                by_source[src]["direct (not taken away)"] += 1
                if s["status"] not in ("skip", "timeout"):
                    observed_apis.add(api["name"])  # a database case calls the API itself
                    taken_observed.add(api["name"])
                continue
            if own["method"] == "frames":
                by_source[src]["frames"] += 1
                frames_why[own.get("reason", "")[:90]] += 1
                if own.get("observes") is True:  # the outcome changed without it: observed,
                    by_source[src]["frames, observes"] += 1  # its footprint left to the frames
                    observed_apis.add(api["name"])
                continue
            by_source[src]["taken away"] += 1
            if own.get("empty"):  # the API's code does nothing: no case can observe it
                by_source[src]["empty in torch"] += 1
                empty_apis.add(api["name"])
            elif own.get("observes") is True:
                by_source[src]["observes"] += 1
                observed_apis.add(api["name"])
                taken_observed.add(api["name"])
            elif own.get("observes") is False:
                by_source[src]["hollow"] += 1
                hollow.append({"api": api["name"], "case": f"{s['id']} [{s.get('dtype')}]",
                               "source": src, "why": own.get("reason", "")})
            else:
                by_source[src]["undecided"] += 1
    return {"by_source": by_source, "frames_why": frames_why, "hollow": hollow,
            "observed": observed_apis, "taken_observed": taken_observed, "apis": apis,
            "empty": empty_apis}


def moved_apis(frames: Dict[str, Any], taken: Dict[str, Any]) -> List[Dict[str, Any]]:
    before = {a["name"]: a for a in frames["apis"]}
    out = []
    for a in taken["apis"]:
        b = before.get(a["name"])
        if b is None:
            continue
        va, vb = a["verdict"], b["verdict"]
        changes = {k: (vb.get(k), va.get(k)) for k in ("status", "category", "evidence")
                   if vb.get(k) != va.get(k)}
        inv = (b["analysis"].get("device_involvement"), a["analysis"].get("device_involvement"))
        if inv[0] != inv[1]:
            changes["involvement"] = inv
        if not changes:
            continue
        reasons = sorted({m for s in a["scenarios"] for m in ((s.get("own") or {}).get("moved") or [])})
        whys = sorted({(s.get("own") or {}).get("reason", "") for s in a["scenarios"]
                       if (s.get("own") or {}).get("observes") is False})
        out.append({"api": a["name"], "changes": changes, "moved": reasons[:8],
                    "hollow": whys})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="emu:ascend-a2")
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, help="also write the summary here")
    parser.add_argument("--apis", nargs="+", default=None,
                        help="check these APIs (names, or files of names) instead of a sample")
    parser.add_argument("--api-list", type=Path, default=None,
                        help="check the APIs named in this file (one a line) instead of a sample")
    args = parser.parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix="own-footprint-"))
    named = [n for a in args.apis or () for n in
             (Path(a).read_text(encoding="utf-8").split() if Path(a).is_file() else [a])]
    if args.api_list is not None:
        try:
            lines = args.api_list.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            print(f"--api-list: cannot read {args.api_list}: {exc.strerror}", file=sys.stderr)
            sys.exit(2)
        named += [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]
    if named:
        sample = named
        print(f"named: {len(sample)} APIs; device {args.device}; out {out}", flush=True)
    else:
        sys.path.insert(0, str(ROOT / "src"))
        from torchparity.app.check_vendor import listed_apis

        names, _ = listed_apis(str(args.docs), args.torch_version)
        sample = stratified(names, args.sample, args.seed)
        print(f"stratified sample: {len(sample)} of {len(names)} listed APIs (seed {args.seed}); "
              f"device {args.device}; out {out}", flush=True)
    walls = {}
    for label, takeaway in (("takeaway", True), ("frames", False)):
        walls[label] = run_check(sample, args.device, out / label, takeaway, args.jobs, args.max_samples)
        print(f"  {label}: {walls[label]:.1f} s", flush=True)
    taken = json.loads((out / "takeaway" / "report.json").read_text(encoding="utf-8"))
    frames = json.loads((out / "frames" / "report.json").read_text(encoding="utf-8"))
    s = summarise(taken)

    print("\nper source (cases):")
    keys = ["taken away", "observes", "hollow", "empty in torch", "undecided", "frames", "frames, observes",
            "direct (not taken away)"]
    print(f"  {'source':<14}" + "".join(f"{k:>24}" for k in keys) + f"{'observes %':>12}")
    for src, c in sorted(s["by_source"].items()):
        share = f"{100 * c['observes'] / c['taken away']:.0f}" if c["taken away"] else "-"
        print(f"  {src:<14}" + "".join(f"{c[k]:>24}" for k in keys) + f"{share:>12}")
    print("\nleft to the frames, by reason:")
    for why, n in s["frames_why"].most_common():
        print(f"  {n:>4}  {why}")
    moved = moved_apis(frames, taken)
    print(f"\nAPIs whose answer moved against the frames' attribution: {len(moved)} of {len(s['apis'])}")
    for m in moved:
        ch = "; ".join(f"{k} {a} -> {b}" for k, (a, b) in m["changes"].items())
        print(f"  {m['api']}: {ch}")
        for r in m["moved"]:
            print(f"      {r}")
        for r in m["hollow"]:
            print(f"      hollow: {r}")
    print(f"\nhollow cases: {len(s['hollow'])}")
    for h in s["hollow"]:
        print(f"  {h['source']:<12} {h['api']}  {h['case']}: {h['why']}")
    unobserved = [a for a in s["apis"] if a not in s["observed"]]
    print(f"\nAPIs without a case that observes them: {len(unobserved)} of {len(s['apis'])} "
          f"({100 * len(unobserved) / max(len(s['apis']), 1):.1f} %)")
    empty = [a for a in unobserved if a in s["empty"]]
    print(f"  of which doing nothing in torch (an empty body, its torch implementations' too: "
          f"no case can observe them; device-independent by their code): {len(empty)}"
          + (f" ({', '.join(empty)}); the others: {len(unobserved) - len(empty)} of "
             f"{len(s['apis'])} ({100 * (len(unobserved) - len(empty)) / max(len(s['apis']), 1):.1f} %)"
             if empty else ""))
    by_takeaway = [a for a in s["apis"] if a not in s["taken_observed"]]
    print(f"  counting only cases whose own footprint came from the takeaway (not those whose "
          f"outcome changed but whose footprint stayed the frames'): {len(by_takeaway)} of {len(s['apis'])}")
    print(f"wall: takeaway {walls['takeaway']:.1f} s, frames {walls['frames']:.1f} s, "
          f"ratio {walls['takeaway'] / max(walls['frames'], 1e-9):.2f}x")
    if args.json:
        args.json.write_text(json.dumps({
            "sample": sample, "by_source": {k: dict(v) for k, v in s["by_source"].items()},
            "hollow": s["hollow"], "moved": moved, "unobserved": unobserved,
            "empty_in_torch": empty,
            "unobserved_by_takeaway": by_takeaway, "walls": walls},
            indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
