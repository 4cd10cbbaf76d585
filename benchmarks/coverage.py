"""Coverage of the vendor-documented API list: how many APIs get a real answer.

Runs ``check --apis-from-vendor-docs`` (``app.check_vendor.check_vendor_docs``, one worker
pool, resumable) over the APIs that the shipped Ascend docs list for a torch version, on
each device asked (default: ``emu:ascend-a2``, then ``cpu`` as the baseline). By default
a **stratified sample** (``--sample 400`` APIs, ``--seed 0``: every namespace keeps its
share of the list, at least one API each; the machine is shared); ``--all`` runs the whole
list (the slow suite). Prints per device, counting only real answers (issue 18):

- APIs with a ``device-compute`` answer and APIs with a ``device-state`` answer (the
  strongest ``evidence`` of their answering rows, derived from the footprint);
- APIs **device-independent** (every answering row host-only);
- APIs undetermined, grouped by named reason (no scenario source applies, the emulator
  cannot do it, every case timed out, the harness failed, only skips / not comparable);
- emulator limits and timeouts (rows and APIs): never counted as answers;
- by namespace and by scenario source, the wall time (planning; running);
- on ``cpu``: the fails / errors / crashes / timeouts, which are all the tool's own there
  (the device is the reference itself), listed.

A row answers when it is not a skip, not a timeout, and its cause is none of timeout,
harness_error, emulator_limit, not_comparable, upstream_skip (``judge.evidence``). Writes
``OUT/<device>/`` (store and matrix) and ``OUT/coverage.json`` (with the sampled names);
a rerun with the same ``--out`` resumes. Each device runs in a fresh process of its own
(planning paid by each); with ``cpu`` among them, each other device's wall, planning and
running time over the cpu's in this run.

    python benchmarks/coverage.py [--device emu:ascend-a2 --device cpu] [--sample 400]
                                  [--seed 0] [--all] [--out DIR] [--jobs 2]
                                  [--max-samples 2] [--tests DIR] [--namespace torch.fx ...]

With ``--tests DIR`` the upstream tests of each API in that tree are replayed as well
(source ``upstream``, counted like the others).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Tuple

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


def stratified(names: List[str], size: int, seed: int) -> List[str]:
    """``size`` names drawn with ``seed``, every namespace keeping its share of the list
    (at least one each, largest remainders first), in list order."""
    if size <= 0 or size >= len(names):
        return list(names)
    groups: Dict[str, List[str]] = defaultdict(list)
    for n in names:
        groups[namespace(n)].append(n)
    share = {ns: max(1, int(size * len(g) / len(names))) for ns, g in groups.items()}
    order = sorted(groups, key=lambda ns: -(size * len(groups[ns]) / len(names) - share[ns]))
    k = 0
    while sum(share.values()) < size and k < 10 * len(order):
        ns = order[k % len(order)]
        if share[ns] < len(groups[ns]):
            share[ns] += 1
        k += 1
    while sum(share.values()) > size:  # the minimum of one each overshot: trim the largest
        ns = max(share, key=lambda x: share[x])
        share[ns] -= 1
    rng = random.Random(seed)
    picked = set()
    for ns in sorted(groups):
        picked.update(rng.sample(groups[ns], min(share[ns], len(groups[ns]))))
    return [n for n in names if n in picked]


def classify_api(rows: List[Dict[str, Any]], verdict: str) -> Tuple[str, str]:
    """(kind, reason) of one API from its rows and verdict status: kind is
    device-compute | device-state | device-independent | host-only-differs | undetermined;
    reason names why an undetermined API has no answer."""
    from torchparity.judge.evidence import is_answer, strongest

    answers = [r for r in rows if r["status"] != "unknown" and is_answer(r["status"], r.get("cause"))]
    if answers:
        best = strongest(r.get("evidence") for r in answers)
        if best in ("device-compute", "device-state"):
            return best, ""
        if verdict == "device-independent":
            return "device-independent", ""
        if best == "host-only":
            return "host-only-differs", ""
        return "undetermined", _unrecorded(answers)
    causes = Counter(r.get("cause") for r in rows if r["status"] != "unknown")
    for cause, reason in (("emulator_limit", "emulator limit (needs hardware to decide)"),
                          ("timeout", "timeout"), ("harness_error", "harness error")):
        if causes.get(cause):
            return "undetermined", reason
    if any(r["status"] == "timeout" for r in rows):
        return "undetermined", "timeout"
    reasons = _left_reasons(rows)
    return "undetermined", reasons.get(rows[0]["api"], "no row recorded") if rows else "no row recorded"


def _unrecorded(answers: List[Dict[str, Any]]) -> str:
    """Why answering rows have no footprint to derive evidence from, by what ran them."""
    if all(str(r.get("variant", "")).startswith("world2-rpc") for r in answers):
        return ("answers without a recorded footprint: an RPC world whose ranks sent none back "
                "(its served calls record theirs in the callee's RPC threads)")
    if any(r.get("status") == "crash" for r in answers):
        return "answers without a recorded footprint: the case crashed"
    return ("answers without a recorded footprint: the device work ran in processes that sent none "
            "back (a launcher's children, ranks that died)")


# named classes of the reasons an API is left undetermined (first match wins); each keeps
# its detailed reasons in ``left_by_reason``
REASON_CLASSES: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("emulator limit (needs hardware to decide)", ("emulator limit", "emulated device has none",
                                                    "torch.compile backends are not emulated")),
    ("not in this torch / cannot be reached here", ("unknown API", "cannot be reached here",
                                                    "not in this torch", "has no attribute",
                                                    "does not resolve")),
    ("needs a tool, package or build not here (valgrind, C++ toolchain, onnxscript, inductor)",
     ("valgrind", "C++ toolchain", "onnxscript", "onnx ", "setuptools", "inductor", "not installed")),
    ("needs an external service (etcd, the network)", ("etcd", "the network")),
    ("a source names it no device question (no scenario runs it to record a footprint)",
     ("no device is involved", "no device involved", "no device i…", "on the CPU by definition",
      "not a device result", "an enum describing operators", "an enum member's name")),
    ("scaffolding refused (the scenario's own op, not the API's)", ("scaffolding refused",)),
    ("no footprint from the processes that ran it (RPC callee threads, launchers)",
     ("answers without a recorded footprint",)),
    ("timeout", ("timeout",)),
    ("harness error", ("harness error",)),
)


def reason_class(reason: str) -> str:
    """The named class of one undetermined API's reason (``REASON_CLASSES``), else
    "other: <reason>"."""
    for name, needles in REASON_CLASSES:
        if any(n.lower() in reason.lower() for n in needles):
            return name
    return f"other: {reason}"


def measure(device: str, out: Path, args, sample: List[str]) -> Dict[str, Any]:
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
                                namespaces=args.namespace or (), only=sample or None)
    wall = time.monotonic() - start
    store = open_store(folder, must_exist=True)
    rows = store.rows()
    store.close()
    listed = set(summary.verdicts)
    rows = [r for r in rows if r["api"] in listed]
    by_api: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_api[r["api"]].append(r)

    kinds: Dict[str, str] = {}
    left: Counter = Counter()  # named reason -> APIs undetermined
    left_apis: Dict[str, List[str]] = defaultdict(list)  # reason class -> the APIs
    for api in summary.verdicts:
        kind, reason = classify_api(by_api.get(api, []), summary.verdicts[api])
        kinds[api] = kind
        if kind == "undetermined":
            left[reason] += 1
            left_apis[reason_class(reason)].append(api)
    answered = {a for a, k in kinds.items() if k != "undetermined"}

    by_ns: Dict[str, Counter] = defaultdict(Counter)
    for api in summary.verdicts:
        by_ns[namespace(api)]["listed"] += 1
        by_ns[namespace(api)]["answered"] += api in answered
    by_source: Counter = Counter()  # source -> APIs it gave an answering row
    from torchparity.judge.evidence import is_answer

    for api in answered:
        for s in {r["sample_set"] for r in by_api[api] if is_answer(r["status"], r.get("cause"))
                  and r["status"] != "unknown"}:
            by_source[s] += 1
    for mod in all_sources():
        by_source.setdefault(mod.name, 0)
    problems = [r for r in rows if r["status"] in TOOL_PROBLEMS]
    ran_by_source: Dict[str, Counter] = defaultdict(Counter)  # source -> answering rows / passed
    for r in rows:
        if r["status"] != "unknown" and is_answer(r["status"], r.get("cause")):
            ran_by_source[r["sample_set"]]["ran"] += 1
            ran_by_source[r["sample_set"]]["pass"] += r["status"] == "pass"
    emu_rows = [r for r in rows if r.get("cause") == "emulator_limit"]
    timeout_rows = [r for r in rows if r["status"] == "timeout" or r.get("cause") == "timeout"]
    return {
        "device": device, "apis": summary.apis, "answered": len(answered),
        "kinds": dict(Counter(kinds.values())),
        "verdicts": dict(Counter(summary.verdicts.values())),
        "emulator_limit": {"rows": len(emu_rows), "apis": len({r["api"] for r in emu_rows})},
        "timeouts": {"rows": len(timeout_rows), "apis": len({r["api"] for r in timeout_rows})},
        "by_namespace": {k: dict(v) for k, v in sorted(by_ns.items(), key=lambda kv: -kv[1]["listed"])},
        "by_source": dict(sorted(by_source.items(), key=lambda kv: -kv[1])),
        "cases": len([r for r in rows if r["status"] != "unknown"]),
        "ran_now": summary.ran, "already_done": summary.already_done,
        "plan_seconds": round(summary.plan_seconds, 1), "run_seconds": round(summary.seconds, 1),
        "wall_seconds": round(wall, 1),
        "rows_ran_by_source": {k: dict(v) for k, v in sorted(ran_by_source.items())},
        "left_by_reason": dict(left.most_common()),
        "left_by_class": {k: sorted(v) for k, v in sorted(left_apis.items(), key=lambda kv: -len(kv[1]))},
        "problem_rows": len(problems),
        "problems": [{k: r[k] for k in ("api", "variant", "sample_set", "dtype", "status", "cause", "detail")}
                     for r in problems[:50]],
        "emulator_limits": [{k: r[k] for k in ("api", "variant", "dtype", "detail")} for r in emu_rows[:30]],
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
    lines = ["| device | APIs | device-compute | device-state | device-independent | undetermined "
             "| emulator limits (rows / APIs) | timeouts (rows / APIs) | wall s | fail/error/crash/timeout rows |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        k = r["kinds"]
        lines.append(f"| {r['device']} | {r['apis']} | {k.get('device-compute', 0)} | "
                     f"{k.get('device-state', 0)} | {k.get('device-independent', 0)} | "
                     f"{k.get('undetermined', 0)} | {r['emulator_limit']['rows']} / {r['emulator_limit']['apis']} | "
                     f"{r['timeouts']['rows']} / {r['timeouts']['apis']} | {r['wall_seconds']} | "
                     f"{r['problem_rows']} |")
        if k.get("host-only-differs"):
            lines.append(f"| {r['device']}: host-only answers that differ from the CPU | "
                         f"{k['host-only-differs']} | | | | | | | | |")
    for r in results:
        lines += ["", f"### {r['device']}: undetermined APIs, by class of reason", "",
                  "| class | APIs | which |", "|---|---:|---|"]
        lines += [f"| {k.replace('|', '/')} | {len(v)} | {', '.join(v[:8])}{' ...' if len(v) > 8 else ''} |"
                  for k, v in r.get("left_by_class", {}).items()]
        lines += ["", f"### {r['device']}: undetermined APIs, by named reason", "",
                  "| reason | APIs |", "|---|---:|"]
        lines += [f"| {k.replace('|', '/')} | {v} |" for k, v in r["left_by_reason"].items()]
        lines += ["", f"### {r['device']}: by source (APIs with an answering row)", "",
                  "| source | APIs |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in r["by_source"].items()]
        lines += ["", f"### {r['device']}: answering rows by source", "",
                  "| source | rows | pass | pass rate |", "|---|---:|---:|---:|"]
        lines += [f"| {k} | {v.get('ran', 0)} | {v.get('pass', 0)} | "
                  f"{100.0 * v.get('pass', 0) / max(1, v.get('ran', 0)):.1f} % |"
                  for k, v in r["rows_ran_by_source"].items()]
        lines += ["", f"### {r['device']}: by namespace", "", "| namespace | listed | answered |",
                  "|---|---:|---:|"]
        lines += [f"| {k} | {v.get('listed', 0)} | {v.get('answered', 0)} |"
                  for k, v in r["by_namespace"].items()]
        if r["emulator_limits"]:
            lines += ["", f"### {r['device']}: emulator limits (first 30; not answers)", ""]
            lines += [f"- {p['api']} [{p['variant']}] {p['dtype']}: {p['detail'][:160]}"
                      for p in r["emulator_limits"]]
        if r["problems"]:
            lines += ["", f"### {r['device']}: fail / error / crash / timeout rows (first 50)", ""]
            lines += [f"- {p['api']} [{p['variant']}, {p['sample_set']}] {p['dtype']}: {p['status']} "
                      f"{p['cause']}: {p['detail'][:160]}" for p in r["problems"]]
    return "\n".join(lines)


def measure_alone(device: str, args, sample: List[str]) -> Dict[str, Any]:
    """``measure`` of one device in a fresh process of its own: each device pays its own
    planning (the CPU probes every source makes, which a second device in one process
    would find done) and starts no warmer than the first."""
    import subprocess

    cmd = [sys.executable, __file__, "--measure-one", device, "--out", str(args.out),
           "--docs", str(args.docs), "--torch-version", args.torch_version,
           "--jobs", str(args.jobs), "--max-samples", str(args.max_samples),
           "--timeout", str(args.timeout)]
    cmd += ["--limit", str(args.limit)] if args.limit else []
    cmd += ["--tests", str(args.tests)] if args.tests else []
    for ns in args.namespace:
        cmd += ["--namespace", ns]
    if sample:
        names = args.out / "sample.json"
        names.write_text(json.dumps(sample), encoding="utf-8")
        cmd += ["--sample-file", str(names)]
    else:
        cmd += ["--all"]
    subprocess.run(cmd, check=True)
    result_file = args.out / f"{device.replace(':', '_')}.result.json"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    result_file.unlink()
    return result


def ratios(results: List[Dict[str, Any]]) -> List[str]:
    """Each device's wall, planning and running time over the cpu's, from this one run."""
    cpu = next((r for r in results if r["device"] == "cpu"), None)
    if cpu is None:
        return []
    lines = []
    for r in results:
        if r is not cpu:
            lines.append(f"{r['device']} / cpu, this run: wall {r['wall_seconds'] / max(cpu['wall_seconds'], 1e-9):.2f}x "
                         f"({r['wall_seconds']} s / {cpu['wall_seconds']} s), planning "
                         f"{r['plan_seconds']} s / {cpu['plan_seconds']} s, running "
                         f"{r['run_seconds'] / max(cpu['run_seconds'], 1e-9):.2f}x")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", action="append", help="device spec (repeatable) "
                        "[default: emu:ascend-a2 and cpu]")
    parser.add_argument("--docs", type=Path, default=DOCS, help="vendor docs folder")
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--namespace", action="append", default=[],
                        help="only listed APIs under this dotted name (repeatable), e.g. torch.fx")
    parser.add_argument("--limit", type=int, default=None, help="only N listed APIs, spread evenly over the list (a trial)")
    parser.add_argument("--sample", type=int, default=400,
                        help="a stratified sample of N listed APIs (by namespace) [default: 400]")
    parser.add_argument("--seed", type=int, default=0, help="the sample's random seed [default: 0]")
    parser.add_argument("--all", action="store_true", help="the whole list (the slow suite)")
    parser.add_argument("--out", type=Path, default=None, help="folder (a rerun resumes) [default: temp]")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--tests", type=Path, default=None,
                        help="a test tree: replay each API's upstream tests too (source upstream)")
    parser.add_argument("--measure-one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--sample-file", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    devices = args.device or ["emu:ascend-a2", "cpu"]
    tmp = None
    if args.out is None:
        tmp = tempfile.TemporaryDirectory()
        args.out = Path(tmp.name)
    sample: List[str] = []
    if args.sample_file:
        sample = json.loads(args.sample_file.read_text(encoding="utf-8"))
    elif not args.all:
        from torchparity.app.check_vendor import listed_apis

        names, _ = listed_apis(str(args.docs), args.torch_version)
        sample = stratified(names, args.sample, args.seed)
        print(f"stratified sample: {len(sample)} of {len(names)} listed APIs (seed {args.seed})",
              file=sys.stderr, flush=True)
    if args.measure_one:  # a child of the run below: one device, its result to a file
        (args.out / f"{args.measure_one.replace(':', '_')}.result.json").write_text(
            json.dumps(measure(args.measure_one, args.out, args, sample)), encoding="utf-8")
        return
    args.out.mkdir(parents=True, exist_ok=True)
    results = [measure_alone(d, args, sample) for d in devices]
    doc = {"sample": {"size": len(sample), "seed": args.seed, "apis": sample} if sample else None,
           "results": results}
    (args.out / "coverage.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    if sample:
        print(f"Stratified sample of {len(sample)} listed APIs (seed {args.seed}); --all for the whole list.\n")
    print(report(results))
    for line in ratios(results):
        print("\n" + line)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
