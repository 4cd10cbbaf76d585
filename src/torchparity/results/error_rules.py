"""Which exception messages mean "the device refuses", and what kind of refusal.

The table below is the whole rule set: ordered (regex, status, cause) rows, first match
wins. Backends add rows through ``DeviceAdapter.error_patterns()``. Every row must be
reachable (a test feeds each one an example message).

It lives beside the result vocabulary (``Status``, ``Cause``) so that every layer reads
one table: the runner and judge classify a device run's exception with it, and a
scenario that runs scaffolding around its API (an optimizer step after a DDP backward)
asks it whether the device refused that scaffolding (:func:`is_refusal`), instead of a
second pattern list of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from .models import Cause, Status


@dataclass(frozen=True)
class ErrorRule:
    pattern: str
    status: Status
    cause: Cause
    example: str  # a real message of that shape; tests check the rule matches it


ERROR_RULES: Tuple[ErrorRule, ...] = (
    # a world whose rank was killed from outside (SIGKILL / SIGTERM: the machine's load, an
    # operator, the harness's own limit): not the device's answer
    ErrorRule(r"^(\w+: )+rank \d+ exited with -(9|15) without a result",
              Status.ERROR, Cause.HARNESS_ERROR,
              "RuntimeError: rank 1 exited with -9 without a result: "),
    # a rank process of a distributed world died (signal) before giving its result: the
    # device run crashed, whatever its last stderr lines say (checked first for that reason)
    ErrorRule(r"^(\w+: )+rank \d+ exited with -\d+ without a result",
              Status.CRASH, Cause.CRASH,
              "rank 0 exited with -6 without a result: terminate called without an active exception"),
    # a build without a feature (ITT, distributed, LAPACK, ...)
    ErrorRule(r"compiled without|was not compiled with|not compiled with|built without|"
              r"compiled with \w+ disabled|without \w+ support",
              Status.UNSUPPORTED, Cause.BUILD_CONFIG,
              "Can't use ITT profiler - PyTorch was compiled without ITT"),
    # the dtype-dispatch macros of every backend, torch_npu's "dot_npu" included
    ErrorRule(r"not implemented for '(\w+)'", Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "\"dot_npu\" not implemented for 'Double'"),
    # aclnn's dtype check (OP_CHECK_DTYPE_NOT_SUPPORT, hicann/ops-math
    # common/inc/external/aclnn_kernels/common/op_error_check.h:108-112), as torch_npu
    # raises it ("call aclnnX failed, error code is 161002 ... EZ1001: ...")
    ErrorRule(r"not implemented for DT_\w+|should be in dtype support list",
              Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "AclNN_Parameter_Error(EZ1001): Tensor self not implemented for DT_COMPLEX64, "
              "should be in dtype support list [DT_FLOAT16,DT_FLOAT,DT_BFLOAT16]."),
    ErrorRule(r"(?i)(dtype|data type)\b.{0,80}\b(is )?not supported|not support(ed)? (the )?dtype|"
              r"unsupported (data ?type|dtype)|doesn't support float64|does not support float64|"
              r"DT_DOUBLE",
              Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "EZ1001: The dtype of self is not supported: DT_DOUBLE"),
    # op-plugin's own TORCH_CHECK on the input dtype (Ascend/op-plugin
    # op_plugin/ops/opapi/UpsampleBilinear2dKernelNpuOpApi.cpp:34 and kin)
    ErrorRule(r"not support torch\.(fp64|fp32|fp16|bf16|float64|float16|bfloat16|int\d+|complex\d*)\b",
              Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "upsample_binlinear_2d not support torch.fp64 dtypes"),
    ErrorRule(r"Cannot convert a MPS Tensor to float64", Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64"),
    # no kernel for the op on that backend at all
    ErrorRule(r"Could not run '[\w:.]+' with arguments from the '\w+' backend",
              Status.UNSUPPORTED, Cause.NO_KERNEL,
              "Could not run 'aten::_foo' with arguments from the 'PrivateUse1' backend."),
    ErrorRule(r"is not currently implemented for the \w+ device|no kernel image is available",
              Status.UNSUPPORTED, Cause.NO_KERNEL,
              "The operator 'aten::foo' is not currently implemented for the MPS device."),
    # a capability rule of the chip's profile (autocast switched off for the chip): the
    # emulator names the profile that refuses — the chip's answer, a prediction
    ErrorRule(r"not supported by the emulated device \(profile '[^']+'\)",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "autocast on 'npu' is not supported by the emulated device (profile 'ascend-a2')"),
    # something the emulator itself cannot do (generators, pinned memory, sparse and nested
    # layouts, storage resizing, IPC): a gap of the emulator, not a rule of the chip's
    # profile — not an answer; needs hardware to decide. The emulated adapter's own
    # patterns (tried first) keep the profile's capability rules apart (feature_limit).
    ErrorRule(r"(?i)not supported (by|on) the emulated device|cannot be emulated",
              Status.SKIP, Cause.EMULATOR_LIMIT,
              "torch.Generator(device='npu') is not supported by the emulated device"),
    # the device module (torch.npu, ...) has no counterpart of a torch.cuda member
    ErrorRule(r"the device module [\w.]+ has no member",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "the device module torch.npu has no member memory_usage (counterpart of "
              "torch.cuda.memory_usage): not supported by this device's module"),
    # torch's own refusal for a backend whose hooks lack a runtime feature
    ErrorRule(r"Backend doesn't support [\w ]+\.",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "Backend doesn't support getting device capabilities."),
    # a torch.distributed feature only one collective backend has (monitored_barrier: gloo)
    ErrorRule(r"is only implemented for (the )?\w+ backend",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "monitored_barrier is only implemented for GLOO backend."),
)


# a device kernel's dtype refusal in the two shapes the NPU words it: c10's dispatch macros
# and op-plugin's own checks ('"dot_npu" not implemented for 'Double''), and an aclnn
# kernel's dtype check as torch_npu raises it ('dot: NPU function error: call aclnnDot failed,
# ... Tensor self not implemented for DT_DOUBLE, ...', devices/profiles/chips/messages.yaml)
_REFUSED_C10 = re.compile(r'"(\w+?)(?:_npu|_cuda|_cpu|_xpu|_mps)?" not implemented for \'(\w+)\'')
_REFUSED_ACLNN = re.compile(r"(\w+): NPU function error: call (aclnn\w+) failed\b.*?not implemented for (DT_\w+)", re.S)
# aclnn's dtype names -> c10's scalar type names (the names the c10 shape prints)
ACLNN_SCALAR_TYPES = {"DT_FLOAT": "Float", "DT_DOUBLE": "Double", "DT_FLOAT16": "Half",
                      "DT_BFLOAT16": "BFloat16", "DT_COMPLEX32": "ComplexHalf", "DT_COMPLEX64": "ComplexFloat",
                      "DT_COMPLEX128": "ComplexDouble", "DT_INT64": "Long", "DT_INT32": "Int",
                      "DT_INT16": "Short", "DT_INT8": "Char", "DT_UINT8": "Byte", "DT_BOOL": "Bool",
                      "DT_UINT16": "UInt16", "DT_UINT32": "UInt32", "DT_UINT64": "UInt64"}


def refused_kernels(text: str) -> List[Tuple[str, str, Optional[str]]]:
    """(op, c10 scalar type name, aclnn kernel or None) of each dtype refusal in ``text``:
    ``"dot_npu" not implemented for 'Double'`` -> ("dot", "Double", None); torch_npu's
    ``dot: NPU function error: call aclnnDot failed ... not implemented for DT_DOUBLE`` ->
    ("dot", "Double", "aclnnDot")."""
    found = [(m.start(), (m.group(1), m.group(2), None)) for m in _REFUSED_C10.finditer(text)]
    found += [(m.start(), (m.group(1), ACLNN_SCALAR_TYPES.get(m.group(3), m.group(3)), m.group(2)))
              for m in _REFUSED_ACLNN.finditer(text)]
    return [f for _, f in sorted(found, key=lambda x: x[0])]


def classify_exception(exc_type: str, message: str,
                       extra_rules: Sequence[Tuple[str, str, str]] = ()) -> Optional[Tuple[Status, Cause]]:
    """(status, cause) for a device exception that means "unsupported", else None."""
    rules: List[ErrorRule] = [ErrorRule(p, Status(s), Cause(c), "") for p, s, c in extra_rules]
    rules.extend(ERROR_RULES)
    text = f"{exc_type}: {message}"
    for rule in rules:
        if re.search(rule.pattern, text):
            return rule.status, rule.cause
    return None


def exception_chain(exc: BaseException, limit: int = 8) -> List[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling (``__cause__``, else
    ``__context__`` unless suppressed), outermost first. ``assert_close``'s "Comparing ...
    resulted in the unexpected exception above" wraps the device's own error this way. The
    chain stops at a test's failure (an ``AssertionError``): what it was raised while
    handling is what the test judged (``assertRaisesRegex`` whose message did not match)."""
    out: List[BaseException] = []
    seen = set()
    while exc is not None and id(exc) not in seen and len(out) < limit:
        out.append(exc)
        seen.add(id(exc))
        if isinstance(exc, AssertionError):
            break
        exc = exc.__cause__ if exc.__cause__ is not None else (
            None if exc.__suppress_context__ else exc.__context__)
    return out


