"""The variables a case's body left behind: its inputs, for the judge's aliasing check.

A code-block case makes its inputs inside its body (``x = torch.randn(...).to(device)``)
and returns only its answer, so the judge cannot tell an output that *is* one of its
inputs on the device from one that is not. :func:`capturing` keeps the body's frame
(``fn.body_code``: a table case's body, a code block; else ``fn`` itself) while the case
runs, through a profile hook that is removed as soon as the frame is entered; after the
run, :func:`tensor_locals` reads what its variables held when it returned.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List

import torch

__all__ = ["capturing", "tensor_locals"]


@contextmanager
def capturing(fn: Any) -> Iterator[List[Any]]:
    """Yields a list that holds the body's frame once the body was entered (empty when it
    never was, or when another profiler is active: nothing is captured then)."""
    frames: List[Any] = []
    target = getattr(fn, "body_code", None) or getattr(fn, "__code__", None)
    if target is None or sys.getprofile() is not None:
        yield frames
        return

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is target:
            frames.append(frame)
            sys.setprofile(None)

    sys.setprofile(hook)
    try:
        yield frames
    finally:
        if sys.getprofile() is hook:
            sys.setprofile(None)


def tensor_locals(frames: List[Any]) -> Dict[str, Any]:
    """The captured body's variables that hold tensors (or containers of them), by name."""
    if not frames:
        return {}
    try:
        names = dict(frames[0].f_locals)
    except Exception:
        return {}
    return {k: v for k, v in names.items() if not k.startswith("__") and _has_tensor(v)}


def _has_tensor(v: Any, depth: int = 0) -> bool:
    if isinstance(v, torch.Tensor):
        return True
    if depth < 2 and isinstance(v, (list, tuple)):
        return any(_has_tensor(x, depth + 1) for x in v)
    if depth < 2 and isinstance(v, dict):
        return any(_has_tensor(x, depth + 1) for x in v.values())
    return False
