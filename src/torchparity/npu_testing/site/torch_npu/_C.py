"""``torch_npu._C``: the few bindings Ascend's tests call that the emulated device answers."""

import torch

from torchparity import npu_testing


def _npu_get_soc_version():
    """c10_npu::SocVersion of the profile's chip (223 for Ascend910B3)."""
    return torch.npu.utils.get_soc_version()


def _npu_getDeviceCount():
    return torch.npu.device_count()


def _empty_strided_npu(*args):
    """(sizes, strides, dtype) -> an uninitialised strided tensor on the current device
    (torch_npu's inductor fast path: exactly three positional arguments)."""
    if len(args) != 3:
        raise RuntimeError("_empty_strided_npu expects exactly 3 args: (sizes, strides, dtype)")
    sizes, strides, dtype = args
    if not isinstance(dtype, torch.dtype):
        raise RuntimeError("_empty_strided_npu: arg 3 must be a torch.dtype")
    return torch.empty_strided(tuple(sizes), tuple(strides), dtype=dtype,
                               device=f"npu:{torch.npu.current_device()}")


def _weak_ref_tensor(t):
    """A tensor over ``t``'s storage with its sizes, strides and offset (torch_npu builds it
    from the storage's pointer, holding no reference of its own; here it shares the
    storage). Storage formats are not emulated, so there is no format to carry over."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"_weak_ref_tensor(): argument 't' must be Tensor, not {type(t).__name__}")
    out = torch.empty(0, dtype=t.dtype, device=t.device)
    return out.set_(t.untyped_storage(), t.storage_offset(), t.size(), t.stride())


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(npu_testing.missing(f"torch_npu._C.{name}"))
