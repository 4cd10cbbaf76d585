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


def set_help_width() -> None:
    """typer's --help at :data:`PIPE_WIDTH` when stdout is not a terminal."""
    if width_for(sys.stdout) is not None:
        os.environ.setdefault("TERMINAL_WIDTH", str(PIPE_WIDTH))
