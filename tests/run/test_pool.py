from torchparity.run.pool import CaseEvent, WorkerPool


def _run(cases, timeouts, jobs=1, modules=()):
    events = []
    pool = WorkerPool({"device": "cpu", "modules": list(modules)}, jobs=jobs)
    pool.run(cases, timeouts, events.append)
    return {e.index: e for e in events}


def _case(sid, api="tp_fixture_scenarios.target"):
    return {"kind": "suite", "api": api, "scenario": sid, "dtype": "float32"}


def test_crash_and_timeout_are_recorded_and_the_rest_complete(fixture_path):
    cases = [_case("before"), _case("segfault"), _case("sleeps"), _case("after")]
    events = _run(cases, [30, 30, 2, 30], modules=["tp_fixture_scenarios"])
    assert events[0].kind == "result" and events[0].payload["result"]["status"] == "pass"
    assert events[1].kind == "crash" and "SIGSEGV" in events[1].detail
    assert events[2].kind == "timeout" and "2 s" in events[2].detail
    assert events[3].kind == "result" and events[3].payload["result"]["status"] == "pass"


def test_parallel_workers_finish_every_case(fixture_path):
    cases = [_case("before"), _case("after")] * 3
    events = _run(cases, [30] * 6, jobs=2, modules=["tp_fixture_scenarios"])
    assert sorted(events) == list(range(6))
    assert all(isinstance(e, CaseEvent) and e.kind == "result" for e in events.values())


def test_unknown_scenario_is_a_harness_error_not_a_crash(fixture_path):
    events = _run([_case("no_such_case")], [30], modules=["tp_fixture_scenarios"])
    assert "harness_error" in events[0].payload
