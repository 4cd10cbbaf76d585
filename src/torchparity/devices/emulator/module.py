"""The device module that becomes ``torch.<device_type>`` (e.g. ``torch.npu``).

One device (index 0), always available, nothing to synchronise. Its members are those of
torch_npu's ``torch.npu`` (``_npu_members``, with its source): a member torch_npu lacks is
missing here too; streams, events and memory counters come from ``runtime``. Random ops on the
device draw from the module's own CPU generator, which ``torch.manual_seed`` seeds
together with the CPU's (through ``manual_seed_all``), so a seeded run produces the same
numbers on the device as on the CPU.
"""

from __future__ import annotations

import os
import re
import types
import uuid
from typing import List, Optional

import torch

from ..profiles import chip_identity
from . import runtime
from ._npu_members import MEMBERS, NPU_AMP, NPU_UTILS
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


def _device_index_of(device_type: str):
    def _get_device_index(device, optional: bool = False, allow_cpu: bool = False) -> int:
        """torch_npu's ``torch.npu._get_device_index``: the index of a device, a device
        string or an int; a device of another type is a ValueError."""
        if isinstance(device, str):
            device = torch.device(device)  # "npu0": RuntimeError "Invalid device string"
        if isinstance(device, torch.device):
            allowed = (device_type, "cpu") if allow_cpu else (device_type,)
            if device.type not in allowed:
                what = f"a {device_type} or cpu" if allow_cpu else f"a {device_type}"
                raise ValueError(f"Expected {what} device, but got: {device}")
        if isinstance(device, _DeviceContext):
            return device.idx
        return torch._utils._get_device_index(device, optional, allow_cpu)
    return _get_device_index


def make_module(device_type: str, profile, generator: torch.Generator) -> types.ModuleType:
    mod = types.ModuleType(f"torch.{device_type}",
                           f"Emulated {device_type} device (torchparity profile "
                           f"'{profile.name}'): a PrivateUse1 backend running on the CPU.")
    identity = chip_identity(profile)
    name = identity.device_name  # as the chip answers: "Ascend910B3", not "... (emulated)"
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
    funcs.update(_extras(device_type, profile, identity))
    funcs.update(runtime.build(device_type, _index))
    funcs.update(make_classes(mod.__name__))
    funcs.update(legacy_tensor_types(device_type))
    funcs["_get_device_index"] = _device_index_of(device_type)
    funcs["device"] = _DeviceContext
    funcs["amp"] = _amp_module(device_type)
    funcs["utils"] = _utils_module(device_type, identity, is_bf16_supported)
    funcs["default_generators"] = (generator,)
    for key, fn in funcs.items():
        if not key.startswith("_") and key not in MEMBERS:
            continue  # torch_npu's device module has no such member: neither has the emulator
        if isinstance(fn, types.FunctionType):
            fn.__module__ = mod.__name__
        setattr(mod, key, fn)
    mod.emulated = True  # the chip API answers as the chip; torchparity's reports say emulated
    mod.profile_name = profile.name
    return mod


# torch_npu's legacy tensor types (torch_npu/npu/__init__.py __all__; made in C++ by
# torch_npu/csrc/utils/TensorType.cpp as torch.cuda's are): class name -> dtype
LEGACY_TENSORS = {
    "BoolTensor": torch.bool, "ByteTensor": torch.uint8, "CharTensor": torch.int8,
    "DoubleTensor": torch.double, "FloatTensor": torch.float, "HalfTensor": torch.half,
    "IntTensor": torch.int, "LongTensor": torch.long, "ShortTensor": torch.short,
    "BFloat16Tensor": torch.bfloat16,
}


class _LegacyTensorType(type):
    """``isinstance(t, torch.npu.FloatTensor)``: a strided tensor of that dtype on the device."""

    def __instancecheck__(cls, obj) -> bool:
        return (isinstance(obj, torch.Tensor) and obj.device.type == cls.device_type
                and obj.dtype == cls.dtype and obj.layout == torch.strided)


def legacy_tensor_types(device_type: str) -> dict:
    """``torch.<device>.FloatTensor`` and the rest: ``FloatTensor(2, 3)`` (uninitialised),
    ``FloatTensor([1, 2])`` (data), ``FloatTensor(torch.Size(...))``, as the legacy
    constructors of torch.cuda answer (through ``Tensor.new`` of an empty device tensor)."""
    out = {}
    for name, dt in LEGACY_TENSORS.items():
        def new(cls, *args, **kwargs):
            return torch.empty(0, dtype=cls.dtype, device=cls.device_type).new(*args, **kwargs)
        out[name] = _LegacyTensorType(name, (), {
            "__new__": new, "dtype": dt, "device_type": device_type,
            "is_cuda": False, "is_sparse": False, "__module__": f"torch.{device_type}"})
    return out


