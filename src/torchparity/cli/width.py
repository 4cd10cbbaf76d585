"""The width of what the command line prints when it is not a terminal.

Imported before typer (typer reads ``TERMINAL_WIDTH`` when it is imported), so it imports
nothing but the standard library.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Optional

# not a terminal (CI logs, `| tee`, a file): tables and --help at a fixed wide width instead
# of rich's 80 columns, which cut option names and API names
PIPE_WIDTH = 160


def width_for(stream: IO) -> Optional[int]:
    """None (the terminal's own width) on a terminal, else :data:`PIPE_WIDTH`."""
    try:
        return None if stream.isatty() else PIPE_WIDTH
    except (AttributeError, ValueError):  # a closed or replaced stream
        return PIPE_WIDTH


# --help when not a terminal: click's plain formatter at a width no help line reaches, so
# every option's help stays on its line (nothing to re-join for grep or a log reader)
HELP_UNWRAPPED = 100_000


def help_unwrapped() -> bool:
    return width_for(sys.stdout) is not None


def set_help_width() -> None:
    """Not a terminal: typer's --help without rich's boxes (``TYPER_USE_RICH=0``), unwrapped
    (see :data:`HELP_UNWRAPPED`, the app's ``context_settings``); ``TERMINAL_WIDTH`` for what
    rich still prints."""
    if help_unwrapped():
        os.environ.setdefault("TERMINAL_WIDTH", str(PIPE_WIDTH))
        os.environ.setdefault("TYPER_USE_RICH", "0")


def help_settings() -> dict:
    """click context settings for the app: unwrapped help when not a terminal."""
    if not help_unwrapped():
        return {}
    return {"max_content_width": HELP_UNWRAPPED, "terminal_width": HELP_UNWRAPPED}
