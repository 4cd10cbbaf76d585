"""Nothing orphaned, no false timeouts (issue 10, points 1-3).

Each test starts real processes, marks them (a ``sleep`` of a length unique to the test,
or pids it records) and checks the process table; the ``procs`` fixture kills whatever
is left, pass or fail.
"""

import os
import signal
import subprocess
import sys

from torchparity.run.pool import WorkerPool

CHILDREN = '''
@scenario("torch.abs", "hyg_children", en="starts processes", zh="启动子进程",
          expect_en="they end with the case", expect_zh="随用例结束")
def children(device, dtype):
    import torch
    subprocess.Popen(["sleep", MARK + ".1"])                          # same group
    subprocess.Popen(["sleep", MARK + ".2"], start_new_session=True)  # a new session
    # a double fork in a new session: the middle process exits at once, its child is orphaned
    subprocess.Popen(["sh", "-c", "sleep " + MARK + ".3 & exit 0"], start_new_session=True).wait()
    return torch.abs(torch.tensor([-1.0, 2.0], device=device))  # what it answers about its API


@scenario("torch.abs", "hyg_children_then_hang", en="starts a process, then hangs",
          zh="启动子进程后挂起", expect_en="timeout", expect_zh="超时", compare="none")
def children_then_hang(device, dtype):
    subprocess.Popen(["sleep", MARK + ".4"], start_new_session=True)
    subprocess.Popen(["sh", "-c", "sleep " + MARK + ".5 & exit 0"], start_new_session=True).wait()
    open(__file__ + ".started", "w").close()
    time.sleep(3600)
'''


def _case(scenario, footprint=False):
    return {"kind": "suite", "api": "torch.abs", "scenario": scenario, "dtype": "float32",
            "footprint": footprint}


def test_scenario_children_end_with_every_case(procs):
    path = procs.scenario_file(CHILDREN)
    seen = []

    def on_event(event):
        # the worker ends the case's processes before it reports the result
        seen.append((event.kind, event.payload.get("result", {}).get("status"), procs.left()))

    pool = WorkerPool({"device": "cpu", "modules": [str(path)]}, jobs=1)
    pool.run([_case("hyg_children", footprint=True), _case("hyg_children")], [60, 60], on_event)
    assert [s[:2] for s in seen] == [("result", "pass"), ("result", "pass")]
    assert [s[2] for s in seen] == [[], []], "processes of a finished case still running"
    assert procs.wait_gone(5)


def test_a_timeout_kills_the_new_session_children_too(procs):
    path = procs.scenario_file(CHILDREN)
    events = []
    pool = WorkerPool({"device": "cpu", "modules": [str(path)]}, jobs=1)
    pool.run([_case("hyg_children_then_hang")], [6], events.append)
    assert [e.kind for e in events] == ["timeout"]
    assert os.path.exists(f"{path}.started"), "the case did not get to start its processes"
    assert procs.wait_gone(5), f"left after the timeout: {procs.left()}"


CRASH = '''
@scenario("torch.abs", "hyg_children_then_crash", en="starts processes, then segfaults",
          zh="启动子进程后崩溃", expect_en="crash", expect_zh="崩溃", compare="none")
def children_then_crash(device, dtype):
    import signal
    subprocess.Popen(["sleep", MARK + ".8"])
    subprocess.Popen(["sleep", MARK + ".9"], start_new_session=True)
    subprocess.Popen(["sh", "-c", "sleep " + MARK + ".10 & exit 0"], start_new_session=True).wait()
    os.kill(os.getpid(), signal.SIGSEGV)
'''


def test_a_crashed_worker_leaves_no_children(procs):
    """The worker cannot clean up after a segfault; the pool, a subreaper while it runs,
    adopts what the worker left and ends it."""
    path = procs.scenario_file(CRASH)
    events = []
    pool = WorkerPool({"device": "cpu", "modules": [str(path)]}, jobs=1)
    pool.run([_case("hyg_children_then_crash")], [60], events.append)
    assert [e.kind for e in events] == ["crash"] and "SIGSEGV" in events[0].detail
    assert procs.wait_gone(5), f"left after the crash: {procs.left()}"


HANG = '''
@scenario("torch.abs", "hyg_hang", en="starts a process, then hangs", zh="挂起",
          expect_en="-", expect_zh="-", compare="none")
def hang(device, dtype):
    subprocess.Popen(["sleep", MARK + ".6"], start_new_session=True)
    subprocess.Popen(["sleep", MARK + ".7"])
    time.sleep(3600)
'''

