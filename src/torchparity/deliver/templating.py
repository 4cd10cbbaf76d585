"""The one way deliver/ builds Jinja2 environments over its templates folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Optional

import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"


def make_environment(*, autoescape: bool, filters: Optional[Dict[str, Callable]] = None,
                     globals: Optional[Dict[str, Any]] = None) -> jinja2.Environment:
    """Strict (an unknown name is an error), block-trimmed; ``autoescape`` for HTML only:
    Markdown escapes its table cells with a filter, Python source with repr()."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(filters or {})
    env.globals.update(globals or {})
    return env
