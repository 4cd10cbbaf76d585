"""The device module that becomes ``torch.<device_type>`` (e.g. ``torch.npu``).

One device (index 0), always available, nothing to synchronise. Random ops on the
device draw from the module's own CPU generator, which ``torch.manual_seed`` seeds
together with the CPU's (through ``manual_seed_all``), so a seeded run produces the same
numbers on the device as on the CPU.
"""

from __future__ import annotations

import types
from typing import List, Optional

import torch

from .legacy_storage import make_classes


class _DeviceContext:
    """``with torch.<device>.device(0):`` — index 0 is the only device."""

    def __init__(self, device):
        self.idx = _index(device)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _index(device, device_type: Optional[str] = None) -> int:
    if device is None:
        return 0
    if isinstance(device, int):
        idx = device
    else:
        dev = device if isinstance(device, torch.device) else torch.device(device)
        idx = 0 if dev.index is None else dev.index
    if idx not in (0, -1):
        raise RuntimeError(f"Invalid device index {idx}: the emulated device has one device, "
                           "index 0")
    return 0


def make_module(device_type: str, profile, generator: torch.Generator) -> types.ModuleType:
    mod = types.ModuleType(f"torch.{device_type}",
                           f"Emulated {device_type} device (torchparity profile "
                           f"'{profile.name}'): a PrivateUse1 backend running on the CPU.")
    name = profile.device_name or f"{profile.name} (emulated)"
    amp_dtypes = [getattr(torch, d) for d in profile.features.autocast_dtypes]

    def is_available() -> bool:
        return True

    def is_initialized() -> bool:
        return True

    def device_count() -> int:
        return 1

    def current_device() -> int:
        return 0

    def set_device(device) -> None:
        _index(device)

    def synchronize(device=None) -> None:
        _index(device)

    def get_device_name(device=None) -> str:
        _index(device)
        return name

    def manual_seed(seed: int) -> None:
        generator.manual_seed(int(seed))

    def seed() -> None:
        generator.seed()

    def initial_seed() -> int:
        return generator.initial_seed()

    def get_rng_state(device=None) -> torch.Tensor:
        _index(device)
        return generator.get_state()

    def set_rng_state(new_state: torch.Tensor, device=None) -> None:
        _index(device)
        generator.set_state(new_state)

    def get_rng_state_all() -> List[torch.Tensor]:
        return [generator.get_state()]

    def set_rng_state_all(states) -> None:
        generator.set_state(states[0])

    def _is_in_bad_fork() -> bool:
        return False

    def get_amp_supported_dtype() -> List[torch.dtype]:
        if not profile.features.autocast:
            raise RuntimeError(f"autocast on '{device_type}' is not supported by the emulated "
                               f"device (profile '{profile.name}')")
        return list(amp_dtypes)

    def is_bf16_supported() -> bool:
        return torch.bfloat16 in amp_dtypes

    funcs = dict(
        is_available=is_available, is_initialized=is_initialized, device_count=device_count,
        current_device=current_device, set_device=set_device, synchronize=synchronize,
        get_device_name=get_device_name, manual_seed=manual_seed, manual_seed_all=manual_seed,
        seed=seed, seed_all=seed, initial_seed=initial_seed, get_rng_state=get_rng_state,
        set_rng_state=set_rng_state, get_rng_state_all=get_rng_state_all,
        set_rng_state_all=set_rng_state_all, _is_in_bad_fork=_is_in_bad_fork,
        get_amp_supported_dtype=get_amp_supported_dtype, is_bf16_supported=is_bf16_supported,
    )
    for key, fn in funcs.items():
        fn.__module__ = mod.__name__
        setattr(mod, key, fn)
    for cls_name, cls in make_classes(mod.__name__).items():
        setattr(mod, cls_name, cls)
    mod.device = _DeviceContext
    mod.emulated = True
    mod.profile_name = profile.name
    return mod
