"""Issue 18 items 3 and 4, issue 20 item 7: evidence derived from the footprint, what is
not an answer is never counted, causes name the first real difference."""

import torch

from torchparity.api.footprint import FootprintRecorder
from torchparity.judge.aggregate import Part, SampleOutcome, aggregate
from torchparity.judge.compare import compare_outputs
from torchparity.judge.evidence import api_evidence, from_footprint, row_evidence
from torchparity.judge.judgement import Judgement
from torchparity.judge.verdict import decide
from torchparity.results.error_rules import classify_exception
from torchparity.results.models import Analysis, Cause, FootprintEntry, ScenarioResult, Status

ANALYSIS = Analysis(qualified_name="x.f", kind="function", implementation="python_function")
FACTS = {"involvement": "indirect", "implementation": "python_function", "harness": False}
# what fully_shard's 2-rank world reports on emu:ascend-a2 (its rank 0's first line)
FULLY_SHARD = ("EmulatorFeatureError: resizing a npu storage (UntypedStorage.resize_) is not "
               "supported by the emulated device (rank 0)")


def _e(op, source="api"):
    return FootprintEntry(op=op, source=source, count=1, dtypes=["float32"])


def _r(sid, status="pass", cause=None, evidence=None, source="hand"):
    return ScenarioResult(id=sid, dtype="float32", status=status, cause=cause, evidence=evidence,
                          source=source)


def test_evidence_comes_from_who_issued_which_ops():
    assert from_footprint([_e("aten.mm"), _e("aten._to_copy", "scenario")]) == "device-compute"
    assert from_footprint([_e("aten.mul", "callable")]) == "device-compute"
    assert from_footprint([_e("aten.empty_like")]) == "device-state"  # strides, dtype, no values
    assert from_footprint([_e("runtime.npu.memory_allocated")]) == "device-state"  # a counter
    # nothing of the API's own, but device work under the state it set up (enter_dual_level)
    assert from_footprint([_e("aten.is_same_size", "scenario"), _e("aten._to_copy", "scenario")]) \
        == "device-state"
    # moving inputs there and reading back is no device work: host-only
    assert from_footprint([_e("aten._to_copy", "scenario"), _e("aten._local_scalar_dense", "scenario"),
                           _e("runtime.accelerator.is_available", "scenario")]) == "host-only"
    assert from_footprint([]) == "host-only"


def test_not_an_answer_has_no_evidence():
    compute = [_e("aten.mm")]
    for status, cause in (("timeout", "timeout"), ("error", "harness_error"), ("skip", "emulator_limit"),
                          ("skip", "not_comparable")):
        assert row_evidence(status, cause, compute) == "none", (status, cause)
    assert row_evidence("crash", "crash", [], recorded=False) == "none"  # nothing recorded
    assert row_evidence("unsupported", "dtype_limit", compute) == "device-compute"  # a refusal answers
    assert api_evidence([_r("a", evidence="host-only"), _r("b", "timeout", "timeout", "device-compute")]) \
        == "host-only"


def test_a_recorded_host_only_call_and_a_device_module_counter(tmp_path):
    """The recorder itself: a build query touches no device op; a device-module call is a
    runtime entry attributed to the API it answers for."""
    rec = FootprintRecorder("cpu", api_objects=[torch.backends.mkl.is_available], runtime=True)
    with rec:
        torch.backends.mkl.is_available()
    assert from_footprint(rec.entries()) == "host-only"
    rec = FootprintRecorder("cpu", api_objects=[torch.cpu.synchronize], runtime=True)
    with rec:
        torch.cpu.synchronize()
    assert [(e.op, e.source) for e in rec.entries()] == [("runtime.cpu.synchronize", "api")]
    assert from_footprint(rec.entries()) == "device-state"
    assert torch.cpu.synchronize.__name__ == "synchronize" and not hasattr(torch.cpu.synchronize, "__wrapped__")


def test_host_only_rows_make_a_device_independent_api_in_1_2():
    v = decide(ANALYSIS, [_r("is_available", evidence="host-only")], FACTS, "npu")
    assert (v.status, v.category, v.evidence) == ("device-independent", "1.2①", "host-only")
    assert v.category_rule == "device-independent" and "与设备无关" in v.summary.zh
    assert "host-only" in v.summary.en and "no device operator" in v.adaptation.en
    # one device-state answer is enough to leave it: enter_dual_level stays 1.1①
    v = decide(ANALYSIS, [_r("a", evidence="host-only"), _r("b", evidence="device-state")], FACTS, "npu")
    assert (v.status, v.category) == ("supported", "1.1①")


