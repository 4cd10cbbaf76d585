"""How often `predict --composites` agrees with the vendor docs, before and after the
prediction semantics of issue 14, with every disagreement labelled by its reason class.

    python benchmarks/predict_vs_docs.py                                  # shipped ascend-a2
    python benchmarks/predict_vs_docs.py --profile built/ascend-a2.yaml   # e.g. kernel-built
    python benchmarks/predict_vs_docs.py --baseline-ref none              # skip the old code
    python benchmarks/predict_vs_docs.py --per-cann                       # per (chip, CANN) profile:
                                                                          # docs errors vs tool errors

One run, one machine:

- **before**: the same comparison with the code of ``--baseline-ref`` (default: the last
  commit with the old semantics), extracted with ``git archive`` into a temporary folder
  and run in a subprocess on the same profile and docs. It counted the pairs where the CPU
  refuses too as agreements; the script counts them from its predictions.
- **after, no vendor list**: this tree's comparison with ``registered=False`` (the CPU
  dispatch-mode footprint, bookkeeping ops left out), to separate the semantics of the
  comparison from the vendor's registered-op list.
- **after**: this tree, the footprint the profile's device receives.

Prints a Markdown table (agreement without trivial pairs, with them, trivial pairs,
disagreements by reason class) and, with ``--examples N``, N disagreements per class.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = ROOT / "tests" / "data" / "ascend-native-api-docs"
# the last commit whose predict compared composites with the docs the old way
BASELINE_REF = "61aaebb"


_BASELINE_SNIPPET = """
import json, sys, warnings
warnings.simplefilter("ignore")
from torchparity.app.predict import predict, compare_with_docs, composite_apis, vendor_docs_dtypes
from torchparity.devices.profiles import load_profile
profile, docs, chip = sys.argv[1], sys.argv[2], sys.argv[3] or None
prof = load_profile(profile)
chip = chip or (prof.chips[0] if prof.chips else None)
allowed = vendor_docs_dtypes(docs, None, chip=chip)
names = composite_apis(sorted(allowed))
preds = predict(names, prof)
cmp = compare_with_docs(preds, allowed, prof)
by = {}
for p in preds:
    if p.status != "unknown":
        by.setdefault((p.api, p.dtype), []).append(p)
trivial = sum(1 for (api, d), ps in by.items() if api in allowed and d not in allowed[api]
              and all(p.cpu_refuses for p in ps))
verdicts = {}
for d in cmp.disagreements:
    verdicts[d["verdict"]] = verdicts.get(d["verdict"], 0) + 1
print(json.dumps({"apis": cmp.apis, "compared": cmp.compared, "agree": cmp.agree,
                  "trivial": trivial, "verdicts": verdicts}))
