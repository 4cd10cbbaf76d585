"""Rendering a Report as the community deliverable (Markdown, zh and en)."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

import jinja2
import yaml

from ..results.models import DocsEvidence, Evidence, FootprintEntry, Report
from .templating import make_environment

HERE = Path(__file__).resolve().parent
LANGS = ("en", "zh")

# footprint ops of scenario code that are plumbing, not work worth a row in the report
_PLUMBING = {"aten.lift_fresh", "aten.detach", "aten.alias", "aten.view", "aten._to_copy",
             "aten.copy_", "aten.clone", "aten.empty", "aten.empty_strided", "aten.rand",
             "aten.randn", "aten.uniform_", "aten.is_same_size", "aten._has_same_storage_numel",
             "aten._local_scalar_dense", "aten.lift_fresh_copy"}

STATUS_MARK = {"pass": "✔ pass", "fail": "✘ fail", "unsupported": "✘ unsupported",
               "error": "✘ error", "crash": "✘ crash", "timeout": "✘ timeout", "skip": "– skip",
               "partial": "◐ partial"}


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
    return text


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


def metric_text(metric: Any) -> str:
    if not metric:
        return ""
    std = f", {metric['standard']}" if metric.get("standard") else ""
    return f" (metric {metric['name']} = {metric['value']}, threshold {metric['threshold']}{std})"


def tests_section(api: Any, lang: str) -> str:
    from .evidence_md import render_tests

    ev = Evidence.model_validate(api["evidence"])
    return render_tests(api["name"], ev.tests, ev.recommendation, lang)


def docs_section(api: Any, lang: str) -> str:
    from .evidence_md import render_docs

    ev = Evidence.model_validate(api["evidence"])
    return render_docs(ev.docs, ev.not_run, lang)


def docs_conclusion(docs: Any, lang: str) -> str:
    from .evidence_md import docs_conclusion as conclude

    return conclude(DocsEvidence.model_validate(docs), lang)


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
    # Markdown: table cells go through the `cell` filter
    return make_environment(autoescape=False, filters=dict(
        test_file_for=test_file_for, cell=cell, relpath=relpath, footprint_rows=footprint_rows,
        status_mark=lambda s: STATUS_MARK.get(s, s), metric_text=metric_text,
        tests_section=tests_section, docs_section=docs_section, docs_conclusion=docs_conclusion))


def render_markdown(report: Report, lang: str, files: Optional[Dict[str, Any]] = None) -> str:
    """The report in ``lang``; ``files`` (see deliver.artifacts) adds links to the other
    deliverables of the folder: run screenshot, report.html, generated tests."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
    from .artifacts import artifacts

    template = environment().get_template("report.md.j2")
    data = report.model_dump(mode="json", by_alias=True)
    text = template.render(report=data, L=label_table(lang), lang=lang,
                           files=files if files is not None else artifacts(None))
    return re.sub(r"\n{3,}", "\n\n", text)
