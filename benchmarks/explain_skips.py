"""Time of `explain-skips` on a sample of a disabled list, extrapolated to the whole list.

Runs ``app.explain_skips.explain_skips`` on ``--sample N`` entries (``--stratified``: spread
over class × kind × dtype family in proportion, else every k-th; default: the shipped
307-entry fixture) into a fresh folder (or ``--out``, which resumes), and prints the count
per category, the entries per kind, and the wall seconds of each part. The whole list is
extrapolated per part and says so:

- the @ops part costs per (op, dtype, forward|grad) row — its entries share one row —
  so it scales with the rows: sample seconds × whole-list rows / sample rows;
- the replays cost per test file and side (imported once for its tests) plus per test:
  the seconds per replayed entry of the sample × the whole list's replayable entries is an
  upper bound (the whole list shares each file import among more entries, and the
  zygotes' start is paid once); the model beside it uses the timings the store keeps per
  entry: the sample's mean test seconds × the whole list's replayable entries plus its
  mean file import × the whole list's files × 2 sides, over ``--jobs``, plus the rest of
  the sample's replay wall (the zygotes' start, paid once).

``--baseline DIR``: the ``--out`` folder of an earlier run on the same sample (e.g. of the
code before a change): prints how many entries have the same category in both, and the
ones that differ.

``--vendor-types FILE``: the vendor's own typed list (Ascend/pytorch
``test/unsupported_test_cases/disabled_tests_type.json``: ``{"test (module.Class)": {"DTYPE":
"reason"}}``, also a valid ``--disabled``): prints how many entries get the vendor's
category, in this run and in ``--baseline``'s, and each other entry with its explanation
from ``--explained`` (``tests/data/explain_skips/vendor-typed-explained.yaml``: why the vendor's
category is not the answer here, with the line that shows it) or as unexplained.

    python benchmarks/explain_skips.py [--disabled FILE] [--tests DIR] [--sample 2000]
        [--stratified] [--device emu:ascend-a2] [--jobs 2] [--side-timeout 60] [--out DIR]
        [--baseline DIR] [--vendor-types FILE [--explained YAML]]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "explain_skips" / "pytorch-disabled-tests.fixture.json"
EXPLAINED = FIXTURE.with_name("vendor-typed-explained.yaml")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--disabled", default=str(FIXTURE))
    ap.add_argument("--tests", default=None)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--stratified", action="store_true")
    ap.add_argument("--device", default="emu:ascend-a2")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--side-timeout", type=float, default=60.0)
    ap.add_argument("--out", default=None, help="keep the outputs (and resume) here")
    ap.add_argument("--baseline", default=None, help="an earlier run's --out folder: compare categories")
    ap.add_argument("--vendor-types", default=None, help="the vendor's disabled_tests_type.json: agreement")
    ap.add_argument("--explained", default=str(EXPLAINED), help="why an entry's vendor category is not ours")
    args = ap.parse_args()
    from torchparity.app import explain_skips as X

    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        start = time.perf_counter()
        r = X.explain_skips(disabled=args.disabled, tests=args.tests, device=args.device, out=out,
                            sample=args.sample, stratify=args.stratified, jobs=args.jobs,
                            side_timeout=args.side_timeout)
        wall = time.perf_counter() - start
        # the whole list, parsed as the run parsed its sample
        raw = X.load_disabled(args.disabled)
        tree = X.TreeIndex.cached(args.tests, Path(out) / "tree-index.json") if args.tests else None
        whole = [X.parse_entry(k, v, X.OpNames.load(), tree) for k, v in raw.items()]

    def rows(entries):
        return len({X._op_row_key(args.device, e) for e in entries if e.kind == "opinfo" and e.dtype})

    replayed = [a for a in r.answers.values() if a.how == "replay" and not a.reason.startswith("cannot replay")]
    whole_replayable = None
    if tree is not None:
        whole_replayable = sum(1 for e in whole if e.kind == "replay" and X.replay_case(e, tree, 1.0)[0] is not None)
    sample_rows, whole_rows = rows(r.entries), rows(whole)
    ops_s = r.phases.get("opinfo", 0.0) * (whole_rows / sample_rows if sample_rows else 0)
    rep_s = (r.phases.get("replay", 0.0) / len(replayed) * whole_replayable
             if replayed and whole_replayable else 0.0)
    model = replay_model(r, tree, whole, args.jobs) if tree is not None else None
    counts = r.counts()
    report = {
        "dtype_agree_with_kernel_facts": dtype_agreement(r.answers.values(), r.profile),
        "entries": len(r.entries), "wall_s": round(wall, 1), "phases_s": r.phases,
        "kinds": dict(collections.Counter(e.kind for e in r.entries)),
        "counts": {c: counts[c] for c in X.CATEGORIES},
        "predicted": r.emulated,
        "sample_rows": sample_rows, "whole_rows": whole_rows,
        "sample_replayed": len(replayed), "whole_replayable": whole_replayable,
        "extrapolated (from this sample)": {"opinfo_s": round(ops_s), "replay_s_upper_bound": round(rep_s),
                                            "setup_s": r.phases.get("setup"),
                                            "whole_list_s": round(ops_s + rep_s + r.phases.get("setup", 0.0))},
    }
    if model is not None:
        report["extrapolated (from this sample)"]["replay_s_model"] = model
        report["extrapolated (from this sample)"]["whole_list_s_model"] = round(
            ops_s + model["replay_s"] + r.phases.get("setup", 0.0))
    if args.baseline:
        report["same_category_as_baseline"] = compare(args.baseline, r)
    if args.vendor_types:
        ours = {k: a.category for k, a in r.answers.items()}
        report["vendor_category"] = vendor_agreement(args.vendor_types, ours, args.explained)
        if args.baseline:
            report["vendor_category_baseline"] = vendor_agreement(
                args.vendor_types, categories(args.baseline), args.explained)["agree"]
    print(json.dumps(report, indent=1))
    return 0


def replay_model(r, tree, whole, jobs):
    """The whole list's replay seconds from the per-entry timings of the sample's store."""
    from torchparity.app import explain_skips as X

    tests, imports, n = 0.0, {}, 0
    for e in r.entries:
        a = r.answers.get(e.key)
        sec = ((a.evidence or {}).get("seconds") if a is not None and a.how == "replay" else None) or {}
        if not sec:
            continue
        case = X.replay_case(e, tree, 1.0)[0]
        n += 1
        tests += sum(sec.get(s, 0.0) for s in ("device", "cpu"))
        for side in ("device", "cpu"):
            if f"{side}_file_import" in sec and case is not None:
                imports[(case["file"], side)] = sec[f"{side}_file_import"]
    if not n:
        return None
    whole_files = {X.replay_case(e, tree, 1.0)[0]["file"] for e in whole
                   if e.kind == "replay" and X.replay_case(e, tree, 1.0)[0] is not None}
    jobs = max(1, jobs)
    fixed = max(0.0, r.phases.get("replay", 0.0) - (tests + sum(imports.values())) / jobs)
    per_test, per_import = tests / n, (sum(imports.values()) / len(imports) if imports else 0.0)
    whole_replayable = sum(1 for e in whole if e.kind == "replay" and X.replay_case(e, tree, 1.0)[0] is not None)
    return {"timed_entries": n, "test_s_per_entry": round(per_test, 3), "import_s_per_file_side": round(per_import, 2),
            "whole_files": len(whole_files), "fixed_s": round(fixed, 1),
            "replay_s": round((per_test * whole_replayable + per_import * len(whole_files) * 2) / jobs + fixed)}


def categories(out) -> dict:
    """key -> category of an earlier run's explained.json."""
    return {row["key"]: row["category"]
            for row in json.loads((Path(out) / "explained.json").read_text(encoding="utf-8"))["rows"]}


