"""Behaviour unchanged? The vendor-list rows of two source trees, compared row for row.

A refactoring (moving the scenario sources into packages, a typed source interface) must
not change a single answer. This script takes a stratified sample of the APIs the vendor
docs list (``--sample`` of them, spread over the namespaces in proportion, ``--seed``
fixed), runs ``check --apis-from-vendor-docs`` over exactly that sample
(``app.check_vendor.check_vendor_docs``, one worker pool, as ``benchmarks/coverage.py``)
once with the tree under test and once with ``--base`` (another checkout's ``src``
folder, put first on ``PYTHONPATH`` of a child process: the whole run, workers included,
uses that tree's code), on each ``--device``, and compares:

- the rows, keyed (api, scenario id, source, dtype): a row only one side has, and rows
  whose status, cause or evidence (device-compute / device-state / host-only / none)
  differ, are listed; rows whose ``detail`` text differs are counted
  (and listed with ``--show``);
- the per-API verdicts.

A row that timed out on one side only is listed apart and not compared (nor its API's
verdict): a timeout is the machine's load, never an answer.

Exit status 1 when a row, its evidence or a verdict differs (``detail`` alone does not
count: it may carry a time or an address).

    python benchmarks/refactor_parity.py --base OTHER_CHECKOUT/src [--device cpu
        --device emu:ascend-a2] [--sample 300] [--seed 0] [--out DIR] [--jobs 2]
        [--max-samples 2] [--show] [--source NAME ...] [--shuffle SEED]

``--shuffle SEED`` runs this tree's side with the sample in another order (shuffled with
SEED); ``--base`` this tree's own ``src`` then asks whether any row depends on which APIs
ran before it in the same worker (process-wide state one case leaves to the next).

``--source NAME`` (repeatable) restricts the sample to the listed APIs that source has a
case for (its ``members()`` in this tree): a before/after check of one converted source.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "data" / "ascend-native-api-docs"

# the child: the vendor list is the sample (the docs' own reader lists every API; the
# sample is a subset of it), then the command itself
CHILD = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
args = json.loads(sys.argv[1])
from torchparity.app import check_vendor
from torchparity.results.sweep_store import open_store
names, version = check_vendor.listed_apis(args["docs"], args["version"])
wanted = set(args["names"])
sample = [n for n in names if n in wanted]
if args.get("order_seed") is not None:  # another order: which API runs before which
    import random
    random.Random(args["order_seed"]).shuffle(sample)
check_vendor.listed_apis = lambda docs_dir, torch_version: (sample, version)
summary = check_vendor.check_vendor_docs(args["docs"], out=args["out"], device=args["device"],
                                         torch_version=args["version"], jobs=args["jobs"],
                                         max_samples=args["max_samples"])
store = open_store(args["out"], must_exist=True)
rows = store.rows()
store.close()
json.dump({"apis": args["names"], "order_seed": args.get("order_seed"), "verdicts": summary.verdicts, "rows": rows},
          open(args["dump"], "w"), default=str)
"""


def namespace(api: str) -> str:
    parts = api.split(".")[:-1]
    if len(parts) >= 3 and parts[2] == "functional":
        return ".".join(parts[:3])
    return ".".join(parts[:2]) or api


def stratified(names: List[str], n: int, seed: int) -> List[str]:
    """``n`` names spread over the namespaces in proportion (at least one from each
    namespace while ``n`` allows), drawn with ``seed``."""
    by_ns: Dict[str, List[str]] = defaultdict(list)
    for name in names:
        by_ns[namespace(name)].append(name)
    rng = random.Random(seed)
    groups = sorted(by_ns.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    quota = {ns: max(1, round(n * len(members) / len(names))) for ns, members in groups}
    while sum(quota.values()) > n:  # trim the largest quotas first
        big = max(quota, key=lambda k: (quota[k], k))
        quota[big] -= 1
    out: List[str] = []
    for ns, members in groups:
        out.extend(rng.sample(sorted(members), min(quota[ns], len(members))))
    return sorted(out)


def run_side(src: str, device: str, names: List[str], folder: Path, args,
             order_seed: Optional[int] = None) -> Dict[str, Any]:
    dump = folder / "dump.json"
    if dump.is_file():  # an earlier run with this --out (the same sample: checked)
        done = json.loads(dump.read_text())
        if done.get("apis") == names and done.get("order_seed") == order_seed:
            return done
    payload = dict(docs=str(args.docs), version=args.torch_version, names=names, device=device,
                   out=str(folder / "store"), dump=str(dump), jobs=args.jobs,
                   max_samples=args.max_samples, order_seed=order_seed)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", CHILD, json.dumps(payload)], env=env, check=True,
                   cwd=folder)
    return json.loads(dump.read_text())


Key = Tuple[str, str, str, str]


def keyed(rows: List[Dict[str, Any]]) -> Dict[Key, Dict[str, Any]]:
    return {(r["api"], r["variant"], r["sample_set"], r["dtype"]): r for r in rows}