class DeviceProperties:
    """What ``get_device_properties()`` returns: the fields of torch_npu's
    ``_NPUDeviceProperties`` (Ascend/pytorch torch_npu/csrc/npu/Module.cpp, NPUDeviceProp),
    with the chip's name and core counts from the profile's identity; the memory is the
    host's, which is the emulated device's memory."""

    major = minor = is_multi_gpu_board = is_integrated = multi_processor_count = None
    max_threads_per_multi_processor = warp_size = regs_per_multiprocessor = None
    gcnArchName = None
    emulated = True

    def __init__(self, identity, total_memory: int):
        self.name = identity.device_name
        self.total_memory = total_memory
        self.cube_core_num = identity.cube_core_num
        self.vector_core_num = identity.vector_core_num
        self.L2_cache_size = identity.l2_cache_size
        # torch_npu's _CUuuid (16 bytes, 36 characters as text); the emulated device's own,
        # stable per chip name — no real chip's
        self.uuid = uuid.uuid5(uuid.NAMESPACE_URL, f"torchparity-emulated/{identity.device_name}")

    def __repr__(self) -> str:
        mb = 1024 * 1024
        return (f"_NPUDeviceProperties(name='{self.name}', total_memory={self.total_memory // mb}MB, "
                f"cube_core_num={self.cube_core_num}, vector_core_num={self.vector_core_num}, "
                f"L2_cache_size={self.L2_cache_size // mb}MB, uuid={self.uuid})")


class _DeviceOf(_DeviceContext):
    """``with torch.<device>.device_of(t):`` — the device of ``t`` (a no-op on one device)."""

    def __init__(self, obj):
        super().__init__(obj.device if getattr(obj, "device", None) is not None
                         and obj.device.type != "cpu" else None)


def _extras(device_type: str, profile, identity) -> dict:
    def get_device_properties(device=None):
        _index(device)
        return DeviceProperties(identity, runtime.host_memory()[1])

    def get_device_capability(device=None):
        # torch_npu answers None unless TORCH_NPU_DEVICE_CAPABILITY says "major.minor"
        _index(device)
        env = os.environ.get(f"TORCH_{device_type.upper()}_DEVICE_CAPABILITY", "")
        m = re.match(r"^(\d+)\.(\d+)$", env)
        return (int(m.group(1)), int(m.group(2))) if m else None

    def can_device_access_peer(device_id, peer_device_id) -> bool:
        _index(device_id)
        _index(peer_device_id)
        return False  # one device: no peer to access

    def is_autocast_enabled() -> bool:
        return torch.is_autocast_enabled(device_type)

    def set_autocast_enabled(enabled: bool) -> None:
        torch.set_autocast_enabled(device_type, enabled)

    def get_autocast_dtype():
        return torch.get_autocast_dtype(device_type)

    def set_autocast_dtype(dtype) -> None:
        torch.set_autocast_dtype(device_type, dtype)

    return dict(get_device_properties=get_device_properties,
                get_device_capability=get_device_capability,
                can_device_access_peer=can_device_access_peer, device_of=_DeviceOf,
                is_autocast_enabled=is_autocast_enabled, set_autocast_enabled=set_autocast_enabled,
                get_autocast_dtype=get_autocast_dtype, set_autocast_dtype=set_autocast_dtype)


def _utils_module(device_type: str, identity, is_bf16_supported) -> types.ModuleType:
    """``torch.<device>.utils``: the SoC version and CANN release of the profile's chip."""
    utils = types.ModuleType(f"torch.{device_type}.utils", f"Emulated torch.{device_type}.utils")

    def get_soc_version() -> int:
        return identity.soc_version

    def get_cann_version(module="CANN") -> str:
        # the release the profile's facts are for; "" where the profile records none, and
        # for the other modules (driver, ...: no version recorded; torch_npu answers "" for
        # a module it does not know)
        return (identity.cann or "") if module == "CANN" else ""

    def _is_gte_cann_version(version, module="CANN") -> bool:
        def key(v):
            return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.]", str(v)))
        return bool(identity.cann) and key(identity.cann) >= key(version)

    for key, value in dict(get_soc_version=get_soc_version, get_cann_version=get_cann_version,
                           _is_gte_cann_version=_is_gte_cann_version,
                           is_bf16_supported=is_bf16_supported).items():
        if key in NPU_UTILS:
            if isinstance(value, types.FunctionType):
                value.__module__ = utils.__name__
            setattr(utils, key, value)
    return utils


def _amp_module(device_type: str) -> types.ModuleType:
    """``torch.<device>.amp``: autocast, GradScaler, custom_fwd, custom_bwd bound to the device."""
    amp = types.ModuleType(f"torch.{device_type}.amp", f"Emulated torch.{device_type}.amp")

    class autocast(torch.amp.autocast_mode.autocast):
        def __init__(self, enabled=True, dtype=torch.float16, cache_enabled=True):
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(torch.amp.GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            super().__init__(device_type, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    def custom_fwd(fwd=None, *, cast_inputs=None):
        return torch.amp.custom_fwd(fwd, device_type=device_type, cast_inputs=cast_inputs)

    def custom_bwd(bwd=None):
        return torch.amp.custom_bwd(bwd, device_type=device_type)

    for key, value in dict(autocast=autocast, GradScaler=GradScaler, custom_fwd=custom_fwd,
                           custom_bwd=custom_bwd).items():
        if key in NPU_AMP:
            value.__module__ = amp.__name__
            setattr(amp, key, value)
    return amp