def classify_chain(chain: Sequence[Tuple[str, str]], extra_rules: Sequence[Tuple[str, str, str]] = ()
                   ) -> Tuple[Optional[Tuple[Status, Cause]], int]:
    """(status, cause) of a chain of (type name, message), outermost first, and the index of
    the exception that decided it: the innermost one a rule classifies (the device's
    refusal under a wrapper), else the outermost's answer (None when no rule matches)."""
    for i in range(len(chain) - 1, 0, -1):
        found = classify_exception(chain[i][0], chain[i][1], extra_rules)
        if found is not None:
            return found, i
    if not chain:
        return None, 0
    return classify_exception(chain[0][0], chain[0][1], extra_rules), 0


def classify_exception_chain(exc: BaseException, extra_rules: Sequence[Tuple[str, str, str]] = ()
                             ) -> Tuple[Optional[Tuple[Status, Cause]], BaseException]:
    """:func:`classify_chain` of ``exc``'s :func:`exception_chain`: (status, cause) or None,
    and the exception that decided it (``exc`` itself when nothing inside it classifies)."""
    chain = exception_chain(exc)
    found, i = classify_chain([(type(e).__name__, str(e)) for e in chain], extra_rules)
    return found, chain[i]


def is_refusal(exc: BaseException, extra_rules: Sequence[Tuple[str, str, str]] = ()) -> bool:
    """Whether ``exc`` is a device's refusal (``unsupported``: a dtype, kernel, build or
    feature limit), as the runner would classify it; an emulator gap or any other error
    is not."""
    found = classify_exception(type(exc).__name__, str(exc), extra_rules)
    return found is not None and found[0] is Status.UNSUPPORTED
