"""Generic mutants: one small bug per aten op, for every op an API dispatches.

A fault module (``docs/faults.md``) whose faults are classes of mutation that apply to any
op of the right shape, not to a hand list. The oracle targets each at one op it saw in an
API's footprint (``TORCHPARITY_EMU_FAULT=mutant-swap@aten.sort.values``); untargeted, a
class acts on every op it fits. Each wrapper reports through ``fire`` when it actually
changed the op's result (the oracle's probe: a mutant that changed nothing on a run is not
a pair of that run).
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

import torch

from .catalogue import inplace_self, is_tensor_type, mutates, resolve_op, storages_of, tensors_of

# relative size of the ulp mutant: 2^-4 of the element's magnitude, far above what any
# row's standard forgives a single element (bfloat16's 2 x 2^-7 mean, float16's 8 x 2^-10)
ULP_SHIFT = 4

FAULTS: Dict[str, str] = {
    "mutant-ulp": (f"one element of a floating output (its largest in magnitude) off by 2^(mantissa-{ULP_SHIFT}) "
                   f"ulps, i.e. 2^-{ULP_SHIFT} of its value"),
    "mutant-swap": "the first and last elements of the output swapped",
    "mutant-alias": "the output written into an input of its shape and dtype and returned as that input (aliased)",
    "mutant-int-last": "the last element of an integer / bool / index output changed (+1, or negated)",
    "mutant-inplace-nowhere": "an in-place op computes into a copy: its input keeps its old values",
    "mutant-view-strides": "a view op returns a view of the right storage with wrong strides",
}

_BITS = {torch.float64: (torch.int64, 52), torch.float32: (torch.int32, 23),
         torch.float16: (torch.int16, 10), torch.bfloat16: (torch.int16, 7)}


def _returns_new(schema) -> bool:
    return (any(is_tensor_type(r.type) and r.alias_info is None for r in schema.returns)
            and not mutates(schema))


def _returns_view(schema) -> bool:
    return (any(is_tensor_type(r.type) and r.alias_info is not None for r in schema.returns)
            and not mutates(schema))


def touches(fault: str, op_name: str) -> bool:
    """Whether the class can act on aten op ``op_name`` (by its schema; whether it changes
    anything on a given run is the run's to say, through ``fire``)."""
    op = resolve_op(op_name)
    if op is None:
        return False
    schema = op._schema
    if fault in ("mutant-ulp", "mutant-swap", "mutant-alias", "mutant-int-last"):
        return _returns_new(schema)
    if fault == "mutant-inplace-nowhere":
        return inplace_self(op) is not None
    if fault == "mutant-view-strides":
        return _returns_view(schema)
    return False


def wrap(fault: str, op, call: Callable, fire: Optional[Callable[[], None]] = None) -> Optional[Callable]:
    schema = op._schema
    fire = fire or (lambda: None)
    if fault in ("mutant-ulp", "mutant-swap", "mutant-int-last") and _returns_new(schema):
        change = {"mutant-ulp": _ulp, "mutant-swap": _swap, "mutant-int-last": _int_last}[fault]
        return _on_new_output(call, change, fire)
    if fault == "mutant-alias" and _returns_new(schema):
        return _aliasing(call, fire)
    if fault == "mutant-inplace-nowhere":
        i = inplace_self(op)
        if i is not None:
            return _nowhere(call, i, fire)
    if fault == "mutant-view-strides" and _returns_view(schema):
        return _restrided(call, fire)
    return None


def _first_new(out, inputs) -> Optional[torch.Tensor]:
    for t in tensors_of(out):
        if t.layout == torch.strided and t.numel() and t.untyped_storage().data_ptr() not in inputs:
            return t
    return None


def _on_new_output(call, change: Callable[[torch.Tensor], bool], fire):
    def run(*a, **k):
        out = call(*a, **k)
        t = _first_new(out, storages_of(a, k))
        if t is not None and change(t):
            fire()
        return out
    return run


def _at(t: torch.Tensor, flat: int):
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), t.shape)) if t.dim() else ()


