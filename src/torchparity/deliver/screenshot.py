"""The run screenshot: the terminal summary recorded with rich and exported as SVG.

The seeds attach a "运行截图" (run screenshot); ours is the same rich table the CLI
prints, recorded with ``Console(record=True)``. The SVG is self-contained: rich's default
template fetches its font from a CDN, so that ``url(...)`` is dropped and local fonts
(then any monospace font) are used instead.
"""

from __future__ import annotations

import io
import re

from rich.console import CONSOLE_SVG_FORMAT, Console

from ..results.models import Report
from .console import print_summary

SVG_NAME = "screenshot.svg"
PNG_NAME = "screenshot.png"
WIDTH = 120
HEIGHT = 50  # rows of the pretend terminal; the SVG holds every line anyway

# rich's template with the remote font sources removed (local() fallbacks stay)
OFFLINE_SVG_FORMAT = re.sub(r',\s*url\("https?://[^"]*"\)\s*format\("[^"]*"\)', "", CONSOLE_SVG_FORMAT)


def summary_svg(report: Report, width: int = WIDTH) -> str:
    """The summary table as an SVG "screenshot" of a terminal."""
    # width *and* height: rich takes a given size as it is; with the width alone a dumb
    # terminal (TERM=dumb, what scripts and CI get) would shrink it to 80 columns
    console = Console(record=True, width=width, height=HEIGHT, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", legacy_windows=False)
    print_summary(report, console)
    dev = report.device
    where = f"{dev.type} (emulated: {dev.profile})" if dev.emulated else dev.type
    title = f"torchparity check --device {dev.spec or dev.type} · {where}"
    return console.export_svg(title=title, code_format=OFFLINE_SVG_FORMAT)


def svg_size(svg: str) -> tuple:
    """(width, height) in pixels from the SVG's viewBox, rounded up."""
    m = re.search(r'viewBox="\s*[-\d.]+\s+[-\d.]+\s+([\d.]+)\s+([\d.]+)\s*"', svg)
    if not m:
        return (1200, 800)
    return (int(float(m.group(1)) + 0.999), int(float(m.group(2)) + 0.999))
