"""Allocation counters of the emulated device (what ``torch.npu.memory_allocated`` reads).

Every device storage the emulator creates over fresh host memory (``storage.device_storage``)
is counted when made and uncounted when its Python object dies, which PyTorch delays until
the last C++ alias of the storage is gone. The emulator has no cache: reserved memory equals
allocated memory, and ``empty_cache`` has nothing to release.
"""

from __future__ import annotations

import threading
import weakref
from typing import Dict

_LOCK = threading.Lock()
_KEYS = ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes",
         "allocation", "segment", "active")
_STATS: Dict[str, Dict[str, int]] = {}
_EVENTS = {"num_alloc_retries": 0, "num_ooms": 0, "num_sync_all_streams": 0,
           "num_device_alloc": 0, "num_device_free": 0}


def _reset_all() -> None:
    for key in _KEYS:
        _STATS[key] = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}


_reset_all()


def _bump(nbytes: int, sign: int) -> None:
    with _LOCK:
        for key in _KEYS:
            amount = 1 if key in ("allocation", "segment", "active") else nbytes
            s = _STATS[key]
            s["current"] += sign * amount
            if sign > 0:
                s["allocated"] += amount
                s["peak"] = max(s["peak"], s["current"])
            else:
                s["freed"] += amount
        _EVENTS["num_device_alloc" if sign > 0 else "num_device_free"] += 1


def track(dev_storage, nbytes: int) -> None:
    """Count ``nbytes`` now and uncount them when ``dev_storage`` is freed."""
    if nbytes <= 0:
        return
    _bump(nbytes, +1)
    weakref.finalize(dev_storage, _bump, nbytes, -1)


def stats() -> Dict[str, int]:
    """Flat counters named as torch's allocators name them (``allocated_bytes.all.current``)."""
    with _LOCK:
        out = {}
        for key in _KEYS:
            for kind, value in _STATS[key].items():
                out[f"{key}.all.{kind}"] = value
        out.update(_EVENTS)
        return dict(sorted(out.items()))


def current(key: str = "allocated_bytes") -> int:
    return _STATS[key]["current"]


def peak(key: str = "allocated_bytes") -> int:
    return _STATS[key]["peak"]


def reset_peak() -> None:
    with _LOCK:
        for s in _STATS.values():
            s["peak"] = s["current"]


def reset_accumulated() -> None:
    with _LOCK:
        for s in _STATS.values():
            s["allocated"] = s["freed"] = 0
        for key in _EVENTS:
            _EVENTS[key] = 0
