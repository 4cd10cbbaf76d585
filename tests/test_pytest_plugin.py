"""The pytest plugin: one flag runs a generated test file, or an upstream-style
device-generic file, on the emulated device, and the header says so."""

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM_STYLE = '''
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import TestCase


class TestOnes(TestCase):
    def test_ones(self, device):
        t = torch.ones(3, device=device)
        self.assertEqual(t.device.type, torch.device(device).type)
        self.assertEqual(t.sum().item(), 3.0)


instantiate_device_type_tests(TestOnes, globals())
'''


def _plugin_args():
    """The installed entry point loads the plugin; a checkout that is not (re)installed
    names it with -p (both at once would register it twice)."""
    points = metadata.entry_points(group="pytest11")
    if any(ep.value == "torchparity.pytest_plugin" for ep in points):
        return []
    return ["-p", "torchparity.pytest_plugin"]


def _pytest(folder, *args):
    env = {k: v for k, v in os.environ.items() if k != "TORCHPARITY_DEVICE"}
    return subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-o", "addopts=", *_plugin_args(), *args,
                           str(folder)], capture_output=True, text=True, env=env, cwd=str(folder),
                          timeout=600)


def test_the_entry_point_is_declared():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points.pytest11]\ntorchparity = "torchparity.pytest_plugin"' in text


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    proc = subprocess.run([sys.executable, "-m", "torchparity", "gentest",
                           "torch.autograd.forward_ad.unpack_dual", "--style", "device-generic",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def test_one_flag_runs_a_generated_file_on_the_emulated_device(generated):
    proc = _pytest(generated, "--torchparity-device", "emu:ascend-a2")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    header = next(ln for ln in proc.stdout.splitlines() if ln.startswith("torchparity device:"))
    assert "emu:ascend-a2" in header and "profile ascend-a2" in header and "emulated" in header
    assert "PRIVATEUSE1" in proc.stdout and "_npu_float32 PASSED" in proc.stdout
    # without the flag (and without TORCHPARITY_DEVICE) the file's default device runs
    plain = _pytest(generated)
    assert plain.returncode == 0 and "_npu_" not in plain.stdout and "_cpu_float32 PASSED" in plain.stdout
    assert "torchparity device:" not in plain.stdout


def test_an_upstream_device_generic_file_gets_its_privateuse1_class(tmp_path):
    (tmp_path / "test_upstream_style.py").write_text(UPSTREAM_STYLE, encoding="utf-8")
    proc = _pytest(tmp_path, "--torchparity-device", "emu:ascend-a2")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "TestOnesPRIVATEUSE1::test_ones_npu PASSED" in proc.stdout


def test_a_bad_device_is_one_usage_line(tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    proc = _pytest(tmp_path, "--torchparity-device", "emu:no-such-profile")
    assert proc.returncode == 4  # pytest's usage error
    assert "--torchparity-device emu:no-such-profile" in proc.stderr
    assert "Traceback" not in proc.stderr


NPU_STYLE = '''
import torch
import torch_npu  # noqa: F401
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import TestCase


class TestNpuStyle(TestCase):
    def test_abs(self, device):
        x = torch.tensor([-1.5, 2.0])
        self.assertEqual(torch.abs(x.to(device)).cpu(), torch.abs(x))
        self.assertTrue(torch_npu.npu.is_available())


instantiate_device_type_tests(TestNpuStyle, globals(), only_for="privateuse1")
'''


def test_an_npu_style_file_runs_with_the_flag_alone(tmp_path):
    """``gentest --style npu`` files import torch_npu (as Ascend's tree does): on ``emu:``,
    with no real torch_npu, the flag stands the emulator in for it (was: ModuleNotFoundError
    at collection, so the README tour's pytest line failed)."""
    (tmp_path / "test_npu_style.py").write_text(NPU_STYLE, encoding="utf-8")
    proc = _pytest(tmp_path, "--torchparity-device", "emu:ascend-a2")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "test_abs_npu PASSED" in proc.stdout
