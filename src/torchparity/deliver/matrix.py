"""Merging report bundles of several environments into one matrix.

A *column* is one bundle: a torch version on one device (a chip, a capability profile, or
another backend). Rows are APIs (their verdict per column) and scenario cases (API x
scenario x dtype, their status per column). Rendered as Markdown (the seed-001 results
section: per chip group, per torch version), CSV (long format, one line per case and
column), a self-contained HTML page, and the Ascend vendor docs entries per torch version.
Emulated columns are labelled emulated everywhere.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import yaml

# vendor docs: the evidence branch's parser and writer are the one implementation
from ..dtypes import DTYPE_FREE
from ..evidence.official_docs import url_pattern
from ..evidence.vendor_docs import DTYPE_NAMES, version_folder
from ..evidence.writer import write_vendor_entry
from ..judge.causes import CAUSE_TEXT
from ..results.models import EMULATED_BANNER, ApiReport, Cause, DeviceInfo, Environment, Report
from .format import HERE, cell
from .gentest import check_api_name
from .templating import make_environment

# torch dtype -> the docs' short spelling (fp32, bf16, ...): the first one the docs table lists
DTYPE_SHORT = {}
for _short, _dtype in DTYPE_NAMES.items():
    DTYPE_SHORT.setdefault(_dtype, _short)

MARK = {"pass": "✔", "fail": "✘", "unsupported": "✘", "error": "✘", "crash": "✘", "timeout": "✘",
        "skip": "–", "partial": "◐", "supported": "✔", "broken": "✘", "unknown": "?",
        "device-independent": "✔"}
# refusals a docs entry can still call "supported, with limits"
SOFT_LIMITS = {"dtype_limit"}


@dataclass(frozen=True)
class Chip:
    id: str
    group: str
    term: str
    match: Tuple[str, ...]
    term_en: str = ""  # the product name in English text (the vendor docs' zh term otherwise)

    def name(self, lang: str) -> str:
        return self.term_en if lang == "en" and self.term_en else self.term


@lru_cache(maxsize=None)
def chips() -> Tuple[Chip, ...]:
    data = yaml.safe_load((HERE / "chips.yaml").read_text(encoding="utf-8"))
    return tuple(Chip(c["id"], c["group"], c["term"], tuple(c["match"]), c.get("term_en", "")) for c in data["chips"])


def short_torch(version: str) -> str:
    return version.split("+", 1)[0]


def _version_key(version: str) -> Tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+]", short_torch(version)))


def chips_of(report: Report) -> List[Chip]:
    """The chip families a bundle stands for (none for a non-Ascend device)."""
    return chips_for(report.environment, report.device)


def chips_for(env: Environment, dev: DeviceInfo) -> List[Chip]:
    """The chip families one device of a run stands for (also a ``Report.runs`` entry)."""
    hay = " | ".join(str(x) for x in (env.device_name, dev.name, dev.profile,
                                        env.extra.get("chips"), env.extra.get("profile")) if x).lower()
    return [c for c in chips() if any(m.lower() in hay for m in c.match)]


@dataclass
class Column:
    index: int
    source: str
    report: Report
    torch: str  # short version, e.g. 2.12.0
    chips: List[Chip]
    emulated: bool
    duplicate_of: Optional[int] = None

    @property
    def device(self) -> str:
        return self.report.device.type

    @property
    def where(self) -> str:
        """The chips measured (A2, A2/A3), else the profile, else the device."""
        if self.chips:
            return "/".join(c.id for c in self.chips)
        if self.emulated and self.report.device.profile:
            return self.report.device.profile
        return self.report.environment.device_name or self.device

    @property
    def group(self) -> str:
        """The seeds' results grouping: chip family (A2/A3, A5), else as ``where``."""
        if self.chips:
            return "/".join(dict.fromkeys(c.group for c in self.chips))
        if self.emulated and self.report.device.profile:
            return self.report.device.profile
        return self.report.environment.device_name or self.device

    @property
    def label(self) -> str:
        text = f"{self.where} v{self.torch}"
        if self.emulated:
            text += f" (emulated{': ' + self.report.device.profile if self.report.device.profile else ''})"
        elif not self.chips and self.device not in self.where.lower():
            text += f" ({self.device})"
        if self.duplicate_of is not None:
            text += f" #{self.index + 1}"
        return text


@dataclass
class Cell:
    status: str
    detail: str = ""
    cause: Optional[str] = None
    passed: int = 0
    total: int = 0
    category: Optional[str] = None
    evidence: Optional[str] = None  # device-compute | device-state | host-only | none


