"""``torch_npu.utils``: the CANN version query SkipIfNotGteCANNVersion reads."""

import torch

from torchparity import npu_testing


def get_cann_version(module="CANN"):
    """The CANN release the profile's facts are for ("" for other modules, or unrecorded)."""
    return torch.npu.utils.get_cann_version(module=module)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(npu_testing.missing(f"torch_npu.utils.{name}"))
