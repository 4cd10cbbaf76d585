"""From scenario results and analysis to a per-API verdict and community category."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Optional, Sequence

from ..results.error_rules import refused_kernels
from ..results.models import Analysis, Cause, ScenarioResult, Status, Text, Verdict
from .causes import CAUSE_TEXT, LIMIT_CAUSES
from .evidence import api_evidence, device_independent, is_answer
from .rules_file import FACT_NAMES, RULES_FILE, CategoryRule, CategoryRules, load_rules  # noqa: F401

# every answering row host-only: no device operator of the API ran (seed 000's "pure
# Python, no device operator"); category 1.2① through the rules' evidence fact
DEVICE_INDEPENDENT = "device-independent"
DEVICE_INDEPENDENT_TEXT = Text(
    en="Device-independent: every answering scenario is host-only evidence (no device operator "
       "attributed to the API ran; see its footprint).",
    zh="与设备无关：所有得出结论的场景均为仅主机侧证据（没有归属于该 API 的设备算子运行，见算子足迹）。")
# the category of an API with no judged scenario: no rule fires without a measured fact
UNDETERMINED = "undetermined"
UNDETERMINED_TEXT = Text(
    en="Undetermined: no scenario ran and was judged on the device, so no category is "
       "claimed (see the sources tried).",
    zh="待定：没有场景在设备上运行并完成判定，因此不给出分类（见已尝试的场景来源）。")


def categorise(facts: Dict[str, Any], rules: Optional[CategoryRules] = None) -> Optional[CategoryRule]:
    rules = rules or load_rules()
    for rule in rules.rules:
        if rule.matches(facts):
            return rule
    return None


# whole kernel names: "linalg_vector_norm_npu" -> linalg_vector_norm, "normal__npu" -> normal_


def _limit_phrase(results: Sequence[ScenarioResult]) -> str:
    ops = []
    for r in results:
        found = refused_kernels(r.detail or "")
        if found and f"{found[0][0]} ({found[0][1]})" not in ops:
            ops.append(f"{found[0][0]} ({found[0][1]})")
    return f" [{', '.join(ops)}]" if ops else ""


def _ids(results: Sequence[ScenarioResult]) -> str:
    seen: List[str] = []
    for r in results:
        label = f"{r.id}[{r.dtype}]" if r.dtype else r.id
        if label not in seen:
            seen.append(label)
    return ", ".join(seen)


def decide(analysis: Analysis, results: Sequence[ScenarioResult], facts: Dict[str, Any],
           device_label: str, rules: Optional[CategoryRules] = None,
           why_none: Optional[Text] = None) -> Verdict:
    """The verdict of one API. ``why_none``: why no scenario ran (the sources tried), said
    in the summary of an API left ``unknown``."""
    # what is not an answer (timeouts, the harness's own failures, worlds killed from
    # outside, emulator limits, skips) is never counted: only named
    not_answers = [r for r in results if r.status != Status.SKIP.value and not is_answer(r.status, r.cause)]
    not_answers += [r for r in results if r.status == Status.SKIP.value and r.cause == Cause.EMULATOR_LIMIT.value]
    counted = [r for r in results if is_answer(r.status, r.cause)]
    limit_causes = {c.value for c in LIMIT_CAUSES}
    # OpInfo cases: some samples ran and passed, the rest were refused for a device limit
    partial = [r for r in counted if r.status == Status.PARTIAL.value and r.cause in limit_causes]
    passed = [r for r in counted if r.status == Status.PASS.value]
    limits = [r for r in counted if r.status == Status.UNSUPPORTED.value
              and r.cause in limit_causes] + partial
    broken = [r for r in counted if r not in passed and r not in limits]
    causes = sorted({r.cause for r in counted + not_answers if r.cause})
    # a source (the user's --scenarios, OpInfo, ...) none of whose cases could be judged:
    # what it was asked to show is unknown, whatever other sources say
    by_source: Dict[str, List[ScenarioResult]] = {}
    for r in counted + not_answers:
        by_source.setdefault(r.source or "hand", []).append(r)
    unjudged = [src for src, rs in by_source.items() if all(r in not_answers for r in rs)]
    evidence = api_evidence(counted)

    if not counted:
        status = "unknown"
    elif broken:
        status = "broken"
    elif unjudged:
        status = "unknown"
    elif limits and (passed or partial):
        status = "partial"
    elif limits:
        status = "unsupported"
    elif device_independent(counted):
        status = DEVICE_INDEPENDENT
    else:
        status = "supported"

    n, total = len(passed), len(counted)
    en = [f"{n} of {total} scenarios pass on {device_label}."]
    zh = [f"{total} 个场景中 {n} 个在 {device_label} 上通过。"]
    if not_answers:
        en.append(f"{len(not_answers)} not answered (not counted).")
        zh.append(f"另有 {len(not_answers)} 个未得出结论（不计入）。")
    # silence is not support: passes through ops the emulated profile has no fact for
    unverified = [r for r in passed if r.unverified]
    if unverified:
        en.append(f"{len(unverified)} of these passes are unverified: no capability fact "
                  "for an op they ran (the emulated profile is silent).")
        zh.append(f"其中 {len(unverified)} 个通过未经验证：所运行的算子在模拟设备配置中没有能力事实。")
    if not counted and why_none is not None:
        en.append(why_none.en)
        zh.append(why_none.zh)
    if status == DEVICE_INDEPENDENT:
        en.append(DEVICE_INDEPENDENT_TEXT.en)
        zh.append(DEVICE_INDEPENDENT_TEXT.zh)
    by_cause = Counter(r.cause for r in counted + not_answers if r.cause)
    for cause, _count in sorted(by_cause.items()):
        group = [r for r in counted + not_answers if r.cause == cause]
        text = CAUSE_TEXT[Cause(cause)]
        extra = _limit_phrase(group)
        en.append(f"{_ids(group)}: {text.en}{extra}.")
        zh.append(f"{_ids(group)}：{text.zh}{extra}。")

    if status == "supported":
        adaptation = Text(en="No API adaptation needed: the API works on the device.",
                          zh="无需适配，API 已支持。")
    elif status == DEVICE_INDEPENDENT:
        adaptation = Text(en="No API adaptation needed: the API runs no device operator of its own "
                             "(host-only evidence), so it behaves the same on any device.",
                          zh="无需适配：该 API 本身不下发设备算子（仅主机侧证据），与设备无关。")
    elif status in ("partial", "unsupported"):
        kinds_en = "; ".join(sorted({CAUSE_TEXT[Cause(r.cause)].en for r in limits}))
        kinds_zh = "；".join(sorted({CAUSE_TEXT[Cause(r.cause)].zh for r in limits}))
        adaptation = Text(
            en=f"No API code adaptation needed. {_ids(limits)} cannot run: {kinds_en} — "
               "a limit of the device or build, not a problem of the API's implementation.",
            zh=f"无需代码适配。{_ids(limits)} 无法运行：{kinds_zh}，属设备或编译配置限制，非 API 实现问题。")
    elif status == "broken":
        en_, zh_ = (f"Adaptation needed: {_ids(broken)} behave differently on the device than on the CPU.",
                    f"需要适配：{_ids(broken)} 在设备上的行为与 CPU 不一致。")
        path = [r for r in broken if r.cause == Cause.DEVICE_PATH.value]
        if path:
            en_ += (f" {_ids(path)} differ because the API itself dispatches other ops or dtypes on the "
                    "device: the fix belongs in the API's device-type branch, not in a kernel.")
            zh_ += f"{_ids(path)} 的差异来自 API 自身在设备上下发了不同的算子或数据类型：应修改 API 中按设备类型分支的逻辑，而非算子实现。"
        adaptation = Text(en=en_, zh=zh_)
    else:
        adaptation = Text(en="Undecided: the scenarios could not be judged (see details).",
                          zh="无法判定：场景未能完成判定（见详情）。")

    if status == "unknown":  # nothing measured: no category rule may fire
        return Verdict(status=status, category=UNDETERMINED, category_rule=None,
                       category_reason=UNDETERMINED_TEXT, causes=causes,
                       summary=Text(en=" ".join(en), zh="".join(zh)), adaptation=adaptation,
                       evidence=evidence)
    facts = dict(facts, evidence=evidence)
    rule = categorise(facts, rules)
    return Verdict(
        status=status,
        category=rule.id if rule else None,
        category_rule=rule.name if rule else None,
        category_reason=Text(en=rule.en.strip(), zh=rule.zh.strip()) if rule else None,
        causes=causes,
        summary=Text(en=" ".join(en), zh="".join(zh)),
        adaptation=adaptation,
        evidence=evidence,
    )
