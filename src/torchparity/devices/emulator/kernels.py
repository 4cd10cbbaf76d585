"""Explicit PrivateUse1 kernels: the ops the generic fallback cannot express.

- ``_to_copy``: ``.to(dev, non_blocking=True)`` / ``.cpu()`` would otherwise need a
  pinned-memory hook Python cannot provide; ``_to_copy(cpu_tensor, device=<emu>)`` lands
  here too.
- ``_copy_from`` / ``_copy_from_and_resize``: ``copy_`` between the CPU and the device.
- ``set_`` (all overloads) and ``resize_``: they change which memory a device tensor
  points at, so they work on the device tensor itself rather than on a CPU view.
- ``convolution_overrideable`` / ``convolution_backward_overrideable``: what
  ``aten::convolution`` picks for an out-of-tree device; mapped to the CPU's
  ``convolution`` / ``convolution_backward``.
- the ~440 structured functional ops (CompositeExplicitAutogradNonFunctional kernels):
  bound directly to the fallback, so ``add`` costs one Python call instead of two
  (allocate the output, then run ``add.out``). The same for the few ops with both a CPU
  kernel and a generic composite (``native_layer_norm``...), so the device computes them
  with the CPU kernel, not with a differently rounded decomposition.
- the pure views (``dispatch.META_VIEWS``: as_strided, view, ...) and the factories
  autograd and the composites reach most (``empty_strided``, ``empty.memory_format``):
  bound directly too (``dispatch.view_kernel`` / ``direct_kernel``), every check kept.
"""

from __future__ import annotations

from typing import List

import torch

from . import storage as st
from .dispatch import (
    META_VIEWS,
    STATE,
    check_op,
    direct_kernel,
    plan_for,
    register_plan,
    view_kernel,
)

aten = torch.ops.aten
_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_strided = torch.strided


def _ours(t) -> bool:
    return isinstance(t, torch.Tensor) and not t.is_cpu and t.device.type == STATE.device_type


def _check(op, t) -> None:
    plan = plan_for(op)
    if plan.rule is not None:
        check_op(plan, t.dtype if isinstance(t, torch.Tensor) else None)


def to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
            non_blocking=False, memory_format=None):
    if pin_memory:
        raise st.feature_error("pinned memory (pin_memory=True)")
    if layout is not None and layout is not _strided:
        raise st.feature_error(f"layout {layout} (sparse tensors)")
    _check(aten._to_copy.default, self)
    target = self.device if device is None else torch.device(device)
    src = st.cpu_view(self) if _ours(self) else self
    if _ours(self) and target.type == STATE.device_type:
        # a conversion on the device is the device's computation: through the op's plan,
        # whose call the injected faults may wrap (a transfer to or from the host is not)
        out = plan_for(aten._to_copy.default).call(src, dtype=dtype, memory_format=memory_format)
    else:
        out = aten._to_copy.default(src, dtype=dtype, memory_format=memory_format)
    if target.type == STATE.device_type:
        if target.index not in (None, 0):
            raise RuntimeError(f"Invalid device {target}: the emulated device has one "
                               f"{STATE.device_type} device, index 0")
        return st.wrap(out, torch.device(target.type, 0))
    if target.type == "cpu":
        return out
    return out.to(target)


def copy_from(self, dst, non_blocking=False):
    _check(aten._copy_from.default, self)
    src = st.cpu_view(self) if _ours(self) else self
    target = st.cpu_view(dst) if _ours(dst) else dst
    if _ours(dst) and (_ours(self) or self.dtype != dst.dtype):
        # a copy on the device, or one that converts into a device tensor, is the device's
        # computation: through ``copy_``'s plan, whose call the injected faults may wrap (a
        # plain transfer between the host and the device is not)
        plan_for(aten.copy_.default).call(target, src)
    else:
        target.copy_(src)
    return dst


def copy_from_and_resize(self, dst):
    _check(aten._copy_from_and_resize.default, self)
    if dst.size() != self.size():
        if _ours(dst):
            resize_(dst, self.size())
        else:
            dst.resize_(self.size())
    return copy_from(self, dst)


def set_storage(self, source, storage_offset=0, size=None, stride=None):
    if size is None:
        aten.set_.source_Storage._handle.redispatch_boxed(_CPU_KEYS, self, source)
    else:
        aten.set_.source_Storage_storage_offset._handle.redispatch_boxed(
            _CPU_KEYS, self, source, storage_offset, size, [] if stride is None else stride)
    return self


def set_tensor(self, source):
    if not _ours(source):
        raise RuntimeError(f"Attempted to set the storage of a tensor on device \"{self.device}\" "
                           f"to a storage on different device \"{source.device}\".  This is no "
                           "longer allowed; the devices must match.")
    st.set_metadata(self, source.untyped_storage(), source.storage_offset(), source.size(),
                    source.stride())
    return self


def set_empty(self):
    empty = st.device_storage(torch.UntypedStorage(0), self.device)
    st.set_metadata(self, empty, 0, [0], [1])
    return self


def resize_(self, size, memory_format=None):
    """Grow the host memory when needed (keeping the bytes), then let the CPU kernel set
    the geometry. Growing re-points this tensor at new memory; other views of the old
    memory keep the old bytes (a real device would reallocate in place)."""
    _check(aten.resize_.default, self)
    numel = 1
    for s in size:
        numel *= s
    needed = (self.storage_offset() + numel) * self.element_size() if numel else 0
    storage = self.untyped_storage()
    if needed > storage.nbytes():
        old = st.host_of(storage)
        host = torch.UntypedStorage(needed)
        if old.nbytes():
            dst = st.new_host_tensor(0, torch.uint8).set_(host, 0, [old.nbytes()], [1])
            dst.copy_(st.new_host_tensor(0, torch.uint8).set_(old))
        st.set_metadata(self, st.device_storage(host, self.device), self.storage_offset(),
                        self.size(), self.stride())
    aten.resize_.default._handle.redispatch_boxed(_CPU_KEYS, self, size,
                                                  memory_format=memory_format)
    return self


