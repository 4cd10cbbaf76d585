"""Rendering a Report as the community deliverable (Markdown, zh and en)."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

import jinja2
import yaml

from ..results.models import FootprintEntry, Report
from .templating import make_environment

HERE = Path(__file__).resolve().parent
LANGS = ("en", "zh")

# footprint ops of scenario code that are plumbing, not work worth a row in the report
_PLUMBING = {"aten.lift_fresh", "aten.detach", "aten.alias", "aten.view", "aten._to_copy",
             "aten.copy_", "aten.clone", "aten.empty", "aten.empty_strided", "aten.rand",
             "aten.randn", "aten.uniform_", "aten.is_same_size", "aten._has_same_storage_numel",
             "aten._local_scalar_dense", "aten.lift_fresh_copy"}

@lru_cache(maxsize=None)
def labels() -> Dict[str, Dict[str, str]]:
    return yaml.safe_load((HERE / "labels.yaml").read_text(encoding="utf-8"))


def label_table(lang: str) -> Dict[str, str]:
    return {key: value[lang] for key, value in labels().items()}


def cell(value: Any) -> str:
    """Make text safe inside a Markdown table cell: one line, pipes and markup escaped."""
    text = str(value if value is not None else "")
    text = re.sub(r"\s+", " ", text).strip()
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    # no links or images: brackets and backticks (code spans) are shown as they are
    return text.replace("[", "\\[").replace("]", "\\]").replace("`", "\\`")


def relpath(path: str) -> str:
    marker = f"{os.sep}site-packages{os.sep}"
    return path.split(marker, 1)[1] if marker in path else path


def footprint_rows(entries: Iterable[Any]) -> List[FootprintEntry]:
    rows = []
    for e in entries:
        e = e if isinstance(e, FootprintEntry) else FootprintEntry.model_validate(e)
        if e.source == "scenario" and e.op in _PLUMBING:
            continue
        rows.append(e)
    order = {"api": 0, "callable": 1, "scenario": 2}
    return sorted(rows, key=lambda e: (order.get(e.source, 3), e.op))


def test_file_for(files: Dict[str, Any], api: str) -> List[str]:
    """Generated test files of ``api`` in the folder (one per style)."""
    from .gentest import file_name

    try:
        name = file_name(api)
    except Exception:
        return []
    return [f for paths in (files or {}).get("tests", {}).values() for f in paths
            if f.rsplit("/", 1)[-1] == name]


@lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    # Markdown: table cells go through the `cell` filter, ids and names through `code`,
    # snippets through `fence` (deliver/narrative.py)
    from .narrative import code, fence
    from .vocab import term

    return make_environment(autoescape=False, filters=dict(
        test_file_for=test_file_for, cell=cell, code=code, fence=fence, relpath=relpath, footprint_rows=footprint_rows,
        short=lambda name: name.rsplit(".", 1)[-1],
        vocab=lambda value, group, lang="en": term(group, value, lang)))


def render_markdown(report: Report, lang: str, files: Optional[Dict[str, Any]] = None) -> str:
    """The report in ``lang``; ``files`` (see deliver.artifacts) adds links to the other
    deliverables of the folder: run screenshot, report.html, generated tests."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
    from .artifacts import artifacts
    from .report_view import ReportView

    files = files if files is not None else artifacts(None)
    template = environment().get_template("report.md.j2")
    data = report.model_dump(mode="json", by_alias=True)
    table = label_table(lang)
    text = template.render(report=data, L=table, lang=lang, files=files,
                           N=ReportView(report, lang, table, files),
                           C="：" if lang == "zh" else ": ")
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text)