def test_fully_shard_is_an_emulator_limit_and_not_counted():
    status, cause = classify_exception("RuntimeError", FULLY_SHARD)
    assert (status, cause) == (Status.SKIP, Cause.EMULATOR_LIMIT)
    row = _r("world2-fully_shard", status.value, cause.value, evidence="none", source="distpar")
    v = decide(ANALYSIS, [row], {"involvement": "none", "harness": False}, "npu (emulated: ascend-a2)")
    assert (v.status, v.category) == ("unknown", "undetermined")  # never 1.2① feature_limit
    assert v.causes == ["emulator_limit"] and "needs hardware to decide" in v.summary.en
    assert "需要在硬件上判定" in v.summary.zh
    # the chip's own capability rule (the emulator names the profile) stays the chip's answer
    status, cause = classify_exception(
        "RuntimeError", "autocast on 'npu' is not supported by the emulated device (profile 'ascend-a2')")
    assert cause == Cause.FEATURE_LIMIT


def test_timeouts_harness_errors_and_outside_kills_are_not_answers():
    passed = _r("ok", evidence="device-compute")
    timed_out = _r("slow", "timeout", "timeout")
    v = decide(ANALYSIS, [passed, timed_out], FACTS, "npu")
    assert v.status == "supported" and "1 of 1 scenarios pass" in v.summary.en
    assert "1 not answered (not counted)" in v.summary.en
    assert decide(ANALYSIS, [timed_out], FACTS, "npu").status == "unknown"
    killed = classify_exception("RuntimeError", "rank 1 exited with -9 without a result: ")
    assert killed == (Status.ERROR, Cause.HARNESS_ERROR)  # never device_error, never crash
    aborted = classify_exception("RuntimeError", "rank 1 exited with -6 without a result: ")
    assert aborted == (Status.CRASH, Cause.CRASH)  # the device run itself died


def test_a_dtype_difference_is_metadata_even_beside_a_value_difference():
    cpu = [torch.ones(3), torch.ones(2, dtype=torch.float16)]
    dev = [torch.full((3,), 2.0), torch.ones(2, dtype=torch.float32)]
    j = compare_outputs(cpu, dev, "cpu")
    assert (j.status, j.cause) == (Status.FAIL, Cause.METADATA) and "dtype" in j.detail


def test_samples_name_metadata_before_values():
    meta = Part("fail", Judgement(Status.FAIL, Cause.METADATA, "dtype torch.float32, CPU gave torch.float16"))
    values = Part("fail", Judgement(Status.FAIL, Cause.MISMATCH, "values differ"))
    r = aggregate([SampleOutcome(values), SampleOutcome(meta)])
    assert (r.status, r.cause) == ("fail", "metadata")


def test_emulator_limited_samples_are_left_out_of_a_case():
    ok = Part("pass", Judgement(Status.PASS, None, ""))
    emu = Part("unsupported", Judgement(Status.SKIP, Cause.EMULATOR_LIMIT, "sparse CSR: not supported"))
    r = aggregate([SampleOutcome(ok), SampleOutcome(emu)])
    assert r.status == "pass" and "emulator limit" in r.detail  # the chip refused nothing
    r = aggregate([SampleOutcome(emu)])
    assert (r.status, r.cause) == ("skip", "emulator_limit") and "needs hardware" in r.detail


def test_a_world_whose_device_work_the_recorder_cannot_see_is_not_host_only():
    """A 2-rank world runs its device ops in rank processes: the worker's empty footprint
    says nothing, so the row's evidence is "none" (not recorded), never host-only."""
    from torchparity.app.check import case_result
    from torchparity.results.models import Text
    from torchparity.run.answer import answer_of
    from torchparity.run.pool import CaseEvent
    from torchparity.scenarios.registry import Scenario

    t = Text(en="x", zh="x")
    row = ScenarioResult(id="w", dtype="float32", status="pass").model_dump(mode="json")
    event = answer_of(CaseEvent(index=0, kind="result",
                                payload={"status": "pass", "result": row, "footprint": []}))
    world = Scenario(id="w", api="torch.distributed.all_reduce", fn=lambda d, t: None, description=t,
                     expected=t, tags=("distributed",), source="distributed")
    assert case_result(event, world, "float32", True)[0].evidence == "none"
    local = Scenario(id="w", api="torch.backends.mkl.is_available", fn=lambda d, t: None,
                     description=t, expected=t, source="devmod")
    assert case_result(event, local, "float32", True)[0].evidence == "host-only"
    timed_out = answer_of(CaseEvent(index=0, kind="timeout", detail="no answer in 120 s"))
    assert case_result(timed_out, local, "float32", True)[0].evidence == "none"


def test_a_footprint_with_an_unrecorded_part_is_not_evidence():
    """Part of a case ran where no recorder reached (a rank that sent no footprint): the
    world says so (an UNRECORDED entry) and the row is "not recorded", never host-only."""
    from torchparity.api.footprint import UNRECORDED
    from torchparity.judge.evidence import row_evidence

    seen = [FootprintEntry(op="aten._to_copy", source="scenario", count=1, dtypes=["float32"])]
    assert row_evidence("pass", None, seen) == "host-only"
    partial = seen + [FootprintEntry(op=UNRECORDED, source="scenario", count=1, dtypes=[])]
    assert row_evidence("pass", None, partial) == "none"
