"""Case handlers: what a worker does with each kind of case.

A case is a JSON-able dict with a ``kind``; its handler returns a JSON-able payload.
New kinds (e.g. OpInfo samples) register with :func:`register`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List

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


def handle(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    kind = case.get("kind", "suite")
    if kind not in _HANDLERS:
        _load_builtin_handlers()
    try:
        handler = _HANDLERS[kind]
    except KeyError:
        raise ValueError(f"unknown case kind {kind!r}") from None
    return handler(ctx, case)


def _load_builtin_handlers() -> None:
    from . import (
        footprint_handler,  # noqa: F401  (registers "footprint")
        opinfo_handler,  # noqa: F401  (registers "opinfo")
        source_handler,  # noqa: F401  (registers "source")
        suite_handler,  # noqa: F401  (registers "suite")
        upstream_handler,  # noqa: F401  (registers "upstream")
    )
