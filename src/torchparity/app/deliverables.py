"""The writers `check --out` runs after report.json and the Markdown reports.

Order matters: the screenshot and the generated tests first, report.html last, so the
page (and the re-rendered Markdown) can link everything the folder holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional, Sequence

from ..deliver.gentest import STYLES, expand_styles  # noqa: F401  (the CLI's name for it)
from ..deliver.html import write_html
from ..deliver.issues import Task, issues_writer
from ..deliver.screenshot import PNG_NAME, SVG_NAME, summary_svg, svg_size
from ..results.models import Report
from ..results.store import write_text_atomic
from .convert import svg_to_png
from .gentest import gentest_writer

Writer = Callable[[Report, Path], None]


def write_screenshot(report: Report, out: Path, png: bool = True) -> None:
    """screenshot.svg (always) and screenshot.png (when a converter is found)."""
    out = Path(out)
    svg = summary_svg(report)
    write_text_atomic(out / SVG_NAME, svg)
    target = out / PNG_NAME
    if target.exists():
        target.unlink()  # never leave a screenshot of an earlier run behind
    if png:
        svg_to_png(out / SVG_NAME, target, svg_size(svg))


def deliverable_writers(*, html: bool = True, screenshot: bool = True, png: bool = True,
                        gentest_styles: Sequence[str] = (),
                        scenario_modules: Sequence[str] = (),
                        max_samples: Optional[int] = None,
                        tests_dir: Optional[str] = None,
                        tasks: Optional[Sequence[Task]] = (), force: bool = False) -> List[Writer]:
    writers: List[Writer] = []
    if screenshot:
        def picture(report: Report, out: Path) -> None:
            write_screenshot(report, out, png=png)

        picture.only_when_finished = True  # type: ignore[attr-defined]  # deliver.bundle.interrupted_writers
        writers.append(picture)
    for style in dict.fromkeys(gentest_styles):
        writers.append(gentest_writer(style, scenario_modules, max_samples=max_samples,
                                      tests_dir=tests_dir, force=force))
    writers.append(issues_writer(tasks or ()))  # after the tests: its commands name them
    if html:
        writers.append(write_html)
    return writers

