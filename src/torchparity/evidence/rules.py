"""The seeds' per-API columns, decided by a table of rules.

Columns (seed 001, section 2): has upstream tests | involves device tensors | should the
backend add tests | priority. Inputs:

- ``has_tests``: the census found sites (direct or indirect) in test functions;
- ``involvement``: the analysis' device_involvement - none | indirect | direct (None when
  the analysis has not decided it);
- ``harness``: the API wraps user code (takes a callable, or is a context manager), as
  gradcheck and emit_itt do: no hardware-specific operator of its own (category 1.2①);
- ``runs``: the API is mostly exercised on the backend's device already - at least
  ``RUN_SHARE`` of its test sites (the direct ones when there are any, else all) sit in
  tests that run there (a device-generic class that includes PrivateUse1, or a test that
  names the device) and are not always skipped there. A few device-generic sites next to
  a CPU-only main class (unpack_dual: 3 of 65 direct sites) do not count as covered.

``RULES`` is read top to bottom; the first row whose conditions hold decides. ``None`` in a
condition column means "any". Each row also names the Ascend PR scenario
(adapt_upstream: tests exist but do not run on the device; upstream_runs: they run
unchanged; write_new: no focused upstream test; none_needed: pure-Python API, category
1.2① of the seeds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

from ..results.models import Recommendation, TestsEvidence, Text


@dataclass(frozen=True)
class Rule:
    id: str
    involvement: Optional[Tuple[str, ...]]  # device_involvement values it applies to
    has_tests: Optional[bool]
    runs: Optional[bool]
    add_tests: Optional[bool]
    priority: Optional[str]
    scenario: str
    en: str
    zh: str
    harness: Optional[bool] = None


RULES: Tuple[Rule, ...] = (
    Rule("harness", None, None, None, False, "low", "none_needed",
         "pure-Python harness around user code, no hardware-specific operator of its own "
         "(only generic aten ops and the user's): no new test cases (issue + run screenshot + "
         "support verification)",
         "包裹用户代码的纯 Python 接口，本身不含硬件算子实现（仅通用 aten 算子与用户算子）：无需新增用例（issue 说明 + 运行截图 + 支持情况验证）",
         harness=True),
    Rule("pure-python", ("none",), None, None, False, "low", "none_needed",
         "pure-Python API, no device operators: no new test cases (issue + run screenshot + "
         "support verification)",
         "纯 Python 接口，不涉及设备算子：无需新增用例（issue 说明 + 运行截图 + 支持情况验证）"),
    Rule("direct-runs", ("direct",), True, True, False, "low", "upstream_runs",
         "device tensors involved directly, and upstream tests already run on the device",
         "直接涉及设备 Tensor，上游用例已可在设备上运行"),
    Rule("direct-not-run", ("direct",), True, False, True, "high", "adapt_upstream",
         "device tensors involved directly; upstream tests exist but none runs on the device",
         "直接涉及设备 Tensor；上游已有用例，但没有在设备上运行的用例"),
    Rule("direct-untested", ("direct",), False, None, True, "high", "write_new",
         "device tensors involved directly and no upstream test: write new tests",
         "直接涉及设备 Tensor，且无上游用例：需新写用例"),
    Rule("indirect-runs", ("indirect",), True, True, False, "low", "upstream_runs",
         "device tensors involved indirectly; upstream tests already run on the device",
         "间接涉及设备 Tensor，上游用例已可在设备上运行"),
    Rule("indirect-not-run", ("indirect",), True, False, True, "medium", "adapt_upstream",
         "device tensors involved indirectly; upstream tests exist but none runs on the device",
         "间接涉及设备 Tensor；上游已有用例，但没有在设备上运行的用例"),
    Rule("indirect-untested", ("indirect",), False, None, True, "medium", "write_new",
         "device tensors involved indirectly and no upstream test: write new tests",
         "间接涉及设备 Tensor，且无上游用例：需新写用例"),
    Rule("involvement-unknown", None, None, None, None, None, "unknown",
         "device involvement not decided yet (run the analysis): no recommendation",
         "尚未判定是否涉及设备 Tensor（需先运行分析）：暂不给出建议"),
)

INVOLVEMENT_ZH = {"none": "不涉及", "indirect": "间接涉及", "direct": "直接涉及"}
PRIORITY_ZH = {"high": "高", "medium": "中", "low": "低"}


RUN_SHARE = 0.5


def device_share(tests: Optional[TestsEvidence]) -> Tuple[bool, float]:
    """(has upstream tests, share of its test sites that run on the backend)."""
    if tests is None:
        return False, 0.0
    sites = [t for t in tests.tests if t.kind == "test" and (t.direct or t.indirect)]
    if not sites:
        return False, 0.0
    use_direct = any(t.direct for t in sites)

    def weight(t) -> int:
        return t.direct if use_direct else t.direct + t.indirect

    total = sum(weight(t) for t in sites)
    on_device = sum(weight(t) for t in sites if t.runs_on_backend and t.skip != "skipped")
    return True, on_device / total if total else 0.0


def decide(tests: Optional[TestsEvidence], involvement: Optional[str],
           harness: bool = False) -> Recommendation:
    """Apply RULES to one API."""
    has, share = device_share(tests)
    runs = share >= RUN_SHARE
    for rule in RULES:
        if rule.harness is not None and rule.harness != harness:
            continue
        if rule.involvement is not None and involvement not in rule.involvement:
            continue
        if rule.has_tests is not None and rule.has_tests != has:
            continue
        if rule.runs is not None and rule.runs != runs:
            continue
        reason = Text(en=rule.en, zh=rule.zh)
        reaching = [t for t in (tests.tests if tests else []) if t.kind == "test" and t.runs_on_backend
                    and t.skip != "skipped" and (t.direct or t.indirect)]
        if rule.runs is False and share == 0 and reaching:
            # the direct callers stay off the device, yet tests reaching it indirectly run there
            reason = Text(en=rule.en.split(";")[0] + "; upstream tests exist, but none of those calling it directly "
                                                     f"runs on the device ({len(reaching)} reaching it indirectly do)",
                          zh=rule.zh.split("；")[0] + "；上游已有用例，但直接调用它的用例都不在设备上运行"
                                                     f"（另有 {len(reaching)} 个间接调用它的用例在设备上运行）")
        elif rule.runs is False and share > 0:
            # some sites do run on the device: "none runs" would misread the census
            pct = f"{share:.1%}"
            reason = Text(en=rule.en.split(";")[0] + f"; upstream tests exist, but only {pct} of their call "
                                                     "sites run on the device (under half)",
                          zh=rule.zh.split("；")[0] + f"；上游已有用例，但在设备上运行的调用处只占 {pct}（不足一半）")
        return Recommendation(has_upstream_tests=has, device_involvement=involvement,
                              runs_on_backend=runs, device_share=round(share, 3),
                              add_tests=rule.add_tests,
                              priority=rule.priority, scenario=rule.scenario, rule=rule.id,
                              reason=reason)
    raise AssertionError("RULES ends with a catch-all row")  # pragma: no cover


def add_replay(rec: Recommendation,
               replayed: Sequence[Tuple[str, Optional[str], str, Optional[str]]]) -> None:
    """Record which upstream tests, replayed (``check --tests``), already pass on the device.

    ``replayed``: (scenario id ``file::Class::test``, dtype or "-", status, cause) per case.
    The rule's columns stay as decided; the lists and one sentence in the reason say which
    tests the backend can take over unchanged and which need work on the device.
    """
    for sid, dtype, status, _cause in replayed:
        name = sid if dtype in (None, "-") else f"{sid} [{dtype}]"
        if status == "pass":
            rec.replay_pass.append(name)
        elif status == "skip":
            rec.replay_not_comparable.append(name)
        else:
            rec.replay_fail.append(name)
    p, f, n = len(rec.replay_pass), len(rec.replay_fail), len(rec.replay_not_comparable)
    rec.reason = Text(
        en=f"{rec.reason.en}; upstream tests replayed on the device: {p} pass as on the CPU, "
           f"{f} do not, {n} not comparable (fail or skip on the CPU too)",
        zh=f"{rec.reason.zh}；上游用例在设备上重放：{p} 个与 CPU 结果一致，{f} 个不一致，"
           f"{n} 个不可比较（CPU 上同样失败或跳过）")
