"""What deliverables an output folder holds, so every rendering can link the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

# The first line of every generated test file. A file at a generated file's path WITHOUT it
# is the user's own: never overwritten (kept, and the user told) unless they pass --force,
# and never listed as one of the bundle's tests.
GENERATED_MARKER = "# torchparity: generated file"


def is_generated(path: Path) -> bool:
    """Whether the file at ``path`` is one of ours (it starts with the marker); a FIFO, a
    folder or a device is never read and never ours."""
    path = Path(path)
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(len(GENERATED_MARKER)) == GENERATED_MARKER.encode()
    except OSError:
        return False


def artifacts(out: Optional[Path]) -> Dict[str, Any]:
    """Files next to report.json, as paths relative to the folder (links survive a move)."""
    found: Dict[str, Any] = {"json": False, "md": [], "html": None, "screenshot": None,
                             "screenshot_svg": None, "tests": {}}
    if out is None or not Path(out).is_dir():
        return found
    out = Path(out)
    found["json"] = (out / "report.json").exists()
    found["md"] = [lang for lang in ("zh", "en") if (out / f"report.{lang}.md").exists()]
    if (out / "report.html").exists():
        found["html"] = "report.html"
    if (out / "screenshot.svg").exists():
        found["screenshot_svg"] = "screenshot.svg"
    if (out / "screenshot.png").exists():
        found["screenshot"] = "screenshot.png"
    else:
        found["screenshot"] = found["screenshot_svg"]
    tests_dir = out / "tests"
    if tests_dir.is_dir():
        # style folder -> files
        for style_dir in sorted(p for p in tests_dir.iterdir() if p.is_dir()):
            files = sorted(p.relative_to(out).as_posix() for p in style_dir.glob("test_*.py")
                           if is_generated(p))
            if files:
                found["tests"][style_dir.name] = files
    return found
