"""The worker's context and the case-kind registry that every case handler uses.

A case is a JSON-able dict with a ``kind``; its handler (registered here with
:func:`register`) returns a JSON-able payload. ``handlers.handle`` dispatches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from ..devices.base import DeviceAdapter


@dataclass
class WorkerContext:
    adapter: DeviceAdapter
    modules: List[str] = field(default_factory=list)
    options: Dict[str, Any] = field(default_factory=dict)
    cache: Dict[str, Any] = field(default_factory=dict)


Handler = Callable[[WorkerContext, Dict[str, Any]], Dict[str, Any]]
_HANDLERS: Dict[str, Handler] = {}


def register(kind: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        _HANDLERS[kind] = fn
        return fn

    return deco


def handler_for(kind: str) -> Optional[Handler]:
    """The handler registered for ``kind``, or None."""
    return _HANDLERS.get(kind)