@dataclass
class Matrix:
    columns: List[Column]
    apis: List[str]  # row order
    api_cells: Dict[Tuple[str, int], Cell] = field(default_factory=dict)
    cases: List[Tuple[str, str, str]] = field(default_factory=list)  # (api, scenario, dtype)
    case_cells: Dict[Tuple[str, str, str, int], Cell] = field(default_factory=dict)
    api_reports: Dict[Tuple[str, int], ApiReport] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    # cases whose code never reads dtype (tag DTYPE_FREE): their dtype is "any"
    dtype_free: set = field(default_factory=set)

    def dtype_text(self, api: str, sid: str, dtype: str) -> str:
        """A case's dtype column: its dtype, or "any" (with the dtype it ran with) for a
        case that takes no dtype."""
        if (api, sid, dtype) in self.dtype_free:
            return f"any (takes no dtype; ran {dtype or 'float32'})"
        return dtype

    @property
    def emulated(self) -> bool:
        return any(c.emulated for c in self.columns)


def build(bundles: Sequence[Tuple[str, Report]]) -> Matrix:
    """One matrix from (source label, report) pairs; columns ordered chip group, torch version."""
    cols = [Column(i, src, r, short_torch(r.environment.torch), chips_of(r), r.device.emulated)
            for i, (src, r) in enumerate(bundles)]
    chip_order = {c.id: i for i, c in enumerate(chips())}

    def order(col: Column):
        first_chip = min((chip_order[c.id] for c in col.chips), default=len(chip_order))
        return (col.emulated, first_chip, col.where, _version_key(col.torch), col.index)

    cols.sort(key=order)
    notes: List[str] = []
    seen: Dict[Tuple, Column] = {}
    for col in cols:
        ident = (col.torch, col.where, col.device, col.emulated, col.report.device.profile)
        if ident in seen:
            col.duplicate_of = seen[ident].index
            notes.append(f"{col.source} measures the same environment as {seen[ident].source}; "
                         "both are kept as separate columns")
        else:
            seen[ident] = col
    apis: List[str] = []
    m = Matrix(columns=cols, apis=apis, notes=notes)
    for col in cols:
        for api in col.report.apis:
            if api.name not in apis:
                apis.append(api.name)
            m.api_reports[(api.name, col.index)] = api
            counted = [s for s in api.scenarios if s.status != "skip"]
            m.api_cells[(api.name, col.index)] = Cell(
                status=api.verdict.status, passed=sum(1 for s in counted if s.status == "pass"),
                total=len(counted), category=api.verdict.category,
                detail=", ".join(api.verdict.causes), evidence=api.verdict.evidence)
            for s in api.scenarios:
                key = (api.name, s.id, s.dtype or "")
                if key not in m.cases:
                    m.cases.append(key)
                if DTYPE_FREE in s.tags:
                    m.dtype_free.add(key)
                m.case_cells[key + (col.index,)] = Cell(status=s.status, cause=s.cause, detail=s.detail,
                                                        evidence=s.evidence)
    api_pos = {a: i for i, a in enumerate(apis)}
    m.cases.sort(key=lambda k: api_pos[k[0]])  # stable: scenario order within an API kept
    return m


# ----------------------------------------------------------------------------- text


def api_cell_text(cell: Optional[Cell]) -> str:
    if cell is None:
        return "—"
    return f"{MARK.get(cell.status, '?')} {cell.status} {cell.passed}/{cell.total}"


def case_cell_text(cell: Optional[Cell]) -> str:
    if cell is None:
        return "—"
    return f"{MARK.get(cell.status, '?')} {cell.status}" + (f" ({cell.cause})" if cell.cause else "")


