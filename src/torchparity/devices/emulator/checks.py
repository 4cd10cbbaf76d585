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
Where the vendor's device words a refusal its own way (``devices/profiles/chips/messages.yaml``,
with the lines each wording comes from) the emulator raises those words instead: the
fact's own ``message`` (op-plugin's text), op-plugin's "X_npu" form, or an aclnn kernel's
dtype check as torch_npu raises it (``isclose: NPU function error: call aclnnIsClose
failed, error code is 161002 ... Tensor self not implemented for DT_COMPLEX64, ...``);
``argchecks`` does the same for a kernel's argument checks.
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

import re
from typing import Optional

import torch

from ...dtypes import dtype_name
from ..profiles import vendor_messages
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
    """The profile's verdict for one op overload, applied per call to the checked dtype.
    ``wording`` (a template with ``{dtype}`` (c10's name), ``{dt}`` (aclnn's) and the
    template fields) is how the device words a dtype refusal of this op; None: the
    profile's ``errors.dtype`` template."""

    __slots__ = ("op_name", "kernel", "supported", "dtypes", "errors", "allowed", "wording", "refusals")

    def __init__(self, op_name: str, kernel: str, supported: bool, dtypes, errors,
                 wording: Optional[str] = None, refusals: Optional[dict] = None):
        self.op_name = op_name  # "aten::dot"
        self.kernel = kernel  # "dot_npu"
        self.supported = supported
        self.dtypes = frozenset(dtypes) if dtypes is not None else None
        self.errors = errors
        self.allowed: dict = {}  # dtype -> True once checked and allowed (the verdict per call)
        self.wording = wording
        # dtype name -> the vendor's own words for refusing it (the profile's ``refusals``:
        # op-plugin's TORCH_CHECK text, aclnn's check on the output tensor)
        self.refusals = refusals or {}

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
            own = self.refusals.get(dtype_name(dtype))
            if own is not None:
                raise RuntimeError(own)
            template = self.wording or self.errors.dtype
            raise RuntimeError(_fill(template, op=self.op_name, backend="PrivateUse1", kernel=self.kernel,
                                     dtype=_scalar_type_name(dtype), dt=aclnn_dtype_name(dtype_name(dtype))))


def _fill(template: str, **fields) -> str:
    """``template`` with ``fields``; a text with braces of its own (op-plugin's message
    quoting a C++ expression) as written."""
    try:
        return template.format(**fields)
    except (KeyError, IndexError, ValueError):
        return template


def aclnn_dtype_name(name: str) -> str:
    """aclnn's name of a dtype (op::ToString(DataType)): float32 -> DT_FLOAT."""
    return ACLNN_DTYPES.get(name) or "DT_" + name.upper()


ACLNN_DTYPES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_FLOAT16",
                "bfloat16": "DT_BFLOAT16", "bool": "DT_BOOL"}
_ACLNN_KERNEL = re.compile(r"\bkernel (aclnn\w+)\b")


def wording_for(profile, schema_name: str, overload: str, entry) -> Optional[str]:
    """How the device words a dtype refusal of this op (``chips/messages.yaml``, first
    found): the fact's own ``message`` (op-plugin's text), op-plugin's "X_npu" form, aclnn's
    dtype check as torch_npu raises it (the fact cites an aclnn kernel); None: the
    profile's ``errors.dtype`` template."""
    message = getattr(entry, "message", None)  # op-plugin's refusal text, where the fact has one
    if message:
        return message
    words = vendor_messages(getattr(profile, "vendor", None))
    if words is None:
        return None
    namespace, _, base = schema_name.partition("::")
    form = words.kernel_form.get(f"{namespace}.{base}.{overload}") or words.kernel_form.get(f"{namespace}.{base}")
    if form is not None:
        return profile.errors.dtype.replace("{kernel}", form.kernel)
    m = _ACLNN_KERNEL.search(getattr(entry, "source", None) or "")
    if m is None or words.aclnn_failure is None or words.aclnn_dtype_check is None:
        return None
    supported = ",".join(aclnn_dtype_name(d) for d in entry.dtypes or [])
    check = words.aclnn_dtype_check.text.replace("{tensor}", "self").replace("{supported}", supported)
    text = words.aclnn_failure.text.replace("{func}", base).replace("{aclnn}", m.group(1))
    return text.replace("{check}", check.replace("{", "{{").replace("}", "}}").replace("{{dt}}", "{dt}"))


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
    return OpRule(schema_name, kernel, entry.supported, entry.dtypes, profile.errors,
                  wording_for(profile, schema_name, overload, entry) if entry.supported else None,
                  refusal_words(entry))


def refusal_words(entry) -> dict:
    """dtype name -> the text the vendor refuses it with, from the profile's ``refusals``:
    op-plugin's message as written; aclnn's output check with its ``%s`` filled (the
    refused dtype, then the op's allowed list, as aclnn names them), the source after it."""
    words = {}
    allowed = "[" + ",".join(aclnn_dtype_name(d) for d in (entry.dtypes or [])) + "]"
    for refusal in getattr(entry, "refusals", None) or []:
        for dt in refusal.dtypes:
            text = refusal.message
            if "%s" in text:
                text = text.replace("%s", aclnn_dtype_name(dt), 1).replace("%s", allowed, 1)
            words.setdefault(dt, f"{text} (emulated, as {refusal.source})")
    return words
