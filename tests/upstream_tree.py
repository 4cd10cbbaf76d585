"""A small upstream-style test tree for the replay tests (written into a tmp folder).

It looks like a file of PyTorch's test/: a device-generic class through
instantiate_device_type_tests and a plain TestCase, all using torch.mm. What each test
does on the CPU and on the emulated Ascend A2 (whose profile refuses float64 matmul):

- TestMmDevice.test_mm_square  float32: passes on both; float64: passes on the CPU only
- TestMmDevice.test_mm_wrong_shape  fails on the CPU too (a wrong expectation): not comparable
- TestMmPlain.test_mm_float32  passes on both (the device is the default device)
- TestMmPlain.test_mm_float64  passes on the CPU only
- TestMmPlain.test_mm_cpu_only_skip  skipped by its own decorator: not comparable
"""

from pathlib import Path

FILE = "test_mm_replay.py"

SOURCE = '''\
import unittest

import torch
from torch.testing._internal.common_device_type import dtypes, instantiate_device_type_tests
from torch.testing._internal.common_utils import TestCase, run_tests


class TestMmDevice(TestCase):
    @dtypes(torch.float32, torch.double)
    def test_mm_square(self, device, dtype):
        a = torch.arange(4, dtype=dtype, device=device).view(2, 2)
        self.assertEqual(torch.mm(a, a).cpu(), torch.tensor([[2, 3], [6, 11]], dtype=dtype))

    def test_mm_wrong_shape(self, device):
        a = torch.ones(2, 3, device=device)
        self.assertEqual(torch.mm(a, a.t()).shape, (3, 3))


class TestMmPlain(TestCase):
    def test_mm_float32(self):
        a = torch.ones(2, 2)
        self.assertEqual(torch.mm(a, a).sum().item(), 8.0)

    def test_mm_float64(self):
        a = torch.ones(2, 2, dtype=torch.float64)
        self.assertEqual(torch.mm(a, a).sum().item(), 8.0)

    @unittest.skip("needs a second device")
    def test_mm_cpu_only_skip(self):
        torch.mm(torch.ones(1, 1), torch.ones(1, 1))


instantiate_device_type_tests(TestMmDevice, globals())

if __name__ == "__main__":
    run_tests()
'''

IDS = {
    "square": f"{FILE}::TestMmDevice::test_mm_square",
    "wrong_shape": f"{FILE}::TestMmDevice::test_mm_wrong_shape",
    "float32": f"{FILE}::TestMmPlain::test_mm_float32",
    "float64": f"{FILE}::TestMmPlain::test_mm_float64",
    "skip": f"{FILE}::TestMmPlain::test_mm_cpu_only_skip",
}


def write_tree(root: Path) -> Path:
    """Write the tree under ``root``; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / FILE).write_text(SOURCE, encoding="utf-8")
    (root / "helpers.py").write_text("import torch\n\nONE = torch.ones(1)\n", encoding="utf-8")
    return root
