"""Writing an output folder: report.json plus the rendered deliverables."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from ..errors import InputError
from ..results.models import Report
from ..results.store import save_report, write_text_atomic
from .artifacts import artifacts
from .report import LANGS, render_markdown

Writer = Callable[[Report, Path], None]


def write_bundle(report: Report, out: Path, writers: Sequence[Writer] = ()) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    save_report(report, out / "report.json")
    for lang in LANGS:
        write_text_atomic(out / f"report.{lang}.md", render_markdown(report, lang))
    for writer in writers:
        writer(report, out)
    files = artifacts(out)
    if files["screenshot"] or files["html"] or files["tests"]:
        # the writers added deliverables: link them from the reports
        for lang in LANGS:
            write_text_atomic(out / f"report.{lang}.md", render_markdown(report, lang, files))
