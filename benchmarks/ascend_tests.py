"""Ascend's own tests (Ascend/pytorch ``test/npu/``) run unchanged on the emulated device.

    TORCHPARITY_ASCEND_TESTS=<Ascend/pytorch>/test python benchmarks/ascend_tests.py
    ... --sample 30        # every k-th file, 30 files (a fixed sample: sorted, evenly spaced)
    ... --files test_npu.py,test_device.py --timeout 120 --device emu:ascend-a2 --out DIR

Each ``test/npu/test_*.py`` runs in its own process (``python -m torchparity.npu_testing``:
torchparity's ``torch_npu`` stand-in over ``emu:<profile>``) with a time limit, and every
failing test — and every file that fails before its tests run — is classified
(``torchparity.npu_testing.classify``): chip limit (with the profile's kernel fact and its
source), emulator (not emulated / defect), adapter gap, environment. Writes
``ascend_tests.md`` and ``ascend_tests.json`` to ``--out`` (default ``out/``) and prints
the Markdown. The numbers are emulated results: they say how the emulator and the adapter
fare on Ascend's tests, not what the chip does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from torchparity.npu_testing import environ  # noqa: E402
from torchparity.npu_testing.classify import CLASSES, Failure, classify  # noqa: E402

ENV = "TORCHPARITY_ASCEND_TESTS"
FAILING = ("failed", "error", "unexpected_success")


def _files(tree: Path, names, sample):
    files = sorted((tree / "npu").glob("test_*.py"))
    if names:
        wanted = set(names)
        files = [f for f in files if f.name in wanted]
    if sample and sample < len(files):
        step = len(files) / sample
        files = [files[int(i * step)] for i in range(sample)]
    return files


def interleaved(files):
    """Every 2nd file first, then the others: a run cut short has covered an even sample."""
    return files[0::2] + files[1::2]


def run_file(path: Path, device: str, timeout: float, profile):
    """Run one file in its own process; its tests' outcomes and classified failures."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        cmd = [sys.executable, "-m", "torchparity.npu_testing", "--device", device,
               "--results", str(out), str(path)]
        start = time.perf_counter()
        timed_out, rc, tail = False, None, ""
        try:
            proc = subprocess.run(cmd, cwd=str(path.parent), env=environ(device),
                                  capture_output=True, text=True, timeout=timeout)
            rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
        except subprocess.TimeoutExpired as exc:
            timed_out = True
            tail = ((exc.stdout or b"").decode(errors="replace")
                    + (exc.stderr or b"").decode(errors="replace"))[-3000:]
        wall = time.perf_counter() - start
        data = json.loads(out.read_text()) if out.is_file() else {"tests": [], "before_tests": None}
    tests = data["tests"]
    outcomes = Counter(t["outcome"] for t in tests)
    failures = []
    for t in tests:
        if t["outcome"] in FAILING:
            text = t["detail"] or "unexpected success"
            failures.append((t["id"], classify(text, profile)))
    signal = -rc if rc is not None and rc < 0 else None
    ran_ids = {t["id"] for t in tests}
    if data.get("before_tests"):
        failures.append(("<file>", classify(data["before_tests"], profile)))
    elif timed_out or signal is not None:
        failures.append(("<file>", classify(tail, profile, timed_out=timed_out, signal=signal)))
    elif rc not in (0, None) and not failures:
        # exited non-zero with no failing test recorded: what it printed says why
        failures.append(("<file>", classify(tail, profile)))
    return {"file": path.name, "rc": rc, "timed_out": timed_out, "wall_s": round(wall, 1),
            "tests": len(ran_ids), "outcomes": dict(outcomes),
            "failures": [{"test": tid, **f.model_dump()} for tid, f in failures]}


