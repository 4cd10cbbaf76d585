"""Docs-entry writer (round trip, byte-exact against the vendor data), decorator and
recommendation tables (every row read)."""

from __future__ import annotations

import pytest

from torchparity.evidence import decorators as deco
from torchparity.evidence import rules
from torchparity.evidence.vendor_docs import parse_vendor_file
from torchparity.evidence.writer import write_vendor_entry
from torchparity.results import models

A2, A3, DT = "Atlas A2 训练系列产品", "Atlas A3 训练系列产品", "Ascend 950DT"
UNPACK = "torch.autograd.forward_ad.unpack_dual"
URL = f"https://pytorch.org/docs/2.12/generated/{UNPACK}.html"


def test_writer_round_trip(tmp_path):
    block = write_vendor_entry(UNPACK, {A2: True, A3: True, DT: False},
                               ["`input`仅支持fp32", "<term>Ascend 950DT</term>：`input`仅支持fp16"],
                               URL)
    path = tmp_path / "x.md"
    path.write_text("## Section\n\n" + block, encoding="utf-8")
    (entry,) = parse_vendor_file(path, "x.md")
    assert entry.name == UNPACK and entry.url == URL
    assert entry.chips == {A2: True, A3: True, DT: False}
    assert entry.dtypes_for(DT) == ["float32", "float16"]
    assert entry.limits.splitlines() == ["- `input`仅支持fp32",
                                         "- <term>Ascend 950DT</term>：`input`仅支持fp16"]


def test_writer_matches_the_vendor_block_exactly(ascend_docs):
    source = (ascend_docs / "pytorch_2-12-0" / "torch-autograd.md").read_text(encoding="utf-8")
    start = source.index(f"### {UNPACK}\n")
    end = source.index("</div>\n", start) + len("</div>\n")
    block = write_vendor_entry(UNPACK, {A2: True, A3: True, DT: False}, "`input`仅支持fp32", URL)
    assert block == source[start:end]


def test_writer_without_url_or_limits():
    block = write_vendor_entry("torch.x", {A2: False})
    assert "原生文档" not in block and "限制与说明" not in block
    assert f"| <term>{A2}</term> | ✘ |" in block
    with pytest.raises(ValueError):
        write_vendor_entry("torch.x", {})


# -- decorator table --------------------------------------------------------------------

DECORATOR_CASES = [  # (decorator, expected effect) - one row of deco.RULES each at least
    (deco.Decorator("skip", "unittest.skip", ("'why'",)), deco.SKIPPED),
    (deco.Decorator("skipIf", "unittest.skipIf", ("not HAS_X", "'why'")), deco.CONDITIONAL),
    (deco.Decorator("skipUnless", "unittest.skipUnless", ("HAS_X", "'why'")), deco.CONDITIONAL),
    (deco.Decorator("skipIf", "skipIf", ("True", "'why'"), (("device_type", "'cuda'"),)), None),
    (deco.Decorator("skipIfTorchDynamo", "x.skipIfTorchDynamo", ("'msg'",)), deco.CONDITIONAL),
    (deco.Decorator("onlyOn", "onlyOn", ("['cuda', 'npu']",), (), (["cuda", "npu"],)), None),
    (deco.Decorator("onlyOn", "onlyOn", ("'cuda'",), (), ("cuda",)), deco.SKIPPED),
    (deco.Decorator("onlyCUDA", "onlyCUDA"), deco.SKIPPED),
    (deco.Decorator("onlyCUDAAndPRIVATEUSE1", "x"), None),
    (deco.Decorator("onlyNativeDeviceTypes", "x"), None),
    (deco.Decorator("onlyAccelerator", "x"), None),
    (deco.Decorator("skipPRIVATEUSE1", "x"), deco.SKIPPED),
    (deco.Decorator("skipPRIVATEUSE1If", "x", ("cond", "'why'")), deco.CONDITIONAL),
    (deco.Decorator("slowTest", "x"), deco.CONDITIONAL),
    (deco.Decorator("deviceCountAtLeast", "x", ("2",)), deco.CONDITIONAL),
    (deco.Decorator("largeTensorTest", "x", ("'4GB'",)), deco.CONDITIONAL),
    (deco.Decorator("SupportedDevices", "x", ("['Ascend910B']",)), deco.CONDITIONAL),
    (deco.Decorator("skipIfUnsupportMultiNPU", "x", ("2",)), deco.CONDITIONAL),
    (deco.Decorator("expectedFailure", "unittest.expectedFailure"), deco.CONDITIONAL),
    (deco.Decorator("xfailIfTorchDynamo", "x"), None),
    (deco.Decorator("skipCUDAIfNoMagma", "x"), None),
    (deco.Decorator("skipIfRocm", "x"), None),
    (deco.Decorator("skipIfNoLapack", "x"), deco.CONDITIONAL),
    (deco.Decorator("dtypes", "x", ("torch.float",)), None),
]