def compare(base: Dict[str, Any], mine: Dict[str, Any]) -> Dict[str, Any]:
    a, b = keyed(base["rows"]), keyed(mine["rows"])
    only_base = sorted(set(a) - set(b))
    only_mine = sorted(set(b) - set(a))
    both = sorted(set(a) & set(b))
    # a row that timed out on one side answers nothing there (the machine's load, not the
    # code): listed apart, never counted as a difference
    timed_out = [k for k in both if "timeout" in (a[k]["status"], b[k]["status"])
                 and a[k]["status"] != b[k]["status"]]
    skip = set(timed_out)
    differ = [(k, (a[k]["status"], a[k]["cause"]), (b[k]["status"], b[k]["cause"]))
              for k in both if k not in skip
              if (a[k]["status"], a[k]["cause"]) != (b[k]["status"], b[k]["cause"])]
    evidence = [(k, a[k].get("evidence"), b[k].get("evidence")) for k in both if k not in skip
                if a[k].get("evidence") != b[k].get("evidence")]
    detail = [(k, a[k]["detail"], b[k]["detail"]) for k in sorted(set(a) & set(b))
              if a[k].get("detail") != b[k].get("detail")]
    timed_apis = {k[0] for k in timed_out}
    verdicts = {api: (base["verdicts"].get(api), mine["verdicts"].get(api))
                for api in set(base["verdicts"]) | set(mine["verdicts"])
                if base["verdicts"].get(api) != mine["verdicts"].get(api) and api not in timed_apis}
    return {"rows_base": len(a), "rows_mine": len(b), "only_base": only_base,
            "only_mine": only_mine, "status_or_cause_differ": differ,
            "evidence_differs": evidence,
            "timed_out_one_side": [(k, a[k]["status"], b[k]["status"]) for k in timed_out],
            "detail_differs": detail, "verdicts_differ": verdicts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the src folder of the tree to compare with")
    parser.add_argument("--device", action="append")
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=2)
    parser.add_argument("--source", action="append", default=[],
                        help="only the listed APIs this source has a case for (repeatable)")
    parser.add_argument("--shuffle", type=int, default=None, metavar="SEED",
                        help="run this tree's side in another order (the sample shuffled with "
                             "SEED): with --base this tree's own src, whether a row depends on "
                             "the APIs that ran before it in the same worker")
    parser.add_argument("--only-this", action="store_true", help="run this tree's side only "
                        "(as --only-base: sides run apart, at once, and compared by a later run "
                        "with both dumps under the same --out)")
    parser.add_argument("--show", action="store_true", help="list the rows whose detail differs")
    parser.add_argument("--only-base", action="store_true", help="run the base side only (its "
                        "rows are kept under --out; a later run with the same --out reuses them)")
    args = parser.parse_args()
    devices = args.device or ["cpu", "emu:ascend-a2"]
    base_src = str(Path(args.base).resolve())
    if not (Path(base_src) / "torchparity").is_dir():
        print(f"--base {args.base}: no torchparity package there", file=sys.stderr)
        sys.exit(2)

    from torchparity.evidence.vendor_docs import load_vendor_docs

    listed = load_vendor_docs(str(args.docs), args.torch_version).names()
    if args.source:
        from torchparity.scenarios.sources import source

        mine = {api for name in args.source for api in source(name).members()}
        listed = [n for n in listed if n in mine]
    names = stratified(listed, args.sample, args.seed)
    out = args.out or Path(tempfile.mkdtemp(prefix="refactor-parity-"))
    print(f"{len(names)} of {len(listed)} listed APIs (stratified by namespace, seed {args.seed}); "
          f"base {base_src}, this tree {ROOT / 'src'}; stores under {out}")
    bad = 0
    report: Dict[str, Any] = {"apis": names}
    for device in devices:
        sides = {}
        for label, src in (("base", base_src), ("this", str(ROOT / "src"))):
            if (label == "this" and args.only_base) or (label == "base" and args.only_this):
                continue
            folder = out / device.replace(":", "_") / label
            folder.mkdir(parents=True, exist_ok=True)
            sides[label] = run_side(src, device, names, folder, args,
                                    order_seed=args.shuffle if label == "this" else None)
        if args.only_base or args.only_this:
            label = "base" if args.only_base else "this"
            print(f"{device}: {label} rows {len(sides[label]['rows'])}")
            continue
        diff = compare(sides["base"], sides["this"])
        report[device] = diff
        n_bad = (len(diff["only_base"]) + len(diff["only_mine"])
                 + len(diff["status_or_cause_differ"]) + len(diff["evidence_differs"])
                 + len(diff["verdicts_differ"]))
        bad += n_bad
        print(f"{device}: rows base {diff['rows_base']} / this {diff['rows_mine']}; "
              f"only in base {len(diff['only_base'])}, only here {len(diff['only_mine'])}, "
              f"status/cause differ {len(diff['status_or_cause_differ'])}, "
              f"evidence differs {len(diff['evidence_differs'])}, "
              f"verdicts differ {len(diff['verdicts_differ'])}, "
              f"detail text differs {len(diff['detail_differs'])}; "
              f"timed out on one side only (not compared) {len(diff['timed_out_one_side'])}")
        for k in diff["only_base"][:20]:
            print("   only in base:", *k)
        for k in diff["only_mine"][:20]:
            print("   only here:   ", *k)
        for k, x, y in diff["status_or_cause_differ"][:40]:
            print("   differs:     ", *k, x, "->", y)
        for k, x, y in diff["timed_out_one_side"][:20]:
            print("   timed out:   ", *k, x, "->", y)
        for k, x, y in diff["evidence_differs"][:40]:
            print("   evidence:    ", *k, x, "->", y)
        for api, (x, y) in sorted(diff["verdicts_differ"].items())[:40]:
            print("   verdict:     ", api, x, "->", y)
        for k, x, y in diff["detail_differs"] if args.show else ():
            print("   detail:      ", *k, "\n      base:", x[:300], "\n      this:", y[:300])
    (out / "parity.json").write_text(json.dumps(report, indent=1, default=str))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
