"""Rendering a Report as the community deliverable (Markdown, zh and en)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Dict, List, Optional

import jinja2

from ..results.models import Report
from .format import HERE, LANGS, cell, footprint_rows, label_table, labels, relpath  # noqa: F401 (re-exported)
from .templating import make_environment


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


def render_markdown(report: Report, lang: str, files: Optional[Dict[str, Any]] = None,
                    task: Optional[str] = None) -> str:
    """The report in ``lang``; ``files`` (see deliver.artifacts) adds links to the other
    deliverables of the folder: run screenshot, report.html, generated tests. ``task``:
    the community task number the report is filed under (deliver/issues.py)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
    from .artifacts import artifacts
    from .report_view import ReportView

    files = files if files is not None else artifacts(None)
    template = environment().get_template("report.md.j2")
    data = report.model_dump(mode="json", by_alias=True)
    table = label_table(lang)
    text = template.render(report=data, L=table, lang=lang, files=files,
                           N=ReportView(report, lang, table, files, task=task),
                           C="：" if lang == "zh" else ": ")
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text)
