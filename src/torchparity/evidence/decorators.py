"""What a test decorator means for a run on the backend's device (PrivateUse1).

Decided from the decorator's name and literal arguments only (the census never imports
test files). Three effects:

- ``skipped``: the test never runs there (``@onlyCUDA``, ``@unittest.skip``, ...);
- ``conditional``: a runtime condition decides (``@unittest.skipIf(cond, why)``,
  ``@skipIfTorchDynamo``, ``@slowTest``, ...) - the condition text is kept;
- ``None``: the decorator does not restrict the backend (``@skipCUDAIf``, ``@onlyPRIVATEUSE1``,
  ``@dtypes``, ``@parametrize``, ...).

``RULES`` is the table; ``classify`` applies it, first match wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

SKIPPED = "skipped"
CONDITIONAL = "conditional"

# Device tokens in decorator names (onlyCUDA, skipXPUIf, expectedFailureMPS, ...) that
# name a device other than the backend.
OTHER_DEVICES = ("CPU", "CUDA", "XPU", "MPS", "HPU", "META", "XLA", "LAZY", "GPU", "MTIA",
                 "ROCM", "CUDNN", "MIOPEN", "MKL", "MKLDNN", "CUSOLVER", "MAGMA", "CUSPARSE",
                 "HIPSPARSE", "SPARSE", "FBCODE", "SANDCASTLE", "WINDOWS", "MACOS", "ARM64",
                 "S390X", "PPC64LE", "ASAN", "TSAN", "UBSAN")
# Tokens that mean "the backend is included".
BACKEND_TOKENS = ("PRIVATEUSE1", "NATIVEDEVICETYPES", "ACCELERATOR", "NATIVE")


@dataclass(frozen=True)
class Decorator:
    name: str  # last part of the dotted name ("skipIf" for unittest.skipIf)
    dotted: str  # as written, aliases expanded when known
    args: Tuple[str, ...] = ()  # positional arguments as source text
    kwargs: Tuple[Tuple[str, str], ...] = ()  # keyword arguments as source text
    literal_args: Tuple[object, ...] = ()  # positional arguments that are literals, else None

    def kw(self, key: str) -> Optional[str]:
        for k, v in self.kwargs:
            if k == key:
                return v
        return None


def _strip_quotes(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _reason(d: Decorator, index: int, key: str = "reason") -> str:
    value = d.kw(key) or d.kw("msg") or (d.args[index] if len(d.args) > index else "")
    return _strip_quotes(value) if value else ""


def _backend_in(value: object, backend: str) -> Optional[bool]:
    names = {"privateuse1", backend.lower()}
    if isinstance(value, str):
        return any(n in value.lower() for n in names)
    if isinstance(value, (list, tuple, set)):
        return any(isinstance(v, str) and v.lower() in names for v in value)
    return None


def _unittest_skip(d: Decorator, backend: str) -> Tuple[str, str]:
    return SKIPPED, f"skip: {_reason(d, 0)}".rstrip(": ")


def _skip_if(d: Decorator, backend: str) -> Tuple[str, str]:
    cond = d.args[0] if d.args else (d.kw("condition") or d.kw("dep") or "?")
    reason = _reason(d, 1)
    device = d.kw("device_type")
    if device and _strip_quotes(device).lower() not in ("privateuse1", backend.lower()):
        return "", ""
    if cond.strip() == "True":
        return SKIPPED, f"{d.name}(True): {reason}"
    return CONDITIONAL, f"{d.name}({cond}): {reason}".rstrip(": ")


def _dynamo(d: Decorator, backend: str) -> Tuple[str, str]:
    reason = _reason(d, 0) or "doesn't work with the compiler stack"
    return CONDITIONAL, f"{d.name}: {reason} (only when testing under {d.name[6:]})"


def _only_on(d: Decorator, backend: str) -> Tuple[str, str]:
    value = d.literal_args[0] if d.literal_args else None
    inside = _backend_in(value, backend)
    if inside is None:
        return CONDITIONAL, f"onlyOn({d.args[0] if d.args else '?'})"
    return ("", "") if inside else (SKIPPED, f"onlyOn({d.args[0]}): runs only there")


def _only_named(d: Decorator, backend: str) -> Tuple[str, str]:
    body = d.name[len("only"):]
    tokens = [t.upper() for t in re.split(r"And", body) if t]
    if any(t in BACKEND_TOKENS or t == backend.upper() for t in tokens):
        return "", ""
    return SKIPPED, f"{d.name}: runs only on {', '.join(t.lower() for t in tokens)}"


def _device_prefixed(d: Decorator, backend: str) -> Tuple[str, str]:
    """skipCUDAIf..., skipXPU, expectedFailureMPS: about another device, not the backend."""
    return "", ""


def _skip_backend_if(d: Decorator, backend: str) -> Tuple[str, str]:
    if d.name.endswith("If"):
        return _skip_if(Decorator(d.name, d.dotted, d.args, d.kwargs), backend)
    return SKIPPED, f"{d.name}: {_reason(d, 0) or 'skipped on the backend'}"


def _needs(what: str) -> Callable[[Decorator, str], Tuple[str, str]]:
    def rule(d: Decorator, backend: str) -> Tuple[str, str]:
        args = ", ".join(d.args + tuple(f"{k}={v}" for k, v in d.kwargs))
        shown = f"{d.name}({args})" if args else d.name
        return CONDITIONAL, f"{shown}: {what}"
    return rule


def _xfail(d: Decorator, backend: str) -> Tuple[str, str]:
    if d.name != "expectedFailure":
        return "", ""  # xfailIfTorchDynamo, expectedFailureCUDA ...: not about the backend
    return CONDITIONAL, "expectedFailure: runs, failure expected"


def _other_device_name(name: str) -> bool:
    upper = name.upper()
    for prefix in ("SKIPIF", "SKIP", "EXPECTEDFAILURE", "XFAILIF", "XFAIL"):
        if upper.startswith(prefix):
            rest = upper[len(prefix):]
            return any(rest.startswith(dev) for dev in OTHER_DEVICES)
    return False


# (pattern on the decorator's last name, rule). First match wins; a rule returning ("", "")
# means "does not restrict the backend".
RULES: List[Tuple[str, Callable[[Decorator, str], Tuple[str, str]]]] = [
    (r"skip", _unittest_skip),  # unittest.skip("why")
    (r"skipIf|skipUnless", _skip_if),  # unittest / common_device_type skipIf(cond, why)
    (r"skipIfTorch(Dynamo|Inductor)|skipIfCrossRef|skipIfLegacyJitExecutor", _dynamo),
    (r"onlyOn", _only_on),
    (r"only[A-Z]\w*", _only_named),  # onlyCUDA, onlyPRIVATEUSE1, onlyNativeDeviceTypes ...
    (r"skipPRIVATEUSE1(If)?", _skip_backend_if),
    (r"slowTest", _needs("runs only with PYTORCH_TEST_WITH_SLOW=1")),
    (r"deviceCountAtLeast", _needs("needs that many devices")),
    (r"largeTensorTest", _needs("needs that much device memory")),
    (r"SupportedDevices", _needs("runs only on the chips listed")),
    (r"skipIfUnsupportMultiNPU", _needs("needs several NPUs")),
    (r"expectedFailure|xfail|xfailIf\w*", _xfail),
    (r"(skip|skipIf|expectedFailure|xfail|xfailIf)[A-Z]\w*", None),  # resolved below
]
_COMPILED = [(re.compile(f"(?:{p})$"), rule) for p, rule in RULES]


def classify(d: Decorator, backend: str = "npu") -> Optional[Tuple[str, str]]:
    """(effect, text) for a decorator that may skip the test on the backend, else None."""
    for pattern, rule in _COMPILED:
        if not pattern.match(d.name):
            continue
        if rule is None:
            if _other_device_name(d.name):
                return None  # skipCUDAIfNoMagma, expectedFailureMPS, skipIfRocm ...
            if d.name.upper().startswith(("SKIP", "XFAIL")):
                # skipIfNoLapack, skipIfNoSciPy, skipIfNotRegistered ...: an environment check
                return _needs("skips when the build or environment lacks it")(d, backend)
            return None
        effect, text = rule(d, backend)
        return (effect, text) if effect else None
    return None


def combine(effects: Sequence[Tuple[str, str]]) -> Tuple[Optional[str], Optional[str]]:
    """The strongest effect of several decorators, and their texts joined."""
    if not effects:
        return None, None
    kinds = {e for e, _ in effects}
    effect = SKIPPED if SKIPPED in kinds else CONDITIONAL
    return effect, "; ".join(t for _, t in effects)