def summarize(rows):
    per_class = Counter()
    reasons = Counter()
    files_with = Counter()
    for r in rows:
        seen = set()
        for f in r["failures"]:
            per_class[f["cls"]] += 1
            reasons[(f["cls"], f["reason"])] += 1
            seen.add(f["cls"])
        for c in seen:
            files_with[c] += 1
    outcomes = Counter()
    for r in rows:
        outcomes.update(r["outcomes"])
    n = len(rows)
    no_gap = n - files_with["adapter_gap"]
    return {"files": n, "tests": sum(r["tests"] for r in rows), "outcomes": dict(outcomes),
            "failures": sum(per_class.values()),
            "per_class": {c: per_class[c] for c in CLASSES},
            "files_with_class": {c: files_with[c] for c in CLASSES},
            "files_clean": sum(1 for r in rows if not r["failures"]),
            "files_without_adapter_gap": no_gap,
            "share_without_adapter_gap": round(no_gap / n, 3) if n else None,
            "emulator_split": {
                "not emulated": sum(k for (c, why), k in reasons.items()
                                    if c == "emulator" and why.startswith("not emulated")),
                "defect": sum(k for (c, why), k in reasons.items()
                              if c == "emulator" and why.startswith("defect"))},
            "reasons": [{"cls": c, "reason": why, "n": k}
                        for (c, why), k in reasons.most_common()]}


def markdown(summary, rows, meta) -> str:
    s = summary
    out = [f"# Ascend's own tests on the emulated device ({meta['device']}, emulated)", "",
           f"Tree: Ascend/pytorch `test/npu` ({meta['which']}); one process per file, "
           f"time limit {meta['timeout']} s, {meta['jobs']} at once; torch {meta['torch']}.", "",
           "| files | tests run | passed | skipped | failures | files clean | "
           "files without adapter gap |", "|---|---|---|---|---|---|---|",
           f"| {s['files']} | {s['tests']} | {s['outcomes'].get('passed', 0)} | "
           f"{s['outcomes'].get('skipped', 0)} | {s['failures']} | {s['files_clean']} | "
           f"{s['files_without_adapter_gap']} ({100 * (s['share_without_adapter_gap'] or 0):.0f} %) |",
           "", "| failure class | failures | files |", "|---|---|---|"]
    for c in CLASSES:
        out.append(f"| {c} | {s['per_class'][c]} | {s['files_with_class'][c]} |")
        if c == "emulator":
            out.append(f"| — of which not emulated / defect | {s['emulator_split']['not emulated']}"
                       f" / {s['emulator_split']['defect']} | |")
    out += ["", "| class | reason | failures |", "|---|---|---|"]
    for r in s["reasons"]:
        out.append(f"| {r['cls']} | {r['reason']} | {r['n']} |")
    chips = [(r["file"], f) for r in rows for f in r["failures"] if f["cls"] == "chip_limit"]
    if chips:
        out += ["", "Chip limits (the profile's fact and its source):", ""]
        for file, f in chips:
            out.append(f"- `{file}` {f['test'].rsplit('.', 1)[-1]}: {f['reason']} — "
                       f"{f['fact']}; source: {f['source']}")
    out += ["", "| file | tests | passed | skipped | failures (class: n) | wall s |",
            "|---|---|---|---|---|---|"]
    for r in rows:
        by = Counter(f["cls"] for f in r["failures"])
        cell = ", ".join(f"{c}: {k}" for c, k in sorted(by.items())) or "—"
        out.append(f"| {r['file']} | {r['tests']} | {r['outcomes'].get('passed', 0)} | "
                   f"{r['outcomes'].get('skipped', 0)} | {cell} | {r['wall_s']} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="emu:ascend-a2")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per file")
    ap.add_argument("--sample", type=int, default=0, help="a fixed, evenly spaced sample")
    ap.add_argument("--files", default="", help="comma-separated file names")
    ap.add_argument("--jobs", type=int, default=1, help="files run at once")
    ap.add_argument("--out", default=str(ROOT / "out"))
    ap.add_argument("--reclassify", default="", metavar="JSON",
                    help="classify the failures an earlier run recorded again (this "
                         "classifier, the same run's exception lines); runs nothing")
    ap.add_argument("--merge", default="", metavar="JSON",
                    help="with --reclassify: replace its rows by this later run's rows for "
                         "the files both have (both runs are named in the table)")
    ap.add_argument("--add", default="", metavar="JSON",
                    help="with --reclassify: add this other run's rows for the files the first "
                         "one lacks (a run of the files not run before)")
    args = ap.parse_args(argv)
    if args.reclassify:
        return reclassify(Path(args.reclassify), Path(args.merge) if args.merge else None,
                          Path(args.out), Path(args.add) if args.add else None)
    tree = os.environ.get(ENV)
    if not tree:
        print(f"{ENV} is not set: point it at the 'test' folder of an Ascend/pytorch checkout",
              file=sys.stderr)
        return 2
    if not (Path(tree) / "npu").is_dir():
        print(f"{ENV}={tree}: no npu/ folder there (expected Ascend/pytorch's test/)",
              file=sys.stderr)
        return 2
    if not args.device.startswith("emu:"):
        print(f"--device {args.device}: Ascend's tests run here on the emulated device "
              "(emu:<profile>)", file=sys.stderr)
        return 2
    import torch

    from torchparity.devices.profiles import load_profile

    profile = load_profile(args.device[4:] or "ascend-a2")
    names = [n.strip() for n in args.files.split(",") if n.strip()]
    files = _files(Path(tree), names, args.sample)
    total = len(list((Path(tree) / "npu").glob("test_*.py")))
    which = (f"all {total} files" if len(files) == total else
             f"{len(files)} of {total} files: " + ("named" if names else
                                                    f"every {total / len(files):.1f}th, sorted"))
    from concurrent.futures import ThreadPoolExecutor

    def one(f):
        row = run_file(f, args.device, args.timeout, profile)
        print(f"{f.name}: {row['outcomes']} failures "
              f"{dict(Counter(x['cls'] for x in row['failures']))} ({row['wall_s']} s)",
              file=sys.stderr, flush=True)
        return row

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"device": args.device, "which": which, "timeout": args.timeout,
            "jobs": args.jobs, "torch": torch.__version__, "files": [f.name for f in files]}
    rows = []

    def write(done: bool) -> str:
        ordered = sorted(rows, key=lambda r: r["file"])
        info = dict(meta, complete=done, done=len(rows))
        if not done:
            info["which"] = f"{len(rows)} of the {len(files)} files planned ({which}), so far"
        md = markdown(summarize(ordered), ordered, info)
        (out / "ascend_tests.md").write_text(md, encoding="utf-8")
        (out / "ascend_tests.json").write_text(json.dumps(
            {"meta": info, "summary": summarize(ordered), "files": ordered}, indent=1),
            encoding="utf-8")
        return md

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for row in pool.map(one, interleaved(files)):
            rows.append(row)
            write(done=False)  # a run cut short leaves what it has
    print(write(done=True))
    return 0


