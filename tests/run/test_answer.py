"""The one worker answer: built where a case is judged, read back from every pool event."""

import pytest
from pydantic import ValidationError

from torchparity.results.models import ScenarioResult
from torchparity.run.answer import Answer, answer_of, from_result, harness_error
from torchparity.run.pool import CaseEvent, outside_kill_event


def test_a_scenario_run_answers_its_row_beside_its_whole_result():
    result = ScenarioResult(id="x", dtype="float32", status="fail", cause="mismatch", detail="d",
                            tags=["warn"])
    wire = from_result(result, footprint=[]).wire()
    assert (wire["status"], wire["cause"], wire["detail"]) == ("fail", "mismatch", "d")
    back = answer_of(CaseEvent(0, "result", payload=wire))
    assert back.result.tags == ["warn"] and back.recorded and back.footprint == []
    assert not answer_of(CaseEvent(0, "result", payload=from_result(result).wire())).recorded


def test_a_catalogue_case_answers_the_same_shape():
    wire = Answer(status="unsupported", cause="dtype_limit", detail="no Double", counts={"samples": 2},
                  claimed=False, kind="values", seconds=0.5).wire()
    a = answer_of(CaseEvent(3, "result", payload=wire))
    assert (a.status, a.cause, a.claimed, a.counts) == ("unsupported", "dtype_limit", False, {"samples": 2})
    assert a.result is None and not a.recorded


def test_crash_timeout_and_harness_errors_are_answers_never_verdicts_on_the_device():
    crash = answer_of(CaseEvent(0, "crash", detail="SIGSEGV"))
    timeout = answer_of(CaseEvent(0, "timeout", detail="no result within 1 s"))
    killed = answer_of(outside_kill_event(0, -9, "", 1.0))
    assert (crash.status, crash.cause, crash.detail) == ("crash", "crash", "SIGSEGV")
    assert (timeout.status, timeout.cause) == ("timeout", "timeout")
    assert (killed.status, killed.cause) == ("error", "harness_error")
    assert "killed from outside" in killed.harness_error
    worker = answer_of(CaseEvent(0, "result", payload=harness_error("KeyError: 'x'").wire()))
    assert worker.detail == "torchparity failed on this case: KeyError: 'x'"


def test_a_payload_of_another_shape_is_refused_where_it_is_read():
    with pytest.raises(ValidationError):
        answer_of(CaseEvent(0, "result", payload={"status": "pass", "verdict": "fine"}))
    with pytest.raises(ValidationError):
        Answer(status="maybe")