def has_compatible_shallow_copy_type(self, from_):
    """Whether ``param.data = other`` may swap one tensor's data for the other's in place.

    torch answers it for the dense backends it knows (CPU, CUDA, ...) and leaves a
    PrivateUse1 backend to register its own (torch_npu does): without it, CPU and device
    tensors are incompatible, so ``Module.to(device)`` wraps each moved parameter in a new
    ``Parameter`` and loses its class (an ``UninitializedParameter`` of a lazy module left
    at shape [0]). Dense strided tensors of the CPU and the device are compatible, as CPU
    and CUDA ones are."""
    def dense(t):
        return t.layout == torch.strided and not t.is_quantized and t.device.type in (
            "cpu", STATE.device_type)
    if dense(self) and dense(from_):
        return True
    return self.device.type == from_.device.type and self.layout == from_.layout


def _convolution_backward(grad_output, input, weight, stride, padding, dilation, transposed,
                          output_padding, groups, output_mask):
    bias_sizes = [weight.size(1) * groups] if transposed else [weight.size(0)]
    return aten.convolution_backward.default(grad_output, input, weight, bias_sizes, stride,
                                             padding, dilation, transposed, output_padding,
                                             groups, output_mask)


def record_stream(self, s) -> None:
    """``Tensor.record_stream``: torch_npu's caching allocator notes the stream so a block
    is not reused before that stream's work is done; the emulated device runs every stream's
    work to completion before the call returns and has no cache, so there is nothing to
    note. (Without a kernel, the CPU fallback refuses the op, and a refusal raised on the
    autograd engine's thread, as FSDP's hooks call it, ends the process.)"""
    _check(aten.record_stream.default, self)
    return None


EXPLICIT = {
    "_to_copy": to_copy,
    "_copy_from": copy_from,
    "_copy_from_and_resize": copy_from_and_resize,
    "set_.source_Storage": set_storage,
    "set_.source_Storage_storage_offset": set_storage,
    "set_.source_Tensor": set_tensor,
    "set_": set_empty,
    "resize_": resize_,
    "_has_compatible_shallow_copy_type": has_compatible_shallow_copy_type,
    "record_stream": record_stream,
}


# factories that backward (zeros_like, ones_like) and the composites (zeros, ones, full,
# empty_like, ...) reach on the device: bound directly, their plans take the factory path
FACTORIES = ("aten::empty_strided", "aten::empty.memory_format")


def register(lib: torch.library.Library) -> int:
    """Register the explicit and direct kernels on ``lib`` (aten, IMPL); returns how many."""
    for name, fn in EXPLICIT.items():
        lib.impl(name, fn, "PrivateUse1")
    conv = aten.convolution_overrideable.default
    conv_bwd = aten.convolution_backward_overrideable.default
    register_plan(conv, aten.convolution.default._op)
    register_plan(conv_bwd, _convolution_backward)
    lib.impl("convolution_overrideable", direct_kernel(conv), "PrivateUse1")
    lib.impl("convolution_backward_overrideable", direct_kernel(conv_bwd), "PrivateUse1")
    count = len(EXPLICIT) + 2
    for name in sorted(META_VIEWS):
        op = _overload(name)
        if op is not None and not torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"):
            lib.impl(name.split("::", 1)[1], view_kernel(op), "PrivateUse1")
            count += 1
    for name in FACTORIES:
        op = _overload(name)
        if op is not None and not torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"):
            lib.impl(name.split("::", 1)[1], direct_kernel(op), "PrivateUse1")
            count += 1
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    structured = [n for n in _STRUCTURED if not has(n, "PrivateUse1")] if _STRUCTURED else _structured_ops()
    for name in structured:
        op = _overload(name)
        if op is None:
            continue
        lib.impl(name.split("::", 1)[1], direct_kernel(op), "PrivateUse1")
        count += 1
    return count


def resolve() -> int:
    """Look up, without registering anything, every aten overload :func:`register` binds
    (torch builds an op's packet at its first lookup, ~2 ms each, then keeps it on
    ``torch.ops.aten``), and the structured ops' names: done once in a process that
    forks ranks, each rank's registration finds them. Returns how many were found."""
    _STRUCTURED[:] = _structured_ops()
    names = sorted(META_VIEWS) + list(FACTORIES) + _STRUCTURED
    return sum(_overload(name) is not None for name in names)


# the structured ops as :func:`resolve` found them before any PrivateUse1 kernel existed
# (the walk over every op name is most of a registration's time): :func:`register` leaves
# out those that have one by then, as a walk of its own would
_STRUCTURED: List[str] = []


def _structured_ops() -> List[str]:
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    names = []
    for name in torch._C._dispatch_get_all_op_names():
        if not name.startswith("aten::"):
            continue
        if not has(name, "CPU") or has(name, "PrivateUse1"):
            continue
        # structured ops, and the few whose CPU kernel PrivateUse1 would otherwise swap for
        # a generic composite (native_layer_norm, native_group_norm, addr, ...)
        if (has(name, "CompositeExplicitAutogradNonFunctional")
                or has(name, "CompositeExplicitAutograd")):
            names.append(name)
    return names


def _overload(name: str):
    base, _, overload = name[len("aten::"):].partition(".")
    try:
        return getattr(getattr(aten, base), overload or "default")
    except (AttributeError, RuntimeError):
        return None
