"""The built-in fault catalogue: realistic device bugs, as one fault module.

A fault module (``docs/faults.md``) declares ``FAULTS`` (name -> one line), ``touches``
(which aten ops a fault can change) and ``wrap`` (a wrapper over an op's CPU call on the
emulated device); this is the project's own, loaded by ``faults`` before any module named
in ``TORCHPARITY_EMU_FAULT_MODULE``. ``memstat-zero`` is a device-module hook
(:func:`device`); ``collective-noop`` lives where collectives are made
(``collectives``, read through ``faults.COLLECTIVE_NOOP``): it must keep the caller's
tensors and the work's future apart, which a hook over finished outputs cannot.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

# name -> what the bug is (one line, shown in the docs and by the oracle)
FAULTS: Dict[str, str] = {
    "numeric-1e-2": "floating results of elementwise, reduction and matmul/conv kernels scaled by 1+1e-2",
    "numeric-1e-3": "floating results of elementwise, reduction and matmul/conv kernels scaled by 1+1e-3",
    "numeric-1e-4": "floating results of elementwise, reduction and matmul/conv kernels scaled by 1+1e-4",
    "reduce-drop": "a reduction skips the last element of the reduced dim (of all elements when none is named)",
    "dtype-widen": "float16/bfloat16 results of elementwise, reduction and matmul/conv kernels returned as float32",
    "strides": "new outputs made contiguous whatever strides were asked (empty_strided, memory_format) or implied",
    "inplace-copy": "an in-place op writes a new tensor instead of its input (the input keeps its old values)",
    "grad-zero": "backward kernels (aten *_backward*) return zeros",
    "rng-unseeded": "device draws ignore the seed and the generator passed",
    "collective-noop": ("all_reduce / reduce / reduce_scatter / all_gather / broadcast return the local tensor; "
                        "gather / scatter / all_to_all outputs and a recv's buffer stay as they were"),
    "memstat-zero": "memory counters (memory_allocated, memory_stats, ...) report 0",
    "nan-drop": "max / min / sum (and maximum / minimum) treat NaN as absent",
}

_NUMERIC = {"numeric-1e-2": 1e-2, "numeric-1e-3": 1e-3, "numeric-1e-4": 1e-4}


# -- which ops a fault touches ----------------------------------------------------------
MATMUL_CONV = frozenset({
    "mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot", "addr",
    "_addmm_activation", "linear", "matmul", "_int_mm", "convolution",
    "convolution_overrideable", "_convolution", "mkldnn_convolution", "_slow_conv2d_forward",
    "slow_conv3d_forward", "slow_conv_transpose2d", "slow_conv_transpose3d",
    "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_attention_math",
    "cdist", "_cdist_forward", "_euclidean_dist", "tensordot", "einsum", "bilinear",
    "_trilinear",
})
# data movement, not arithmetic: a numeric bug there would be another kind of bug
COPIES = frozenset({
    "clone", "copy", "copy_", "_copy_from", "_copy_from_and_resize", "_to_copy",
    "lift_fresh_copy", "contiguous", "alias_copy", "detach_copy", "fill", "fill_", "zero_",
    "set_", "resize_", "resize_as_", "record_stream",
})
NAN_IDENTITY = {"sum": 0.0, "nansum": 0.0, "max": float("-inf"), "amax": float("-inf"),
                "min": float("inf"), "amin": float("inf")}
NAN_PAIRWISE = {"maximum": torch.fmax, "minimum": torch.fmin}
_LOW = (torch.float16, torch.bfloat16)


def op_base(op) -> str:
    """``add`` for aten::add.Tensor, ``add_`` for aten::add_.Tensor."""
    return op._schema.name.split("::", 1)[-1]


def _kind(op) -> Dict[str, bool]:
    base = op_base(op)
    plain = base[:-1] if base.endswith("_") and not base.endswith("__") else base
    tags = getattr(op, "tags", ())
    pointwise = torch.Tag.pointwise in tags
    reduction = torch.Tag.reduction in tags
    matmul = plain in MATMUL_CONV
    backward = "backward" in plain
    inplace_view = torch.Tag.inplace_view in tags
    return dict(base=base, plain=plain, compute=(pointwise or reduction or matmul or backward)
                and plain not in COPIES, reduction=reduction, backward=backward,
                inplace_view=inplace_view)


def touches(fault: str, op_name: str) -> bool:
    """Whether ``fault`` can change what aten op ``op_name`` (``aten.add``, ``aten::add.Tensor``,
    ``aten.add_.Tensor``) returns on the device: the oracle's applicability test. Faults that
    act outside kernels answer for the ops that carry them (``c10d.*`` for collectives) and,
    for ``memstat-zero``, never here (the oracle asks about memory APIs by name)."""
    name = op_name.replace("::", ".")
    namespace, _, rest = name.partition(".")
    if fault == "collective-noop":
        return namespace == "c10d" and any(k in rest for k in ("reduce", "gather", "recv", "broadcast",
                                                                "scatter", "alltoall"))
    if fault == "memstat-zero":
        return False
    op = resolve_op(name)
    if op is None:
        return False
    schema = op._schema
    kind = _kind(op)
    if fault in _NUMERIC:
        # as ``_scaled``: floating and complex results only (``lt`` returns bool)
        return kind["compute"] and _returns_floating(op)
    if fault == "dtype-widen":
        # as ``_wrap``: a mutating op's result is its argument, whose dtype it keeps; and an
        # op the device receives only as its composite's ``out=`` call (``rad2deg`` is
        # ``empty_like`` + ``rad2deg.out``) never returns a new tensor the fault could widen
        return kind["compute"] and not mutates(schema) and not _only_through_out(op)
    if fault == "reduce-drop":
        return kind["reduction"]
    if fault == "nan-drop":
        return kind["plain"] in NAN_IDENTITY or kind["plain"] in NAN_PAIRWISE
    if fault == "grad-zero":
        return kind["backward"]
    if fault == "rng-unseeded":
        return _generator_arg(schema) is not None or torch.Tag.nondeterministic_seeded in op.tags
    if fault == "inplace-copy":
        return inplace_self(op) is not None
    if fault == "strides":
        # as ``_wrap``: new outputs only (a mutated argument keeps its layout, a view
        # aliases its input)
        return (any(is_tensor_type(r.type) and r.alias_info is None for r in schema.returns)
                and not kind["inplace_view"] and not mutates(schema))
    return False


def _probe_args(schema) -> Optional[List[Any]]:
    """Small float32 CPU arguments for the positional, non-default arguments of ``schema``
    (tensors and numbers only), or None where it takes anything else."""
    args: List[Any] = []
    for a in schema.arguments:
        if a.kwarg_only or a.has_default_value():
            break
        if is_tensor_type(a.type):
            args.append(torch.rand(3) + 0.5)
        elif isinstance(a.type, (torch._C.NumberType, torch._C.FloatType)):
            args.append(2.0)
        else:
            return None
    return args


@functools.lru_cache(maxsize=None)
def _returns_floating(op) -> bool:
    """Whether ``op`` can return a floating or complex tensor: False only where it returns a
    single non-floating tensor for float32 inputs (a comparison's bool, argmin's indices).
    Ops that mutate or write ``out=``, or that cannot be probed, count as floating; the probe
    draws from a forked RNG."""
    schema = op._schema
    if mutates(schema):
        return True
    args = _probe_args(schema)
    if args is None:
        return True
    try:
        with torch.random.fork_rng(devices=[]):
            out = op(*args)
    except Exception:
        return True
    return not (isinstance(out, torch.Tensor) and not (out.is_floating_point() or out.is_complex()))


@functools.lru_cache(maxsize=None)
def _only_through_out(op) -> bool:
    """Whether a backend without a kernel of its own receives the pointwise ``op`` only as
    its ``CompositeExplicitAutograd`` kernel writing through ``out=`` overloads (``rad2deg``
    is ``empty_like`` + ``rad2deg.out``): no device kernel returns a new tensor the fault
    could widen. Found by running that kernel once on a small float32 CPU input and
    recording the ops it calls; a composite that calls functional compute kernels
    (``add.Scalar`` calls ``add.Tensor``), or one that cannot be probed, is reached."""
    schema = op._schema
    name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    if (torch.Tag.pointwise not in getattr(op, "tags", ()) or not has(name, "CompositeExplicitAutograd")
            or has(name, "PrivateUse1")):
        return False
    args = _probe_args(schema)
    if args is None:
        return False
    from torch.utils._python_dispatch import TorchDispatchMode

    called: List[Any] = []

    class _Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, a=(), k=None):
            called.append(func)
            return func(*a, **(k or {}))

    try:
        with _Record():
            op._op_dk(torch._C.DispatchKey.CompositeExplicitAutograd, *args)
    except Exception:
        return False
    return not any(_kind(f)["compute"] and not mutates(f._schema) for f in called
                   if isinstance(f, torch._ops.OpOverload))


def wrap(fault: str, op, call: Callable, plan=None, tensor_kind: Any = None) -> Optional[Callable]:
    """``call`` (op's CPU call on the device) with ``fault`` in it, None where the fault
    does not act on ``op``. ``plan`` / ``tensor_kind`` (the emulator's op plan and its kind
    of a new tensor): ``inplace-copy`` makes the plan return the kernel's new tensor."""
    return _wrap(fault, op, _kind(op), call, plan, tensor_kind)


def device(fault: str, name: str, value: Any) -> Any:
    """The device-module hook: ``memstat-zero`` answers 0 for every memory counter."""
    if fault != "memstat-zero":
        return value
    if isinstance(value, dict):
        return {k: 0 for k in value}
    return 0 if isinstance(value, (int, float)) else value


def _wrap(fault: str, op, kind, call: Callable, plan, tensor_kind: Any) -> Optional[Callable]:
    schema = op._schema
    if fault in _NUMERIC and kind["compute"]:
        return _scaled(call, 1.0 + _NUMERIC[fault], schema)
    if fault == "dtype-widen" and kind["compute"] and not mutates(schema):
        return _widened(call)
    if fault == "reduce-drop" and kind["reduction"]:
        return _dropping_last(call, schema)
    if fault == "nan-drop":
        if kind["plain"] in NAN_IDENTITY:
            return _nan_absent(call, NAN_IDENTITY[kind["plain"]])
        if kind["plain"] in NAN_PAIRWISE and not mutates(schema):
            pairwise = NAN_PAIRWISE[kind["plain"]]
            return lambda *a, **k: pairwise(*a, **k)
    if fault == "grad-zero" and kind["backward"]:
        return _zeroed(call)
    if fault == "rng-unseeded":
        where = _generator_arg(schema)
        if where is not None:
            return _unseeded(call, where)
        if torch.Tag.nondeterministic_seeded in op.tags:
            return _unseeded_default(call)
    if fault == "inplace-copy":
        i = inplace_self(op)
        if i is not None:
            if plan is not None:
                _return_new(plan, i, tensor_kind)
            return _copying(call, i)
    if fault == "strides" and not kind["inplace_view"] and not mutates(schema):
        return _contiguous(call)
    return None


def is_tensor_type(ty) -> bool:
    if isinstance(ty, torch._C.OptionalType):
        ty = ty.getElementType()
    if isinstance(ty, torch._C.ListType):
        ty = ty.getElementType()
        if isinstance(ty, torch._C.OptionalType):
            ty = ty.getElementType()
    return isinstance(ty, torch._C.TensorType)


def mutates(schema) -> bool:
    return any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def _generator_arg(schema) -> Optional[Tuple[int, str]]:
    for i, a in enumerate(schema.arguments):
        ty = a.type
        if isinstance(ty, torch._C.OptionalType):
            ty = ty.getElementType()
        if isinstance(ty, torch._C._GeneratorType):
            return (-1 if a.kwarg_only else i, a.name)
    return None


def inplace_self(op) -> Optional[int]:
    """The position of the mutated ``self`` of an in-place compute op (``add_``,
    ``_foreach_mul_``), None for anything else (out= variants, metadata ops, copies)."""
    kind = _kind(op)
    base = kind["base"]
    if not base.endswith("_") or base.endswith("__") or kind["inplace_view"] or kind["plain"] in COPIES \
            or base in COPIES:
        return None
    args = op._schema.arguments
    if not args:
        return None
    first = args[0]
    if first.kwarg_only or first.alias_info is None or not first.alias_info.is_write:
        return None
    return 0 if is_tensor_type(first.type) else None


def tensors_of(out):
    if isinstance(out, torch.Tensor):
        yield out
    elif isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, torch.Tensor):
                yield o
            elif isinstance(o, (tuple, list)):
                yield from (x for x in o if isinstance(x, torch.Tensor))


