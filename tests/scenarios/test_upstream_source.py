"""The upstream source: census test functions as scenarios, and how two sides compare."""

import pytest
import torch
from upstream_tree import FILE, IDS, write_tree

from torchparity.evidence.rules import add_replay, decide
from torchparity.results import models
from torchparity.run.upstream_handler import compare
from torchparity.scenarios import sources
from torchparity.scenarios.sources import upstream


@pytest.fixture
def tree(tmp_path):
    return write_tree(tmp_path / "test")


def test_without_a_tree_the_source_does_not_apply():
    assert upstream.scenarios("torch.mm", torch.mm) == []
    assert "--tests" in upstream.why_not("torch.mm", torch.mm)
    assert "--tests" in sources.offer("torch.mm", torch.mm).tried["upstream"]


def test_each_test_function_is_one_scenario(tree):
    with upstream.configured(str(tree), backend="npu"):
        found = {sc.id: sc for sc in upstream.scenarios("torch.mm", torch.mm)}
        assert set(found) == set(IDS.values())  # helpers.py's module-level use is no test
        square = found[IDS["square"]]
        assert square.dtypes == ("float32", "float64")  # @dtypes(torch.float32, torch.double)
        assert found[IDS["wrong_shape"]].dtypes == ("-",)
        assert found[IDS["float32"]].dtypes == ("-",)
        assert "device-generic" in square.tags and "default-device" in found[IDS["float32"]].tags
        assert all(sc.source == "upstream" and sc.api == "torch.mm" for sc in found.values())
        assert "TestMmDevicePRIVATEUSE1" in square.snippet('"npu"', "float32")
        case = sources.case_for(square, "torch.mm", "float64")
        assert case["kind"] == "upstream" and case["generic"] is True
        assert (case["file"], case["cls"], case["test"], case["dtype"]) == (
            FILE, "TestMmDevice", "test_mm_square", "float64")
        plain = sources.case_for(found[IDS["float32"]], "torch.mm", "-")
        assert plain["generic"] is False and plain["root"] == str(tree)
        # an API no test uses: the reason names the tree
        assert upstream.scenarios("torch.cholesky", torch.cholesky) == []
        assert "no test" in upstream.why_not("torch.cholesky", torch.cholesky)
    assert upstream._SETTINGS.tests_dir is None  # the block's settings are undone


def test_declared_dtypes_only_from_a_plain_dtypes_list(tmp_path):
    src = (
        "import torch\n"
        "from torch.testing._internal.common_device_type import dtypes, dtypesIfCPU\n"
        "class T:\n"
        "    @dtypes(torch.half, torch.cfloat)\n"
        "    def test_a(self, device, dtype): pass\n"
        "    @dtypesIfCPU(torch.float)\n"
        "    @dtypes(torch.float)\n"
        "    def test_b(self, device, dtype): pass\n"
        "    @dtypes(*[torch.float])\n"
        "    def test_c(self, device, dtype): pass\n")
    (tmp_path / "t.py").write_text(src, encoding="utf-8")

    def site(test):
        return models.TestSite(file="t.py", cls="T", test=test, device_generic=True)

    assert upstream.declared_dtypes(str(tmp_path), site("test_a")) == ("float16", "complex64")
    assert upstream.declared_dtypes(str(tmp_path), site("test_b")) is None
    assert upstream.declared_dtypes(str(tmp_path), site("test_c")) is None


def _side(**variants):
    return {"variants": {k: {"outcome": v[0], "detail": v[1], "exc_type": v[2]}
                         for k, v in variants.items()}}


PASS = ("pass", "", "")


@pytest.mark.parametrize("cpu, dev, expected", [
    (_side(float32=PASS), _side(float32=PASS), ("pass", None)),
    (_side(**{"-": ("fail", "AssertionError: 3 != 2", "AssertionError")}), None,
     ("skip", "not_comparable")),
    (_side(**{"-": ("skip", "needs a second device", "")}), None, ("skip", "upstream_skip")),
    ({"error": "ModuleNotFoundError: No module named 'torch_npu'"}, None, ("skip", "not_comparable")),
    ({"crash": "the test process died: SIGSEGV"}, None, ("skip", "not_comparable")),
    (_side(**{"-": PASS}), _side(**{"-": ("fail", "AssertionError: x", "AssertionError")}),
     ("fail", "mismatch")),
    (_side(float64=PASS),
     _side(float64=("error", "RuntimeError: \"mm_npu\" not implemented for 'Double'", "RuntimeError")),
     ("unsupported", "dtype_limit")),
    (_side(**{"-": PASS}), _side(**{"-": ("error", "RuntimeError: boom", "RuntimeError")}),
     ("error", "device_error")),
    (_side(**{"-": PASS}), {"crash": "the test process died: SIGABRT"}, ("crash", "crash")),
    (_side(**{"-": PASS}), {"timeout": "did not finish in 5 s"}, ("timeout", "timeout")),
    (_side(**{"-": PASS}), {"absent": "no class TestXPRIVATEUSE1"}, ("skip", "upstream_skip")),
    (_side(**{"-": PASS}), _side(**{"-": ("skip", "Only runs on cpu", "")}), ("skip", "upstream_skip")),
    # one variant passes, another fails on the CPU too: compared on what the CPU passes
    (_side(float32=PASS, float64=("fail", "x", "AssertionError")), _side(float32=PASS),
     ("pass", None)),
])
def test_compare_two_sides(cpu, dev, expected):
    row = compare(cpu, dev, "npu")
    assert (row["status"], row["cause"]) == expected, row
    assert row["detail"]


def test_replayed_tests_go_into_the_recommendation():
    rec = decide(None, "direct")
    add_replay(rec, [("f.py::T::a", "float32", "pass", None), ("f.py::T::a", "float64", "unsupported",
                      "dtype_limit"), ("f.py::P::b", "-", "skip", "not_comparable")])
    assert rec.replay_pass == ["f.py::T::a [float32]"]
    assert rec.replay_fail == ["f.py::T::a [float64]"]
    assert rec.replay_not_comparable == ["f.py::P::b"]
    assert "1 pass as on the CPU" in rec.reason.en and "重放" in rec.reason.zh