"""


def run_baseline(ref: str, profile: str, docs: Path, chip: str | None) -> dict:
    """The old comparison, from the tree of ``ref``, in a subprocess (its own API, as of
    that commit). ``trivial``: its agreements where the CPU refuses too."""
    import json

    with tempfile.TemporaryDirectory(prefix="tp-baseline-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            return {"error": archive.stderr.decode(errors="replace").strip()}
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        prof = str(Path(profile).resolve()) if Path(profile).is_file() else profile
        env = dict(os.environ, PYTHONPATH=str(Path(tmp) / "src"))
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _BASELINE_SNIPPET, prof, str(docs), chip or ""],
                              capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - t
    try:
        found = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"exit {proc.returncode}: {(proc.stdout + proc.stderr)[-300:]}"}
    found["seconds"] = seconds
    return found


def run_after(profile: str, docs: Path, chip: str | None, registered) -> tuple:
    from torchparity.app.predict import predict
    from torchparity.app.predict_docs import (
        compare_with_docs,
        composite_apis,
        vendor_docs_statements,
    )
    from torchparity.devices.profiles import load_profile

    prof = load_profile(profile)
    chip = chip or (prof.chips[0] if prof.chips else None)
    t = time.perf_counter()
    stmts = vendor_docs_statements(str(docs), None, chip=chip)
    names = composite_apis(sorted(stmts))
    preds = predict(names, prof, registered=registered)
    cmp = compare_with_docs(preds, stmts, prof)
    return cmp, len(names), time.perf_counter() - t


_LINE = re.compile(r"^(\S+) × (\w+)( \(backward\))?: ")
BACKED = ("kernel ", "hccl ", "observed ")


def split(cmp, prof) -> dict:
    """Disagreements as docs errors backed by a kernel (or HCCL, or hardware) fact, each with
    its citation; docs errors the CPU itself shows (torch refuses the dtype); and tool errors
    (everything else: no fact behind the tool's side, partial forwards, silent profiles)."""
    out = {"docs_error_kernel": [], "docs_error_cpu": [], "tool_error": []}
    for d in cmp.disagreements:
        if d["class"] == "cpu_refuses":
            out["docs_error_cpu"].append(d)
            continue
        ops = []
        for line in d["footprint"]:
            m = _LINE.match(line)
            if m and not m.group(3) and m.group(2) == d["dtype"]:
                ops.append(m.group(1))
        rules = [prof.op_support(op) for op in dict.fromkeys(ops)]
        cite = None
        if d["verdict"] == "suspected docs error" and rules and all(r is not None for r in rules):
            if d["documented"]:  # the docs allow it: an op refusing it on a kernel fact
                hit = [r for r in rules if not (r.supported and (r.dtypes is None or d["dtype"] in r.dtypes)) and (r.source or "").startswith(BACKED)]
            else:  # the docs leave it out: every op allows it on a fact
                hit = rules if all((r.source or "").startswith(BACKED) for r in rules) else []
            cite = hit[0].source.split(";")[0] if hit else None
        if cite is None and d["class"] in PATH_CLASSES:
            cite = _path_cite(d, prof)
        if cite:
            out["docs_error_kernel"].append(dict(d, cite=cite))
        else:
            out["tool_error"].append(d)
    return out


# disagreements whose every forward op (any dtype) is decided by a fact: refused on some
# argument paths and allowed on the others (poisson_nll_loss int8: exp refuses it under
# log_input=True), or converted first and then computed by ops allowing the new dtype
PATH_CLASSES = ("partial", "partial_auxiliary", "converted")


def _path_cite(d, prof):
    """The fact behind a per-argument or converted disagreement, where every op of the
    forward (any dtype; plumbing that needs no fact aside) has a kernel/HCCL/hardware rule:
    the docs' one answer for the dtype is wrong on some calls. None where any op lacks one."""
    from torchparity.app.predict import PLUMBING
    from torchparity.devices.profiles.model import NO_FACT_NEEDED

    refused, allowed = [], []
    for line in d["footprint"]:
        m = _LINE.match(line)
        if not m or m.group(3):
            continue
        op = m.group(1)
        rule = prof.op_support(op)
        if op in PLUMBING or op.replace(".", "::", 1) in NO_FACT_NEEDED:
            continue
        if rule is None or not (rule.source or "").startswith(BACKED):
            return None
        refuses = not rule.supported or (rule.dtypes is not None and m.group(2) not in rule.dtypes)
        (refused if refuses else allowed).append(rule.source.split(";")[0])
    if d["class"] == "converted":
        return allowed[0] if allowed else None
    return refused[0] if refused and allowed else None


def _pct(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="ascend-a2", help="shipped profile name or YAML file")
    ap.add_argument("--docs", default=str(DEFAULT_DOCS), help="Ascend native_api docs folder")
    ap.add_argument("--chip", default=None, help="docs chip (default: the profile's first)")
    ap.add_argument("--baseline-ref", default=BASELINE_REF,
                    help="git ref of the old semantics ('none': skip)")
    ap.add_argument("--examples", type=int, default=2, help="disagreements shown per class")
    ap.add_argument("--per-cann", nargs="*", default=None, metavar="PROFILE",
                    help="only the per-CANN split: agreement and docs/tool errors for each profile "
                         "(shipped names or YAML files; default ascend-a2 ascend-a2-latest)")
    opts = ap.parse_args()
    if opts.per_cann is not None:
        return per_cann(opts.per_cann or ["ascend-a2", "ascend-a2-latest"], Path(opts.docs), opts.chip,
                        opts.examples)
    warnings.simplefilter("ignore")
    docs = Path(opts.docs)
    print(f"profile {opts.profile}, docs {docs.name}, chip {opts.chip or '(profile)'}")

    base = None
    if opts.baseline_ref != "none":
        base = run_baseline(opts.baseline_ref, opts.profile, docs, opts.chip)
        if "error" in base:
            print(f"baseline {opts.baseline_ref}: {base['error']}")
            base = None
    plain, n_plain, s_plain = run_after(opts.profile, docs, opts.chip, False)
    after, n_after, s_after = run_after(opts.profile, docs, opts.chip, None)

    classes = sorted(set(plain.by_reason) | set(after.by_reason))
    head = ["semantics", "APIs", "pairs", "agree (no trivial)", "agree (with trivial)",
            "trivial", "disagree"] + classes
    print("\n| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    if base is not None:
        v = ", ".join(f"{k} {n}" for k, n in sorted(base["verdicts"].items()))
        real_agree, real = base["agree"] - base["trivial"], base["compared"] - base["trivial"]
        print(f"| before ({opts.baseline_ref}) | {base['apis']} | {base['compared']} | "
              f"{real_agree} of {real} ({_pct(real_agree, real)}) | "
              f"{base['agree']} ({_pct(base['agree'], base['compared'])}) | {base['trivial']} | "
              f"{base['compared'] - base['agree']} ({v}) |" + " — |" * len(classes))
    for label, cmp, n in (("after, no vendor op list", plain, n_plain), ("after", after, n_after)):
        real = cmp.compared - cmp.trivial
        row = [label, str(n), str(cmp.compared), f"{cmp.agree} of {real} ({_pct(cmp.agree, real)})",
               f"{cmp.agree + cmp.trivial} ({_pct(cmp.agree + cmp.trivial, cmp.compared)})",
               str(cmp.trivial), str(len(cmp.disagreements))]
        row += [str(cmp.by_reason.get(c, 0)) for c in classes]
        print("| " + " | ".join(row) + " |")
    whole = [d for d in after.disagreements if d["class"] == "profile_silent"
             and "the vendor's own kernel for the whole API" in d["reason"]]
    print(f"\nafter, profile_silent where the vendor's kernel for the whole API has no rule: "
          f"{len(whole)} ({', '.join(sorted({d['native_op'] for d in whole}))})")
    print(f"\nseconds: before {base['seconds']:.0f}" if base else "", end="")
    print(f"  after-no-list {s_plain:.0f}  after {s_after:.0f}")
    if opts.examples:
        from torchparity.app.predict_docs import REASONS

        for cls in classes:
            found = [d for d in after.disagreements if d["class"] == cls]
            print(f"\n{cls} ({REASONS[cls][0]}: {REASONS[cls][1]}): {len(found)}")
            for d in found[: opts.examples]:
                print(f"  {d['api']} {d['dtype']}: {d['reason'][:200]}")
                print(f"    footprint: {'; '.join(d['footprint'])[:200]}")
    return 0


def per_cann(profiles, docs: Path, chip, examples: int) -> int:
    from torchparity.devices.profiles import load_profile

    warnings.simplefilter("ignore")
    rows = []
    for name in profiles:
        prof = load_profile(name)
        cann = (prof.generated or {}).get("cann") or "not recorded"
        cmp, n, secs = run_after(name, docs, chip, None)
        parts = split(cmp, prof)
        rows.append((name, cann, cmp, n, parts))
        print(f"{name} (CANN {cann[:60]}): {secs:.0f}s", file=sys.stderr)
    print("\n| profile | CANN | APIs | pairs | agree (no trivial) | disagree | docs error (kernel-backed) "
          "| docs error (CPU refuses) | tool error |")
    print("|" + " --- |" * 9)
    for name, cann, cmp, n, parts in rows:
        real = cmp.compared - cmp.trivial
        print(f"| {name} | {cann[:40]} | {n} | {cmp.compared} | {cmp.agree} of {real} ({_pct(cmp.agree, real)}) | "
              f"{len(cmp.disagreements)} | {len(parts['docs_error_kernel'])} | {len(parts['docs_error_cpu'])} | "
              f"{len(parts['tool_error'])} |")
    for name, _cann, _cmp, _n, parts in rows:
        print(f"\n{name}: tool errors by class: " + ", ".join(
            f"{k} {v}" for k, v in sorted(_count(d["class"] for d in parts["tool_error"]).items())))
        for d in parts["docs_error_kernel"][:examples]:
            print(f"  docs error {d['api']} {d['dtype']}: {d['cite'][:160]}")
        for d in parts["tool_error"][:examples]:
            print(f"  tool error {d['api']} {d['dtype']} ({d['class']}): {d['reason'][:160]}")
    return 0


def _count(items) -> dict:
    out: dict = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())
