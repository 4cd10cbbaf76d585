"""Whether the CPU and the device run took the same code path (see run/paths.py)."""

from __future__ import annotations

from collections import Counter
from typing import Optional


def _fmt(calls: Counter, limit: int) -> str:
    if not calls:
        return "nothing"
    items = sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{op}({', '.join(dt)})" + (f" x{n}" if n > 1 else "") for (op, dt), n in items[:limit])
    if len(items) > limit:
        text += f" and {len(items) - limit} more"
    return text


def path_difference(cpu: Counter, device: Counter, device_type: str, limit: int = 3) -> Optional[str]:
    """One line naming the ops only one side dispatched, or None when the paths agree.

    Counts compare as multisets: the same ops in another order are the same path.
    """
    only_device, only_cpu = device - cpu, cpu - device
    if not only_device and not only_cpu:
        return None
    return (f"the API takes another code path on {device_type}: only there "
            f"{_fmt(only_device, limit)}; only on the CPU {_fmt(only_cpu, limit)}")
