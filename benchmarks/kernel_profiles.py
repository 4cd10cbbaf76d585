"""Kernel-built Ascend profiles against the docs-built ones, the docs audit, and what an
emulated sweep on the kernel-built ascend-a2 is refused, by cause.

    python benchmarks/kernel_profiles.py [--sources DIR...] [--sweep DIR] [--json out.json]

1. Rules: the docs-only build (``build_profiles`` without kernel facts: the profiles as
   shipped before) against the shipped, kernel-built profiles (same docs, same
   observations): op rules per profile, how many changed (supported or dtype list), were
   added or removed, and how many follow a kernel list.
2. Audit: ``docs-audit`` findings by kind on the shipped docs data.
3. Sweep (``--sweep DIR``: the ``--out`` of ``torchparity sweep --opinfo --device
   emu:ascend-a2 --dtypes float32,float16,bfloat16,float64``): cases by status, and each
   refused case (unsupported / partial with a dtype limit) attributed to the rule of the op
   it names — a kernel list, a docs rule, or a hardware observation. Emulated results.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import time
from collections import Counter
from pathlib import Path

from torchparity.app.docs_audit import audit
from torchparity.app.profile_build import (
    KERNEL_CHIP,
    KERNELS,
    OBSERVATIONS,
    build_profiles,
    load_observations,
)
from torchparity.devices.profiles import load_profile
from torchparity.evidence.kernels import dump_kernel_facts, extract_kernel_facts, load_kernel_facts

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "ascend-native-api-docs"
VERSION = "2.13.0"
TORCH_DTYPE = {"BFloat16": "bfloat16", "Half": "float16", "Float": "float32", "Double": "float64",
               "Bool": "bool", "Long": "int64", "Int": "int32", "ComplexFloat": "complex64",
               "ComplexDouble": "complex128"}


def _rule(r):
    return (r.supported, tuple(r.dtypes) if r.dtypes is not None else None) if r else None


def rules() -> dict:
    t = time.perf_counter()
    before = build_profiles(DATA, VERSION)  # docs + observations, no kernel facts
    out = {"seconds_docs_build": round(time.perf_counter() - t, 1), "profiles": {}}
    for name in KERNEL_CHIP:
        old, new = before[name], load_profile(name)
        ops = set(old.ops) | set(new.ops)
        changed = [op for op in ops if op in old.ops and op in new.ops and _rule(old.ops[op]) != _rule(new.ops[op])]
        bf16 = [op for op in changed if not old.allows(op, "bfloat16") and new.allows(op, "bfloat16")]
        out["profiles"][name] = {
            "rules_before": len(old.ops), "rules_after": len(new.ops), "changed": len(changed),
            "added": len(set(new.ops) - set(old.ops)), "removed": len(set(old.ops) - set(new.ops)),
            "follow_kernel": sum(1 for r in new.ops.values() if (r.source or "").startswith("kernel ")),
            "docs_noted": sum(1 for r in new.ops.values() if "docs say" in (r.note or "")),
            "aicpu_marked": sum(1 for r in new.ops.values() if r.aicpu_dtypes),
            "gained_bfloat16": len(bf16), "conflicts_noted": sum(1 for r in new.ops.values() if "conflict" in (r.note or "")),
        }
    facts = load_kernel_facts(KERNELS)
    out["kernel_ops"] = len(facts.ops)
    out["kernel_ops_per_arch"] = dict(Counter(a for o in facts.ops.values() for a in o.chips))
    out["repos"] = facts.repos
    return out


def audit_counts() -> dict:
    report = audit(DATA, VERSION, load_kernel_facts(KERNELS))
    return {"entries_compared": report["entries_compared"],
            "by_kind": dict(Counter(f["severity"] for f in report["findings"])),
            "seed_conflicts": report["seed_conflicts"]}


def sweep(folder: Path) -> dict:
    profile = load_profile("ascend-a2")
    seen_refused = {(op, d) for o in load_observations(OBSERVATIONS).observations
                    if profile.chips[0] in o.chips for op in o.unsupported for d in o.dtypes}
    db = sqlite3.connect(folder / "results.sqlite")
    rows = db.execute("select api, dtype, status, cause, detail from results").fetchall()
    by_status = Counter((s, c or "") for _, _, s, c, _ in rows)
    refused = Counter()
    per_op = Counter()
    for _api, _dtype, status, cause, detail in rows:
        if status not in ("unsupported", "partial"):
            continue
        if cause != "dtype_limit":
            refused[f"{cause} (not a profile rule)"] += 1
            continue
        m = re.search(r'"(\w+?)_npu" not implemented for \'(\w+)\'', detail)
        if not m:
            refused["dtype_limit, op not named"] += 1
            continue
        op, dt = f"aten.{m.group(1)}", TORCH_DTYPE.get(m.group(2), m.group(2))
        rule = profile.op_support(op)
        src = (rule.source or "") if rule else ""
        if src.startswith("kernel "):
            kind = "kernel list"
        elif src.startswith("docs "):
            kind = "docs rule (no kernel facts)"
        else:
            kind = "hardware observation only" if (op, dt) in seen_refused else "other"
        if (op, dt) in seen_refused and not kind.startswith("hardware"):
            kind += ", a hardware observation agrees"
        refused[kind] += 1
        per_op[(kind, op, dt)] += 1
    return {"cases": len(rows), "by_status": {f"{s} {c}".strip(): n for (s, c), n in sorted(by_status.items())},
            "refused_by_cause": dict(refused.most_common()),
            "top_refusing_rules": [f"{k}: {op} {dt} ({n} cases)" for (k, op, dt), n in per_op.most_common(15)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", type=Path, help="sweep --out folder on emu:ascend-a2")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--sources", type=Path, nargs="*", default=[],
                    help="op-plugin and hicann/ops-* snapshots: time the extraction, diff with the shipped facts")
    args = ap.parse_args()
    result = {}
    if args.sources:
        t = time.perf_counter()
        facts = extract_kernel_facts(args.sources, VERSION)
        result["extract"] = {"seconds": round(time.perf_counter() - t, 1), "ops": len(facts.ops),
                             "same_as_shipped": dump_kernel_facts(facts) == KERNELS.read_text(encoding="utf-8")}
    result.update({"rules": rules(), "audit": audit_counts()})
    if args.sweep:
        result["sweep_emulated_ascend_a2"] = sweep(args.sweep)
    text = json.dumps(result, ensure_ascii=False, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
