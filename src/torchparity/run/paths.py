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


class PathRecorder(TorchDispatchMode):
    """Counts ``(op overload, argument descriptions)`` of every op dispatched while open."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        dtypes = tuple(d for d in map(_describe, tree_leaves((args, kwargs))) if d is not None)
        name = str(func)
        self.calls[(name[: -len(".default")] if name.endswith(".default") else name, dtypes)] += 1
        return func(*args, **kwargs)


def record_path(fn: Callable[[], Any]) -> Counter:
    """The calls ``fn`` dispatches; an exception ends the record, it is not raised."""
    rec = PathRecorder()
    with rec:
        try:
            fn()
        except Exception:
            pass  # the judged run already reported it; ops up to the failure count
    return rec.calls