def _ulp(t: torch.Tensor) -> bool:
    if t.dtype not in _BITS:
        return False
    mag = t.detach().abs().reshape(-1)
    if not bool(torch.isfinite(mag).any()):
        return False
    mag = torch.where(torch.isfinite(mag), mag, torch.zeros_like(mag))
    if float(mag.max()) == 0.0:
        return False
    where = _at(t, int(mag.argmax()))
    ints, mantissa = _BITS[t.dtype]
    with torch.no_grad():
        t[where].view(ints).add_(1 << (mantissa - ULP_SHIFT))
    return True


def _swap(t: torch.Tensor) -> bool:
    if t.numel() < 2:
        return False
    first, last = _at(t, 0), _at(t, t.numel() - 1)
    a, b = t[first].clone(), t[last].clone()
    if a.dtype in _BITS:
        same = torch.equal(a.view(_BITS[a.dtype][0]), b.view(_BITS[a.dtype][0]))
    else:
        same = torch.equal(a, b)
    if same:
        return False
    with torch.no_grad():
        t[first] = b
        t[last] = a
    return True


def _int_last(t: torch.Tensor) -> bool:
    if t.is_floating_point() or t.is_complex():
        return False
    last = _at(t, t.numel() - 1)
    with torch.no_grad():
        if t.dtype == torch.bool:
            t[last] = ~t[last]
        else:
            t[last] = t[last] + 1 if t.dtype != torch.uint8 or int(t[last]) < 255 else 0
    return True


def _aliasing(call, fire):
    def run(*a, **k):
        out = call(*a, **k)
        t = _first_new(out, storages_of(a, k))
        if t is None:
            return out
        for x in a:
            if (isinstance(x, torch.Tensor) and x.layout == torch.strided and x.shape == t.shape
                    and x.dtype == t.dtype and x.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()):
                with torch.no_grad():
                    x.copy_(t)
                fire()
                if isinstance(out, torch.Tensor):
                    return x
                return type(out)(x if o is t else o for o in out)
        return out
    return run


def _nowhere(call, i: int, fire):
    def run(*a, **k):
        if i >= len(a) or not isinstance(a[i], torch.Tensor):
            return call(*a, **k)
        a = list(a)
        mine = a[i]
        a[i] = mine.clone()
        out = call(*a, **k)
        if not torch.equal(a[i], mine) or a[i].dtype != mine.dtype:
            fire()
        return mine if out is a[i] else out
    return run


def _wrong_strides(t: torch.Tensor) -> Optional[tuple]:
    size = list(t.shape)
    contiguous, acc = [], 1
    for n in reversed(size):
        contiguous.insert(0, acc)
        acc *= max(n, 1)
    fortran, acc = [], 1
    for n in size:
        fortran.append(acc)
        acc *= max(n, 1)

    def counted(st):
        return [s for s, n in zip(st, size) if n > 1]
    now = counted(t.stride())
    for cand in (contiguous, fortran):
        if counted(cand) != now:
            return tuple(cand)
    return None


_BUSY = {"restriding": False}  # the wrong view is made by a view op too: not mutated again


def _restrided(call, fire):
    def run(*a, **k):
        out = call(*a, **k)
        if _BUSY["restriding"]:
            return out
        first = next(iter(tensors_of(out)), None)
        if first is None or first.layout != torch.strided or first.numel() < 2:
            return out
        strides = _wrong_strides(first)
        if strides is None:
            return out
        reach = first.storage_offset() + sum((n - 1) * s for n, s in zip(first.shape, strides))
        if (reach + 1) * first.element_size() > first.untyped_storage().nbytes():
            return out
        _BUSY["restriding"] = True
        try:
            moved = first.as_strided(first.shape, strides, first.storage_offset())
        finally:
            _BUSY["restriding"] = False
        fire()
        if isinstance(out, torch.Tensor):
            return moved
        return type(out)(moved if o is first else o for o in out)
    return run
