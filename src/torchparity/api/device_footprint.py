"""The footprint a device really receives: composites it has no kernel for, decomposed.

A ``TorchDispatchMode`` on the CPU sees each op once, before its kernel runs: an op with
a CompositeExplicitAutograd kernel (``new_ones``, ``_trilinear``, ``allclose``) appears as
itself. A backend that registers no kernel of its own for such an op receives the ops of
that kernel instead; one that does register it receives the op. :class:`DeviceDispatchRecorder`
records the first kind as the ops they decompose into (running the composite kernel with
the mode still active) and the second as themselves, given ``native(op) -> bool`` (the
vendor's registered-op list, ``devices.registered_ops``); with ``native=None`` it records
what :class:`~torchparity.api.footprint.DispatchRecorder` records.

Bookkeeping ops (``_linalg_check_errors`` and the like: checks of an ``info`` output or of
shapes, no result of their own) are listed apart and never recorded as compute ops, nor is
anything they run.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Set, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .footprint import METADATA_OPS, checked_dtype

# checks with no result of their own: an info output, a shape, an assertion
BOOKKEEPING = frozenset({
    "_linalg_check_errors", "_assert_async", "_assert_scalar", "_assert_tensor_metadata",
    "_functional_assert_async", "_functional_assert_scalar", "sym_constrain_range",
    "sym_constrain_range_for_size", "_functional_sym_constrain_range",
    "_functional_sym_constrain_range_for_size", "_check_tensor", "is_same_size",
})
# in-place views: metadata only, like footprint.METADATA_OPS (never compute ops)
INPLACE_VIEWS = frozenset({"as_strided_", "squeeze_", "unsqueeze_", "t_", "transpose_",
                           "swapdims_", "swapaxes_"})
# never decomposed: allocation, copies and views every backend has
_KEEP = METADATA_OPS | {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
                        "_to_copy", "_copy_from", "_copy_from_and_resize", "copy_", "set_",
                        "resize_", "as_strided", "as_strided_", "view", "alias", "detach",
                        "lift_fresh"}
_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_has = torch._C._dispatch_has_kernel_for_dispatch_key
_KIND: dict = {}  # overload -> "explicit" | "implicit" | None (the dispatcher's tables)


def op_short(op: str) -> str:
    """'aten.linalg_cholesky_ex.default' -> 'linalg_cholesky_ex'."""
    parts = op.split(".")
    return parts[1] if len(parts) >= 2 else op


def is_bookkeeping(op: str) -> bool:
    return op_short(op) in BOOKKEEPING


def is_composite_implicit(func) -> bool:
    """An op aten decomposes wherever no backend kernel is registered (``narrow``)."""
    try:
        return (_has(func.name(), "CompositeImplicitAutograd")
                and not _has(func.name(), "CPU"))
    except RuntimeError:
        return False


def is_composite_explicit(func) -> bool:
    """An op (not a view) whose only CPU path is a CompositeExplicitAutograd(NonFunctional)
    kernel: what a backend without a kernel of its own for it runs too."""
    name = func.name()
    try:
        return (not getattr(func, "is_view", False) and not _has(name, "CPU")
                and (_has(name, "CompositeExplicitAutograd")
                     or _has(name, "CompositeExplicitAutogradNonFunctional")))
    except RuntimeError:
        return False


class DeviceDispatchRecorder(TorchDispatchMode):
    """``calls``: (overload, dtype a backend's check sees) the device receives, in order,
    repeats collapsed; ``decomposed``: composites it has no kernel for (recorded as their
    parts); ``bookkeeping``: checks left out."""

    def __init__(self, native: Optional[Callable[[str], bool]] = None):
        super().__init__()
        self.native = native
        self.calls: List[Tuple[str, Optional[str]]] = []
        self.decomposed: List[str] = []
        self.bookkeeping: List[str] = []
        self._seen: Set[Tuple[str, Optional[str]]] = set()
        self._open: List[str] = []  # composites being decomposed (no recursion into one)

    def _decomposes(self, func, name: str) -> Optional[str]:
        """"explicit" / "implicit": the device has no kernel of its own for this composite
        (an implicit one reaches this mode only from inside another composite kernel)."""
        if (self.native is None or self.native(name) or op_short(name) in _KEEP
                or name in self._open):
            return None
        kind = _KIND.get(name, False)
        if kind is False:
            kind = ("explicit" if is_composite_explicit(func)
                    else "implicit" if is_composite_implicit(func) else None)
            _KIND[name] = kind
        return kind

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func)
        if is_bookkeeping(name):
            if name not in self.bookkeeping:
                self.bookkeeping.append(name)
            return func(*args, **kwargs)
        kind = self._decomposes(func, name)
        if kind:
            self._open.append(name)
            ok = False
            try:
                with self:
                    out = (func.redispatch(_CPU, *args, **kwargs) if kind == "explicit"
                           else func.decompose(*args, **kwargs))
                ok = True
            except Exception:  # the op's own error shows again below, undecomposed
                pass
            finally:
                self._open.pop()
            if ok:
                if name not in self.decomposed:
                    self.decomposed.append(name)
                return out
        out = func(*args, **kwargs)
        key = (name, checked_dtype(args, kwargs, out))
        if key not in self._seen:
            self._seen.add(key)
            self.calls.append(key)
        return out


_PREFIX = {"torch.linalg.": "linalg_", "torch.special.": "special_", "torch.fft.": "fft_",
           "torch.nn.functional.": "", "torch.Tensor.": "", "torch.": ""}


def native_implicit_op(api: str, native: Optional[Callable[[str], bool]]) -> Optional[str]:
    """The aten overload an API *is*, when aten decomposes it above the dispatch mode
    (CompositeImplicitAutograd) but the vendor registers a kernel for it, so the device
    receives the op itself (``torch.linalg.cholesky`` -> ``aten.linalg_cholesky.default``).
    None otherwise."""
    if native is None:
        return None
    name = None
    for prefix, op_prefix in _PREFIX.items():
        if api.startswith(prefix):
            rest = api[len(prefix):]
            if "." not in rest:
                name = op_prefix + rest
            break
    packet = getattr(torch.ops.aten, name, None) if name else None
    if packet is None:
        return None
    try:
        overloads = packet.overloads()
    except Exception:
        return None
    for ov in sorted(overloads, key=lambda o: o != "default"):
        try:
            op = getattr(packet, ov)
            if _has(op.name(), "CompositeImplicitAutograd") and native(str(op)):
                return str(op)
        except (AttributeError, RuntimeError):  # an overload the dispatcher does not know
            continue
    return None
