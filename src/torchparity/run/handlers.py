"""Case handlers: what a worker does with each kind of case.

A case is a JSON-able dict with a ``kind``; its handler returns a JSON-able payload.
New kinds (e.g. OpInfo samples) register with :func:`~.context.register`; the built-in
ones are imported here on first use. Process-wide torch settings a case changes are put
back after it (``process_state``): the next case, in the same worker or the same pytest
process, starts from the state this one started from.
"""

from __future__ import annotations

from typing import Any, Dict

from . import process_state
from .context import Handler, WorkerContext, handler_for, register

__all__ = ["Handler", "WorkerContext", "handle", "register"]


def handle(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    kind = case.get("kind", "suite")
    handler = handler_for(kind)
    if handler is None:
        _load_builtin_handlers()
        handler = handler_for(kind)
    if handler is None:
        raise ValueError(f"unknown case kind {kind!r}")
    saved = process_state.snapshot()
    try:
        return handler(ctx, case)
    finally:
        process_state.restore(saved)


def _load_builtin_handlers() -> None:
    from . import (
        footprint_handler,  # noqa: F401  (registers "footprint")
        opinfo_handler,  # noqa: F401  (registers "opinfo")
        source_handler,  # noqa: F401  (registers "source")
        suite_handler,  # noqa: F401  (registers "suite")
        upstream_handler,  # noqa: F401  (registers "upstream")
    )