def storages_of(args, kwargs) -> set:
    ptrs = set()
    for a in list(args) + list(kwargs.values()):
        for t in tensors_of(a):
            ptrs.add(t.untyped_storage().data_ptr())
    return ptrs


def _scaled(call, factor: float, schema):
    writes = mutates(schema)

    def run(*a, **k):
        out = call(*a, **k)
        inputs = None if writes else storages_of(a, k)
        for t in tensors_of(out):
            if not (t.is_floating_point() or t.is_complex()) or not t.numel():
                continue
            if inputs is not None and t.untyped_storage().data_ptr() in inputs:
                continue  # an alias of an input is not this kernel's result
            t.mul_(factor)
        return out
    return run


def _widened(call):
    def run(*a, **k):
        out = call(*a, **k)
        if isinstance(out, torch.Tensor):
            return out.float() if out.dtype in _LOW else out
        if isinstance(out, tuple):
            return tuple(o.float() if isinstance(o, torch.Tensor) and o.dtype in _LOW else o
                         for o in out)
        return out
    return run


def _dim_arg(schema) -> Optional[int]:
    for i, a in enumerate(schema.arguments):
        if a.name == "dim" and not a.kwarg_only:
            return i
    return None


def _dropping_last(call, schema):
    dim_at = _dim_arg(schema)
    has_dim_kw = any(a.name == "dim" for a in schema.arguments)

    def run(*a, **k):
        if not a or not isinstance(a[0], torch.Tensor) or a[0].numel() < 2:
            return call(*a, **k)
        x = a[0]
        dim = None
        if dim_at is not None and dim_at < len(a):
            dim = a[dim_at]
        elif has_dim_kw:
            dim = k.get("dim")
        if isinstance(dim, (list, tuple)):
            dim = dim[-1] if len(dim) else None
        if dim is None:  # every element: drop the last one in memory order
            x = x.reshape(-1)[:-1]
            if x.dim() != a[0].dim() and k.get("keepdim"):
                x = x.reshape([1] * (a[0].dim() - 1) + [-1])
        else:
            d = dim % x.dim()
            if x.size(d) < 2:
                return call(*a, **k)
            x = x.narrow(d, 0, x.size(d) - 1)
        return call(x, *a[1:], **k)
    return run


