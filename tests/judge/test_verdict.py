from pathlib import Path

import pytest
import yaml

from torchparity.errors import InputError
from torchparity.judge.verdict import FACT_NAMES, RULES_FILE, categorise, decide, load_rules
from torchparity.results.models import Analysis, ScenarioResult


def _r(sid, status, cause=None, detail=""):
    return ScenarioResult(id=sid, dtype="float64", status=status, cause=cause, detail=detail)


ANALYSIS = Analysis(qualified_name="x.f", kind="function", implementation="python_function")
HARNESS = {"involvement": "direct", "implementation": "python_function", "harness": True}


def test_seed_categories():
    assert categorise(HARNESS).id == "1.2①"  # gradcheck, emit_itt
    assert categorise({"involvement": "direct", "harness": False}).id == "1.1①"  # unpack_dual
    assert categorise({"involvement": "indirect", "harness": False}).id == "1.1①"  # enter_dual_level
    assert categorise({"involvement": "none", "harness": False}).id == "1.2①"


def test_every_rule_is_reachable_and_uses_known_facts():
    rules = load_rules()
    for rule in rules.rules:
        assert set(rule.when) <= set(FACT_NAMES)
    reached = set()
    for inv in ("none", "indirect", "direct"):
        for harness in (True, False):
            for evidence in ("device-compute", "device-state", "host-only"):
                reached.add(categorise({"involvement": inv, "harness": harness,
                                        "evidence": evidence}, rules).name)
    assert reached == {r.name for r in rules.rules}


def test_partial_with_dtype_limit_names_the_op():
    results = [_r("slow_mul", "pass"),
               _r("fast_mul", "unsupported", "dtype_limit", "RuntimeError: \"dot_npu\" not implemented for 'Double'")]
    v = decide(ANALYSIS, results, HARNESS, "npu (emulated: ascend-a2)")
    assert v.status == "partial" and v.causes == ["dtype_limit"]
    assert "dot (Double)" in v.summary.en and "1 of 2" in v.summary.en
    assert "not a problem of the API" in v.adaptation.en and "非 API 实现问题" in v.adaptation.zh


def test_a_device_path_points_at_the_api_not_a_kernel():
    results = [_r("chunked", "fail", "device_path", "the API takes another code path on npu: ..."),
               _r("plain", "fail", "mismatch")]
    v = decide(ANALYSIS, results, HARNESS, "npu")
    assert v.status == "broken" and v.causes == ["device_path", "mismatch"]
    second = v.adaptation.en.split(". ", 1)[1]
    assert second.startswith("chunked[float64] differ because the API itself") and "plain" not in second
    assert "按设备类型分支" in v.adaptation.zh and "another code path" in v.summary.en


@pytest.mark.parametrize("statuses,expected", [
    (["pass", "pass"], "supported"),
    (["unsupported"], "unsupported"),
    (["pass", "fail"], "broken"),
    (["pass", "crash"], "broken"),
    (["skip"], "unknown"),
])
def test_status_aggregation(statuses, expected):
    cause = {"fail": "mismatch", "unsupported": "build_config", "crash": "crash"}
    results = [_r(f"s{i}", s, cause.get(s)) for i, s in enumerate(statuses)]
    assert decide(ANALYSIS, results, HARNESS, "npu").status == expected


def test_bad_rules_file_is_one_line(tmp_path: Path):
    bad = tmp_path / "rules.yaml"
    data = yaml.safe_load(RULES_FILE.read_text(encoding="utf-8"))
    data["rules"][0]["when"] = {"colour": "blue"}
    bad.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_rules(bad)
    assert "colour" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(InputError):
        load_rules(tmp_path / "missing.yaml")


def test_scenarios_of_a_source_that_all_failed_themselves_leave_the_api_unknown():
    """Issue 10 point 10: `check --scenarios mine.py` whose every scenario ends in
    harness_error was `partial` (exit 0) because OpInfo cases passed; what the user asked
    about was never judged, so the API is `unknown` (exit 1)."""
    mine = [_r(f"mine{i}", "error", "harness_error", "fails on the CPU too: ValueError") for i in range(2)]
    opinfo = [ScenarioResult(id="abs", dtype=d, status="pass", source="opinfo") for d in ("float32", "int64")]
    v = decide(ANALYSIS, mine + opinfo, HARNESS, "npu")
    assert v.status == "unknown" and v.category == "undetermined"
    # one of them judged: the rest failing in the harness is no longer the whole source,
    # and a harness error is not an answer (never counted): what was answered decides
    v = decide(ANALYSIS, mine[:1] + [_r("mine_ok", "pass")] + opinfo, HARNESS, "npu")
    assert v.status == "supported" and "1 not answered (not counted)" in v.summary.en
    assert decide(ANALYSIS, mine, HARNESS, "npu").status == "unknown"
