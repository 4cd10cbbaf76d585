"""Generated test files against check: which vendor-listed APIs get a passing file.

For a list of APIs (default: a stratified sample of the Ascend docs' list for a torch
version — the same list ``benchmarks/coverage.py`` reads — by namespace, fixed seed,
printed; ``--all`` for the whole list, the slow suite's), this:

1. runs ``check`` on ``emu:ascend-a2`` (``app.check.check``, one worker pool, OpInfo capped
   at ``--max-samples``) to get its rows (API x scenario x dtype);
2. writes each API's test files with ``gentest`` (``--style``), its refusals recorded from
   that report;
3. runs the files with pytest in subprocesses (``--torchparity-device cpu`` and
   ``emu:ascend-a2``; files in chunks, a time limit per file; a chunk over its limit is run
   again file by file), each judged test logging its outcome
   (``TORCHPARITY_GENTEST_LOG``);
4. compares every emulated test's outcome with check's row for that API / scenario / dtype:
   a ``pass`` row wants every test of it to pass (or be skipped as not comparable), an
   ``unsupported`` / ``partial`` row the recorded refusal, a ``skip`` row only skips, and a
   ``fail`` / ``error`` / ``crash`` row a red test; a row whose check run timed out or
   failed in the harness answers nothing about the API and is listed as not compared.

Prints the APIs with a generated file, the files green on cpu and on emu, the agreement
with check, and every disagreement with its reason; on a sample, also the count over the
whole list that the sample's passing APIs extrapolate to, each namespace's share weighted
by its size in the list (the sample is not proportional: every namespace gets at least one
API), with its 95 % interval (``extrapolated``).
Writes ``OUT/gentest_coverage.json``. ``--tests DIR``: a test tree whose upstream tests
are replayed too (as ``check --tests``; the files get it through ``$TORCHPARITY_TESTS``).

    python benchmarks/gentest_coverage.py [--sample 200] [--seed 0] [--all] [--style npu-judged]
        [--max-samples 2] [--file-timeout 120] [--chunk 20] [--tests DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "data" / "ascend-native-api-docs"
EMU = "emu:ascend-a2"
RED = ("fail", "error", "crash")
# causes of a check row that is no answer about the API (the harness's own): not compared
NO_ANSWER = ("timeout", "harness_error")
TESTS_DIR = ""  # --tests: the tree the replayed tests come from


def namespace(api: str) -> str:
    """torch.abs -> torch; torch.nn.functional.relu -> torch.nn.functional (as coverage.py)."""
    parts = api.split(".")[:-1]
    if len(parts) >= 3 and parts[2] == "functional":
        return ".".join(parts[:3])
    return ".".join(parts[:2]) or api


def stratified(names: Sequence[str], n: int, seed: int) -> List[str]:
    """``n`` names drawn per namespace in proportion to its size (at least one from each
    namespace while ``n`` allows), with a fixed seed; in list order."""
    if n >= len(names):
        return list(names)
    rng = random.Random(seed)
    groups: Dict[str, List[str]] = defaultdict(list)
    for name in names:
        groups[namespace(name)].append(name)
    quota = {k: max(1, round(n * len(v) / len(names))) for k, v in groups.items()}
    while sum(quota.values()) > n:  # trim the largest strata first
        k = max(quota, key=lambda k: (quota[k], k))
        quota[k] -= 1
    picked = set()
    for k, v in sorted(groups.items()):
        picked.update(rng.sample(v, min(quota[k], len(v))))
    return [name for name in names if name in picked]


def wilson(k: int, n: int, z: float = 1.96) -> Tuple[float, float]:
    """The 95 % Wilson score interval of a proportion k / n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def extrapolated(passing: Sequence[str], sampled: Sequence[str], listed: Sequence[str]) -> Dict[str, Any]:
    """The whole list's count of passing APIs a stratified sample gives, with its 95 % interval.

    The sample is stratified by namespace but not in proportion (every namespace gets at
    least one API, so the 19 one-API namespaces are over-represented): each stratum's share
    of passing APIs is weighted by the stratum's size in the list (the stratified
    estimator, sum of N_h * k_h / n_h), and the interval is the normal one of that
    estimator, its variance summed over the strata with the finite-population correction
    (a stratum's share taken as (k_h + 1) / (n_h + 2), so a stratum that passed or failed
    whole still counts its uncertainty). Also the unweighted Wilson interval of k / n, for
    comparison."""
    size: Counter = Counter(namespace(a) for a in listed)
    n_h: Counter = Counter(namespace(a) for a in sampled)
    k_h: Counter = Counter(namespace(a) for a in passing)
    estimate, var = 0.0, 0.0
    unsampled = 0
    for h, big_n in size.items():
        n = n_h.get(h, 0)
        if not n:
            unsampled += big_n  # no API of it drawn: counted as not passing
            continue
        estimate += big_n * k_h.get(h, 0) / n
        p = (k_h.get(h, 0) + 1) / (n + 2)
        var += big_n * big_n * p * (1 - p) / n * (1 - n / big_n if big_n > 1 else 0.0)
    half = 1.96 * math.sqrt(var)
    lo, hi = wilson(len(passing), len(sampled))
    return {"listed": len(listed), "sampled": len(sampled), "passing": len(passing),
            "estimate": round(estimate), "low_95": max(len(passing), math.floor(estimate - half)),
            "high_95": min(len(listed) - unsampled, math.ceil(estimate + half)),
            "unweighted": {"estimate": round(len(listed) * len(passing) / len(sampled)) if sampled else 0,
                           "low_95": math.floor(len(listed) * lo), "high_95": math.ceil(len(listed) * hi)},
            "strata_unsampled": unsampled}


