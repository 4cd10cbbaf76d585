"""The device adapter interface: one small class per backend."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Callable, ContextManager, Dict, List, Optional, Set, Tuple

from ..results.models import DeviceInfo
from .paths import same_paths


class DeviceAdapter:
    """How torchparity reaches one backend.

    ``spec`` is what the user typed (``cuda:1``, ``emu:ascend-a2``); ``type`` is the torch
    device type tensors report (``cuda``, ``npu``). ``setup()`` must be called once in every
    process that uses the device, before tensors are made on it.
    """

    type: str = "cpu"
    emulated: bool = False

    def __init__(self, spec: str, index: Optional[int] = None):
        self.spec = spec
        self.index = index

    # -- availability -------------------------------------------------------------
    def unavailable_reason(self) -> Optional[str]:
        """None when usable here, else one line saying why not (and what to do)."""
        return None

    def setup(self) -> None:
        """Import or register the backend in this process. Idempotent."""

    # -- identity -----------------------------------------------------------------
    @property
    def torch_device(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def device_name(self) -> Optional[str]:
        return None

    def info(self) -> DeviceInfo:
        return DeviceInfo(type=self.type, name=self.device_name(), emulated=self.emulated,
                          profile=None, spec=self.spec)

    def backend_versions(self) -> Dict[str, str]:
        return {}

    def environment_extra(self) -> Dict[str, str]:
        return {}

    def injected(self) -> List[str]:
        """What is injected into this device's results (an emulated device's faults and
        noise: ``fault:<name>``, ``numerics:device``); empty for a plain device. Shown in
        the environment and on every result row, so an injected run is never silent."""
        return []

    def clean(self) -> ContextManager[bool]:
        """Context manager in which what is injected (:meth:`injected`) is suspended: the
        clean device a cause is compared with. Yields whether it could (a plain device
        has nothing injected and yields False: no clean run to compare with)."""
        return nullcontext(False)

    # -- execution helpers -------------------------------------------------------------
    def synchronize(self) -> None:
        """Wait for queued device work, so errors surface inside the scenario."""

    def error_patterns(self) -> List[Tuple[str, str, str]]:
        """Backend-specific (regex, status, cause) rows the judge adds to its own table."""
        return []

    def reference(self) -> ContextManager[None]:
        """Context manager around every CPU reference run: the backend's process-wide
        switches (an emulated build without ITT, ...) must not apply to the CPU, and where
        torch picks an implementation per device the CPU takes the device's
        (``paths.same_paths``)."""
        return same_paths(self.torch_device)

    def trace_ops(self) -> ContextManager[Optional[Set[Tuple[str, str]]]]:
        """Context manager collecting the (aten op, dtype) pairs that reach the device
        itself, after decomposition; yields None where the backend cannot tell."""
        return nullcontext(None)

    def unverified_ops(self) -> ContextManager[Optional[Set[Tuple[str, str]]]]:
        """Context manager collecting the (aten op, dtype) calls that ran on a device whose
        capabilities are predicted (an emulated profile) without a fact saying the chip runs
        them; yields None where every call is the device's own answer."""
        return nullcontext(None)

    def worker_env(self) -> Dict[str, str]:
        """Environment variables a worker subprocess needs for this backend."""
        return {}

    # -- torch.distributed -----------------------------------------------------------
    collective: Optional[str] = None  # the backend's collective library, when it has one

    def collective_backend(self) -> Optional[str]:
        """The ``init_process_group`` backend for tensors on this device (``gloo`` for the
        CPU, ``nccl``, ``hccl``, ...), or None where the device has none. Call after
        ``setup()``."""
        return self.collective

    def observe_collectives(self, note: Callable[[str, List[Any]], None]) -> ContextManager[None]:
        """While open, ``note(op, tensors)`` hears each collective this device runs outside
        torch's dispatcher (a collective backend written in Python: its ``c10d`` op never
        reaches a dispatch mode, so a footprint recorder would miss it). A C++ backend
        (gloo, nccl, hccl) dispatches its ``c10d`` ops itself: nothing to add here."""
        return nullcontext(None)
