"""Verdict changes between the shipped Ascend profiles at a git ref and those in the tree.

Per profile, each (op, dtype) whose verdict changed (allowed / refused / silent: no rule),
grouped by op and direction, with the new rule's source (the fact that decides it)::

    python benchmarks/profile_verdict_diff.py 394bcff          # before issue 44's extraction
    python benchmarks/profile_verdict_diff.py 394bcff --no-sources
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
PROFILES = "src/torchparity/devices/profiles"
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex32", "complex64", "complex128")


def verdict(rule, dtype: str) -> str:
    if rule is None:
        return "silent"
    if not rule.get("supported", True):
        return "refused"
    listed = rule.get("dtypes")
    return "allowed" if listed is None or dtype in listed else "refused"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref", help="git ref holding the profiles to compare against")
    ap.add_argument("--no-sources", action="store_true", help="leave out the new rule's source")
    args = ap.parse_args(argv)
    for path in sorted((REPO / PROFILES).glob("ascend-*.yaml")):
        old_text = subprocess.run(["git", "-C", str(REPO), "show", f"{args.ref}:{PROFILES}/{path.name}"],
                                  capture_output=True, text=True)
        if old_text.returncode:
            print(f"{path.stem}: not at {args.ref}")
            continue
        old = yaml.safe_load(old_text.stdout)["ops"]
        new = yaml.safe_load(path.read_text(encoding="utf-8"))["ops"]
        rows = {}
        for op in sorted(set(old) | set(new)):
            for dtype in DTYPES:
                was, now = verdict(old.get(op), dtype), verdict(new.get(op), dtype)
                if was != now:
                    rows.setdefault((op, was, now), []).append(dtype)
        print(f"== {path.stem}: {sum(len(v) for v in rows.values())} (op, dtype) verdicts changed")
        for (op, was, now), dtypes in rows.items():
            print(f"  {op}: {was} -> {now}: {', '.join(dtypes)}")
            if not args.no_sources and op in new:
                why = [r for r in new[op].get("refusals") or () if set(r["dtypes"]) & set(dtypes)]
                for text in ([f"{r['source']} ({r['message']!r})" for r in why] if why and now == "refused"
                             else [str(new[op].get("source", ""))]):
                    print(f"      {' '.join(text.split())[:260]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