def run_files(files: List[Path], device: str, log: Path, limit: float, chunk: int) -> Dict[str, str]:
    """file name -> green | red | timeout | collection error (pytest in subprocesses)."""
    out: Dict[str, str] = {}
    batches = [files[i:i + chunk] for i in range(0, len(files), chunk)]
    for batch in batches:
        res = _pytest(batch, device, log, limit * len(batch))
        if res is None and len(batch) > 1:  # over the chunk's limit: file by file
            for f in batch:
                one = _pytest([f], device, log, limit)
                out.update(one if one is not None else {f.name: "timeout"})
        elif res is None:
            out[batch[0].name] = "timeout"
        else:
            out.update(res)
    return out


def _pytest(files: List[Path], device: str, log: Path, timeout: float):
    folder = files[0].parent
    with tempfile.NamedTemporaryFile(suffix=".xml", delete=False) as tmp:
        xml = Path(tmp.name)
    env = dict(os.environ, TORCHPARITY_GENTEST_LOG=str(log))
    env.pop("TORCHPARITY_DEVICE", None)
    if TESTS_DIR:
        env["TORCHPARITY_TESTS"] = TESTS_DIR
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
           "-o", "addopts=", f"--junitxml={xml}", "--torchparity-device", device,
           *[f.name for f in files]]
    try:
        subprocess.run(cmd, cwd=str(folder), env=env, capture_output=True, text=True,
                       timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        xml.unlink(missing_ok=True)
        return None
    result = {f.name: "collection error" for f in files}  # until a test case says otherwise
    try:
        tree = ET.parse(xml)
    except (ET.ParseError, FileNotFoundError):
        return result
    finally:
        xml.unlink(missing_ok=True)
    bad: Counter = Counter()
    seen = set()
    for case in tree.iter("testcase"):
        stem = (case.get("classname") or "").split(".")[0]
        name = f"{stem}.py"
        if name not in result:
            continue
        if case.find("error") is not None and not case.get("name"):
            continue
        seen.add(name)
        if case.find("failure") is not None or case.find("error") is not None:
            bad[name] += 1
    for name in result:
        if name in seen:
            result[name] = "red" if bad[name] else "green"
    return result


def read_log(log: Path) -> Dict[Tuple[str, str, str], List[Dict[str, Any]]]:
    by_key: Dict[Tuple[str, str, str], List[Dict[str, Any]]] = defaultdict(list)
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            by_key[(r["api"], r["id"], r["dtype"])].append(r)
    return by_key


def agrees(row: Dict[str, Any], tests: List[Dict[str, Any]]) -> Tuple[bool, str]:
    """Whether the emulated tests of one check row give that row's answer (module doc)."""
    verdicts = Counter(t["verdict"] for t in tests)
    status = row["status"]
    seen = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
    first_fail = next((t for t in tests if t["verdict"] == "fail"), None)
    why = f" (first red: {first_fail['status']} {first_fail['cause']}: {first_fail['detail'][:160]})" \
        if first_fail else ""
    if status in RED:
        return bool(verdicts["fail"]), f"check {status} ({row['cause']}), tests: {seen}"
    if status == "skip":
        return set(verdicts) == {"skip"}, f"check skip, tests: {seen}{why}"
    if status in ("unsupported", "partial"):
        ok = not verdicts["fail"] and (verdicts["refused"] or (status == "partial" and verdicts["pass"]))
        return bool(ok), f"check {status} ({row['cause']}), tests: {seen}{why}"
    ok = not verdicts["fail"] and not verdicts["refused"] and bool(verdicts["pass"] or verdicts["skip"])
    return ok, f"check {status}, tests: {seen}{why}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--sample", type=int, default=200, help="APIs in the stratified sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--all", action="store_true", help="the whole list (slow suite only)")
    parser.add_argument("--api", action="append", default=[], help="these APIs instead (repeatable)")
    parser.add_argument("--style", default="npu-judged", choices=("npu-judged", "device-generic"))
    parser.add_argument("--max-samples", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0, help="check: seconds per case")
    parser.add_argument("--file-timeout", type=float, default=120.0, help="pytest: seconds per file")
    parser.add_argument("--chunk", type=int, default=20, help="files per pytest process")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--tests", type=Path, default=None, help="a test tree to replay (check --tests)")
    args = parser.parse_args()
    global TESTS_DIR
    tests_dir = str(args.tests.resolve()) if args.tests else None
    TESTS_DIR = tests_dir or ""

    from torchparity.api.resolve import maybe_resolve
    from torchparity.app.check import check
    from torchparity.app.check_vendor import listed_apis
    from torchparity.app.gentest import gentest
    from torchparity.errors import TorchparityError

    tmp = None
    if args.out is None:
        tmp = tempfile.TemporaryDirectory()
        args.out = Path(tmp.name)
    args.out.mkdir(parents=True, exist_ok=True)
    listed_count = 0
    if args.api:
        names, what = list(args.api), f"{len(args.api)} API(s) named"
    else:
        listed, version = listed_apis(str(args.docs), args.torch_version)
        names = listed if args.all else stratified(listed, args.sample, args.seed)
        listed_count = len(listed)
        what = (f"all {len(listed)} APIs" if args.all else
                f"{len(names)} of {len(listed)} APIs, stratified by namespace, seed {args.seed}") + \
            f" listed by the vendor docs for torch {version}"
    print(f"sample: {what}", flush=True)
    t0 = time.monotonic()
    resolvable = [n for n in names if _resolves(maybe_resolve, n)]
    report = check(resolvable, EMU, jobs=args.jobs, timeout=args.timeout, max_samples=args.max_samples,
                   tests_dir=tests_dir)
    t_check = time.monotonic() - t0
    rows: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
    with_scenarios = []
    for a in report.apis:
        if a.scenarios:
            with_scenarios.append(a.name)
        for s in a.scenarios:
            rows[(a.name, f"{s.source or 'hand'}:{s.id}", s.dtype or "")] = {
                "status": s.status, "cause": s.cause, "source": s.source or "hand"}
    folder = args.out / "files"
    no_file: Dict[str, str] = {}
    files_of: Dict[str, List[Path]] = {}
    t1 = time.monotonic()
    for api in with_scenarios:
        try:
            made = gentest([api], args.style, str(folder), report=report, max_samples=args.max_samples,
                           tests_dir=tests_dir)
            files_of[api] = [folder / f.name for f in made]
        except TorchparityError as exc:
            no_file[api] = str(exc)[:200]
        except Exception as exc:  # a generator bug: counted, named
            no_file[api] = f"gentest failed: {type(exc).__name__}: {exc}"[:200]
    t_gen = time.monotonic() - t1
    files = [f for fs in files_of.values() for f in fs]
    results: Dict[str, Dict[str, str]] = {}
    logs: Dict[str, Path] = {}
    t2 = time.monotonic()
    for device in ("cpu", EMU):
        logs[device] = args.out / f"log-{device.replace(':', '_')}.jsonl"
        logs[device].unlink(missing_ok=True)
        results[device] = run_files(files, device, logs[device], args.file_timeout, args.chunk)
    t_run = time.monotonic() - t2

    emu_tests = read_log(logs[EMU])
    # hand scenarios' files are standalone (no log): their rows are compared by file outcome
    agree, disagree, not_compared = 0, [], []
    for key, row in sorted(rows.items()):
        api = key[0]
        if api not in files_of:
            continue
        if row["source"] == "hand":
            continue
        if row["status"] == "timeout" or row["cause"] in NO_ANSWER:
            # check's run of it said nothing about the API (it ran out of time, or the
            # harness failed): nothing to compare the test with, never a disagreement
            not_compared.append({"api": api, "case": key[1], "dtype": key[2],
                                 "reason": f"check {row['status']} ({row['cause']})"})
            continue
        tests = emu_tests.get(key, [])
        if not tests:
            state = {results[EMU].get(f.name, "?") for f in files_of[api]}
            disagree.append({"api": api, "case": key[1], "dtype": key[2],
                             "reason": f"no test outcome (file on emu: {', '.join(sorted(state))}); "
                                       f"check {row['status']}"})
            continue
        ok, why = agrees(row, tests)
        if ok:
            agree += 1
        else:
            disagree.append({"api": api, "case": key[1], "dtype": key[2], "reason": why})
    compared = agree + len(disagree)

    def green(api: str, device: str) -> bool:
        return all(results[device].get(f.name) == "green" for f in files_of[api])

    green_cpu = [a for a in files_of if green(a, "cpu")]
    green_emu = [a for a in files_of if green(a, EMU)]
    bad_apis = {d["api"] for d in disagree}
    check_red = {k[0] for k, r in rows.items() if r["status"] in RED}
    # a file passes: green on the CPU, and on the emulator green or red exactly where check
    # found a fail (every row agreeing)
    passing = [a for a in files_of if green(a, "cpu") and a not in bad_apis
               and (green(a, EMU) or a in check_red)]
    red_emu_check_red = [a for a in files_of if not green(a, EMU) and a in check_red]
    # tests that run the file's own code (a code-block case's body, hand functions) vs
    # those that hand the judge a case as data only
    calls = [ln for f in files for ln in f.read_text(encoding="utf-8").splitlines()
             if "standalone.expect(" in ln]
    summary = {
        "tests_with_own_code": sum("body=" in ln for ln in calls), "tests_judged": len(calls),
        "sample": what, "apis": len(names), "resolvable": len(resolvable),
        "with_scenarios": len(with_scenarios), "with_file": len(files_of), "files": len(files),
        "green_cpu": len(green_cpu), "green_emu": len(green_emu),
        "red_emu_where_check_red": len(red_emu_check_red),
        "passing_files_agreeing": len(passing),
        "rows_compared": compared, "rows_agree": agree, "rows_not_compared": not_compared,
        "file_states": {d: dict(Counter(r.values())) for d, r in results.items()},
        "no_file": no_file, "disagreements": disagree,
        "seconds": {"check": round(t_check, 1), "gentest": round(t_gen, 1), "pytest": round(t_run, 1)},
        "by_source": _by_source(rows, files_of, green_cpu, green_emu, bad_apis),
        "passing": sorted(passing),
        "check_rows": [dict(zip(("api", "case", "dtype"), k), **r) for k, r in sorted(rows.items())],
        "file_results": results,
    }
    if listed_count and not args.all:
        summary["whole_list"] = extrapolated(passing, names, listed)
    (args.out / "gentest_coverage.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(_text(summary))
    if tmp is not None:
        tmp.cleanup()


def _resolves(maybe_resolve, name: str) -> bool:
    try:
        return maybe_resolve(name) is not None
    except Exception:
        return False


def _by_source(rows, files_of, green_cpu, green_emu, bad_apis) -> Dict[str, Dict[str, int]]:
    out: Dict[str, Counter] = defaultdict(Counter)
    sources_of: Dict[str, set] = defaultdict(set)
    for (api, _, _), r in rows.items():
        sources_of[api].add(r["source"])
    for api, srcs in sources_of.items():
        for s in srcs:
            out[s]["apis"] += 1
            out[s]["with_file"] += api in files_of
            out[s]["green_cpu"] += api in green_cpu
            out[s]["green_emu"] += api in green_emu
            out[s]["agree"] += api in files_of and api not in bad_apis
    return {k: dict(v) for k, v in sorted(out.items())}


def _text(s: Dict[str, Any]) -> str:
    lines = [
        f"sample: {s['sample']}",
        f"APIs: {s['apis']} ({s['resolvable']} in this torch, {s['with_scenarios']} with scenarios)",
        f"APIs with a generated file: {s['with_file']} ({s['files']} files)",
        f"files green on cpu: {s['green_cpu']} APIs; green on {EMU}: {s['green_emu']} APIs "
        f"(red on {EMU} where check also found a fail/error: {s['red_emu_where_check_red']})",
        f"outcome agreement with check ({EMU} rows): {s['rows_agree']} of {s['rows_compared']} "
        f"({len(s['rows_not_compared'])} not compared: check's run of them timed out or failed itself)",
        f"APIs whose files pass (green on cpu, agree with check on {EMU}): {s['passing_files_agreeing']}",
        f"file states: {json.dumps(s['file_states'])}",
        f"generated-source tests that run the file's own code (a code-block case's body): "
        f"{s['tests_with_own_code']} of {s['tests_judged']}",
    ]
    if "whole_list" in s:
        w = s["whole_list"]
        lines.append(f"whole list ({w['listed']} APIs), extrapolated from {w['passing']} of "
                     f"{w['sampled']}: ~{w['estimate']} APIs with passing files "
                     f"(stratum-weighted; 95 % interval {w['low_95']}-{w['high_95']}; unweighted "
                     f"~{w['unweighted']['estimate']})")
    lines += [
        f"seconds: {json.dumps(s['seconds'])}",
        "", "| source | APIs | with file | green cpu | green emu | agree |", "|---|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {k} | {v.get('apis', 0)} | {v.get('with_file', 0)} | {v.get('green_cpu', 0)} | "
              f"{v.get('green_emu', 0)} | {v.get('agree', 0)} |" for k, v in s["by_source"].items()]
    if s["no_file"]:
        lines += ["", "APIs with scenarios but no file:"]
        lines += [f"- {a}: {why}" for a, why in sorted(s["no_file"].items())]
    if s["rows_not_compared"]:
        lines += ["", "rows not compared (check's row is no answer):"]
        lines += [f"- {d['api']} [{d['case']}, {d['dtype']}]: {d['reason']}" for d in s["rows_not_compared"]]
    if s["disagreements"]:
        lines += ["", "disagreements with check:"]
        lines += [f"- {d['api']} [{d['case']}, {d['dtype']}]: {d['reason']}" for d in s["disagreements"]]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