MAIN = '''
import sys
from torchparity.run.pool import WorkerPool

pool = WorkerPool({"device": "cpu", "modules": [sys.argv[1]]}, jobs=2)
case = {"kind": "suite", "api": "torch.abs", "scenario": "hyg_hang", "dtype": "float32"}
try:
    pool.run([case, case], [300, 300], lambda event: None)
except KeyboardInterrupt as exc:
    print(type(exc).__name__, flush=True)
    sys.exit(143)
'''


def _main_killed_by(sig, procs):
    path = procs.scenario_file(HANG)
    main = subprocess.Popen([sys.executable, "-c", MAIN, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    procs.watch.append(main.pid)
    try:
        assert procs.wait_running(4), "the hanging scenarios did not start"
        workers = procs.tree(main.pid)
        procs.watch.extend(workers)
        assert len(workers) >= 6  # two workers, two sleeps each
        main.send_signal(sig)
        out, _ = main.communicate(timeout=30)
        assert procs.wait_gone(15), f"left after the main process got {sig!r}: {procs.left()}"
        return main.returncode, out
    finally:
        if main.poll() is None:
            main.kill()
            main.wait()


def test_workers_and_their_children_die_with_a_killed_main_process(procs):
    code, _ = _main_killed_by(signal.SIGKILL, procs)
    assert code == -signal.SIGKILL


def test_sigterm_to_the_main_process_ends_its_workers(procs):
    code, out = _main_killed_by(signal.SIGTERM, procs)
    assert code == 143 and out.strip() == "Terminated"


WARM = '''
@scenario("torch.abs", "hyg_dynamo_ready", en="reports whether torch._dynamo is imported",
          zh="报告 torch._dynamo 是否已导入", expect_en="-", expect_zh="-")
def dynamo_ready(device, dtype):
    import torch
    ready = "torch._dynamo" in sys.modules  # before the case's own torch calls
    return {"ready": ready, "abs": torch.abs(torch.tensor([-1.0], device=device))}
'''


def test_first_case_finds_the_footprint_imports_done(procs):
    """The footprint recorder reaches torch._dynamo (seconds to import); a fresh worker
    imports it before "ready", so the first case's clock does not pay for it."""
    path = procs.scenario_file(WARM)
    events = []
    pool = WorkerPool({"device": "cpu", "modules": [str(path)]}, jobs=1)
    pool.run([_case("hyg_dynamo_ready", footprint=True)], [120], events.append)
    detail = events[0].payload["result"]["detail"]
    assert events[0].payload["result"]["status"] == "pass" and "'ready': True" in detail, detail
    assert len(pool.warmups) == 1 and pool.warmups[0] > 0


def test_warm_up_is_off_the_case_clock(procs, monkeypatch):
    """A warm-up of 4 s and a case limited to 2 s: the case passes, the warm-up is reported."""
    (procs.tmp / "hyg_slow_import.py").write_text("import time\ntime.sleep(4)\n", encoding="utf-8")
    path = procs.scenario_file(WARM)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(procs.tmp), os.environ.get("PYTHONPATH", "")]))
    events = []
    pool = WorkerPool({"device": "cpu", "modules": [str(path)], "warm": ["hyg_slow_import"]},
                      jobs=1, env=env)
    pool.run([_case("hyg_dynamo_ready")], [2], events.append)
    assert [e.kind for e in events] == ["result"]
    assert events[0].seconds < 2 and pool.warmups[0] >= 4


def test_check_terminated_keeps_its_report_and_leaves_nothing(procs):
    """The reported case: `check --scenarios hang.py --timeout 300`, then kill -TERM."""
    path = procs.scenario_file(HANG)
    out = procs.tmp / "out"
    main = subprocess.Popen([sys.executable, "-m", "torchparity", "check", "torch.abs", "--device",
                             "cpu", "--scenarios", str(path), "--timeout", "300", "--out", str(out),
                             "-q", "--no-html", "--no-screenshot"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.watch.append(main.pid)
    try:
        assert procs.wait_running(2, timeout=90), "the hanging scenario did not start"
        procs.watch.extend(procs.tree(main.pid))
        main.send_signal(signal.SIGTERM)
        _, err = main.communicate(timeout=60)
    finally:
        if main.poll() is None:
            main.kill()
            main.wait()
    assert procs.wait_gone(15), f"left after kill -TERM: {procs.left()}"
    assert main.returncode == 143, err
    assert err.strip().splitlines()[-1] == "torchparity: terminated; what was recorded so far is kept"
    assert (out / "report.json").is_file()