@pytest.mark.parametrize("decorator, effect", DECORATOR_CASES, ids=lambda v: getattr(v, "name", str(v)))
def test_decorator_effects(decorator, effect):
    got = deco.classify(decorator, "npu")
    assert (got[0] if got else None) == effect


def test_every_decorator_rule_is_used():
    used = set()
    for d, _ in DECORATOR_CASES:
        for i, (pattern, _) in enumerate(deco._COMPILED):
            if pattern.match(d.name):
                used.add(i)
                break
    assert used == set(range(len(deco.RULES)))


def test_decorator_texts():
    d = deco.Decorator("skipIf", "unittest.skipIf",
                       ("not torch.profiler.itt.is_available()", "'ITT is required'"))
    assert deco.classify(d) == (deco.CONDITIONAL,
                                "skipIf(not torch.profiler.itt.is_available()): ITT is required")
    assert deco.combine([(deco.CONDITIONAL, "a"), (deco.SKIPPED, "b")]) == (deco.SKIPPED, "a; b")
    assert deco.combine([]) == (None, None)


# -- recommendation table ---------------------------------------------------------------

def _tests(*sites):
    return models.TestsEvidence(tests=[models.TestSite(file="t.py", test=f"test_{i}", **s)
                                       for i, s in enumerate(sites)])


CPU = {"direct": 10, "runs_on_backend": False}
DEV = {"direct": 10, "runs_on_backend": True}
FEW_ON_DEVICE = [{"direct": 62, "runs_on_backend": False}, {"direct": 3, "runs_on_backend": True}]

RULE_CASES = [  # (tests, involvement, expected rule id, add_tests, priority)
    (_tests(CPU), "none", "pure-python", False, "low"),
    (_tests(DEV), "direct", "direct-runs", False, "low"),
    (_tests(*FEW_ON_DEVICE), "direct", "direct-not-run", True, "high"),
    (_tests(), "direct", "direct-untested", True, "high"),
    (_tests(DEV), "indirect", "indirect-runs", False, "low"),
    (_tests({"indirect": 30, "runs_on_backend": False}, {"direct": 1, "runs_on_backend": False}),
     "indirect", "indirect-not-run", True, "medium"),
    (None, "indirect", "indirect-untested", True, "medium"),
    (_tests(CPU), None, "involvement-unknown", None, None),
    (_tests(CPU), "direct", "harness", False, "low"),  # gradcheck: wraps user code
]


@pytest.mark.parametrize("tests, involvement, rule, add, priority", RULE_CASES)
def test_recommendation_rules(tests, involvement, rule, add, priority):
    rec = rules.decide(tests, involvement, harness=(rule == "harness"))
    assert (rec.rule, rec.add_tests, rec.priority) == (rule, add, priority)
    assert rec.reason.en and rec.reason.zh


def test_every_recommendation_rule_is_used():
    assert {c[2] for c in RULE_CASES} == {r.id for r in rules.RULES}


def test_device_share_ignores_skipped_and_helpers():
    tests = _tests({"direct": 4, "runs_on_backend": True, "skip": "skipped"},
                   {"direct": 1, "runs_on_backend": True},
                   {"direct": 5, "runs_on_backend": True, "kind": "helper"})
    has, share = rules.device_share(tests)
    assert has and share == pytest.approx(0.2)


def test_docs_table_lists_every_rule():
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "evidence.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip() for line in doc.splitlines()
            if line.startswith("| ") and not line.startswith("| rule")]
    assert [r.id for r in rules.RULES] == rows


def test_the_not_run_reason_never_says_none_runs_when_some_do():
    """Issue 46: "没有在设备上运行的用例" read the census wrong where some sites run on the
    device (under half): the reason says the share; with none on the device it says none."""
    some = rules.decide(_tests(*FEW_ON_DEVICE), "direct")
    assert "没有在设备上运行" not in some.reason.zh and "none runs" not in some.reason.en
    assert "只占 4.6%（不足一半）" in some.reason.zh and "only 4.6% of their call sites" in some.reason.en
    none = rules.decide(_tests(CPU), "direct")
    assert none.rule == "direct-not-run" and "没有在设备上运行的用例" in none.reason.zh
    # enter_dual_level: its one direct caller is off the device, tests reaching it run there
    indirect = rules.decide(_tests({"direct": 1, "runs_on_backend": False},
                                   {"indirect": 5, "runs_on_backend": True}), "indirect")
    assert indirect.rule == "indirect-not-run" and "没有在设备上运行" not in indirect.reason.zh
    assert "另有 1 个间接调用它的用例在设备上运行" in indirect.reason.zh
