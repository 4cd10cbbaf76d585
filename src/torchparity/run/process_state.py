"""Process-wide torch settings a case may change, put back after every case.

A worker runs many cases in one process, and a generated test file many tests in one
pytest process. A setting one case changes and leaves changed must not decide the answer
of the case that runs after it: a row's verdict may not depend on which APIs ran before
it in the same worker. The known one: creating any ``torch.compile`` / ``torch._dynamo``
function runs dynamo's one-time patching (``torch._dynamo.eval_frame.TorchPatcher.patch``),
which calls ``Distribution.set_default_validate_args(False)`` for the rest of the process,
so every distribution built later skips its argument checks: those rows then ran no
device op beyond the transfers and read as host-only, where run alone (or before any
compile) they are device-state. The others here are the global switches torch has a
getter and a setter for.

:func:`snapshot` reads them (the worker's state before its first case), :func:`restore`
sets back the ones that differ and names them.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import torch


def _validate_args() -> bool:
    from torch.distributions import Distribution

    return bool(Distribution._validate_args)


def _set_validate_args(value: bool) -> None:
    from torch.distributions import Distribution

    Distribution.set_default_validate_args(value)


def _deterministic() -> Tuple[bool, bool]:
    return (torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())


def _set_deterministic(value: Tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


def _anomaly() -> Tuple[bool, bool]:
    return torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()


def _set_anomaly(value: Tuple[bool, bool]) -> None:
    torch.set_anomaly_enabled(value[0], value[1])


# name -> (read, write)
SETTINGS: Dict[str, Tuple[Callable[[], Any], Callable[[Any], None]]] = {
    "torch.distributions.Distribution default validate_args": (_validate_args, _set_validate_args),
    "torch default dtype": (torch.get_default_dtype, torch.set_default_dtype),
    "torch default device": (torch.get_default_device, torch.set_default_device),
    "torch grad mode": (torch.is_grad_enabled, torch.set_grad_enabled),
    "torch deterministic algorithms": (_deterministic, _set_deterministic),
    "torch autograd anomaly mode": (_anomaly, _set_anomaly),
    "torch float32 matmul precision": (torch.get_float32_matmul_precision,
                                       torch.set_float32_matmul_precision),
}


def snapshot() -> Dict[str, Any]:
    """The current value of every setting (one that cannot be read is left out)."""
    out: Dict[str, Any] = {}
    for name, (read, _) in SETTINGS.items():
        try:
            out[name] = read()
        except Exception:  # a setting this torch lacks is not ours to guard
            continue
    return out


def restore(saved: Dict[str, Any]) -> List[str]:
    """Set back every setting that differs from ``saved``; the names of those set back."""
    changed: List[str] = []
    for name, value in saved.items():
        read, write = SETTINGS[name]
        try:
            if read() != value:
                write(value)
                changed.append(name)
        except Exception:
            continue
    return changed
