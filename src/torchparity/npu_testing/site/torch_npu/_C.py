"""``torch_npu._C``: the few bindings Ascend's tests call that the emulated device answers."""

import torch

from torchparity import npu_testing


def _npu_get_soc_version():
    """c10_npu::SocVersion of the profile's chip (223 for Ascend910B3)."""
    return torch.npu.utils.get_soc_version()


def _npu_getDeviceCount():
    return torch.npu.device_count()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(npu_testing.missing(f"torch_npu._C.{name}"))
