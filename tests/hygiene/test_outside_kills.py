"""A process killed by a signal the device does not send (SIGKILL under memory pressure, a
user's kill) is no answer of the device: the case (a worker) or the world (its ranks) runs
once more, and a second such kill is ``harness_error`` — never ``crash`` or
``error/device_error``. A rank's own crash (SIGSEGV) stays the device's answer, a rank
that hangs past the world's time limit is ``timeout``."""

import os
import signal
import threading
import time

import pytest
import torch

from tests.hygiene.conftest import tree_of
from torchparity.devices import get_adapter
from torchparity.results.models import Text
from torchparity.run.execute import execute
from torchparity.run.pool import WorkerPool
from torchparity.run.slot import Slot
from torchparity.scenarios.registry import Scenario
from torchparity.scenarios.sources import world as W

KILLED = '''
@scenario("torch.abs", "hyg_killed_once", en="killed from outside once", zh="被外部杀死一次",
          expect_en="retried", expect_zh="重试", compare="none")
def killed_once(device, dtype):
    flag = __file__ + ".killed"
    if not os.path.exists(flag):
        open(flag, "w").close()
        os.kill(os.getpid(), 9)  # as the OOM killer would
    return 1


@scenario("torch.abs", "hyg_killed_always", en="killed from outside each time", zh="每次都被杀死",
          expect_en="harness error", expect_zh="工具错误", compare="none")
def killed_always(device, dtype):
    os.kill(os.getpid(), 9)


@scenario("torch.abs", "hyg_segv", en="segfaults", zh="段错误", expect_en="crash",
          expect_zh="崩溃", compare="none")
def segv(device, dtype):
    os.kill(os.getpid(), 11)
'''


TEXT = Text(en="a case", zh="用例")


def _case(sid):
    return {"kind": "suite", "api": "torch.abs", "scenario": sid, "dtype": "float32"}


def _by_id(events, ids):
    return {ids[e.index]: e for e in events}


@pytest.mark.slow  # 7-13 s: run by .ci/run in the slow suite, keeping the default run under 10 min
def test_the_pool_retries_an_outside_kill_once_then_says_harness_error(procs):
    path = procs.scenario_file(KILLED)
    ids = ["hyg_killed_once", "hyg_killed_always"]  # a SIGSEGV stays crash: tests/run/test_pool.py
    events = []
    WorkerPool({"device": "cpu", "modules": [str(path)]}, jobs=1).run(
        [_case(i) for i in ids], [60] * 2, events.append)
    got = _by_id(events, ids)
    assert len(events) == 2
    once = got["hyg_killed_once"]
    assert once.kind == "result" and once.payload["result"]["status"] == "pass", once
    always = got["hyg_killed_always"]
    assert always.kind == "result" and "killed from outside twice" in always.payload["harness_error"]
    assert "SIGKILL" in always.payload["harness_error"]


def test_a_device_slot_retries_an_outside_kill_too(procs):
    path = procs.scenario_file(KILLED, name="hyg_slot_scenarios.py")
    slot = Slot({"device": "cpu", "modules": [str(path)]})
    try:
        always = slot.run(0, _case("hyg_killed_always"), 60)
    finally:
        slot.close()
    assert always.kind == "result" and "harness_error" in always.payload, always


def test_the_report_rows_of_an_outside_kill_are_harness_errors():
    from torchparity.app.check import case_result
    from torchparity.run.answer import answer_of
    from torchparity.run.pool import CaseEvent, outside_kill_event

    sc = Scenario(id="x", api="torch.abs", fn=lambda d, t: 1, description=TEXT, expected=TEXT)
    result, _ = case_result(answer_of(outside_kill_event(0, -9, "", 1.0)), sc, "float32", False)
    assert (result.status, result.cause) == ("error", "harness_error")
    crash, _ = case_result(answer_of(CaseEvent(0, "crash", detail="worker died: SIGSEGV")), sc, "float32", False)
    assert crash.status == "crash"