def reclassify(path: Path, merge, out: Path, add=None) -> int:
    """An earlier run's table again, with this classifier on its recorded exception lines
    (a timed-out file stays timed out); ``merge``: a later run's rows for the files it ran."""
    from torchparity.devices.profiles import load_profile

    for p in filter(None, (path, merge, add)):
        if not p.is_file():
            print(f"--reclassify/--merge {p}: no such file", file=sys.stderr)
            return 2
    data = json.loads(path.read_text())
    meta = data["meta"]
    profile = load_profile(meta["device"][4:] or "ascend-a2")
    extra = json.loads(add.read_text())["files"] if add else []
    for row in data["files"] + extra:
        for f in row["failures"]:
            timed = row["timed_out"] and f["test"] == "<file>"
            f.update(classify(f["detail"], profile, timed_out=timed).model_dump())
    rows = {r["file"]: r for r in data["files"]}
    added = sorted(r["file"] for r in extra if r["file"] not in rows)
    for r in extra:
        rows.setdefault(r["file"], r)
    if added:
        meta["which"] += f"; {len(added)} more files from a second run (the ones not run before)"
    if merge:
        later = json.loads(merge.read_text())
        merged = sorted(r["file"] for r in later["files"] if r["file"] in rows)
        for r in later["files"]:
            if r["file"] in rows:
                rows[r["file"]] = dict(r, rerun=True)
        meta["which"] += f"; rerun after fixes: {', '.join(merged)}"
    meta["which"] += "; failures classified again from the recorded exception lines"
    ordered = sorted(rows.values(), key=lambda r: r["file"])
    md = markdown(summarize(ordered), ordered, meta)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ascend_tests.md").write_text(md, encoding="utf-8")
    (out / "ascend_tests.json").write_text(json.dumps(
        {"meta": meta, "summary": summarize(ordered), "files": ordered}, indent=1),
        encoding="utf-8")
    print(md)
    return 0


__all__ = ["Failure", "main", "run_file", "summarize"]

if __name__ == "__main__":
    sys.exit(main())
