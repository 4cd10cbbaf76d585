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
    assert "again on a fresh worker" in events[1].detail  # its first worker had run "before"
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


def test_a_worker_that_dies_after_other_cases_gets_the_case_again_on_a_fresh_one(fixture_path):
    """What killed the worker may be what an earlier case left in it, not the API: the case
    runs once more on a worker that ran nothing else, and that run is its answer."""
    case = {"kind": "suite", "api": "tp_fixture_poisoned.target", "dtype": "float32"}
    cases = [dict(case, scenario="first"), dict(case, scenario="poisoned"), dict(case, scenario="first")]
    for jobs in (1, 2):
        events = _run(cases, [30] * 3, jobs=jobs, modules=["tp_fixture_poisoned"])
        assert sorted(events) == [0, 1, 2]
        assert events[1].kind == "result", events[1].detail
        assert events[1].payload["result"]["status"] == "pass"


def test_a_case_put_back_after_the_others_finished_still_runs(fixture_path):
    """The other worker is idle when the poisoned case comes back: it must not wait for a
    worker nobody starts (it makes room for a fresh one)."""
    case = {"kind": "suite", "api": "tp_fixture_poisoned.target", "dtype": "float32"}
    cases = [dict(case, scenario="first"), dict(case, scenario="poisoned")]
    events = []
    pool = WorkerPool({"device": "cpu", "modules": ["tp_fixture_poisoned"]}, jobs=2)
    # worker 2 answers case 0 first, then worker 1 (also done with "first") meets the poison
    pool.run([cases[0], cases[0], cases[1]], [30] * 3, events.append)
    got = {e.index: e for e in events}
    assert sorted(got) == [0, 1, 2] and got[2].kind == "result"


def test_a_worker_started_before_the_cases_were_planned_runs_them(fixture_path):
    """``prestart``: the first worker sets up and warms up while the caller plans (check's
    latency, issue 47 point 5), and runs the cases first; a started worker no case took is
    ended."""
    import os
    import time

    pool = WorkerPool({"device": "cpu", "modules": ["tp_fixture_scenarios"]}, jobs=1)
    pool.prestart(1)
    pid = pool._early[0].proc.pid
    events = []
    pool.run([_case("before")], [60], events.append)
    assert events[0].kind == "result" and events[0].payload["result"]["status"] == "pass"
    assert not pool._early  # the started worker was the one used

    spare = WorkerPool({"device": "cpu", "modules": []}, jobs=1)
    spare.prestart(1)
    spare_pid = spare._early[0].proc.pid
    spare.discard()
    for _ in range(50):
        try:
            os.kill(spare_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the unused worker {spare_pid} is still running")
    assert pid != spare_pid


def _gone(pid: int) -> bool:
    import os
    import time

    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_spare_started_before_the_run_was_known_runs_its_cases(fixture_path):
    """A spare worker (``check`` starts one before it imports torch, issue 47 point 5)
    gets its init only when a pool adopts it, and runs that pool's cases first."""
    from torchparity.run.pool import SpareWorker

    spare = SpareWorker()
    pid = spare.pid
    pool = WorkerPool({"device": "cpu", "modules": ["tp_fixture_scenarios"]}, jobs=1)
    assert pool.adopt(spare) and spare.pid is None
    events = []
    pool.run([_case("before")], [60], events.append)
    assert events[0].kind == "result" and events[0].payload["result"]["status"] == "pass"
    assert not pool._early and _gone(pid)  # the spare was the worker used, and it exited
    spare.close()  # taken: nothing left to end


def test_a_spare_no_pool_took_or_could_take_is_ended(fixture_path):
    """Closed untaken (an unknown API name refused after it started), or offered to a pool
    whose workers get another environment: the spare is ended, never left behind or used."""
    from torchparity.run.pool import SpareWorker

    untaken = SpareWorker()
    pid = untaken.pid
    untaken.close()
    assert _gone(pid)

    other = SpareWorker()
    pid = other.pid
    pool = WorkerPool({"device": "cpu", "modules": []}, jobs=1, env={"TORCHPARITY_X": "1"})
    assert not pool.adopt(other)
    assert _gone(pid) and not pool._early
