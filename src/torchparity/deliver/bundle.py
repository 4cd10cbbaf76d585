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
from typing import Callable, List, Optional, Sequence

from ..errors import InputError, OutputError
from ..results.models import Report
from ..results.store import save_report, write_text_atomic
from .artifacts import artifacts, is_generated
from .report import LANGS, render_markdown
from .screenshot import PNG_NAME, SVG_NAME

Writer = Callable[[Report, Path], None]
STAGE_PREFIX = ".torchparity-writing-"


def _render(report: Report, folder: Path, writers: Sequence[Writer], out: Optional[Path] = None,
            force: bool = False) -> List[str]:
    """Render into the staging ``folder``; returns the generated files left out because a
    file of the user's (no marker line) is at their path in ``out`` (unless ``force``)."""
    save_report(report, folder / "report.json")
    for lang in LANGS:
        write_text_atomic(folder / f"report.{lang}.md", render_markdown(report, lang))
    kept: List[str] = []
    for writer in writers:
        writer(report, folder)
        if out is not None and not force:  # before the next writer links them
            kept += _keep_users_files(folder, out)
    files = artifacts(folder)
    if files["screenshot"] or files["html"] or files["tests"]:
        # the writers added deliverables: link them from the reports
        for lang in LANGS:
            write_text_atomic(folder / f"report.{lang}.md", render_markdown(report, lang, files))
    return kept


def _keep_users_files(stage: Path, out: Path) -> List[str]:
    """Staged generated files whose path in ``out`` holds a file that is not ours: the
    staged one is dropped, the user's stays (never overwritten)."""
    kept = []
    for path in sorted(stage.rglob("*")):
        rel = path.relative_to(stage)
        target = out / rel
        if path.is_file() and is_generated(path) and os.path.lexists(target) \
                and not is_generated(target):
            path.unlink()
            kept.append(rel.as_posix())
    return kept


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


def write_bundle(report: Report, out: Path, writers: Sequence[Writer] = (),
                 force: bool = False) -> List[str]:
    """Write the bundle; returns the generated files NOT written because a file of the
    user's is at their path (``force`` overwrites those)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    stage: Optional[Path] = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=str(out)))
        kept = _render(report, stage, writers, out=out, force=force)
        _move_into(stage, out)
    except OSError as exc:
        elsewhere = keep_elsewhere(report)
        where = (f"the results are kept in {elsewhere}" if elsewhere is not None
                 else "keeping them in the temporary directory failed too")
        raise OutputError(f"could not write the results into {out} "
                          f"({exc.strerror or exc}); {where}") from None
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
    return kept


def interrupted_writers(writers: Sequence[Writer], out: Path) -> List[Writer]:
    """The writers an interrupted check still runs: all but those marked
    ``only_when_finished`` (the screenshot: a picture of the summary table, the slowest
    writer — Ctrl-C must end within seconds); the picture of an earlier run is removed,
    never left beside this run's report."""
    kept = [w for w in writers if not getattr(w, "only_when_finished", False)]
    if len(kept) < len(writers):
        for name in (SVG_NAME, PNG_NAME):
            try:
                (Path(out) / name).unlink()
            except FileNotFoundError:
                pass
    return kept
