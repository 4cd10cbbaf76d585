"""``check --out`` keeps what it ran (issue 47, point 3): every case is in
``OUT/results.sqlite`` as it finishes, so ``kill -9`` loses at most the case in flight and
the same command run again resumes — the recorded cases are not run again, the bundle holds
them all. A finished check's store does not resume (the next run starts afresh); an
unfinished one is not mixed with another check (one line, exit 2, unless ``--force``)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from tests.hygiene.conftest import wait_for
from torchparity import cli

BODY = '''
import torch


def _count(name):
    with open(os.path.join(os.path.dirname(__file__), name + ".runs"), "a") as f:
        f.write("x")


@scenario("torch.abs", "hyg_quick_a", en="quick a", zh="快 a", expect_en="1", expect_zh="1",
          )
def quick_a(device, dtype):
    _count("a")
    return torch.abs(torch.tensor([-1.5, 2.0], device=device, dtype=dtype))


@scenario("torch.abs", "hyg_quick_b", en="quick b", zh="快 b", expect_en="1", expect_zh="1",
          )
def quick_b(device, dtype):
    _count("b")
    return torch.abs(torch.tensor([-3.0], device=device, dtype=dtype))


@scenario("torch.abs", "hyg_held", en="held the first time", zh="第一次被挂起", expect_en="1",
          expect_zh="1")
def held(device, dtype):
    _count("held")
    flag = os.path.join(os.path.dirname(__file__), "held.flag")
    if not os.path.exists(flag):
        open(flag, "w").close()
        time.sleep(600)  # the test kills the check meanwhile
    return torch.abs(torch.tensor([-0.5], device=device, dtype=dtype))
'''

OURS = ("hyg_quick_a", "hyg_quick_b", "hyg_held")


def _argv(path, out):
    return ["check", "torch.abs", "--device", "cpu", "--dtypes", "float32", "--max-samples", "1",
            "--scenarios", str(path), "--out", str(out), "-q", "--jobs", "2"]


def _rows(out):
    db = sqlite3.connect(str(out / "results.sqlite"))
    try:
        return {r[0] for r in db.execute("SELECT variant FROM results")}
    except sqlite3.OperationalError:  # not created yet
        return set()
    finally:
        db.close()


def _runs(path, name):
    f = path.parent / f"{name}.runs"
    return len(f.read_text()) if f.exists() else 0


@pytest.mark.slow  # two checks, one killed: ~40 s on a loaded machine
def test_kill_9_keeps_what_ran_and_the_same_command_resumes(procs, tmp_path):
    path = procs.scenario_file(BODY)
    out = tmp_path / "out"
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    first = subprocess.Popen([sys.executable, "-m", "torchparity", *_argv(path, out)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    procs.watch.append(first.pid)
    try:
        # every case but the held one recorded, the held one running: then kill -9 it all
        assert wait_for(lambda: (path.parent / "held.flag").exists()
                        and {"hyg_quick_a", "hyg_quick_b"} <= _rows(out), timeout=300)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    recorded = _rows(out)
    assert "hyg_held" not in recorded and not (out / "report.json").exists()
    ran = {n: _runs(path, n) for n in ("a", "b", "held")}

    again = subprocess.run([sys.executable, "-m", "torchparity", *_argv(path, out)], env=env,
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    # read back, not run again (a case body may run more than once: its API taken away)
    assert _runs(path, "a") == ran["a"] and _runs(path, "b") == ran["b"], (ran, again.stderr)
    assert _runs(path, "held") > ran["held"]  # the case in flight is the one lost
    report = json.loads((out / "report.json").read_text())
    rows = {s["id"]: s["status"] for a in report["apis"] for s in a["scenarios"]}
    assert all(rows[i] == "pass" for i in OURS), rows
    assert recorded <= set(rows) and "abs" in rows  # the recorded ones and those run now


def test_a_finished_check_starts_afresh_and_an_unfinished_one_is_not_mixed(
        tmp_path, monkeypatch, capsys):
    from torchparity.app.check_store import CheckRecord

    out = tmp_path / "out"
    out.mkdir()
    ident = {"apis": ["torch.abs"], "devices": ["cpu"], "options": {}}
    first = CheckRecord.open(out, ident)
    first.add(("torch.abs", "s", "suite", "float32"), {"status": "pass"}, _result(), [])
    first.close()  # killed here: unfinished
    again = CheckRecord.open(out, ident)
    assert again.resumed_count == 1
    assert again.recorded(("torch.abs", "s", "suite", "float32"))[0].status == "pass"
    again.close()

    # another check on that folder: one line, exit 2, nothing recorded lost
    monkeypatch.setattr(sys, "argv", ["torchparity", "check", "torch.neg", "--device", "cpu",
                                      "--out", str(out), "-q"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "unfinished check (torch.abs on cpu)" in err and "--force" in err
    assert _rows(out) == {"s"}

    finished = CheckRecord.open(out, ident)
    finished.finish()
    finished.close()
    fresh = CheckRecord.open(out, ident)  # a finished check does not resume
    assert fresh.resumed_count == 0 and _rows(out) == set()
    fresh.close()


def _result():
    from torchparity.results.models import ScenarioResult, Text

    t = Text(en="x", zh="x")
    return ScenarioResult(id="s", dtype="float32", description=t, expected=t, status="pass")
