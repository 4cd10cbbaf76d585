"""Vendor-registered composites: an op the vendor registers a kernel for is judged by its
own rule, even where aten implements it as a composite.

ATen runs a composite op (``CompositeExplicitAutograd`` such as ``logsumexp``, or
``CompositeImplicitAutograd``) for a backend without its own kernel, so the emulated
device only ever sees the ops the composite is made of (``amax``, ``exp``, ``sum``,
``log``...) and the profile's rule for the composite itself is never consulted:
``torch.logsumexp`` in complex64 would pass on ``ascend-a2`` although the vendor's own
``aten.logsumexp`` kernel refuses complex64. A real torch_npu registers that op itself
(``devices.registered_ops``, from Ascend/op-plugin), so the call reaches the vendor's
kernel and its dtype rule.

For every overload in the vendor's list that has no PrivateUse1 kernel of the emulator and
an explicit profile rule, :func:`register` adds a kernel that applies the rule (the dtype
of the first tensor argument, as ``checks`` does) and then runs aten's composite, so the
values the device computes stay those of the composite's ops. ``CompositeExplicitAutograd``
ops get a PrivateUse1 kernel; ``CompositeImplicitAutograd`` ones an AutogradPrivateUse1
kernel that decomposes after the check (autograd then flows through the parts).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, Optional, Tuple

import torch

from .. import refusals
from ..registered_ops import registered_ops
from .checks import OpRule, SilentRule, rule_for
from .dispatch import direct_kernel

_HAS = torch._C._dispatch_has_kernel_for_dispatch_key
EXPLICIT = torch._C.DispatchKey.CompositeExplicitAutograd


def _first_dtype(args, kwargs) -> Optional[torch.dtype]:
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor):
            return a.dtype
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, torch.Tensor):
                    return x.dtype
    return None


def _overload(name: str):
    """``aten.logsumexp.default`` -> the OpOverload (None when this torch lacks it)."""
    _, base, overload = name.split(".", 2)
    try:
        return getattr(getattr(torch.ops.aten, base), overload)
    except (AttributeError, RuntimeError):
        return None


def candidates(profile, device_type: str) -> Iterator[Tuple[Any, Optional[OpRule], str]]:
    """(op, rule, dispatch key to register at) for each vendor-registered composite with
    an explicit rule in ``profile``; (op, None, "fused") for each with a CPU kernel of its
    own and a ``CompositeImplicitAutograd`` one for other backends, which the device runs as
    its own kernel."""
    reg = registered_ops(device_type)
    if reg is None or profile is None:
        return
    for name in sorted(reg.overloads):
        op = _overload(name)
        if op is None:
            continue
        schema = op._schema.name + ("" if op._overloadname == "default" else f".{op._overloadname}")
        if not _HAS(schema, "PrivateUse1") and _HAS(schema, "CPU") and _HAS(schema, "CompositeImplicitAutograd"):
            # a backend kernel on the CPU and a composite for every other backend
            # (``mish_backward``): without a kernel of its own the device would run the
            # composite's parts in the input dtype, where the vendor runs its own fused kernel
            yield op, None, "fused"
            continue
        if _HAS(schema, "PrivateUse1") or _HAS(schema, "CPU"):
            continue  # the emulator (or aten's backend kernel path) already reaches the rule
        rule = rule_for(profile, op, device_type)
        if rule is None or isinstance(rule, SilentRule):
            continue  # allowed in every dtype, or no fact: nothing to refuse
        if _HAS(schema, "CompositeExplicitAutograd"):
            yield op, rule, "PrivateUse1"
        elif _HAS(schema, "CompositeImplicitAutograd"):
            yield op, rule, "AutogradPrivateUse1"


def _checked(op, rule: OpRule, args, kwargs) -> None:
    dtype = _first_dtype(args, kwargs)
    try:
        rule.check(dtype)
    except Exception:
        refusals.refused(str(op), dtype)  # above the dispatch modes: tell the recorder
        raise


def kernel(op, rule: OpRule, key: str) -> Callable:
    if key == "PrivateUse1":
        def run(*args, **kwargs):
            _checked(op, rule, args, kwargs)
            return op._op_dk(EXPLICIT, *args, **kwargs)
    else:
        def run(*args, **kwargs):
            _checked(op, rule, args, kwargs)
            return op.decompose(*args, **kwargs)
    run.__name__ = f"emulated_registered_{op._schema.name.replace('::', '_')}"
    return run


def register(lib, profile, device_type: str) -> List[str]:
    """Register the checking kernels on ``lib`` (an ``aten`` IMPL library); the names."""
    done = []
    for op, rule, key in candidates(profile, device_type):
        overload = op._schema.name.split("::", 1)[1]
        if op._overloadname != "default":
            overload += f".{op._overloadname}"
        if key == "fused":  # the op's CPU kernel, as every emulated op (its rule checked there)
            lib.impl(overload, direct_kernel(op), "PrivateUse1")
        else:
            lib.impl(overload, kernel(op, rule, key), key)
        done.append(f"{op._schema.name}.{op._overloadname}")
    return done
