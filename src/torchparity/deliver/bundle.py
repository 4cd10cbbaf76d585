"""Writing an output folder: report.json plus the rendered deliverables.

Everything is written into a staging folder inside ``out`` first and moved into place
only when every file is complete, so a full disk or a failing writer never leaves half a
bundle (or a new report.json next to the old report.html). When writing fails, the
report is kept in a fresh folder under the system's temporary directory and the error
(one line) says where.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..errors import InputError, OutputError
from ..results.models import Report
from ..results.store import save_report, write_text_atomic
from .artifacts import artifacts
from .report import LANGS, render_markdown
from .screenshot import PNG_NAME, SVG_NAME

Writer = Callable[[Report, Path], None]
STAGE_PREFIX = ".torchparity-writing-"


def _render(report: Report, folder: Path, writers: Sequence[Writer]) -> None:
    save_report(report, folder / "report.json")
    for lang in LANGS:
        write_text_atomic(folder / f"report.{lang}.md", render_markdown(report, lang))
    for writer in writers:
        writer(report, folder)
    files = artifacts(folder)
    if files["screenshot"] or files["html"] or files["tests"]:
        # the writers added deliverables: link them from the reports
        for lang in LANGS:
            write_text_atomic(folder / f"report.{lang}.md", render_markdown(report, lang, files))


def _move_into(stage: Path, out: Path) -> None:
    """Rename every staged file into ``out`` (renames need no disk space)."""
    if (stage / SVG_NAME).exists() and not (stage / PNG_NAME).exists():
        try:
            (out / PNG_NAME).unlink()  # never leave a screenshot of an earlier run behind
        except FileNotFoundError:
            pass
    for root, _dirs, names in os.walk(stage):
        rel = Path(root).relative_to(stage)
        (out / rel).mkdir(parents=True, exist_ok=True)
        for name in names:
            os.replace(Path(root) / name, out / rel / name)


def keep_elsewhere(report: Report) -> Optional[Path]:
    """Save the report in a new folder under the temporary directory; None if that fails too."""
    folder: Optional[Path] = None
    try:
        folder = Path(tempfile.mkdtemp(prefix="torchparity-results-"))
        save_report(report, folder / "report.json")
        for lang in LANGS:
            write_text_atomic(folder / f"report.{lang}.md", render_markdown(report, lang))
        return folder
    except OSError:
        if folder is not None and (folder / "report.json").is_file():
            return folder  # the JSON made it; the Markdown can be rendered from it
        return None


def write_bundle(report: Report, out: Path, writers: Sequence[Writer] = ()) -> None:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    stage: Optional[Path] = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=str(out)))
        _render(report, stage, writers)
        _move_into(stage, out)
    except OSError as exc:
        kept = keep_elsewhere(report)
        where = (f"the results are kept in {kept}" if kept is not None
                 else "keeping them in the temporary directory failed too")
        raise OutputError(f"could not write the results into {out} "
                          f"({exc.strerror or exc}); {where}") from None
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
