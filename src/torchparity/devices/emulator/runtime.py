"""Streams, events, memory counters and the other runtime members of the emulated device
module, over host semantics.

The emulated device runs every op synchronously on the host: a stream is an ordering label
(work on it is done when the call returns), an event records the host time when it is
recorded, waiting is a no-op, memory counters are those of ``memstats``;
``caching_allocator_alloc/delete`` hand out counted host memory by pointer. Members torch_npu
has that a Python backend cannot provide (graph capture, IPC handles, pluggable
allocators, utilisation, BLAS handles) raise "... is not supported by the emulated device".
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Optional

import torch

from . import memstats
from .storage import device_storage, feature_error


def build(device_type: str, index_of) -> Dict[str, Any]:
    """The runtime members of ``torch.<device_type>`` (``index_of(device)`` validates a
    device argument and returns its index)."""
    state = {"stream": None, "sync_debug": 0, "fraction": 1.0, "next_id": 1}

    class Stream(torch.Stream):
        """An emulated stream: work submitted on it completes before the call returns."""

        def __new__(cls, device=None, priority=0, **kwargs):
            index_of(device)
            # every stream its own id (0: the default stream), as distinct device streams are
            kind = torch.Stream(torch.device(device_type, 0)).device_type
            sid = kwargs.get("_default_id")
            if sid is None:
                sid = state["next_id"]
                state["next_id"] += 1
            return super().__new__(cls, stream_id=sid, device_index=0, device_type=kind)

        def wait_event(self, event) -> None:
            event.wait(self)

        def wait_stream(self, stream) -> None:
            self.wait_event(stream.record_event())

        def record_event(self, event=None):
            event = Event() if event is None else event
            event.record(self)
            return event

        def query(self) -> bool:
            return True

        def synchronize(self) -> None:
            return None

        def set_data_preprocess_stream(self, is_data_preprocess_stream=False) -> None:
            return None

        def __eq__(self, other) -> bool:
            return isinstance(other, torch.Stream) and super().__eq__(other)

        __hash__ = torch.Stream.__hash__

    class Event:
        """An emulated event: recorded work is already complete; timing is host time."""

        def __init__(self, enable_timing=False, blocking=False, interprocess=False):
            self.enable_timing = bool(enable_timing)
            self.blocking = bool(blocking)
            self.interprocess = bool(interprocess)
            self._t: Optional[float] = None

        @classmethod
        def from_ipc_handle(cls, device, handle):
            raise feature_error(f"torch.{device_type}.Event.from_ipc_handle (IPC events)")

        def ipc_handle(self):
            raise feature_error(f"torch.{device_type}.Event.ipc_handle (IPC events)")

        def record(self, stream=None) -> None:
            self._t = time.perf_counter()

        def wait(self, stream=None) -> None:
            return None

        def query(self) -> bool:
            return True

        def synchronize(self) -> None:
            return None

        def recorded_time(self):
            if self._t is None:
                raise RuntimeError("Event must be recorded before reading its record time")
            return int(self._t * 1e6)

        def elapsed_time(self, end_event) -> float:
            if not (self.enable_timing and end_event.enable_timing):
                raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
            if self._t is None or end_event._t is None:
                raise RuntimeError("Both events must be recorded before calculating elapsed time.")
            return (end_event._t - self._t) * 1000.0

        def __repr__(self) -> str:
            return f"<torch.{device_type}.Event (emulated) recorded={self._t is not None}>"

    def default_stream(device=None):
        index_of(device)
        if state.get("default") is None:  # made at first use: the device name exists by then
            state["default"] = Stream(_default_id=0)
        return state["default"]

    def current_stream(device=None):
        index_of(device)
        return state["stream"] or default_stream()

    def set_stream(stream) -> None:
        if stream is not None:
            state["stream"] = stream

    class StreamContext:
        """``with torch.<device>.stream(s):`` makes ``s`` the current stream."""

        def __init__(self, stream):
            self.stream = stream
            self._prev = None

        def __enter__(self):
            self._prev = state["stream"]
            if self.stream is not None:
                state["stream"] = self.stream
            return self.stream

        def __exit__(self, *exc):
            state["stream"] = self._prev
            return False

    def stream(stream):
        return StreamContext(stream)

    def set_sync_debug_mode(debug_mode) -> None:
        names = {"default": 0, "warn": 1, "error": 2}
        if isinstance(debug_mode, str):
            if debug_mode not in names:
                raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                                   "`warn`, `error`")
            debug_mode = names[debug_mode]
        state["sync_debug"] = int(debug_mode)

    def get_sync_debug_mode() -> int:
        return state["sync_debug"]

    def memory_allocated(device=None) -> int:
        index_of(device)
        return memstats.current()

    def max_memory_allocated(device=None) -> int:
        index_of(device)
        return memstats.peak()

    def memory_reserved(device=None) -> int:
        index_of(device)
        return memstats.current("reserved_bytes")

    def max_memory_reserved(device=None) -> int:
        index_of(device)
        return memstats.peak("reserved_bytes")

    def memory_stats(device=None) -> Dict[str, int]:
        index_of(device)
        return memstats.stats()

    def memory_stats_as_nested_dict(device=None) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for key, value in memory_stats(device).items():
            node = out
            parts = key.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
        return out

    def reset_peak_memory_stats(device=None) -> None:
        index_of(device)
        memstats.reset_peak()

    def reset_accumulated_memory_stats(device=None) -> None:
        index_of(device)
        memstats.reset_accumulated()

    def memory_summary(device=None, abbreviated=False) -> str:
        stats = memory_stats(device)
        rows = [f"|  {k:<40} | {v:>14} |" for k, v in stats.items() if not abbreviated
                or k.endswith(".current") or k.endswith(".peak")]
        return "\n".join([f"|  emulated {device_type} memory summary (no caching allocator) |"] + rows)

    def empty_cache() -> None:
        return None

    def mem_get_info(device=None):
        index_of(device)
        return host_memory()

    def set_per_process_memory_fraction(fraction, device=None) -> None:
        index_of(device)
        if not isinstance(fraction, float):
            raise TypeError("Invalid type for fraction argument, must be `float`")
        if fraction < 0 or fraction > 1:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
        state["fraction"] = fraction

    def get_per_process_memory_fraction(device=None) -> float:
        index_of(device)
        return state["fraction"]

    def get_allocator_backend() -> str:
        return "native"

    blocks: Dict[int, Any] = {}  # caching_allocator_alloc: pointer -> its device storage

    def caching_allocator_alloc(size, device=None, stream=None) -> int:
        """Device memory of ``size`` bytes outside any tensor, counted by the memory
        counters until ``caching_allocator_delete`` (host memory under the emulator)."""
        index_of(device)
        if stream is not None and not isinstance(stream, (torch.Stream, int)):
            raise TypeError("Invalid type for stream argument, must be `torch.npu.Stream` or "
                            "`int` representing a pointer to a existing stream")
        size = int(size)
        if size < 0:
            raise RuntimeError(f"caching_allocator_alloc: size must be non-negative, got {size}")
        block = device_storage(torch.UntypedStorage(size), torch.device(device_type, 0))
        ptr = block.data_ptr()
        blocks[ptr] = block
        return ptr

    def caching_allocator_delete(mem_ptr) -> None:
        """Free memory from ``caching_allocator_alloc`` (a pointer it did not give is an
        error, as torch_npu's allocator says)."""
        block = blocks.pop(int(mem_ptr), None)
        if block is None and int(mem_ptr) != 0:
            raise RuntimeError(f"invalid device pointer: {mem_ptr}")
        del block

    def _unsupported(what: str):
        def fn(*args, **kwargs):
            raise feature_error(f"torch.{device_type}.{what}")
        fn.__name__ = what
        return fn

    def is_current_stream_capturing() -> bool:
        return False

    members: Dict[str, Any] = dict(
        Stream=Stream, Event=Event, current_stream=current_stream, default_stream=default_stream,
        set_stream=set_stream, StreamContext=StreamContext, stream=stream,
        set_sync_debug_mode=set_sync_debug_mode, get_sync_debug_mode=get_sync_debug_mode,
        memory_allocated=memory_allocated, max_memory_allocated=max_memory_allocated,
        memory_reserved=memory_reserved, max_memory_reserved=max_memory_reserved,
        memory_cached=memory_reserved, max_memory_cached=max_memory_reserved,
        memory_stats=memory_stats, memory_stats_as_nested_dict=memory_stats_as_nested_dict,
        reset_peak_memory_stats=reset_peak_memory_stats,
        reset_max_memory_allocated=reset_peak_memory_stats,
        reset_max_memory_cached=reset_peak_memory_stats,
        reset_accumulated_memory_stats=reset_accumulated_memory_stats,
        memory_summary=memory_summary, empty_cache=empty_cache, mem_get_info=mem_get_info,
        set_per_process_memory_fraction=set_per_process_memory_fraction,
        get_per_process_memory_fraction=get_per_process_memory_fraction,
        get_allocator_backend=get_allocator_backend, host_empty_cache=empty_cache,
        is_current_stream_capturing=is_current_stream_capturing, ipc_collect=lambda: None,
        init=lambda: None, caching_allocator_alloc=caching_allocator_alloc,
        caching_allocator_delete=caching_allocator_delete,
    )
    for what in ("NPUGraph", "graph", "graph_pool_handle", "make_graphed_callables",
                 "NPUPluggableAllocator",
                 "change_current_allocator", "utilization", "current_blas_handle",
                 "memory_snapshot", "MemPool", "use_mem_pool",
                 # the emulator keeps no pinned host memory of its own to count: an empty
                 # dict and a reset that does nothing passed every case unobserved (issue 48)
                 "host_memory_stats", "host_memory_stats_as_nested_dict",
                 "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats"):
        members[what] = _unsupported(what)
    return members


def host_memory():
    """(free, total) bytes of the host, whose memory is the emulated device's memory."""
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
    except (ValueError, OSError, AttributeError):
        raise feature_error("reading the host's memory size on this platform") from None
