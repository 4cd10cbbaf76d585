"""Why one of Ascend's tests failed on the emulated device: four classes, each with a reason.

- ``chip_limit``: the profile refused an (op, dtype) and the profile has the fact — the
  refusal names its kernel and the fact's source (kernel file:line, observation);
- ``emulator``: the emulated device differs from the chip the test was written for:
  ``not emulated`` (a feature the emulator lists as not emulated: graph capture, private
  formats, torch_npu's own operators, one device only, ...) or ``defect`` (a wrong value,
  an exception the chip would not raise, a crash);
- ``adapter_gap``: a ``torch_npu`` name the adapter does not provide;
- ``environment``: what this machine lacks and the chip's machine has (a package such as
  torchvision or torchair, a numpy the test was not written for, CANN's files and tools),
  or a file that did not end within the time limit on this machine (slow or hung: the
  harness cannot tell which, so it is no verdict on the emulator either).

The text read is the traceback unittest recorded (or the error the file raised before its
tests ran). Nothing here decides whether the chip supports the API: a chip limit is
reported only where the profile's own fact says so.
"""

from __future__ import annotations

import re
from typing import Dict, Optional

from pydantic import BaseModel

from ..results.error_rules import refused_kernels
from . import GAP, LIMIT, NOT_EMULATED

CLASSES = ("chip_limit", "emulator", "adapter_gap", "environment")

_DTYPE_OF = {"Bool": "bool", "Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32",
             "Long": "int64", "Half": "float16", "BFloat16": "bfloat16", "Float": "float32",
             "Double": "float64", "ComplexHalf": "complex32", "ComplexFloat": "complex64",
             "ComplexDouble": "complex128"}

# packages Ascend's test machines have and this one may not (their absence is the machine's)
_ENV_MODULES = ("torchair", "torchvision", "xmlrunner", "yaml", "pytest", "scipy", "apex",
                "expecttest", "hypothesis", "tensorboard", "transformers", "triton", "psutil")
_ENV_TEXT = (
    (r"numpy", r"(numpy.*(version|deprecated|removed|has no attribute)|np\.\w+ was removed|"
               r"module 'numpy' has no attribute)", "numpy version"),
    (r"", r"(can't allocate memory|DefaultCPUAllocator.*allocate)",
     "host memory (the emulated device's memory is the host's)"),
    (r"", r"(npu-smi|/usr/local/Ascend|ASCEND_HOME_PATH|ASCEND_TOOLKIT_HOME|libascendcl|"
          r"libhccl|msprof|\bset_env\.sh)", "CANN files or tools"),
)
_EMULATOR_OWN = (
    (r"not supported by the emulated device", "not emulated"),
    (r"the emulated device has one device", "not emulated"),
    (r"PrivateUse1HooksInterface", "not emulated"),
)


class Failure(BaseModel):
    """One classified failure."""

    cls: str  # one of CLASSES
    reason: str  # short, countable ("not emulated: graph capture", "missing torch_npu.X")
    detail: str = ""  # the exception line
    fact: Optional[str] = None  # chip_limit: the profile's dtypes for the op
    source: Optional[str] = None  # chip_limit: where the fact comes from


def last_exception_line(text: str) -> str:
    """The exception line of a traceback (the last line that names an exception)."""
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Exit|Interrupt|Warning|Failure)\b", ln) or \
                re.match(r"^[\w.]+: ", ln):
            return ln.strip()[:400]
    return (lines[-1].strip() if lines else "")[:400]


def classify(text: str, profile=None, timed_out: bool = False,
             signal: Optional[int] = None) -> Failure:
    """The class of a failure from its traceback text (``profile``: the profile in force)."""
    line = last_exception_line(text)
    if timed_out:
        # the limit is this machine's (shared CPUs): a slow emulator and a hang look alike
        return Failure(cls="environment", reason="no end within the time limit on this "
                       "machine (slow or hung: undecided)", detail=line)
    if signal is not None:
        return Failure(cls="emulator", reason=f"defect: the process died (signal {signal})",
                       detail=line)
    body = text or ""
    if LIMIT in body:
        feature = next((f for _, f in NOT_EMULATED if f"{LIMIT} ({f})" in body), "?")
        return Failure(cls="emulator", reason=f"not emulated: {feature}", detail=line)
    m = re.search(r"([\w.]+): " + re.escape(GAP), body)
    if m:
        return Failure(cls="adapter_gap", reason=f"missing {m.group(1)}", detail=line)
    chip = _chip_limit(body, profile, line)
    if chip is not None:
        return chip
    for pattern, reason in _EMULATOR_OWN:
        if re.search(pattern, body):
            return Failure(cls="emulator", reason=reason + _feature(line), detail=line)
    m = re.search(r"cannot import name '(\w+)' from '(torch_npu[\w.]*)'", line)
    if m:
        return Failure(cls="adapter_gap", reason=f"missing {m.group(2)}.{m.group(1)}",
                       detail=line)
    m = re.search(r"No module named '([\w.]+)'", line)
    if m:
        top = m.group(1).split(".")[0]
        if top == "torch_npu":
            return Failure(cls="adapter_gap", reason=f"missing {m.group(1)}", detail=line)
        if top in _ENV_MODULES or not top.startswith("torch"):
            return Failure(cls="environment", reason=f"package not installed: {top}",
                           detail=line)
    for scope, pattern, reason in _ENV_TEXT:
        if (not scope or re.search(scope, line)) and re.search(pattern, line):
            return Failure(cls="environment", reason=reason, detail=line)
    kind = line.split(":", 1)[0].rsplit(".", 1)[-1] if ":" in line else (line or "no message")
    return Failure(cls="emulator", reason=f"defect: {kind}", detail=line)


def _feature(line: str) -> str:
    m = re.search(r"(?:Error|Exception): (.+?) (?:is |are )?not supported by the emulated "
                  r"device", line)
    if not m:
        return ""
    what = m.group(1).split('"')[-1]  # an assertRaisesRegex mismatch quotes the message
    return f": {re.sub(r'[(].*', '', what).strip()[:60]}"


def _chip_limit(body: str, profile, line: str) -> Optional[Failure]:
    """A refusal shaped like the profile's messages, confirmed by the profile's own entry."""
    if profile is None:
        return None
    found = refused_kernels(body)
    if found:
        op, dtype = f"aten.{found[0][0]}", _DTYPE_OF.get(found[0][1], found[0][1])
        entry = profile.op_support(op)
        if entry is not None and entry.supported and entry.dtypes is not None \
                and dtype not in entry.dtypes:
            return Failure(cls="chip_limit", reason=f"{op} {dtype}", detail=line,
                           fact=f"{op}: {', '.join(entry.dtypes)}", source=entry.source)
        return None
    m = re.search(r"Could not run '(\w+)::(\w+)' with arguments from the 'PrivateUse1'", body)
    if m:
        op = f"{m.group(1)}.{m.group(2)}"
        entry = profile.op_support(op)
        if entry is not None and not entry.supported:
            return Failure(cls="chip_limit", reason=f"{op} absent", detail=line,
                           fact=f"{op}: not supported", source=entry.source)
    return None


def counts(failures) -> Dict[str, int]:
    out = {c: 0 for c in CLASSES}
    for f in failures:
        out[f.cls] += 1
    return out
