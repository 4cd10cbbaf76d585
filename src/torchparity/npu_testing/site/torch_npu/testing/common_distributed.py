"""``torch_npu.testing.common_distributed``: the multi-device skip of Ascend's tests.

The emulated device is one device (``device_count() == 1``), so a test needing more skips,
as it does on a one-chip machine.
"""

import functools
import unittest

import torch


def skipIfUnsupportMultiNPU(npu_number_needed):
    def decorate(func):
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            if not torch.npu.is_available() or torch.npu.device_count() < npu_number_needed:
                raise unittest.SkipTest(f"Multi-NPU {npu_number_needed} condition not satisfied")
            return func(self, *args, **kwargs)
        return wrapper
    return decorate
