"""Choosing the executor, and the single-worker slot a Ray actor hosts (Ray needed only where a test says so)."""

import subprocess
import sys
from types import SimpleNamespace

import pytest
from support import require_ray

from torchparity.errors import InputError
from torchparity.run import executors
from torchparity.run.pool import WorkerPool
from torchparity.run.ray_executor import slot_resources
from torchparity.run.slot import Slot


def _case(sid, api="tp_fixture_scenarios.target"):
    return {"kind": "suite", "api": api, "scenario": sid, "dtype": "float32"}


@pytest.mark.slow
def test_slot_gives_the_pools_events_and_goes_on_after_a_crash(fixture_path):
    slot = Slot({"device": "cpu", "modules": ["tp_fixture_scenarios"]})
    try:
        first = slot.run(0, _case("before"), 30)
        crash = slot.run(1, _case("segfault"), 30)
        timeout = slot.run(2, _case("sleeps"), 2)  # on a fresh worker after the crash
        assert slot.worker is None  # the overrun worker was killed
    finally:
        slot.close()
    assert first.kind == "result" and first.payload["result"]["status"] == "pass"
    assert crash.kind == "crash" and "SIGSEGV" in crash.detail and crash.index == 1
    assert "again on a fresh worker" in crash.detail  # its first worker had run "before"
    assert timeout.kind == "timeout" and "2 s" in timeout.detail and timeout.index == 2
    assert len(slot.warmups) == 3


@pytest.mark.slow
def test_slot_gives_a_crash_after_other_cases_a_fresh_worker(fixture_path):
    slot = Slot({"device": "cpu", "modules": ["tp_fixture_poisoned"]})
    case = {"kind": "suite", "api": "tp_fixture_poisoned.target", "dtype": "float32"}
    try:
        slot.run(0, dict(case, scenario="first"), 30)
        again = slot.run(1, dict(case, scenario="poisoned"), 30)
    finally:
        slot.close()
    assert again.kind == "result" and again.payload["result"]["status"] == "pass"


def test_each_device_asks_ray_for_its_own_resource():
    assert slot_resources("npu", emulated=False) == ("NPU", 1.0)
    assert slot_resources("cuda", emulated=False) == ("GPU", 1.0)
    assert slot_resources("cpu", emulated=False) == ("CPU", 1.0)
    assert slot_resources("npu", emulated=True) == ("CPU", 1.0)  # the emulator runs on a CPU
    with pytest.raises(InputError, match="mps"):
        slot_resources("mps", emulated=False)


def test_ray_slots_see_one_device_and_one_cpu_thread_where_they_have_one_cpu():
    require_ray()  # make_executor("ray") checks that Ray is importable
    npu = SimpleNamespace(type="npu", emulated=False, spec="npu:3")
    emu = SimpleNamespace(type="npu", emulated=True, spec="emu:ascend-a2")
    init = {"device": "x", "modules": [], "options": {"threads": 8}}
    on_npu = executors.make_executor("ray", dict(init, device=npu.spec), jobs=None,
                                     extra_env={}, adapter=npu)
    on_emu = executors.make_executor("ray", dict(init, device=emu.spec), jobs=3,
                                     extra_env={"A": "1"}, adapter=emu)
    assert on_npu.init["device"] == "npu" and "threads" not in on_npu.init["options"]
    assert on_npu.resources == {"NPU": 1.0} and on_npu.jobs is None
    assert on_emu.init["device"] == "emu:ascend-a2" and on_emu.init["options"]["threads"] == 1
    assert on_emu.resources == {"CPU": 1.0} and on_emu.extra_env == {"A": "1"}
    local = executors.make_executor("local", init, jobs=None, extra_env={"A": "1"}, adapter=emu)
    assert isinstance(local, WorkerPool) and local.jobs == 1 and local.env["A"] == "1"


def test_bad_executor_choices_are_refused(monkeypatch):
    with pytest.raises(InputError, match="unknown"):
        executors.check_executor("dask")
    with pytest.raises(InputError, match="needs --executor ray"):
        executors.check_executor("local", "auto")
    monkeypatch.setattr(executors.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"torchparity\[ray\]"):
        executors.check_executor("ray")


def test_executor_ray_without_ray_installed_is_one_line_and_exit_2(tmp_path):
    hide_ray = ("import sys; sys.modules['ray'] = None; sys.argv = sys.argv[1:]; "
                "from torchparity.cli import main; main()")
    api_file = tmp_path / "apis.txt"
    api_file.write_text("torch.abs\n")
    for command in (["sweep", "--apis", str(api_file), "--device", "cpu"],
                    ["check", "torch.abs", "--device", "cpu"]):
        proc = subprocess.run([sys.executable, "-c", hide_ray, "torchparity", *command,
                               "--out", str(tmp_path / "out"), "--executor", "ray"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().splitlines() == [f"torchparity: {executors.RAY_MISSING}"]
    assert not (tmp_path / "out").exists()  # refused before anything was prepared
