"""The code path a run takes: which aten ops, on which dtypes, it dispatched.

A device result that differs from the CPU's has two very different explanations: the
device computed the same ops less exactly, or the API itself chose other ops for the
device (Python or C++ code that branches on the device type, e.g. a higher-precision
accumulator on the CPU only). Recording the ops of both runs above the backend, with a
TorchDispatchMode, tells them apart on any backend: the emulated one and real hardware.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from ..api.footprint import call_from_mode
from ..dtypes import dtype_name

Call = Tuple[str, Tuple[str, ...]]  # (op overload, what decides its path, in argument order)


def _describe(leaf: Any) -> Optional[str]:
    """What of an argument can tell two paths apart: a tensor's dtype, a dtype or a
    string option (custom ops take policies as arguments). Numbers are left out: a
    scalar read from device data may differ in its last bits without any other path."""
    if isinstance(leaf, torch.Tensor):
        return dtype_name(leaf.dtype)
    if isinstance(leaf, torch.dtype):
        return "dtype=" + dtype_name(leaf)
    if isinstance(leaf, str):
        return repr(leaf)
    return None


_TO_COPY = torch.ops.aten._to_copy.default
_COPY_ = torch.ops.aten.copy_.default
# queries that compute nothing (the emulated device answers this one itself, as torch_npu does)
_QUERIES = (torch.ops.aten._has_compatible_shallow_copy_type.default,)


def _device_type(d: Any) -> Optional[str]:
    return None if d is None else torch.device(d).type


def not_a_path(func, args, kwargs) -> bool:
    """Ops that cannot make two paths compute differently: views (metadata only), queries and
    pure transfers between devices (``.to(device)`` / ``.cpu()`` / a cross-device
    ``copy_`` that keeps the dtype). A scenario moves its inputs to the device and its
    outputs back, so the device run always has these and the CPU run never does."""
    if getattr(func, "is_view", False) or func in _QUERIES:
        return True
    if func is _TO_COPY and args and isinstance(args[0], torch.Tensor):
        src = args[0]
        dtype, layout = kwargs.get("dtype"), kwargs.get("layout")
        target = _device_type(kwargs.get("device"))
        return (dtype in (None, src.dtype) and layout in (None, src.layout)
                and target is not None and target != src.device.type)
    if func is _COPY_ and len(args) >= 2 and all(isinstance(a, torch.Tensor) for a in args[:2]):
        dst, src = args[0], args[1]
        return dst.dtype == src.dtype and dst.device.type != src.device.type
    return False


class PathRecorder(TorchDispatchMode):
    """Counts ``(op overload, argument descriptions)`` of every op dispatched while open,
    leaving out views and pure device transfers (:func:`not_a_path`)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not_a_path(func, args, kwargs):
            return call_from_mode(func, args, kwargs)
        dtypes = tuple(d for d in map(_describe, tree_leaves((args, kwargs))) if d is not None)
        name = str(func)
        self.calls[(name[: -len(".default")] if name.endswith(".default") else name, dtypes)] += 1
        return call_from_mode(func, args, kwargs)  # see api.footprint: backward on a device


def record_path(fn: Callable[[], Any]) -> Counter:
    """The calls ``fn`` dispatches; an exception ends the record, it is not raised."""
    rec = PathRecorder()
    with rec:
        try:
            fn()
        except Exception:
            pass  # the judged run already reported it; ops up to the failure count
    return rec.calls
