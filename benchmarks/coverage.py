"""Coverage of the vendor-documented API list: how many APIs get an executed verdict.

Runs ``check --apis-from-vendor-docs`` (``app.check_vendor.check_vendor_docs``, one worker
pool, resumable) over every API that the shipped Ascend docs list for a torch version,
on each device asked (default: ``emu:ascend-a2``, then ``cpu`` as the baseline), and
prints per device:

- how many listed APIs get at least one executed scenario (a row that ran: not skip, not
  unknown) and a verdict other than ``unknown``, by namespace and by scenario source
  (every source module found in ``scenarios/sources/`` is counted; a new one shows up
  without touching this script);
- the wall time (planning: resolving names and asking the sources, cached within the
  process, so a second device plans in ~0 s; running);
- on ``cpu``: the fails / errors / crashes / timeouts, which are all the tool's own there
  (the device is the reference itself), listed.

Targets (issue 9): >= 1,800 of 3,249 APIs with a verdict; <= 30 min for the whole list on
2 cores; 0 such rows on the CPU. Whole-list mode caps OpInfo samples per case
(``--max-samples``, default 2). Writes ``OUT/<device>/`` (store and matrix) and
``OUT/coverage.json``; a rerun with the same ``--out`` resumes.

    python benchmarks/coverage.py [--device emu:ascend-a2 --device cpu] [--limit N]
                                  [--out DIR] [--jobs 2] [--max-samples 2] [--tests DIR]
                                  [--namespace torch.fx ...]

With ``--tests DIR`` the upstream tests of each API in that tree are replayed as well
(source ``upstream``, counted like the others).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "data" / "ascend-native-api-docs"
TOOL_PROBLEMS = ("fail", "error", "crash", "timeout")


def namespace(api: str) -> str:
    """torch.abs -> torch; torch.nn.functional.relu -> torch.nn.functional;
    torch.distributions.normal.Normal.mean -> torch.distributions."""
    parts = api.split(".")[:-1]
    if len(parts) >= 3 and parts[2] == "functional":
        return ".".join(parts[:3])
    return ".".join(parts[:2]) or api


class _Ticker:
    """A line on stderr every ``every`` cases (the benchmark's own, quiet progress)."""

    def __init__(self, label: str, every: int = 500):
        self.label, self.every, self.n, self.total, self.t0 = label, every, 0, 0, time.monotonic()

    def start(self, total: int, description: str) -> None:
        self.total = total
        print(f"[{self.label}] {description}: {total} case(s) to run", file=sys.stderr, flush=True)

    def advance(self, row: Dict[str, Any]) -> None:
        self.n += 1
        if self.n % self.every == 0:
            print(f"[{self.label}] {self.n}/{self.total} cases, {time.monotonic() - self.t0:.0f} s",
                  file=sys.stderr, flush=True)

    def stop(self) -> None:
        pass


def measure(device: str, out: Path, args) -> Dict[str, Any]:
    from torchparity.app.check_vendor import check_vendor_docs
    from torchparity.results.sweep_store import open_store
    from torchparity.scenarios.sources import all_sources

    folder = out / device.replace(":", "_")
    start = time.monotonic()
    summary = check_vendor_docs(str(args.docs), out=str(folder), device=device,
                                torch_version=args.torch_version, jobs=args.jobs,
                                tests_dir=str(args.tests) if args.tests else None,
                                max_samples=args.max_samples, limit=args.limit,
                                timeout=args.timeout, progress=_Ticker(device), spread=True,
                                namespaces=args.namespace or ())
    wall = time.monotonic() - start
    store = open_store(folder, must_exist=True)
    rows = store.rows()
    store.close()
    listed = set(summary.verdicts)
    rows = [r for r in rows if r["api"] in listed]

    executed: Dict[str, set] = defaultdict(set)  # api -> sources with a row that ran
    for r in rows:
        if r["status"] not in ("skip", "unknown"):
            executed[r["api"]].add(r["sample_set"])
    covered = {a for a, v in summary.verdicts.items() if v != "unknown" and executed.get(a)}

    by_ns: Dict[str, Counter] = defaultdict(Counter)
    for api in summary.verdicts:
        by_ns[namespace(api)]["listed"] += 1
        by_ns[namespace(api)]["covered"] += api in covered
    by_source: Counter = Counter()
    for api in covered:
        for s in executed[api]:
            by_source[s] += 1
    for mod in all_sources():
        by_source.setdefault(mod.name, 0)
    problems = [r for r in rows if r["status"] in TOOL_PROBLEMS]
    ran_by_source: Dict[str, Counter] = defaultdict(Counter)  # source -> rows ran / passed
    for r in rows:
        if r["status"] not in ("skip", "unknown"):
            ran_by_source[r["sample_set"]]["ran"] += 1
            ran_by_source[r["sample_set"]]["pass"] += r["status"] == "pass"
    left: Counter = Counter()  # named reason -> APIs left without a verdict
    reasons = _left_reasons(rows)
    for api in set(summary.verdicts) - covered:
        left[reasons.get(api, "no row recorded")] += 1
    return {
        "device": device, "apis": summary.apis, "covered": len(covered),
        "verdicts": dict(Counter(summary.verdicts.values())),
        "by_namespace": {k: dict(v) for k, v in sorted(by_ns.items(), key=lambda kv: -kv[1]["listed"])},
        "by_source": dict(sorted(by_source.items(), key=lambda kv: -kv[1])),
        "cases": len([r for r in rows if r["status"] != "unknown"]),
        "ran_now": summary.ran, "already_done": summary.already_done,
        "plan_seconds": round(summary.plan_seconds, 1), "run_seconds": round(summary.seconds, 1),
        "wall_seconds": round(wall, 1),
        "rows_ran_by_source": {k: dict(v) for k, v in sorted(ran_by_source.items())},
        "left_by_reason": dict(left.most_common()),
        "problem_rows": len(problems),
        "problems": [{k: r[k] for k in ("api", "variant", "sample_set", "dtype", "status", "cause", "detail")}
                     for r in problems[:50]],
    }


def _left_reasons(rows: List[Dict[str, Any]]) -> Dict[str, str]:
    """api -> the named reason it has no executed verdict: a skipped row's own reason
    (``not runnable: needs the network``), else the "No scenario ran: <reason>." head of its
    unknown row (the owning sources' words), cut to its first clause."""
    out: Dict[str, str] = {}
    for r in rows:
        detail = (r.get("detail") or "").strip()
        if r["status"] == "skip":
            out.setdefault(r["api"], _clause(detail))
        elif r["status"] == "unknown" and r["api"] not in out:
            if detail.startswith("No scenario ran:"):
                detail = detail[len("No scenario ran:"):].split(" Sources tried —")[0]
            elif detail.startswith("No scenario ran."):
                detail = "no scenario source covers this API"
            out[r["api"]] = _clause(detail)
    return out


def _clause(text: str, limit: int = 90) -> str:
    text = text.strip().rstrip(".")
    for sep in (" (", "; ", ": [", " — "):
        text = text.split(sep)[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def report(results: List[Dict[str, Any]]) -> str:
    lines = ["| device | listed APIs | with a verdict | plan s | run s | wall s | fail/error/crash/timeout rows |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['device']} | {r['apis']} | {r['covered']} | {r['plan_seconds']} | "
                     f"{r['run_seconds']} | {r['wall_seconds']} | {r['problem_rows']} |")
    for r in results:
        lines += ["", f"### {r['device']}: by source (APIs with an executed verdict)", "",
                  "| source | APIs |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in r["by_source"].items()]
        lines += ["", f"### {r['device']}: rows that ran, by source (docstring examples included)", "",
                  "| source | rows ran | pass | pass rate |", "|---|---:|---:|---:|"]
        lines += [f"| {k} | {v.get('ran', 0)} | {v.get('pass', 0)} | "
                  f"{100.0 * v.get('pass', 0) / max(1, v.get('ran', 0)):.1f} % |"
                  for k, v in r["rows_ran_by_source"].items()]
        lines += ["", f"### {r['device']}: APIs left without an executed verdict, by named reason", "",
                  "| reason | APIs |", "|---|---:|"]
        lines += [f"| {k.replace('|', '/')} | {v} |" for k, v in r["left_by_reason"].items()]
        lines += ["", f"### {r['device']}: by namespace", "", "| namespace | listed | with a verdict |",
                  "|---|---:|---:|"]
        lines += [f"| {k} | {v.get('listed', 0)} | {v.get('covered', 0)} |"
                  for k, v in r["by_namespace"].items()]
        if r["problems"]:
            lines += ["", f"### {r['device']}: fail / error / crash / timeout rows (first 50)", ""]
            lines += [f"- {p['api']} [{p['variant']}, {p['sample_set']}] {p['dtype']}: {p['status']} "
                      f"{p['cause']}: {p['detail'][:160]}" for p in r["problems"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", action="append", help="device spec (repeatable) "
                        "[default: emu:ascend-a2 and cpu]")
    parser.add_argument("--docs", type=Path, default=DOCS, help="vendor docs folder")
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--namespace", action="append", default=[],
                        help="only listed APIs under this dotted name (repeatable), e.g. torch.fx")
    parser.add_argument("--limit", type=int, default=None, help="only N listed APIs, spread evenly over the list (a trial)")
    parser.add_argument("--out", type=Path, default=None, help="folder (a rerun resumes) [default: temp]")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--tests", type=Path, default=None,
                        help="a test tree: replay each API's upstream tests too (source upstream)")
    args = parser.parse_args()
    devices = args.device or ["emu:ascend-a2", "cpu"]
    tmp = None
    if args.out is None:
        tmp = tempfile.TemporaryDirectory()
        args.out = Path(tmp.name)
    results = [measure(d, args.out, args) for d in devices]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "coverage.json").write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    print(report(results))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
