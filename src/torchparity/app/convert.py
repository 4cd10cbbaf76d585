"""Converters that run external programs: SVG to PNG, and headless Chromium.

Detected, never required: with none present the PNG is simply not written. ``resvg-py``
(a pip dependency: resvg's Rust renderer in a wheel) makes the PNG on a fresh install;
rsvg-convert and cairosvg are tried first where present, headless Chromium last.
Chromium runs headless with networking and background services off (the HTML and SVG
are self-contained, so it needs nothing from the network) and a fresh profile folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional, Tuple

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
                  "chrome", "headless_shell")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--disable-extensions", "--mute-audio")
TIMEOUT_S = 90
# rich's SVG asks for Fira Code; resvg then takes this family from the system fonts
MONOSPACE = "DejaVu Sans Mono"


def find_chromium() -> Optional[str]:
    """$TORCHPARITY_CHROMIUM, else the first Chromium-like browser on PATH."""
    explicit = os.environ.get("TORCHPARITY_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() or shutil.which(explicit) else None
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(args: List[str], timeout: float = TIMEOUT_S) -> Tuple[int, str, str]:
    """Run headless Chromium with ``args`` in a throw-away profile; (rc, stdout, stderr)."""
    exe = find_chromium()
    if exe is None:
        raise FileNotFoundError("no Chromium found (install it, e.g. apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="torchparity-chromium-") as profile:
        cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr


def dump_dom(html: Path, timeout: float = TIMEOUT_S) -> str:
    """The DOM of a local page after its scripts ran (Chromium --dump-dom)."""
    rc, out, err = run_chromium(["--virtual-time-budget=3000", "--dump-dom",
                                 Path(html).resolve().as_uri()], timeout)
    if rc != 0 or not out.strip():
        raise RuntimeError(f"chromium --dump-dom failed (rc {rc}): {err.strip()[-500:]}")
    return out


def svg_to_png(svg: Path, png: Path, size: Tuple[int, int]) -> Optional[str]:
    """Write ``png`` from ``svg`` with the first converter found; its name, or None."""
    svg, png = Path(svg), Path(png)
    rsvg = shutil.which("rsvg-convert")
    if rsvg:
        proc = subprocess.run([rsvg, "-o", str(png), str(svg)], capture_output=True, timeout=TIMEOUT_S)
        if proc.returncode == 0 and png.exists():
            return "rsvg-convert"
    try:
        import cairosvg  # type: ignore[import-not-found]
    except Exception:  # absent, or its C library is missing
        cairosvg = None
    if cairosvg is not None:
        try:
            cairosvg.svg2png(url=str(svg), write_to=str(png))
            return "cairosvg"
        except Exception:
            pass
    try:  # a pip wheel with the Rust renderer inside: a PNG with pip dependencies only
        import resvg_py  # type: ignore[import-not-found]
    except Exception:
        resvg_py = None
    if resvg_py is not None:
        try:
            data = resvg_py.svg_to_bytes(svg_path=str(svg), font_family=MONOSPACE,
                                         monospace_family=MONOSPACE)
            png.write_bytes(bytes(data))
            return "resvg"
        except Exception:
            pass
    if find_chromium():
        width, height = size
        try:
            rc, _, _ = run_chromium([f"--screenshot={png.resolve()}", f"--window-size={width},{height}",
                                     "--default-background-color=00000000", svg.resolve().as_uri()])
        except (OSError, subprocess.TimeoutExpired):
            return None
        if rc == 0 and png.exists() and png.stat().st_size > 0:
            return "chromium"
    return None
