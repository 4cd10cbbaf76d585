"""Profile enforcement: refuse an (op, dtype) the profile says the device lacks.

Which op: the aten overload that reaches the device (after CompositeImplicitAutograd ops
decomposed), looked up in the profile by its packet name (``aten.dot`` covers every
overload) or by its full name (``aten.add.Tensor``).

Which dtype: the dtype of the first tensor argument in schema order (the ``self`` of most
ops; for ``out=`` variants the first input, not ``out``). Ops without tensor arguments
(factories such as ``aten.zeros`` or ``aten.arange``) are checked with the dtype of their
result, after the CPU computed it and before the device sees it.

The message has the real backend's shape, from the profile's ``errors`` templates:
``"dot_npu" not implemented for 'Double'`` for a dtype the op lacks, ``Could not run
'aten::dot' with arguments from the 'PrivateUse1' backend...`` for an op it lacks.
Ops the profile does not list are allowed with ``default: allow``; with
``default: deny`` they are refused, except the plumbing every backend has (allocation,
copies, views, storage re-pointing) so that tensors can still reach the device.

Silence is not support: in a *generated* profile (built from kernel sources, docs and
observations) an op without a rule is a missing fact, not a fact. Such an op still runs
(``default: allow``), but each call is recorded while ``unverified_ops()`` is open, so the
case that reached it says "no capability fact: the emulated pass is unverified". Plumbing
is recorded only in a dtype the profile model does not know (float8 storages, uint16).
A hand-written ``default: allow`` (``allow-all``) is its author's claim and records nothing.
"""

from __future__ import annotations

from typing import Optional

import torch

from ...dtypes import dtype_name
from ..profiles.model import DTYPES, NO_FACT_NEEDED

# The names the dtype dispatch macros print (c10::toString(ScalarType)).
SCALAR_TYPE_NAMES = {
    torch.bool: "Bool", torch.uint8: "Byte", torch.int8: "Char", torch.int16: "Short",
    torch.int32: "Int", torch.int64: "Long", torch.float16: "Half", torch.bfloat16: "BFloat16",
    torch.float32: "Float", torch.float64: "Double", torch.complex32: "ComplexHalf",
    torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble",
}

# Never refused by ``default: deny`` (they can still be restricted by an explicit entry).
PLUMBING = frozenset({
    "aten::empty", "aten::empty_strided", "aten::_to_copy", "aten::_copy_from",
    "aten::_copy_from_and_resize", "aten::copy_", "aten::set_", "aten::resize_",
    "aten::view", "aten::as_strided", "aten::_reshape_alias", "aten::_local_scalar_dense",
    "aten::unfold", "aten::view_as_real", "aten::view_as_complex",
})


class OpRule:
    """The profile's verdict for one op overload, applied per call to the checked dtype."""

    __slots__ = ("op_name", "kernel", "supported", "dtypes", "errors", "allowed")

    def __init__(self, op_name: str, kernel: str, supported: bool, dtypes, errors):
        self.op_name = op_name  # "aten::dot"
        self.kernel = kernel  # "dot_npu"
        self.supported = supported
        self.dtypes = frozenset(dtypes) if dtypes is not None else None
        self.errors = errors
        self.allowed: dict = {}  # dtype -> True once checked and allowed (the verdict per call)

    def check(self, dtype: Optional[torch.dtype]) -> None:
        if dtype in self.allowed:
            return
        self._check(dtype)
        self.allowed[dtype] = True

    def _check(self, dtype: Optional[torch.dtype]) -> None:
        if not self.supported:
            raise RuntimeError(self.errors.no_kernel.format(
                op=self.op_name, backend="PrivateUse1", kernel=self.kernel,
                dtype=_scalar_type_name(dtype)))
        if dtype is None or self.dtypes is None:
            return
        if dtype_name(dtype) not in self.dtypes:
            raise RuntimeError(self.errors.dtype.format(
                op=self.op_name, backend="PrivateUse1", kernel=self.kernel,
                dtype=_scalar_type_name(dtype)))


class Unverified:
    """While ``seen`` is a set: the (op packet, dtype) calls a generated profile has no fact for."""

    seen: Optional[set] = None


UNVERIFIED = Unverified()
_KNOWN = frozenset(DTYPES)


class SilentRule(OpRule):
    """No rule in a generated profile: the call runs, and is recorded as unverified."""

    __slots__ = ("packet", "plumbing")

    def __init__(self, op_name: str, kernel: str, errors, plumbing: bool):
        super().__init__(op_name, kernel, True, None, errors)
        self.packet = op_name.replace("::", ".")
        self.plumbing = plumbing

    def check(self, dtype: Optional[torch.dtype]) -> None:
        seen = UNVERIFIED.seen
        if seen is None or dtype is None:
            return
        name = dtype_name(dtype)
        if not self.plumbing or name not in _KNOWN:
            seen.add((self.packet, name))


def _scalar_type_name(dtype: Optional[torch.dtype]) -> str:
    if dtype is None:
        return "?"
    return SCALAR_TYPE_NAMES.get(dtype) or dtype_name(dtype)


def rule_for(profile, op, device_type: str) -> Optional[OpRule]:
    """The rule for an OpOverload, or None when the profile allows it for every dtype."""
    if profile is None:
        return None
    schema_name = op._schema.name  # "aten::dot"
    namespace, _, base = schema_name.partition("::")
    overload = op._overloadname
    full = f"{namespace}.{base}.{overload}"
    entry = profile.op_support(full)
    kernel = f"{base}_{device_type}"
    if entry is None:
        if profile.default == "allow" or schema_name in PLUMBING:
            if profile.generated is None:
                return None  # a hand-written allow is a claim
            return SilentRule(schema_name, kernel, profile.errors,
                              plumbing=schema_name in PLUMBING or schema_name in NO_FACT_NEEDED)
        return OpRule(schema_name, kernel, False, None, profile.errors)
    if entry.supported and entry.dtypes is None:
        return None
    return OpRule(schema_name, kernel, entry.supported, entry.dtypes, profile.errors)
