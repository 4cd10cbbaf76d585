"""Report formatting shared by every deliverable (Markdown, HTML, the matrix): the label
table, Markdown-safe cells, shortened paths, the footprint rows worth showing.

The lowest module of ``deliver/``: it imports none of the others.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List

import yaml

from ..results.models import FootprintEntry

HERE = Path(__file__).resolve().parent
LANGS = ("en", "zh")

# footprint ops of scenario code that are plumbing, not work worth a row in the report
_PLUMBING = {"aten.lift_fresh", "aten.detach", "aten.alias", "aten.view", "aten._to_copy",
             "aten.copy_", "aten.clone", "aten.empty", "aten.empty_strided", "aten.rand",
             "aten.randn", "aten.uniform_", "aten.is_same_size", "aten._has_same_storage_numel",
             "aten._local_scalar_dense", "aten.lift_fresh_copy"}

# how bad a status is: tables sort worst-first on this
STATUS_RANK = {"pass": 0, "supported": 0, "device-independent": 0, "skip": 1, "unknown": 1, "partial": 2, "unsupported": 3,
               "fail": 4, "broken": 4, "error": 5, "timeout": 5, "crash": 6}


def asset(name: str):
    """A template asset (CSS, JS) as markup safe to inline in <style>/<script>."""
    from markupsafe import Markup

    text = (HERE / "templates" / name).read_text(encoding="utf-8")
    # inline <style>/<script>: a closing tag inside would end the element early
    if "</" in text:
        raise ValueError(f"{name}: contains '</', not safe to inline")
    return Markup(text)


@lru_cache(maxsize=None)
def labels() -> Dict[str, Dict[str, str]]:
    return yaml.safe_load((HERE / "labels.yaml").read_text(encoding="utf-8"))


def label_table(lang: str) -> Dict[str, str]:
    return {key: value[lang] for key, value in labels().items()}


def cell(value: Any) -> str:
    """Make text safe inside a Markdown table cell: one line, pipes and markup escaped."""
    text = str(value if value is not None else "")
    text = re.sub(r"\s+", " ", text).strip()
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    # no HTML: a "<" that could open a tag is backslash-escaped (a reader of the raw text
    # sees "<", never "&lt;"); ">" and a "<" before a space or digit stay as they are
    text = re.sub(r"<(?=[A-Za-z/!?])", r"\\<", text)
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
