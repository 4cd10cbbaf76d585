"""``torch_npu.utils.collect_env``: the installed CANN release, read on the emulated device
from the profile (the release its facts are for) instead of CANN's install files."""

import torch


def get_cann_version():
    """The profile's CANN release, or "not known" (torch_npu's answer without install info)."""
    return torch.npu.utils.get_cann_version(module="CANN") or "not known"
