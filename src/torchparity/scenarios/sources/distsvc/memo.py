"""What the process-launching cases of ``distsvc`` share: the device spec a launched
process sets up, and one run per (case, device) kept for the dtypes that follow."""

from __future__ import annotations

from typing import Any, Callable, Dict

from ..base import reusing

_RUNS: Dict[tuple, Any] = {}


def spec_of(device: str) -> str:
    if device == "cpu":
        return "cpu"
    from ....devices import spec_for_device

    return spec_for_device(device)


def memo(name: str, device: str, make: Callable[[], Any]) -> Any:
    """``make()`` once per (name, device), kept; made again, and not kept, while a run
    takes the case's API away (``base.fresh_runs``): a kept result would hand that run
    what the API did in an earlier one."""
    if not reusing():
        return make()
    key = (name, spec_of(device))
    if key not in _RUNS:
        try:
            _RUNS[key] = ("ok", make())
        except Exception as exc:
            _RUNS[key] = ("failed", exc)
    state, value = _RUNS[key]
    if state == "failed":
        raise value
    return value
