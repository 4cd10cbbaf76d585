"""Allocation counters of the emulated device (what ``torch.npu.memory_allocated`` reads).

Every device storage the emulator creates over fresh host memory (``storage.device_storage``)
is counted when made and uncounted when its Python object dies, which PyTorch delays until
the last C++ alias of the storage is gone (a weak reference's callback; cheaper than
``weakref.finalize`` on this hot path). The emulator has no cache: reserved memory equals
allocated memory, and ``empty_cache`` has nothing to release.
"""

from __future__ import annotations

import threading
import weakref
from typing import Dict

from . import faults

_LOCK = threading.RLock()  # re-entrant: a weak-reference callback may run while it is held
# bytes: current, peak, allocated in total, freed in total; blocks: current, peak, made, freed
_S = {"cur": 0, "peak": 0, "alloc": 0, "freed": 0, "n": 0, "npeak": 0, "nalloc": 0, "nfreed": 0}
_LIVE: Dict[int, tuple] = {}  # id(weakref) -> (weakref, nbytes): keeps the references alive


def _freed(ref) -> None:
    entry = _LIVE.pop(id(ref), None)
    if entry is None:
        return
    with _LOCK:
        _S["cur"] -= entry[1]
        _S["freed"] += entry[1]
        _S["n"] -= 1
        _S["nfreed"] += 1


def track(dev_storage, nbytes: int) -> None:
    """Count ``nbytes`` now and uncount them when ``dev_storage`` is freed."""
    if nbytes <= 0:
        return
    ref = weakref.ref(dev_storage, _freed)
    _LIVE[id(ref)] = (ref, nbytes)
    with _LOCK:
        s = _S
        s["cur"] += nbytes
        s["alloc"] += nbytes
        s["n"] += 1
        s["nalloc"] += 1
        if s["cur"] > s["peak"]:
            s["peak"] = s["cur"]
        if s["n"] > s["npeak"]:
            s["npeak"] = s["n"]


def stats() -> Dict[str, int]:
    """Flat counters named as torch's allocators name them (``allocated_bytes.all.current``)."""
    with _LOCK:
        s = dict(_S)
    out: Dict[str, int] = {}
    for key in ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes"):
        out.update({f"{key}.all.current": s["cur"], f"{key}.all.peak": s["peak"],
                    f"{key}.all.allocated": s["alloc"], f"{key}.all.freed": s["freed"]})
    for key in ("allocation", "segment", "active"):
        out.update({f"{key}.all.current": s["n"], f"{key}.all.peak": s["npeak"],
                    f"{key}.all.allocated": s["nalloc"], f"{key}.all.freed": s["nfreed"]})
    out.update({"num_alloc_retries": 0, "num_ooms": 0, "num_sync_all_streams": 0,
                "num_device_alloc": s["nalloc"], "num_device_free": s["nfreed"]})
    if faults.MEMSTAT_ZERO:  # injected bug: the counters report 0
        out = {k: 0 for k in out}
    return dict(sorted(out.items()))


def current(key: str = "allocated_bytes") -> int:
    return 0 if faults.MEMSTAT_ZERO else _S["cur"]


def peak(key: str = "allocated_bytes") -> int:
    return 0 if faults.MEMSTAT_ZERO else _S["peak"]


def reset_peak() -> None:
    with _LOCK:
        _S["peak"], _S["npeak"] = _S["cur"], _S["n"]


def reset_accumulated() -> None:
    with _LOCK:
        _S["alloc"] = _S["freed"] = _S["nalloc"] = _S["nfreed"] = 0
