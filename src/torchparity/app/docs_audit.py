"""`torchparity docs-audit`: where the vendor's support docs contradict the kernel source,
or another docs entry of the same op — a report for the docs maintainers.

Every docs entry whose footprint is one aten compute op (the mapping ``profile build``
uses) is compared, chip by chip, with:

- the kernel facts (``sources/ascend-kernels.yaml``): the dtypes the op's aclnn API accepts
  on the chip's architecture, less what hardware observations saw refused (the seed facts
  stay true; a kernel list naming such a dtype is reported as a conflict);
- the other docs entries reaching the same op with the same member name
  (``torch.X`` against ``torch.Tensor.X``).

Each finding carries its evidence (kernel file:line@commit, docs file:line) and the
corrected line in the docs' own Markdown (``**限制与说明**：`input`仅支持...``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..devices.profiles.model import DTYPES
from ..evidence.kernels import KernelFacts
from ..evidence.vendor_docs import VendorEntry, load_vendor_docs, resolve_chips
from .profile_build import (
    ASCEND_CHIPS,
    KERNEL_CHIP,
    OBSERVATIONS,
    ComputeOps,
    default_compute_ops,
    load_observations,
)
from .profile_build import (
    single_op_entries as _single_op_entries,
)

# torch dtype -> the spelling the docs use
DOCS_SPELLING = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
LIMITS = "**限制与说明**"


@dataclass
class Finding:
    kind: str  # kernel | entries
    api: str
    op: str
    source: str  # docs file:line
    chips: Dict[str, Dict[str, object]] = field(default_factory=dict)  # chip -> what differs
    evidence: List[str] = field(default_factory=list)
    current: List[str] = field(default_factory=list)  # the docs lines as written
    corrected: List[str] = field(default_factory=list)  # the proposed lines
    severity: str = ""  # claims (docs list a dtype the kernel refuses) | denies | omits | differs


def docs_spelling(dtypes: Sequence[str]) -> str:
    return "，".join(DOCS_SPELLING.get(d, d) for d in dtypes)


def _sorted(dtypes) -> List[str]:
    return sorted(dtypes, key=lambda d: DTYPES.index(d) if d in DTYPES else len(DTYPES))


def _corrected(arg: str, per_chip: Dict[str, Optional[List[str]]], always_terms: bool = False) -> List[str]:
    """One line when every chip takes the same list, else a <term> line per group of chips
    (``always_terms``: name the chips even then, for a correction of some chips only)."""
    groups: Dict[Tuple[str, ...], List[str]] = defaultdict(list)
    for chip, dtypes in per_chip.items():
        if dtypes is not None:
            groups[tuple(dtypes)].append(chip)
    if len(groups) == 1 and not always_terms:
        (dtypes, _), = groups.items()
        return [f"{LIMITS}：`{arg}`仅支持{docs_spelling(dtypes)}"]
    lines = [f"{LIMITS}："]
    for dtypes, chips in groups.items():
        terms = "/".join(f"<term>{c}</term>" for c in chips)
        lines.append(f"- {terms}：`{arg}`仅支持{docs_spelling(dtypes)}")
    return lines


def _refused(obs_path: Optional[Path], known_chips: Sequence[str]) -> Dict[Tuple[str, str], Tuple[Set[str], str]]:
    """(chip, op) -> (dtypes seen refused on hardware, source)."""
    out: Dict[Tuple[str, str], Tuple[Set[str], str]] = {}
    if obs_path is None:
        return out
    for o in load_observations(obs_path).observations:
        for chip in resolve_chips(o.chips, known_chips):
            for op in o.unsupported:
                prev = out.get((chip, op), (set(), o.source))
                out[(chip, op)] = (prev[0] | set(o.dtypes), o.source)
    return out


def audit(docs_root: Path, torch_version: str, kernels: KernelFacts, *,
          observations: Optional[Path] = OBSERVATIONS, compute_ops: ComputeOps = default_compute_ops,
          progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, object]:
    index = load_vendor_docs(docs_root, torch_version)
    chips = {chip: KERNEL_CHIP[name] for name, chip in ASCEND_CHIPS.items()}
    pairs = _single_op_entries(index, compute_ops, progress)
    refused = _refused(observations, index.chips)
    commits = {repo: c[:12] for repo, c in kernels.repos.items()}
    findings: List[Finding] = []
    conflicts: List[Dict[str, str]] = []

    def kernel_list(op: str, chip: str) -> Optional[Tuple[List[str], str]]:
        ok = kernels.op(op)
        ck = ok.chips.get(chips[chip]) if ok else None
        if ck is None or ck.dtypes is None:
            return None  # undecided, or no dtype check on this path: no list to hold the docs to
        repo = ck.source.split(" ", 1)[0]
        kdt = [d for d in _sorted(ck.dtypes) if d in DTYPES]
        no, why = refused.get((chip, op), (set(), ""))
        clash = [d for d in kdt if d in no]
        if clash and not any(c["op"] == op and c["chip"] == chip for c in conflicts):
            conflicts.append({"op": op, "chip": chip, "dtypes": ", ".join(clash),
                              "kernel": f"{ck.source}@{commits.get(repo, '?')}", "observation": why})
        ev = f"kernel {ok.aclnn}: {ck.source}@{commits.get(repo, '?')}"
        return [d for d in kdt if d not in no], ev + (f"; seed observation refuses {', '.join(clash)}" if clash else "")

    # 1. docs against the kernel
    for entry, op in pairs:
        differs: Dict[str, Dict[str, object]] = {}
        evidence: List[str] = []
        per_chip: Dict[str, Optional[List[str]]] = {}
        severity = set()
        for chip in chips:
            if chip not in entry.chips:
                continue
            k = kernel_list(op, chip)
            if k is None:
                continue
            kdt, ev = k
            per_chip[chip] = kdt
            docs = entry.dtypes_for(chip) if entry.chips[chip] else []
            if docs is None:
                continue  # no dtype list in the docs: nothing to contradict
            docs = _sorted(d for d in docs if d in DTYPES)
            if not entry.chips[chip]:
                if kdt:
                    differs[chip] = {"docs": "✘", "kernel": kdt}
                    severity.add("denies")
                    evidence.append(ev)
                continue
            claims = [d for d in docs if d not in kdt]
            omits = [d for d in kdt if d not in docs]
            if claims or omits:
                differs[chip] = {"docs": docs, "kernel": kdt, "docs_only": claims, "kernel_only": omits}
                severity.add("claims" if claims else "omits")
                evidence.append(ev)
        if not differs:
            continue
        only = [c for c in entry.dtype_clauses if c.kind == "only"]
        arg = next((c.arg for c in only if c.arg), None) or "input"
        rows = [f"| <term>{chip}</term> | ✔ |" for chip, what in differs.items() if what["docs"] == "✘"]
        findings.append(Finding(
            kind="kernel", api=entry.name, op=op, source=f"{entry.source}:{entry.line}", chips=differs,
            evidence=sorted(set(evidence)), current=[c.text for c in only] or [f"{LIMITS}：(none)"],
            corrected=rows + _corrected(arg, {c: per_chip.get(c) for c in chips if c in per_chip}),
            severity=next(s for s in ("claims", "denies", "omits") if s in severity)))

    # 2. docs against docs: torch.X and torch.Tensor.X (the function and its method); the
    # op is the single compute op of their footprint, else the vendor's own aten.X
    single = {entry.name: op for entry, op in pairs}
    by_member: Dict[str, List[VendorEntry]] = defaultdict(list)
    for entry in index:
        for prefix in ("torch.Tensor.", "torch."):
            member = entry.name[len(prefix):]
            if entry.name.startswith(prefix) and member.isidentifier():
                by_member[member].append(entry)
                break
    for member, entries in sorted(by_member.items()):
        if len({e.name for e in entries}) < 2:
            continue
        ops = {single[e.name] for e in entries if e.name in single}
        op = ops.pop() if len(ops) == 1 else f"aten.{member}"
        f = Finding(kind="entries", api=" / ".join(sorted(e.name for e in entries)), op=op,
                    source=", ".join(f"{e.source}:{e.line}" for e in entries), severity="differs")
        f.current = [f"{e.name}: " + ("; ".join(c.text for c in e.dtype_clauses if c.kind == "only") or "(no limit)")
                     for e in entries]
        arg = next((c.arg for e in entries for c in e.dtype_clauses if c.kind == "only" and c.arg), None) or "input"
        kernel_view: Dict[str, Optional[List[str]]] = {}
        for chip in chips:
            views = {e.name: (e.chips.get(chip), tuple(_sorted(e.dtypes_for(chip) or [])) if e.chips.get(chip) else ())
                     for e in entries if chip in e.chips}
            if len(set(views.values())) < 2:
                continue
            f.chips[chip] = {name: ("✘" if not v[0] else (list(v[1]) or "no limit")) for name, v in views.items()}
            k = kernel_list(op, chip)
            if k:
                f.evidence.append(k[1])
                kernel_view[chip] = k[0]
        if f.chips:
            f.evidence = sorted(set(f.evidence))
            f.corrected = _corrected(arg, kernel_view, always_terms=True) if kernel_view else []
            findings.append(f)

    order = {"claims": 0, "denies": 1, "differs": 2, "omits": 3}
    findings.sort(key=lambda f: (order[f.severity], f.api))
    return {"docs": f"pytorch_{torch_version.replace('.', '-')}", "torch_version": torch_version,
            "kernels": {r: c for r, c in kernels.repos.items()},
            "kernels_cann": kernels.cann, "kernels_cann_note": kernels.cann_note,
            "observations_cann": _observations_cann(),
            "entries_compared": len(pairs), "findings": [asdict(f) for f in findings],
            "seed_conflicts": conflicts}


def _observations_cann():
    """The CANN release the seed observations were made on (the seeds' environment, A2)."""
    from ..devices.profiles import chip_identity, load_profile

    return chip_identity(load_profile("ascend-a2")).cann


SEVERITY_TITLE = {
    "claims": "Docs list dtypes the kernel refuses",
    "denies": "Docs mark the chip ✘ though the kernel has a dtype list there",
    "differs": "Entries of the same op disagree (torch.X vs torch.Tensor.X)",
    "omits": "Docs leave out dtypes the kernel accepts",
}


SEVERITY_NOTE = {
    "denies": "The aclnn API's own checks accept these dtypes on the chip's architecture; whether "
              "the chip's CANN package ships the kernel binary is not in the sources read.",
    "omits": "The docs say 仅支持 (only); the kernel takes more. Lower priority, but the line is wrong.",
}


def render_markdown(report: Dict[str, object]) -> str:
    findings = report["findings"]
    lines = [f"# Ascend native-API docs audit ({report['docs']})", "",
             "For the maintainers of the Ascend PyTorch support docs (docs/zh/api/native_api). "
             "Each entry below contradicts the operator source the runtime enforces, or another "
             "entry of the same op; the evidence and a corrected line follow it.", "",
             "Kernel sources read: " + ", ".join(f"{r}@{c[:12]}" for r, c in report["kernels"].items())
             + (f" (CANN {report['kernels_cann']}: the facts are for that release)" if report.get("kernels_cann")
                else " (on no CANN release branch yet: the facts are for these commits, not for a release; "
                     + str(report.get("kernels_cann_note") or "no release recorded") + ")")
             + "; the seed observations were made on CANN "
             + str(report.get("observations_cann") or "not recorded") + ".", "",
             f"Entries compared: {report['entries_compared']} (those whose footprint is one aten op); "
             f"findings: {len(findings)}.", ""]
    counts: Dict[str, int] = defaultdict(int)
    for f in findings:
        counts[f["severity"]] += 1
    for sev, title in SEVERITY_TITLE.items():
        lines.append(f"- {title}: {counts.get(sev, 0)}")
    lines += ["", "## Seed observations against kernel lists", ""]
    if report["seed_conflicts"]:
        for c in report["seed_conflicts"]:
            lines.append(f"- `{c['op']}` on {c['chip']}: the kernel list ({c['kernel']}) includes "
                         f"{c['dtypes']}, refused on hardware ({c['observation']}); the observation is kept.")
    else:
        lines.append("None: every kernel list excludes the dtypes the hardware observations saw refused.")
    for sev, title in SEVERITY_TITLE.items():
        part = [f for f in findings if f["severity"] == sev]
        if not part:
            continue
        lines += ["", f"## {title}", ""] + ([SEVERITY_NOTE[sev], ""] if sev in SEVERITY_NOTE else [])
        for f in part:
            lines += [f"### {f['api']}", "", f"- docs: {f['source']}; aten op `{f['op']}`"]
            for chip, what in f["chips"].items():
                lines.append(f"- {chip}: " + "; ".join(
                    f"{k} {', '.join(v) if isinstance(v, list) else v}" for k, v in what.items()
                    if not (isinstance(v, list) and not v)))
            lines += [f"- evidence: {e}" for e in f["evidence"]]
            lines += ["", "Current:", "", "```markdown", *f["current"], "```"]
            if f["corrected"]:
                lines += ["", "Corrected:", "", "```markdown", *f["corrected"], "```"]
            else:
                lines += ["", "No kernel list for this op in the sources read: the entries disagree, "
                          "the source does not say which is right."]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_audit(report: Dict[str, object], out: Path) -> Tuple[Path, Path]:
    from ..results.store import write_text_atomic

    md, js = out / "docs-audit.md", out / "docs-audit.json"
    write_text_atomic(md, render_markdown(report))
    write_text_atomic(js, json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    return md, js