def render_markdown(m: Matrix) -> str:
    lines = ["# torchparity results matrix", ""]
    if m.emulated:
        lines += [f"> **{EMULATED_BANNER}** — columns marked *emulated* come from an emulated device "
                  "running on the CPU (a capability profile), not from hardware.", ""]
    lines += ["## Bundles", "",
              "| # | column | torch | device | chips | backend | CANN | emulated | created | source |",
              "| ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for n, col in enumerate(m.columns, 1):
        r = col.report
        backend = ", ".join(f"{k} {v}" for k, v in r.environment.backend.items()) or "—"
        lines.append(
            f"| {n} | {cell(col.label)} | {cell(r.environment.torch)} | "
            f"{cell(r.environment.device_name or col.device)} | "
            f"{cell(', '.join(c.id for c in col.chips) or '—')} | {cell(backend)} | "
            f"{cell(r.environment.cann or '—')} | {'yes (' + cell(r.device.profile) + ')' if col.emulated else 'no'} | "
            f"{cell(r.created)} | `{cell(col.source)}` |")
    header = "| API | " + " | ".join(cell(c.label) for c in m.columns) + " |"
    rule = "| --- | " + " | ".join("---" for _ in m.columns) + " |"
    lines += ["", "## Results by API and environment", "", header, rule]
    for api in m.apis:
        lines.append(f"| `{cell(api)}` | " + " | ".join(
            api_cell_text(m.api_cells.get((api, c.index))) for c in m.columns) + " |")
    lines += ["", "## Evidence by API and environment", "",
              "What the answers compared, from the footprint: device-compute (device ops of the API "
              "ran, outputs compared), device-state (device metadata or runtime state), host-only "
              "(no device op of the API: device-independent), none (not an answer).", "",
              header, rule]
    for api in m.apis:
        lines.append(f"| `{cell(api)}` | " + " | ".join(
            cell((m.api_cells.get((api, c.index)) or Cell(status="")).evidence or "—")
            for c in m.columns) + " |")
    lines += ["", "## Results by scenario", "",
              "| API | scenario | dtype | " + " | ".join(cell(c.label) for c in m.columns) + " |",
              "| --- | --- | --- | " + " | ".join("---" for _ in m.columns) + " |"]
    for api, sid, dtype in m.cases:
        lines.append(f"| `{cell(api)}` | `{cell(sid)}` | {cell(m.dtype_text(api, sid, dtype))} | " + " | ".join(
            cell(case_cell_text(m.case_cells.get((api, sid, dtype, c.index)))) for c in m.columns) + " |")
    lines += ["", "## Per chip and torch version (the seed-001 layout)", ""]
    groups: Dict[str, List[Column]] = {}
    for col in m.columns:
        groups.setdefault(col.group + (" (emulated)" if col.emulated else ""), []).append(col)
    for where, cols in groups.items():
        lines.append(f"**{cell(where)}**")
        lines.append("")
        for col in cols:
            cells = [m.api_cells.get((api, col.index)) for api in m.apis]
            done = [c for c in cells if c is not None]
            ok = sum(1 for c in done if c.status in ("supported", "device-independent"))
            lines.append(f"- v{cell(col.torch)}: {ok}/{len(done)} APIs supported; "
                         + "; ".join(f"`{cell(api)}` {api_cell_text(c)}" for api, c in zip(m.apis, cells)
                                     if c is not None))
        lines.append("")
    if m.notes:
        lines += ["## Notes", ""] + [f"- {cell(n)}" for n in m.notes] + [""]
    return "\n".join(lines).rstrip() + "\n"


_FORMULA = re.compile(r"^[=+\-@\t\r]")


def _csv_safe(value: Any) -> str:
    """Plain text for spreadsheets: a leading = + - @ would start a formula."""
    text = "" if value is None else str(value)
    if _FORMULA.match(text) and not re.fullmatch(r"-?\d+(\.\d+)?", text):
        return "'" + text
    return text


CSV_FIELDS = ("api", "scenario", "dtype", "status", "cause", "detail", "column", "torch", "torch_full",
              "device_type", "device_name", "chips", "emulated", "profile", "source", "evidence")


def render_csv(m: Matrix) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for api, sid, dtype in m.cases:
        for col in m.columns:
            c = m.case_cells.get((api, sid, dtype, col.index))
            if c is None:
                continue
            r = col.report
            writer.writerow([_csv_safe(v) for v in (
                api, sid, dtype, c.status, c.cause or "", c.detail, col.label, col.torch,
                r.environment.torch, col.device, r.environment.device_name or "",
                " ".join(ch.id for ch in col.chips), "yes" if col.emulated else "no",
                r.device.profile or "", col.source, c.evidence or "")])
    return buf.getvalue()


# ----------------------------------------------------------------------------- vendor docs


def _limits(api: ApiReport) -> Optional[str]:
    """限制与说明 text from the refused or differing cases of one API on one chip."""
    bad = [s for s in api.scenarios if s.status not in ("pass", "skip")]
    if not bad:
        return None
    by_dtype: Dict[str, set] = {}
    for s in api.scenarios:  # a case that takes no dtype says nothing about one
        if s.status != "skip" and s.dtype and DTYPE_FREE not in s.tags:
            by_dtype.setdefault(s.dtype, set()).add(s.status == "pass")
    ok = [d for d, v in by_dtype.items() if v == {True}]
    refused = [d for d, v in by_dtype.items() if v == {False}]
    if ok and refused and len(ok) + len(refused) == len(by_dtype) and all(s.cause in SOFT_LIMITS for s in bad):
        return "仅支持" + "，".join(DTYPE_SHORT.get(d, d) for d in ok)
    causes = "、".join(dict.fromkeys(CAUSE_TEXT[Cause(s.cause)].zh if s.cause else s.status for s in bad))
    cases = "、".join(dict.fromkeys(
        f"{s.id}（{'与数据类型无关' if DTYPE_FREE in s.tags else DTYPE_SHORT.get(s.dtype or '', s.dtype or '')}）"
        for s in bad))
    return f"以下场景不支持：{cases}；原因：{causes}"


def support_mark(api: ApiReport) -> Optional[bool]:
    """✔ / ✘ for a docs entry, None when undecided."""
    status = api.verdict.status
    if status in ("supported", "device-independent"):  # the latter behaves alike on any device
        return True
    if status == "partial":
        bad = [s for s in api.scenarios if s.status not in ("pass", "skip")]
        return all(s.cause in SOFT_LIMITS for s in bad)
    if status in ("unsupported", "broken"):
        return False
    return None


def vendor_docs(m: Matrix) -> Dict[str, str]:
    """{pytorch_X-Y-Z: text} — one docs file per torch version, entries for every API.

    Only chips measured for that version get a row (no claim about the others); hardware
    beats emulation for the same chip; an entry resting on emulated evidence says so in
    its 限制与说明, and the file opens with the emulated banner.
    """
    out: Dict[str, str] = {}
    versions = sorted({c.torch for c in m.columns if c.chips}, key=_version_key)
    for version in versions:
        cols = [c for c in m.columns if c.torch == version and c.chips]
        entries: List[str] = []
        skipped: List[str] = []
        any_emulated = False
        for api in m.apis:
            support: Dict[str, bool] = {}
            limits: List[str] = []
            emulated_terms: List[str] = []
            name = url = None
            for chip in chips():
                # hardware first, then emulated evidence
                for col in sorted((c for c in cols if chip in c.chips), key=lambda c: c.emulated):
                    rep = m.api_reports.get((api, col.index))
                    if rep is None:
                        continue
                    mark = support_mark(rep)
                    if mark is None:
                        continue
                    support[chip.term] = mark
                    if name is None:
                        docs = rep.evidence.docs if rep.evidence else None
                        vendor = docs.vendor if docs else None
                        name = vendor.name if vendor and vendor.present and vendor.name else rep.analysis.qualified_name
                        official = docs.official if docs else None
                        url = official.url if official and official.url and official.status in (
                            "own_page", "anchor") else None
                    text = _limits(rep)
                    if text and text not in limits:
                        limits.append(text)
                    if col.emulated:
                        emulated_terms.append(chip.term)
                    break
            if not support or name is None:
                continue
            try:
                check_api_name(name)
            except Exception:
                skipped.append(api)
                continue
            if emulated_terms:
                any_emulated = True
                limits.append("模拟设备预测，未经硬件验证：" + "、".join(emulated_terms))
            entries.append(write_vendor_entry(name, support, cell("；".join(limits)) if limits else None,
                                              url or url_pattern(name, version)))
        if not entries:
            continue
        head = [f"<!-- torchparity: support entries for torch {version}; chips measured: "
                f"{', '.join(dict.fromkeys(ch.id for c in cols for ch in c.chips))} -->"]
        if any_emulated:
            head.append(f"<!-- {EMULATED_BANNER}: entries marked 模拟设备预测 rest on an emulated device -->")
        if skipped:
            head.append(f"<!-- skipped (not a dotted name): {len(skipped)} API(s) -->")
        out[version_folder(version)] = "\n".join(head) + "\n\n" + "\n".join(entries)
    return out


# ----------------------------------------------------------------------------- html


def render_html(m: Matrix) -> str:

    from .format import STATUS_RANK, asset

    env = make_environment(autoescape=True, globals={
        "mark": MARK, "rank": lambda s: STATUS_RANK.get(s, 1), "api_text": api_cell_text,
        "case_text": case_cell_text})
    return env.get_template("matrix.html.j2").render(
        m=m, banner=EMULATED_BANNER, css=asset("report.css"), js=asset("report.js"))


def write_all(m: Matrix, out: Path, formats: Sequence[str] = ("md", "csv", "html", "vendor")) -> List[Path]:
    from ..results.store import write_text_atomic

    out = Path(out)
    written: List[Path] = []
    if "md" in formats:
        written.append(out / "matrix.md")
        write_text_atomic(written[-1], render_markdown(m))
    if "csv" in formats:
        written.append(out / "matrix.csv")
        write_text_atomic(written[-1], render_csv(m))
    if "html" in formats:
        written.append(out / "matrix.html")
        write_text_atomic(written[-1], render_html(m))
    if "vendor" in formats:
        for folder, text in vendor_docs(m).items():
            written.append(out / "vendor-docs" / f"{folder}.md")
            write_text_atomic(written[-1], text)
    return written