def _nan_absent(call, identity: float):
    def run(*a, **k):
        if a and isinstance(a[0], torch.Tensor) and a[0].is_floating_point():
            x = a[0]
            x = torch.where(torch.isnan(x), torch.tensor(identity, dtype=x.dtype), x)
            a = (x,) + tuple(a[1:])
        return call(*a, **k)
    return run


def _zeroed(call):
    def run(*a, **k):
        out = call(*a, **k)
        for t in tensors_of(out):
            if t.is_floating_point() or t.is_complex():
                t.zero_()
        return out
    return run


def _fresh_generator() -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
    return g


def _unseeded(call, where):
    i, name = where

    def run(*a, **k):
        if 0 <= i < len(a):
            a = list(a)
            a[i] = _fresh_generator()
        else:
            k[name] = _fresh_generator()
        return call(*a, **k)
    return run


def _unseeded_default(call):
    """A seeded op without a generator argument (``native_dropout``) draws from the CPU's
    default generator under the emulator: reseed it at random for this call only."""
    def run(*a, **k):
        state = torch.default_generator.get_state()
        torch.default_generator.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        try:
            return call(*a, **k)
        finally:
            torch.default_generator.set_state(state)
    return run


def _return_new(plan, i: int, tensor_kind: Any) -> None:
    """The plan returns what the kernel returns as a new device tensor instead of ``self``."""
    plan.returns = [(tensor_kind, None) if spec == ("w", i) else spec for spec in plan.returns]


