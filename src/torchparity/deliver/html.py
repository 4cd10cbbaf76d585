"""report.html: one self-contained page (inline CSS and JS, nothing fetched).

Every value from the report goes through Jinja2's autoescape; the only markup not
escaped is the page's own (labels are escaped too). Tables sort on a click (small inline
script); scenario tables open sorted worst-first. Labels are shown in Chinese or English
(a button switches; ``#en`` / ``#zh`` in the address picks one).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

import jinja2
import yaml
from markupsafe import Markup, escape

from ..results.models import Report
from . import narrative as nv
from .artifacts import artifacts
from .format import HERE, STATUS_RANK, asset, footprint_rows, labels, relpath  # noqa: F401 (re-exported)
from .templating import make_environment

HTML_NAME = "report.html"



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


def term_both(group: str, value: Any) -> Markup:
    """An enum value (vocab.yaml) in both languages: the zh view never shows a raw value."""
    from .vocab import term

    if value is None or value == "":
        return Markup("—")
    return Markup('<span lang="en">{}</span><span lang="zh">{}</span>').format(
        term(group, value, "en"), term(group, value, "zh"))


def emulated_mark(on: Any) -> Markup:
    return Markup(' <span lang="en">(emulated)</span><span lang="zh">（模拟设备）</span>') if on else Markup("")


LONG_TABLE = 20  # rows: a longer table opens collapsed, its summary saying how many


def collapsed(n: int) -> Markup:
    """The <details> opening of a table of ``n`` rows (closed when long), with its count."""
    opened = "" if n > LONG_TABLE else " open"
    return Markup('<details class="table"{}><summary><span lang="en">{} row{}</span><span lang="zh">共 {} 行</span>'
                  '</summary><div class="wide">').format(Markup(opened), n, "" if n == 1 else "s", n)


@lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    return make_environment(
        autoescape=True, filters={"relpath": relpath, "footprint_rows": footprint_rows},
        globals={"t": bilingual, "both": both, "rank": lambda s: STATUS_RANK.get(s, 1),
                 "term2": term_both, "emu_mark": emulated_mark, "collapsed": collapsed,
                 # the zh reason holds code spans (markdown): shown as <code> in the page
                 "source_zh": lambda said: Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>",
                                                         str(escape(nv.source_said(said, "zh")))))})


class Views:
    """The report's sentences (deliver/narrative.py through ReportView) in both languages,
    as spans: ``V.pair("adapt", api)``."""

    def __init__(self, report: Report, files: Dict[str, Any]):
        from .format import label_table
        from .report_view import ReportView

        self.views = {lang: ReportView(report, lang, label_table(lang), files) for lang in ("en", "zh")}

    def pair(self, method: str, *args: Any) -> Markup:
        out = []
        for lang in ("en", "zh"):
            value = getattr(self.views[lang], method)
            value = value(*args) if callable(value) else value
            out.append(Markup('<span lang="{}">{}</span>').format(lang, md_inline(value)))
        return Markup("").join(out)


    def env(self, field: str, run: int = -1) -> Markup:
        """A field of the environment record (deliver/env_record.py) of the report's device
        (``run`` < 0) or of ``Report.runs[run]``, in both languages: the same words as the
        Markdown reports and the issues."""
        from .env_record import record

        rep = self.views["en"].report
        env, dev = (rep.environment, rep.device) if run < 0 else (rep.runs[run].environment, rep.runs[run].device)
        return Markup("").join(Markup('<span lang="{}">{}</span>').format(
            lang, md_inline(getattr(record(env, dev, lang), field))) for lang in ("en", "zh"))

    def lines(self, method: str, *args: Any) -> Dict[str, List[str]]:
        return {lang: [md_inline(x) for x in getattr(self.views[lang], method)(*args)] for lang in ("en", "zh")}


def md_inline(text: Any) -> Markup:
    """A Markdown sentence as HTML: escaped, its code spans as <code>."""
    out, last = [], 0
    text = str(text)
    for m in re.finditer(r"(`+) ?(.*?) ?\1", text):
        out.append(escape(text[last:m.start()]))
        out.append(Markup("<code>{}</code>").format(m.group(2)))
        last = m.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)




def render_html(report: Report, out: Optional[Path] = None, lang: str = "zh") -> str:
    data = report.model_dump(mode="json", by_alias=True)
    rows: List[Dict[str, Any]] = []
    for api in data["apis"]:
        counted = [s for s in api["scenarios"] if s["status"] != "skip"]
        rows.append({"passed": sum(1 for s in counted if s["status"] == "pass"), "total": len(counted)})
    files = artifacts(out)
    return _environment().get_template("report.html.j2").render(
        report=data, rows=rows, files=files, lang=lang if lang in ("en", "zh") else "zh", V=Views(report, files),
        css=asset("report.css"), js=asset("report.js"),
    )


def write_html(report: Report, out: Path) -> None:
    """A check() writer: report.html next to the other deliverables (run it last)."""
    from ..results.store import write_text_atomic

    write_text_atomic(Path(out) / HTML_NAME, render_html(report, Path(out)))
