"""instantiate_device_type_tests makes a PRIVATEUSE1 class when the emulator is registered
before torch.testing._internal is imported (the device list is computed at import)."""

from __future__ import annotations

from .helpers import run_python

TESTS = """
import sys
import unittest
assert "torch.testing._internal.common_device_type" not in sys.modules
import torch
from torch.testing._internal.common_device_type import (dtypes, instantiate_device_type_tests,
                                                        onlyOn)
from torch.testing._internal.common_utils import TestCase


class TestEmu(TestCase):
    def test_add(self, device):
        x = torch.arange(6.0, device=device).view(2, 3)
        self.assertEqual(torch.device(device).type, "npu")
        self.assertEqual((x + x).cpu(), torch.arange(6.0).view(2, 3) * 2)

    @dtypes(torch.float32, torch.float64)
    def test_grad(self, device, dtype):
        x = torch.rand(4, dtype=dtype, device=device, requires_grad=True)
        (x * x).sum().backward()
        self.assertEqual(x.grad, 2 * x.detach())

    def test_same_device_error(self, device):
        with self.assertRaisesRegex(RuntimeError, "same device"):
            torch.ones(2, 2, device=device) + torch.ones(2, 2)


instantiate_device_type_tests(TestEmu, globals(), only_for="privateuse1")
print(sorted(name for name in globals() if name.startswith("TestEmu")))
suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestEmuPRIVATEUSE1)
result = unittest.TextTestRunner(stream=sys.stdout, verbosity=0).run(suite)
print("ran", result.testsRun, "failures", len(result.failures), "errors", len(result.errors),
      "skipped", len(result.skipped))
"""


def test_instantiate_device_type_tests_creates_a_privateuse1_class(tmp_path):
    out = run_python(TESTS, tmp_path, "name: t\ndevice_type: npu\n")
    assert "['TestEmuPRIVATEUSE1']" in out
    assert "ran 4 failures 0 errors 0 skipped 0" in out, out
