"""report.html: one self-contained page (inline CSS and JS, nothing fetched).

Every value from the report goes through Jinja2's autoescape; the only markup not
escaped is the page's own (labels are escaped too). Tables sort on a click (small inline
script); scenario tables open sorted worst-first. Labels are shown in Chinese or English
(a button switches; ``#en`` / ``#zh`` in the address picks one).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

import jinja2
import yaml
from markupsafe import Markup, escape

from ..results.models import Report
from .artifacts import artifacts
from .format import HERE, footprint_rows, labels, relpath
from .templating import make_environment

HTML_NAME = "report.html"

# how bad a status is: tables sort worst-first on this
STATUS_RANK = {"pass": 0, "supported": 0, "device-independent": 0, "skip": 1, "unknown": 1, "partial": 2, "unsupported": 3,
               "fail": 4, "broken": 4, "error": 5, "timeout": 5, "crash": 6}


@lru_cache(maxsize=None)
def html_labels() -> Dict[str, Dict[str, str]]:
    return yaml.safe_load((HERE / "labels_html.yaml").read_text(encoding="utf-8"))


def _all_labels() -> Dict[str, Dict[str, str]]:
    merged = dict(labels())
    merged.update(html_labels())
    return merged


def bilingual(key: str, **fields: Any) -> Markup:
    """A label in both languages (CSS shows one); ``fields`` fill {name} placeholders."""
    entry = _all_labels()[key]
    spans = []
    for lang in ("en", "zh"):
        text = escape(entry[lang].replace("**", "").replace("`", ""))
        for name, value in fields.items():
            text = Markup(text.replace("{" + name + "}", escape(value)))
        spans.append(Markup('<span lang="{}">{}</span>').format(lang, text))
    return Markup("").join(spans)


def both(text: Any) -> Markup:
    """A report Text ({en, zh}) in both languages."""
    if not text:
        return Markup("—")
    return Markup('<span lang="en">{}</span><span lang="zh">{}</span>').format(text["en"], text["zh"])


@lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    return make_environment(
        autoescape=True, filters={"relpath": relpath, "footprint_rows": footprint_rows},
        globals={"t": bilingual, "both": both, "rank": lambda s: STATUS_RANK.get(s, 1)})


def asset(name: str) -> Markup:
    text = (HERE / "templates" / name).read_text(encoding="utf-8")
    # inline <style>/<script>: a closing tag inside would end the element early
    if "</" in text:
        raise ValueError(f"{name}: contains '</', not safe to inline")
    return Markup(text)


def render_html(report: Report, out: Optional[Path] = None, lang: str = "zh") -> str:
    data = report.model_dump(mode="json", by_alias=True)
    rows: List[Dict[str, Any]] = []
    for api in data["apis"]:
        counted = [s for s in api["scenarios"] if s["status"] != "skip"]
        rows.append({"passed": sum(1 for s in counted if s["status"] == "pass"), "total": len(counted)})
    return _environment().get_template("report.html.j2").render(
        report=data, rows=rows, files=artifacts(out), lang=lang if lang in ("en", "zh") else "zh",
        css=asset("report.css"), js=asset("report.js"),
    )


def write_html(report: Report, out: Path) -> None:
    """A check() writer: report.html next to the other deliverables (run it last)."""
    from ..results.store import write_text_atomic

    write_text_atomic(Path(out) / HTML_NAME, render_html(report, Path(out)))
