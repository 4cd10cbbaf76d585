"""Refusals that happen above the dispatch modes, told to whoever records the run.

A vendor-registered composite (``devices/emulator/composites.py``) checks its dtype rule
in a kernel at the Autograd or backend key, before any ``TorchDispatchMode`` sees the op:
the footprint recorder would never learn which op was refused, nor who issued it, and a
scenario's own ``x @ x.T`` refused in float64 would be blamed on the API it surrounds.
Such a kernel calls :func:`refused` first; an observer (the recorder) notes the op.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, List, Optional

import torch

Observer = Callable[[str, Optional[torch.dtype]], None]
_OBSERVERS: List[Observer] = []


def refused(op_name: str, dtype: Optional[torch.dtype]) -> None:
    """``op_name`` (``aten.matmul.default``) is about to raise for ``dtype``."""
    for observer in list(_OBSERVERS):
        observer(op_name, dtype)


@contextmanager
def observing(observer: Observer) -> Iterator[None]:
    _OBSERVERS.append(observer)
    try:
        yield
    finally:
        _OBSERVERS.remove(observer)