def vendor_agreement(typed_path, ours, explained_path) -> dict:
    """{"agree": [n, of], "explained": {key: {vendor, ours, why, shown_by}}, "unexplained":
    {key: [vendor, ours]}} of the vendor's typed entries against ``ours`` (key -> category)."""
    import yaml

    typed = json.loads(Path(typed_path).read_text(encoding="utf-8"))
    why = yaml.safe_load(Path(explained_path).read_text(encoding="utf-8")) or {} if explained_path else {}
    agree, explained, unexplained = 0, {}, {}
    for key, value in typed.items():
        vendor = next(iter(value)) if isinstance(value, dict) and value else None
        got = ours.get(key)
        if got == vendor:
            agree += 1
        elif key in why:
            explained[key] = {"vendor": vendor, "ours": got, **why[key]}
        else:
            unexplained[key] = [vendor, got]
    return {"agree": [agree, len(typed)], "explained": explained, "unexplained": unexplained}


def compare(baseline, r):
    """[same, common, {key: [before, after]} of up to 20 that differ] against an earlier
    run's explained.json."""
    before = {row["key"]: row["category"]
              for row in json.loads((Path(baseline) / "explained.json").read_text(encoding="utf-8"))["rows"]}
    common = [k for k in r.answers if k in before]
    differ = {k: [before[k], r.answers[k].category] for k in common if before[k] != r.answers[k].category}
    return [len(common) - len(differ), len(common), dict(list(differ.items())[:20])]


def dtype_agreement(answers, profile_name):
    """(agreeing, DTYPE answers): a DTYPE answer agrees when one of its kernel facts is an op
    of the profile whose dtype list lacks the refused dtype."""
    from torchparity.devices.profiles import load_profile

    prof = load_profile(profile_name or "ascend-a2")
    dtype = [a for a in answers if a.category == "DTYPE"]
    agree = 0
    for a in dtype:
        for f in (a.evidence or {}).get("kernel_facts") or []:
            entry = prof.op_support(f["op"])
            if entry is not None and f.get("dtype") and f["dtype"] not in (entry.dtypes or []):
                agree += 1
                break
    return [agree, len(dtype)]


if __name__ == "__main__":
    sys.exit(main())
