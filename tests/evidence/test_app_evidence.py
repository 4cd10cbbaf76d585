"""The orchestration entry the CLI calls, on fixtures; and the real trees when present."""

from __future__ import annotations

import pytest

from torchparity.app.evidence import docs_block, evidence
from torchparity.errors import InputError, UnknownApiError
from torchparity.evidence.census import census

from .conftest import FIXTURES

UNPACK = "torch.autograd.forward_ad.unpack_dual"
ENTER = "torch.autograd.forward_ad.enter_dual_level"
GRADCHECK = "torch.autograd.gradcheck"
ITT = "torch.autograd.profiler.emit_itt"
A2, A3, DT = "Atlas A2 训练系列产品", "Atlas A3 训练系列产品", "Ascend 950DT"


def test_all_sections_on_fixtures():
    out = evidence([UNPACK, GRADCHECK], tests_dir=FIXTURES / "tests_tree",
                   docs_dir=FIXTURES / "docs", vendor_docs_dir=FIXTURES / "vendor",
                   torch_version="2.12.0", chips=["A2", "950DT"],
                   device_involvement={UNPACK: "direct", GRADCHECK: "none"}, processes=1)
    ev = out[UNPACK]
    assert ev.not_run == {}
    assert ev.tests.direct_sites > 0
    assert ev.docs.official.status == "own_page"
    assert ev.docs.vendor.present and ev.docs.vendor.chips == {A2: True, DT: False}
    assert ev.recommendation.rule in {"direct-runs", "direct-not-run"}
    assert out[GRADCHECK].recommendation.rule == "pure-python"
    assert out[GRADCHECK].docs.vendor.name == "torch.autograd.gradcheck.gradcheck"
    dumped = ev.model_dump(by_alias=True)
    assert dumped["tests"]["tests"][0]["class"] is not None or dumped["tests"]["tests"][0]["file"]


def test_sections_not_run_and_unknown_official_status():
    out = evidence([ENTER], vendor_docs_dir=FIXTURES / "vendor", torch_version="2.7.1", use_index=False)
    ev = out[ENTER]
    assert ev.tests is None and ev.recommendation is None
    assert ev.not_run == {"tests": "--tests DIR", "docs.official": "--docs DIR"}
    assert ev.docs.official.status == "unknown"
    assert ev.docs.official.url == ("https://pytorch.org/docs/2.7/generated/"
                                    "torch.autograd.forward_ad.enter_dual_level.html")
    assert "vendor docs link to" in ev.docs.official.note
    assert ev.docs.vendor.present


def test_bad_input_is_one_line():
    with pytest.raises(InputError, match="test folder not found") as err:
        evidence([UNPACK], tests_dir=FIXTURES / "missing")
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="docs folder not found"):
        evidence([UNPACK], docs_dir=FIXTURES / "missing")
    with pytest.raises(InputError, match="vendor docs folder not found"):
        evidence([UNPACK], vendor_docs_dir=FIXTURES / "missing", torch_version="2.12.0")
    with pytest.raises(InputError, match="no API given"):
        evidence([])
    with pytest.raises(UnknownApiError, match="did you mean"):
        evidence(["torch.autograd.forward_ad.unpack_duals"])
    with pytest.raises(InputError, match="matches no chip"):
        evidence([UNPACK], vendor_docs_dir=FIXTURES / "vendor", torch_version="2.12.0",
                 chips=["A9"])


def test_docs_block():
    text = docs_block([ENTER, UNPACK], ["A2", "A3", "950DT"],
                      {ENTER: {"A2": True, "A3": "supported", "950DT": "unsupported"},
                       UNPACK: {A2: True, A3: True, DT: False}},
                      limits={ENTER: "仅支持fp32"}, torch_version="2.12.0",
                      vendor_docs_dir=FIXTURES / "vendor", docs_dir=FIXTURES / "docs",
                      only_missing=True)
    assert text.count("### ") == 1 and text.startswith(f"### {ENTER}\n")
    assert f"| <term>{A3}</term> | ✔ |" in text and f"| <term>{DT}</term> | ✘ |" in text
    assert "**限制与说明**： 仅支持fp32" in text
    assert f"generated/{ENTER}.html" in text
    with pytest.raises(InputError, match="no verdict for"):
        docs_block([ENTER], [A2, A3], {ENTER: {A2: True}}, torch_version="2.12.0")
    with pytest.raises(InputError, match="expected supported/unsupported"):
        docs_block([ENTER], [A2], {ENTER: {A2: "maybe"}}, torch_version="2.12.0")


# -- the real Ascend/pytorch test tree (fetched separately; skipped when absent) ----------

@pytest.fixture(scope="module")
def real(ascend_tests):
    return census(ascend_tests, [UNPACK, ENTER, GRADCHECK, ITT])


def test_real_tree_unpack_dual(real):
    ev = real.evidence[UNPACK]
    top = ev.classes[0]
    assert (top.file, top.cls) == ("test_autograd.py", "TestAutogradForwardMode")
    assert top.direct > ev.direct_sites / 2  # mostly there


def test_real_tree_enter_dual_level(real):
    ev = real.evidence[ENTER]
    direct_tests = [t for t in ev.tests if t.direct and t.kind == "test"]
    assert [(t.cls, t.test) for t in direct_tests] == [("TestAutogradForwardMode",
                                                        "test_nested_level")]
    assert ev.indirect_sites >= 24  # dozens, through dual_level
    assert ev.via[0] == "torch.autograd.forward_ad.dual_level"


def test_real_tree_gradcheck_counts_the_wrapper(real):
    ev = real.evidence[GRADCHECK]
    assert ev.via[0] == "torch.testing._internal.common_utils.gradcheck"
    wrapped = sum(t.indirect for t in ev.tests
                  if "torch.testing._internal.common_utils.gradcheck" in t.via)
    assert wrapped > ev.direct_sites


def test_real_tree_emit_itt(real):
    ev = real.evidence[ITT]
    generic = [t for t in ev.tests if t.device_generic]
    assert len(generic) == 1
    (t,) = generic
    assert (t.file, t.cls, t.test) == ("test_autograd.py", "TestAutogradDeviceType",
                                       "test_profiler_emit_itt")
    assert t.skip == "conditional" and "torch.profiler.itt.is_available()" in t.skip_reason
    cls = next(c for c in ev.classes if c.cls == "TestAutogradDeviceType")
    assert cls.only_for == ["privateuse1"] and cls.backend_included