# -- the world runner ----------------------------------------------------------------------

class _Proc:
    def __init__(self, code):
        self.returncode = code


@pytest.mark.parametrize("codes, killed, waited, kind", [
    ({1: -9}, set(), "grace", W.WorldKilled),        # rank 1 SIGKILLed by someone else
    ({1: -15}, set(), "grace", W.WorldKilled),       # ... or SIGTERMed
    ({0: -9, 1: -11}, {0}, "grace", W.WorldError),   # rank 1's own crash: the device's answer
    ({0: -9, 1: -9}, {0, 1}, "timeout", W.WorldTimeout),  # both killed here at the limit
    ({0: -9, 1: -9}, {0}, "grace", W.WorldKilled),   # rank 1 killed outside, rank 0 by us after
])
def test_a_world_failure_names_who_ended_the_rank(codes, killed, waited, kind):
    exc = W.world_failure(codes, killed, waited, lambda r: "")
    assert type(exc) is kind, exc


def test_a_world_is_started_once_more_after_an_outside_kill_only():
    calls = []

    def start(fail_with):
        def run():
            calls.append(1)
            if len(calls) <= len(fail_with):
                raise fail_with[len(calls) - 1]
            return "world"
        return run

    assert W.retried_once(start([W.WorldKilled("x")])) == "world" and len(calls) == 2
    calls.clear()
    with pytest.raises(W.WorldKilled):
        W.retried_once(start([W.WorldKilled("x"), W.WorldKilled("y")]))
    calls.clear()
    with pytest.raises(W.WorldError):  # a crash is not retried: it is the answer
        W.retried_once(start([W.WorldError("segv")]))
    assert len(calls) == 1


@pytest.mark.parametrize("exc, status, cause", [
    (W.WorldKilled("rank 1 was killed by signal 9 from outside"), "error", "harness_error"),
    (W.WorldTimeout("rank 0 hung"), "timeout", "timeout"),
    (W.WorldError("rank 1 exited with -11"), "error", "device_error"),
])
def test_a_world_failure_on_the_device_is_judged_by_who_failed(exc, status, cause):
    def fn(device, dtype):
        if device != "cpu":
            raise exc
        return torch.ones(2)

    sc = Scenario(id="w", api="torch.distributed.all_reduce", fn=fn, description=TEXT, expected=TEXT)
    result, _ = execute(sc, "float32", get_adapter("emu:ascend-a2"))
    assert (result.status, result.cause) == (status, cause), result.detail


def _ranks_of_this_process():
    """The world's ranks: the children of this process's rank zygote (the zygote itself,
    whose command line names the world module too, is not a rank)."""
    from torchparity.scenarios.sources import world

    zygote = world.zygote_pid()
    return [p for p in tree_of(os.getpid()) if p != zygote and _cmdline(p).find("sources.world") >= 0]


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.slow
def test_a_rank_killed_from_outside_gets_a_new_world(monkeypatch):
    """A real world: rank 1 SIGKILLed from here while it runs; the world starts again and
    the case answers as if nothing happened (two world starts: slow on a loaded machine).
    Its ranks are fresh interpreters (``TORCHPARITY_WORLD_SPAWN=exec``): a forked world ends
    before a watcher can see it; a forked rank's outside kill is tests/scenarios/test_world_zygote.py's."""
    monkeypatch.setenv(W.SPAWN_ENV, "exec")
    done = threading.Event()
    victims = []

    def killer():
        while not done.is_set() and not victims:
            ranks = _ranks_of_this_process()
            if len(ranks) == 2:
                time.sleep(0.5)
                victim = max(ranks)
                os.kill(victim, signal.SIGKILL)
                victims.append(victim)
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        got = W.run_world("all_reduce_sum", "cpu", torch.float32)
    finally:
        done.set()
        thread.join()
    assert victims, "no rank was seen to kill"
    assert len(got) == 2 and torch.equal(got[0], got[1])
