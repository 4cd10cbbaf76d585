"""Device adapters: one small class per backend, plus environment capture.

``get_adapter(spec)`` understands ``cpu``, ``cuda[:N]``, ``npu[:N]``, ``xpu[:N]``, ``mps``,
``auto`` (the first available accelerator, else cpu) and ``emu:<profile>`` (the emulated
accelerator, e.g. ``emu:ascend-a2`` or ``emu:path/to/profile.yaml``).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Type

from ..errors import InputError, shown
from .backends import CpuAdapter, CudaAdapter, MpsAdapter, NpuAdapter, XpuAdapter
from .base import DeviceAdapter

REAL: Dict[str, Type[DeviceAdapter]] = {
    "cpu": CpuAdapter,
    "cuda": CudaAdapter,
    "npu": NpuAdapter,
    "xpu": XpuAdapter,
    "mps": MpsAdapter,
}
AUTO_ORDER = ("npu", "cuda", "xpu", "mps")


def _index(spec: str, text: Optional[str]) -> Optional[int]:
    if text is None or text == "":
        return None
    if not text.isdigit():
        raise InputError(f"bad device '{spec}': the index after ':' must be a number")
    return int(text)


def device_specs(device: Optional[str]) -> List[str]:
    """``--device a,b,c``: the specs in order (the first is the report's own device)."""
    specs = [s.strip() for s in (device or "auto").split(",") if s.strip()]
    if not specs:
        raise InputError("--device: no device given")
    if len(set(specs)) != len(specs):
        raise InputError(f"--device {shown(device)}: a device is named twice")
    return specs


def validate_spec(spec: Optional[str]) -> None:
    """Refuse a spec ``get_adapter`` cannot parse, without importing torch (so that a typo
    is one line at once, not after torch loaded); ``emu:`` profiles are checked later."""
    spec = (spec or "auto").strip()
    if spec == "auto" or spec == "emu" or spec.startswith("emu:"):
        return
    kind, _, idx = spec.partition(":")
    if kind not in REAL:
        known = ", ".join(list(REAL) + ["auto", "emu:<profile>"])
        raise InputError(f"unknown device '{shown(spec)}'; use one of: {known}")
    _index(spec, idx)


def get_adapter(spec: str) -> DeviceAdapter:
    """The adapter for a device spec; raises InputError for a spec it cannot parse."""
    spec = (spec or "auto").strip()
    if spec.startswith("emu:") or spec == "emu":
        from .emulated import EmulatedAdapter

        ref = spec[4:] or "ascend-a2"
        return EmulatedAdapter(spec, ref)
    if spec == "auto":
        for name in AUTO_ORDER:
            adapter = REAL[name](name)
            if adapter.unavailable_reason() is None:
                adapter.spec = "auto"
                return adapter
        return CpuAdapter("auto")
    validate_spec(spec)
    kind, _, idx = spec.partition(":")
    return REAL[kind](spec, _index(spec, idx))


def spec_for_device(device: str) -> str:
    """The spec that sets up torch device ``device`` (``"npu:0"``, ``"cuda:1"``, ``"cpu"``)
    in another process as it is set up in this one: the emulated device's ``emu:<profile>``
    where the emulator hosts that device type here, else the device string itself."""
    kind = device.split(":", 1)[0]
    profile = _hosted_profile() if kind != "cpu" else None
    if profile is not None and profile.device_type == kind:
        return f"emu:{profile.path or profile.name}"
    return device


def hosted_spec() -> str:
    """The spec of the emulated device this process hosts (``emu:<profile file>``), else
    ``"cpu"``: what a process started from here sets up to work as this one does."""
    profile = _hosted_profile()
    return f"emu:{profile.path or profile.name}" if profile is not None else "cpu"


def _hosted_profile():
    import sys

    if "torchparity.devices.emulator.registration" not in sys.modules:
        return None
    from .emulator import active_profile

    return active_profile()


def prefork(spec: str) -> None:
    """Warm what processes forked from this one share when they will set up ``spec``: for
    an emulated device, its imports, op lookups and profile (``emulator.prefork``) where
    this torch can host it; nothing for any other device. Sets no device up. Called by a
    zygote before it forks 2-rank worlds."""
    adapter = get_adapter(spec)
    if not adapter.emulated:
        return
    from .emulator import prefork as emulator_prefork
    from .emulator import support_problem

    if support_problem() is None:
        emulator_prefork(adapter.profile)
