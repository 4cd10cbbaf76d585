"""What deliverables an output folder holds, so every rendering can link the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional


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
            files = sorted(p.relative_to(out).as_posix() for p in style_dir.glob("test_*.py"))
            if files:
                found["tests"][style_dir.name] = files
    return found
