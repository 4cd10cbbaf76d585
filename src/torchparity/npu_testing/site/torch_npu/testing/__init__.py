"""``torch_npu.testing`` over the emulated device.

Importing it points torch's device-generic test machinery at the device, as torch_npu's
does: ``PYTORCH_TESTING_DEVICE_FOR_CUSTOM=privateuse1`` and
``PYTORCH_TESTING_DEVICE_EXCEPT_FOR=cuda,cpu`` (so ``instantiate_device_type_tests`` makes
the NPU variants), and ``onlyCUDA``/``TEST_CUDA`` of torch.testing read as the
PrivateUse1 ones. torch_npu's OpInfo dtype patches and disabled-test lists are not applied.
"""

import os

import torch  # noqa: F401
import torch_npu  # noqa: F401  (registers the emulated device)
from torch.testing._internal import common_device_type, common_utils

os.environ["PYTORCH_TESTING_DEVICE_FOR_CUSTOM"] = "privateuse1"
os.environ["PYTORCH_TESTING_DEVICE_EXCEPT_FOR"] = "cuda,cpu"
common_device_type.onlyCUDA = common_device_type.onlyPRIVATEUSE1
common_utils.TEST_CUDA = common_utils.TEST_PRIVATEUSE1
