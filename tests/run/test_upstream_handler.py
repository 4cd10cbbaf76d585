"""The upstream case kind: each side in a fork, bounded, leaving nothing behind."""

import os
import time

import pytest
from upstream_tree import FILE, write_tree

from torchparity.devices import get_adapter
from torchparity.run import proctree
from torchparity.run.handlers import WorkerContext, handle

HANGS = '''\
import os
import subprocess
import sys
import time
import unittest

import torch


class TestHang(unittest.TestCase):
    def test_sleeps(self):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 start_new_session=True)
        with open(os.environ["PID_FILE"], "w") as fh:
            fh.write(str(child.pid))
        time.sleep(60)
        torch.mm(torch.ones(1, 1), torch.ones(1, 1))

    def test_aborts(self):
        torch.mm(torch.ones(1, 1), torch.ones(1, 1))
        os.abort()
'''


def _case(root, file, cls, test, **extra):
    return dict({"kind": "upstream", "api": "torch.mm", "root": str(root), "file": file,
                 "cls": cls, "test": test, "generic": False, "dtype": "-",
                 "side_timeout": 30}, **extra)


def _ctx():
    return WorkerContext(adapter=get_adapter("cpu"))


def test_a_device_generic_test_runs_its_cpu_variants(tmp_path):
    root = write_tree(tmp_path / "t")
    payload = handle(_ctx(), _case(root, FILE, "TestMmDevice", "test_mm_square",
                                   generic=True, dtype="float64"))
    assert payload["status"] == "pass", payload
    assert payload["outcomes"]["device"] == {"float64": "pass"}  # only the dtype asked
    payload = handle(_ctx(), _case(root, FILE, "TestMmDevice", "test_mm_wrong_shape", generic=True))
    assert (payload["status"], payload["cause"]) == ("skip", "not_comparable")
    assert "Expected 3 but got 2" in payload["detail"]
    assert "To execute this test" not in payload["detail"]


def test_a_file_that_does_not_import_is_not_comparable(tmp_path):
    (tmp_path / "test_npu_only.py").write_text("import torch_npu_missing\n", encoding="utf-8")
    payload = handle(_ctx(), _case(tmp_path, "test_npu_only.py", "T", "test_x"))
    assert (payload["status"], payload["cause"]) == ("skip", "not_comparable")
    assert "torch_npu_missing" in payload["detail"]


def test_a_side_past_its_time_is_killed_with_what_it_started(tmp_path, monkeypatch):
    (tmp_path / "test_hang.py").write_text(HANGS, encoding="utf-8")
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("PID_FILE", str(pid_file))
    started = time.monotonic()
    payload = handle(_ctx(), _case(tmp_path, "test_hang.py", "TestHang", "test_sleeps",
                                   side_timeout=3))
    assert time.monotonic() - started < 20
    assert (payload["status"], payload["cause"]) == ("skip", "not_comparable")
    assert "timeout" in payload["detail"]
    grandchild = int(pid_file.read_text())
    time.sleep(0.2)
    assert grandchild not in proctree.descendants(os.getpid())
    try:
        os.kill(grandchild, 0)
        alive = open(f"/proc/{grandchild}/stat").read().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive, "the test's own child outlived the timeout"


def test_a_side_that_dies_is_a_crash_of_that_side(tmp_path):
    (tmp_path / "test_hang.py").write_text(HANGS, encoding="utf-8")
    payload = handle(_ctx(), _case(tmp_path, "test_hang.py", "TestHang", "test_aborts"))
    assert (payload["status"], payload["cause"]) == ("skip", "not_comparable")
    assert "SIGABRT" in payload["detail"]


PARAMETRIZED = '''\
import torch
from torch.testing._internal.common_utils import (TestCase, instantiate_parametrized_tests,
                                                  parametrize)


class TestP(TestCase):
    @parametrize("n", [1, 2])
    def test_mm(self, n):
        a = torch.ones(n, n)
        self.assertEqual(torch.mm(a, a)[0, 0].item(), float(n))

    def test_mm_other(self):
        pass


instantiate_parametrized_tests(TestP)
'''


def test_a_parametrized_plain_test_runs_its_copies(tmp_path):
    (tmp_path / "test_p.py").write_text(PARAMETRIZED, encoding="utf-8")
    payload = handle(_ctx(), _case(tmp_path, "test_p.py", "TestP", "test_mm"))
    assert payload["status"] == "pass", payload
    assert payload["outcomes"]["cpu"] == {"n_1": "pass", "n_2": "pass"}  # not test_mm_other


GENERIC_PREFIX = '''\
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import TestCase


class TestG(TestCase):
    def test_mm(self, device):
        pass

    def test_mm_other(self, device):
        raise AssertionError("not me")


instantiate_device_type_tests(TestG, globals(), only_for="cpu")
'''


def test_a_generic_test_does_not_take_a_longer_named_one_for_a_variant(tmp_path):
    (tmp_path / "test_g.py").write_text(GENERIC_PREFIX, encoding="utf-8")
    payload = handle(_ctx(), _case(tmp_path, "test_g.py", "TestG", "test_mm", generic=True))
    assert payload["status"] == "pass", payload
    assert payload["outcomes"]["cpu"] == {"-": "pass"}


@pytest.mark.slow
def test_spawned_sides_for_devices_that_do_not_survive_a_fork(tmp_path):
    from torchparity.run.upstream_handler import isolation

    assert isolation(get_adapter("cpu")) == "fork"
    assert isolation(get_adapter("emu:ascend-a2")) == "fork"
    root = write_tree(tmp_path / "t")
    ctx = WorkerContext(adapter=get_adapter("emu:ascend-a2"))
    payload = handle(ctx, _case(root, FILE, "TestMmDevice", "test_mm_square", generic=True,
                                dtype="float64", isolation="spawn"))
    assert (payload["status"], payload["cause"]) == ("unsupported", "dtype_limit"), payload
    assert payload["outcomes"]["cpu"] == {"float64": "pass"}


PYTEST_STYLE = '''\
import pytest
import torch


class TestPlain:
    def setup_method(self, method):
        self.a = torch.ones(2, 2)

    def test_mm(self):
        assert torch.mm(self.a, self.a).sum().item() == 8.0

    def test_skips(self):
        pytest.skip("not here")


def test_mm_function():
    assert torch.mm(torch.ones(1, 1), torch.ones(1, 1)).item() == 2.0  # wrong: fails
'''


def test_pytest_style_classes_and_functions(tmp_path):
    (tmp_path / "test_py.py").write_text(PYTEST_STYLE, encoding="utf-8")
    ok = handle(_ctx(), _case(tmp_path, "test_py.py", "TestPlain", "test_mm"))
    assert ok["status"] == "pass", ok
    skipped = handle(_ctx(), _case(tmp_path, "test_py.py", "TestPlain", "test_skips"))
    assert (skipped["status"], skipped["cause"]) == ("skip", "upstream_skip"), skipped
    wrong = handle(_ctx(), _case(tmp_path, "test_py.py", None, "test_mm_function"))
    assert (wrong["status"], wrong["cause"]) == ("skip", "not_comparable"), wrong
