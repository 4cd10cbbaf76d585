"""The sweep's support matrix: API x dtype (x device or profile) as JSON, Markdown and CSV.

(``deliver.matrix`` merges check report bundles across torch versions and chips; this one
renders sweep stores: every OpInfo variant x dtype.)

``build_matrix(rows, meta)`` turns a sweep store's rows and meta into one JSON-able
document; ``merge_matrices`` puts several (devices, profiles) side by side;
``write_matrix`` writes ``matrix.json``, ``matrix.md`` and ``matrix.csv``.

Row status is the check contract's (pass | fail | unsupported | error | crash | timeout |
skip, fail meaning a wrong result) plus ``partial``. Results of an emulated device are
labelled: ``device.emulated`` and ``device.profile`` in the JSON header, the banner line
at the top of the Markdown.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence

from ..results.models import EMULATED_BANNER
from ..results.store import write_text_atomic

DTYPE_ORDER = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex32", "complex64", "complex128")
STATUS_ORDER = ("pass", "partial", "fail", "unsupported", "error", "crash", "timeout", "skip",
                "unknown")
MARK = {"pass": "✓", "partial": "◐", "fail": "✗", "unsupported": "–", "error": "E",
        "crash": "C", "timeout": "T", "skip": "s", "unknown": "?"}
CSV_HEADER = ("device", "api", "variant", "dtype", "status", "cause", "detail", "claimed",
              "metric", "metric_value", "threshold", "standard", "kind", "seconds", "source",
              "evidence")
# sweep stores file OpInfo cases under their sample set; `check --apis-from-vendor-docs`
# files every case under its scenario source, and an API with none under "-" (status unknown)
OPINFO_SAMPLE_SETS = ("sample_inputs", "reference_inputs")


def source_of(row: Dict[str, Any]) -> Optional[str]:
    """The scenario source of a stored row (None for an API's single "unknown" row)."""
    sample_set = row.get("sample_set")
    if sample_set in OPINFO_SAMPLE_SETS:
        return "opinfo"
    return None if sample_set in (None, "-") else sample_set
# statuses that say the device ran the dtype / refused it (dtype discovery)
RAN = ("pass", "fail", "partial")
REFUSED = ("unsupported",)


def _dtype_key(d: str) -> int:
    return DTYPE_ORDER.index(d) if d in DTYPE_ORDER else len(DTYPE_ORDER)


def device_label(device: Dict[str, Any]) -> str:
    if device.get("emulated"):
        return f"{device.get('type')} (emulated: {device.get('profile')})"
    return device.get("spec") or device.get("type") or "?"


def _ran(row: Dict[str, Any]) -> bool:
    """The device ran the dtype: a judged status, or a skip whose samples ran."""
    if row["status"] in RAN:
        return True
    forward = ((row.get("counts") or {}).get("forward") or {})
    return row["status"] == "skip" and any(forward.get(c) for c in ("pass", "warn", "fail", "not_comparable"))


def dtype_discovery(rows: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Observed against OpInfo-claimed dtypes, per (api, variant)."""
    groups: Dict[tuple, List[Dict[str, Any]]] = {}
    for r in rows:
        if r["status"] == "unknown" or r.get("source") not in (None, "opinfo"):
            continue  # only OpInfo makes dtype claims
        groups.setdefault((r["api"], r["variant"]), []).append(r)
    out = []
    for (api, variant), rs in groups.items():
        rs = sorted(rs, key=lambda r: _dtype_key(r["dtype"]))
        tested = [r["dtype"] for r in rs]
        claimed = [r["dtype"] for r in rs if r.get("claimed")]
        supported = [r["dtype"] for r in rs if _ran(r)]
        unsupported = [r["dtype"] for r in rs if r["status"] in REFUSED]
        unknown = [r["dtype"] for r in rs if not _ran(r) and r["status"] not in REFUSED]
        entry = {
            "api": api, "variant": variant, "tested": tested, "claimed": claimed,
            "supported": supported, "unsupported": unsupported, "unknown": unknown,
            "wrong_result": [r["dtype"] for r in rs if r["status"] == "fail"],
            "partial": [r["dtype"] for r in rs if r["status"] == "partial"],
            "claimed_not_supported": [d for d in claimed if d in unsupported],
            "supported_not_claimed": [d for d in supported if d not in claimed],
            # OpInfo's own skip / xfail of test_dtypes for that dtype on this device type
            "upstream_notes": {r["dtype"]: r["note"] for r in rs if r.get("note")},
        }
        out.append(entry)
    return sorted(out, key=lambda e: (e["api"], e["variant"]))


def build_matrix(rows: Iterable[Dict[str, Any]], meta: Dict[str, Any],
                 incomplete: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """``incomplete`` ({"planned": n, "recorded": m}) marks the matrix of an interrupted sweep."""
    device = meta.get("device") or {}
    label = device_label(device)
    out_rows = []
    for r in rows:
        metric = r.get("metric") or {}
        out_rows.append({
            "device": label, "api": r["api"], "variant": r["variant"], "dtype": r["dtype"],
            "status": r["status"], "cause": r.get("cause"), "detail": r.get("detail") or "",
            "claimed": r.get("claimed"), "metric": metric or None, "kind": r.get("kind"),
            "sample_set": r.get("sample_set"), "seconds": r.get("seconds"),
            "counts": r.get("counts"), "note": r.get("note"), "source": source_of(r),
            # what the row compared, from its footprint (judge/evidence.py); an API's
            # "unknown" row and a row stored before the column existed: none
            "evidence": r.get("evidence") or "none",
        })
    out_rows.sort(key=lambda r: (r["api"], r["variant"], _dtype_key(r["dtype"])))
    dtypes = sorted({r["dtype"] for r in out_rows if r["status"] != "unknown"}, key=_dtype_key)
    emulated = bool(device.get("emulated"))
    return {
        "tool_version": meta.get("tool_version"),
        "created": meta.get("created"),
        "device": device,
        "devices": [device] if device else [],
        "environment": meta.get("environment"),
        "options": meta.get("options", {}),
        "emulated": emulated,
        "banner": EMULATED_BANNER if emulated else None,
        "dtypes": dtypes,
        "counts": _counts(out_rows),
        "rows": out_rows,
        "no_scenarios": sorted(meta.get("no_scenarios", [])),
        "dtype_discovery": dtype_discovery(out_rows),
        "incomplete": incomplete,
    }


def _counts(rows: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        "rows": len(rows),
        "apis": len({r["api"] for r in rows}),
        "by_status": dict(sorted(Counter(r["status"] for r in rows).items(),
                                 key=lambda kv: STATUS_ORDER.index(kv[0]) if kv[0] in STATUS_ORDER else 99)),
        "by_cause": dict(Counter(r["cause"] for r in rows if r.get("cause")).most_common()),
        "by_evidence": dict(Counter(r.get("evidence") or "none" for r in rows).most_common()),
    }


def merge_matrices(docs: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Several devices / profiles in one document (rows carry their device label)."""
    if len(docs) == 1:
        return docs[0]
    rows = [r for d in docs for r in d["rows"]]
    devices = [d["device"] for d in docs]
    emulated = any(d.get("emulated") for d in docs)
    return {
        "tool_version": docs[0].get("tool_version"),
        "created": docs[0].get("created"),
        "device": None,
        "devices": devices,
        "environment": None,
        "options": {},
        "emulated": emulated,
        "banner": EMULATED_BANNER if emulated else None,
        "dtypes": sorted({r["dtype"] for r in rows if r["status"] != "unknown"}, key=_dtype_key),
        "counts": _counts(rows),
        "rows": rows,
        "no_scenarios": sorted({n for d in docs for n in d.get("no_scenarios", [])}),
        "dtype_discovery": [],
        "incomplete": next((d["incomplete"] for d in docs if d.get("incomplete")), None),
    }


# -- renderers ----------------------------------------------------------------------------

def _cell(text: Any) -> str:
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def render_markdown(doc: Dict[str, Any], detail_limit: int = 160) -> str:
    lines: List[str] = []
    if doc.get("emulated"):
        lines += [EMULATED_BANNER, ""]
    lines.append("# Support matrix")
    lines.append("")
    if doc.get("incomplete"):
        inc = doc["incomplete"]
        lines += [f"> **Incomplete**: the sweep was interrupted; {inc.get('recorded')} of "
                  f"{inc.get('planned')} planned results are recorded. Run the same command "
                  "again to finish it.", ""]
    for dev in doc.get("devices") or []:
        extra = f", profile `{dev.get('profile')}`" if dev.get("emulated") else ""
        lines.append(f"- device: `{dev.get('spec')}` ({dev.get('type')}{extra})"
                     + (" — **emulated**" if dev.get("emulated") else ""))
    env = doc.get("environment") or {}
    if env:
        lines.append(f"- torch {env.get('torch')}, Python {env.get('python')}, {env.get('os')}")
    counts = doc["counts"]
    lines.append(f"- {counts['rows']} results over {counts['apis']} APIs; created {doc.get('created')}")
    lines.append("")
    lines.append("## Counts")
    lines.append("")
    lines.append("| status | results |")
    lines.append("|---|---:|")
    for k, v in counts["by_status"].items():
        lines.append(f"| {k} | {v} |")
    if counts["by_cause"]:
        lines.append("")
        lines.append("| cause | results |")
        lines.append("|---|---:|")
        for k, v in counts["by_cause"].items():
            lines.append(f"| {k} | {v} |")
    if counts.get("by_evidence"):
        lines.append("")
        lines.append("| evidence (from the footprint) | results |")
        lines.append("|---|---:|")
        for k, v in counts["by_evidence"].items():
            lines.append(f"| {k} | {v} |")
    lines.append("")
    legend = ", ".join(f"{m} {s}" for s, m in MARK.items())
    lines.append("## Matrix")
    lines.append("")
    lines.append(f"Legend: {legend}; blank: not run.")
    lines.append("")
    dtypes = doc["dtypes"]
    multi = len(doc.get("devices") or []) > 1
    # a source column where the rows come from more than OpInfo (check's vendor-docs run)
    by_source = any(r.get("source") not in (None, "opinfo") for r in doc["rows"]) or any(
        r.get("sample_set") == "opinfo" for r in doc["rows"])
    head = (["device"] if multi else []) + ["API", "variant"] + (["source"] if by_source else []) + dtypes
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    grid: Dict[tuple, Dict[str, str]] = {}
    for r in doc["rows"]:
        if r["status"] == "unknown":
            continue
        grid.setdefault((r["device"], r["api"], r["variant"], r.get("source")), {})[r["dtype"]] = r["status"]
    for (dev, api, variant, source), cells in grid.items():
        row = ([dev] if multi else []) + [f"`{api}`", _cell(variant)] + ([source or ""] if by_source else [])
        row += [MARK.get(cells.get(d, ""), "") for d in dtypes]
        lines.append("| " + " | ".join(row) + " |")
    unknown = [r for r in doc["rows"] if r["status"] == "unknown"]
    if unknown:
        lines += ["", "## No executed scenario (unknown)", "", "| API | why |", "|---|---|"]
        for r in unknown:
            lines.append(f"| `{r['api']}` | {_cell(r['detail'])} |")
    bad = [r for r in doc["rows"] if r["status"] not in ("pass", "skip", "unknown")]
    if bad:
        lines += ["", "## Not passing", "", "| " + " | ".join(
            (["device"] if multi else []) + ["API", "variant", "dtype", "status", "cause", "evidence",
                                             "detail"]) + " |"]
        lines.append("|" + "---|" * (7 + multi))
        for r in bad:
            detail = r["detail"] if len(r["detail"]) <= detail_limit else r["detail"][:detail_limit - 1] + "…"
            lines.append("| " + " | ".join(([r["device"]] if multi else []) + [
                f"`{r['api']}`", _cell(r["variant"]), r["dtype"], r["status"], _cell(r["cause"]),
                r.get("evidence") or "none", _cell(detail)]) + " |")
    diffs = [e for e in doc.get("dtype_discovery", [])
             if e["claimed_not_supported"] or e["supported_not_claimed"]]
    if diffs:
        lines += ["", "## dtypes: observed against OpInfo's claims", "",
                  "| API | variant | claimed, refused here | supported here, not claimed | upstream note |",
                  "|---|---|---|---|---|"]
        for e in diffs:
            notes = sorted(set(e["upstream_notes"].values()))
            lines.append(f"| `{e['api']}` | {_cell(e['variant'])} | "
                         f"{', '.join(e['claimed_not_supported']) or '-'} | "
                         f"{', '.join(e['supported_not_claimed']) or '-'} | "
                         f"{_cell('; '.join(notes)) or '-'} |")
    if doc.get("no_scenarios"):
        lines += ["", "## No scenarios", "",
                  "No scenario source applies (and so no sweep case) for: "
                  + ", ".join(f"`{n}`" for n in doc["no_scenarios"])]
    return "\n".join(lines) + "\n"


def render_csv(doc: Dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for r in doc["rows"]:
        m = r.get("metric") or {}
        w.writerow([r["device"], r["api"], r["variant"], r["dtype"], r["status"], r.get("cause") or "",
                    r.get("detail") or "", "" if r.get("claimed") is None else int(bool(r["claimed"])),
                    m.get("name", ""), _num(m.get("value")), _num(m.get("threshold")),
                    m.get("standard", "") or "", r.get("kind") or "",
                    "" if r.get("seconds") is None else r["seconds"], r.get("source") or "",
                    r.get("evidence") or "none"])
    return buf.getvalue()


def _num(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.6g}"


def write_matrix(doc: Dict[str, Any], out_dir: Path) -> List[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "matrix.json", out_dir / "matrix.md", out_dir / "matrix.csv"]
    write_text_atomic(paths[0], json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    write_text_atomic(paths[1], render_markdown(doc))
    write_text_atomic(paths[2], render_csv(doc))
    return paths
