"""Case handlers: what a worker does with each kind of case.

A case is a JSON-able dict with a ``kind``; its handler returns a JSON-able payload.
New kinds (e.g. OpInfo samples) register with :func:`~.context.register`; the built-in
ones are imported here on first use. Process-wide torch settings a case changes are put
back after it (``process_state``): the next case, in the same worker or the same pytest
process, starts from the state this one started from.
"""

from __future__ import annotations

import os
from typing import Any, Dict

from . import process_state
from .context import Handler, WorkerContext, handler_for, register

__all__ = ["Handler", "WorkerContext", "handle", "register"]

# the oracle's fire log and the API a fire is credited to (devices.emulator.faults'
# LOG_ENV / API_ENV: read there at fire time, so this layer only names them)
FAULT_LOG_ENV = "TORCHPARITY_EMU_FAULT_LOG"
FAULT_API_ENV = "TORCHPARITY_EMU_FAULT_API"


def handle(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    kind = case.get("kind", "suite")
    handler = handler_for(kind)
    if handler is None:
        _load_builtin_handlers()
        handler = handler_for(kind)
    if handler is None:
        raise ValueError(f"unknown case kind {kind!r}")
    saved = process_state.snapshot()
    # under the oracle's fire log, a fault's fire names the API whose case runs
    # (devices.emulator.faults.API_ENV; a world's rank processes inherit it)
    labelled = bool(os.environ.get(FAULT_LOG_ENV)) and bool(case.get("api"))
    if labelled:
        os.environ[FAULT_API_ENV] = str(case["api"])
    try:
        return handler(ctx, case)
    finally:
        if labelled:
            os.environ.pop(FAULT_API_ENV, None)
        process_state.restore(saved)


def _load_builtin_handlers() -> None:
    from . import (
        footprint_handler,  # noqa: F401  (registers "footprint")
        opinfo_handler,  # noqa: F401  (registers "opinfo")
        source_handler,  # noqa: F401  (registers "source")
        suite_handler,  # noqa: F401  (registers "suite")
        upstream_handler,  # noqa: F401  (registers "upstream")
    )