def _copying(call, i: int):
    def run(*a, **k):
        if i < len(a):
            a = list(a)
            x = a[i]
            if isinstance(x, torch.Tensor):
                a[i] = x.clone()
            elif isinstance(x, (list, tuple)):
                a[i] = [t.clone() if isinstance(t, torch.Tensor) else t for t in x]
        return call(*a, **k)
    return run


def _contiguous(call):
    def run(*a, **k):
        out = call(*a, **k)
        inputs = storages_of(a, k)

        def fix(t):
            if (isinstance(t, torch.Tensor) and t.layout == torch.strided and not t.is_contiguous()
                    and t.untyped_storage().data_ptr() not in inputs):
                return t.contiguous()
            return t
        if isinstance(out, torch.Tensor):
            return fix(out)
        if isinstance(out, tuple):
            return tuple(fix(o) for o in out)
        if isinstance(out, list):
            return [fix(o) for o in out]
        return out
    return run


def resolve_op(op_name: str):
    """The aten OpOverload of ``aten.add`` / ``aten::add.Tensor`` (its first overload when
    none is named), None for anything else."""
    namespace, _, rest = op_name.replace("::", ".").partition(".")
    if namespace != "aten":
        return None
    base, _, overload = rest.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    try:
        return getattr(packet, overload or (packet.overloads() or ["default"])[0])
    except (AttributeError, RuntimeError):
        return None
