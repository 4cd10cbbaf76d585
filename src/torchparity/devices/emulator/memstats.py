"""Allocation counters of the emulated device (what ``torch.npu.memory_allocated`` reads).

Every device storage the emulator creates over host memory (``storage.device_storage``) is
counted when made (:func:`count`) and uncounted when its Python object dies
(:func:`uncount`, from the ``__del__`` of the record the storage carries), which PyTorch
delays until the last C++ alias of the storage is gone. Counting appends the event (+bytes
made, -bytes freed) to a deque, atomic from any thread without a lock; the counters fold
the events in order when read (and every ``_FOLD_AT`` events), so current, peak and totals
are exactly those of counting each event as it happens. No weak reference and no registry
entry per storage. The emulator has no cache: reserved memory equals allocated memory, and
``empty_cache`` has nothing to release.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Dict

from . import faults

_LOCK = threading.RLock()  # re-entrant: a storage may be freed (uncount) while it is held
# bytes: current, peak, allocated in total, freed in total; blocks: current, peak, made, freed
_S = {"cur": 0, "peak": 0, "alloc": 0, "freed": 0, "n": 0, "npeak": 0, "nalloc": 0, "nfreed": 0}
_EVENTS: "deque[int]" = deque()  # +nbytes made, -nbytes freed, in the order they happened
_push = _EVENTS.append
_FOLD_AT = 4096


def count(nbytes: int) -> None:
    """A device storage of ``nbytes`` (> 0) was made."""
    _push(nbytes)
    if len(_EVENTS) > _FOLD_AT:
        _fold()


def uncount(nbytes: int) -> None:
    """A device storage counted with ``nbytes`` was freed."""
    _push(-nbytes)


def _fold() -> None:
    """Apply the pending events to the counters, oldest first."""
    with _LOCK:
        s = _S
        cur, peak, alloc, freed = s["cur"], s["peak"], s["alloc"], s["freed"]
        n, npeak, nalloc, nfreed = s["n"], s["npeak"], s["nalloc"], s["nfreed"]
        pop = _EVENTS.popleft
        while _EVENTS:
            e = pop()
            cur += e
            if e > 0:
                alloc += e
                n += 1
                nalloc += 1
                if cur > peak:
                    peak = cur
                if n > npeak:
                    npeak = n
            else:
                freed -= e
                n -= 1
                nfreed += 1
        s.update(cur=cur, peak=peak, alloc=alloc, freed=freed, n=n, npeak=npeak, nalloc=nalloc,
                 nfreed=nfreed)


def stats() -> Dict[str, int]:
    """Flat counters named as torch's allocators name them (``allocated_bytes.all.current``)."""
    with _LOCK:
        _fold()
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
    if faults.ACTIVE:  # injected bugs: the device-module hooks (memstat-zero: every counter 0)
        out = faults.device_value("memory_stats", out)
    return dict(sorted(out.items()))


def current(key: str = "allocated_bytes") -> int:
    _fold()
    return faults.device_value("memory_allocated", _S["cur"]) if faults.ACTIVE else _S["cur"]


def peak(key: str = "allocated_bytes") -> int:
    _fold()
    return faults.device_value("max_memory_allocated", _S["peak"]) if faults.ACTIVE else _S["peak"]


def reset_peak() -> None:
    with _LOCK:
        _fold()
        _S["peak"], _S["npeak"] = _S["cur"], _S["n"]


def reset_accumulated() -> None:
    with _LOCK:
        _fold()
        _S["alloc"] = _S["freed"] = _S["nalloc"] = _S["nfreed"] = 0
