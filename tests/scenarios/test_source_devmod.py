"""The devmod source: torch.cuda.* asked of the device module of the device under test,
torch.accelerator.*, backends flags and RNG APIs, on the emulated device and the CPU."""

import json
import subprocess
import sys

import pytest
import torch

from torchparity.devices.emulator._npu_members import MEMBERS, NPU_ALL, SOURCE
from torchparity.run.execute import execute
from torchparity.scenarios.sources import devmod, offer


def _run(api, adapter):
    (sc,) = devmod.scenarios(api, None)
    result, _ = execute(sc, "float32", adapter)
    return result


def test_only_its_namespaces_and_the_same_ids_when_asked_again():
    assert devmod.scenarios("torch.mm", torch.mm) == []
    assert "not a device-module" in devmod.why_not("torch.mm", torch.mm)
    first = [sc.id for sc in devmod.scenarios("torch.cuda.memory_allocated", None)]
    assert first == [sc.id for sc in devmod.scenarios("torch.cuda.memory_allocated", None)] == ["devmod_memory_allocated"]
    assert devmod.scenarios("torch.cuda.change_current_allocator", None) == []
    assert "shared library" in devmod.why_not("torch.cuda.change_current_allocator", None)
    found = offer("torch.cuda.Event.elapsed_time", None)
    assert found.tried["devmod"] == "1 scenario(s)"
    assert "finite float" in found.scenarios[0].description.en  # the reference is named


@pytest.mark.parametrize("api", ["torch.cuda.memory_allocated", "torch.cuda.Stream",
                                 "torch.cuda.set_rng_state", "torch.accelerator.memory.memory_stats",
                                 "torch.backends.cudnn.deterministic"])
def test_runs_on_the_emulated_device_and_matches(emu, api):
    result = _run(api, emu)
    assert result.status == "pass", result.detail
    assert result.emulated


def test_a_member_torch_npu_lacks_is_unsupported_on_the_emulated_device(emu):
    assert "memory_usage" not in NPU_ALL and not hasattr(torch.npu, "memory_usage")
    result = _run("torch.cuda.memory_usage", emu)
    assert (result.status, result.cause) == ("unsupported", "feature_limit")
    assert "torch.npu has no member memory_usage" in result.detail


def test_emulated_module_members_come_from_torch_npus_list(emu):
    assert SOURCE.startswith("Ascend/pytorch@")
    public = {n for n in vars(torch.npu) if not n.startswith("_")} - {"emulated", "profile_name"}
    assert public <= MEMBERS, sorted(public - MEMBERS)
    assert {"Stream", "Event", "memory_allocated", "NPUGraph", "amp"} <= public


def test_counters_that_do_not_move_fail(emu, monkeypatch):
    monkeypatch.setattr(torch.npu, "memory_allocated", lambda device=None: 0)
    result = _run("torch.cuda.memory_allocated", emu)
    assert result.status == "fail"
    assert "grows_by_nbytes" in result.detail


@pytest.mark.parametrize("api", ["torch.cuda.memory_allocated", "torch.cuda.Event.elapsed_time",
                                 "torch.cpu.StreamContext", "torch.accelerator.current_stream",
                                 "torch.random.fork_rng"])
def test_the_cpu_agrees_with_itself(cpu, api):
    result = _run(api, cpu)
    assert result.status == "pass", result.detail


@pytest.mark.slow
def test_ascend_profile_in_a_check(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "torchparity", "check", "torch.cuda.get_device_capability",
         "torch.cuda.CUDAGraph", "--device", "emu:ascend-a2", "--out", str(out), "--jobs", "1", "-q"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]  # 1: an API is broken (the fail below)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = {a["name"]: a["scenarios"][0] for a in report["apis"]}
    # torch_npu answers None without TORCH_NPU_DEVICE_CAPABILITY: not the promised pair
    assert rows["torch.cuda.get_device_capability"]["status"] == "fail"
    # NPUGraph exists on torch.npu, but capture cannot be emulated: the emulator's own
    # limit, not an answer about the chip (issue 18)
    assert (rows["torch.cuda.CUDAGraph"]["status"], rows["torch.cuda.CUDAGraph"]["cause"]) == (
        "skip", "emulator_limit")
    assert rows["torch.cuda.CUDAGraph"]["evidence"] == "none"
    # a pair of ints the device module reports, not computed on the device: a state difference
    assert rows["torch.cuda.get_device_capability"]["cause"] == "state"


def test_a_case_whose_code_never_reads_dtype_is_tagged_dtype_free(emu):
    """torch.cuda.synchronize's case takes no dtype: asked once (float32, not widened), its
    scenario and the row it gives carry ``dtype-free``; its status is untouched."""
    from torchparity.dtypes import DTYPE_FREE

    (sc,) = devmod.scenarios("torch.cuda.synchronize", None)
    assert sc.dtypes == ("float32",) and DTYPE_FREE in sc.tags
    result = _run("torch.cuda.synchronize", emu)
    assert result.status == "pass", result.detail
    assert result.dtype == "float32" and DTYPE_FREE in result.tags


def test_cases_that_read_dtype_are_not_tagged():
    """A runtime case that reads dtype (hann_window) is widened and untagged; one that does
    not (dequantize) is tagged; an OpInfo row (torch.add) never is."""
    from torchparity.dtypes import DTYPE_FREE
    from torchparity.scenarios.sources import runtime

    window = runtime.scenarios("torch.hann_window", None)
    assert {"float32", "float64"} <= {d for sc in window for d in sc.dtypes}
    assert not any(DTYPE_FREE in sc.tags for sc in window)
    (deq,) = runtime.scenarios("torch.dequantize", None)
    assert deq.dtypes == ("float32",) and DTYPE_FREE in deq.tags
    found = offer("torch.add", torch.add)
    assert found.scenarios and not any(DTYPE_FREE in sc.tags for sc in found.scenarios)


def test_an_accelerator_memory_counter_is_device_state_through_the_emulators_wrapper(emu):
    """Issue 48 item 2: torch.accelerator.memory.max_memory_reserved is routed by the
    emulator to its module's member; the wrapper was filtered out of the footprint (the
    row read host-only, "1.2①, device-independent"). The call is the API's runtime entry."""
    from torchparity.api.classify import code_objects
    from torchparity.api.resolve import resolve
    from torchparity.judge.evidence import DEVICE_STATE, from_footprint
    from torchparity.run.execute import execute

    api = "torch.accelerator.memory.max_memory_reserved"
    obj = resolve(api).obj
    (sc,) = devmod.scenarios(api, obj)
    result, entries = execute(sc, "float32", emu, footprint=True, api_obj=obj, api_codes=code_objects(obj))
    assert result.status == "pass", result.detail
    own = [e.op for e in entries if e.source == "api"]
    assert own == ["runtime.accelerator.memory.max_memory_reserved"], entries
    assert from_footprint(entries) == DEVICE_STATE


def test_a_device_generators_manual_seed_is_taken_away_and_is_device_state(emu):
    """Issue 48: ``torch.Generator.manual_seed`` (a C type's method) had no case but a
    docstring example and was never taken away. The devmod generator case seeds a
    generator of the emulated device twice and compares the draws: with the method taken
    away (``subtype``: reached on the emulator's device generator class too) the draws
    differ, and the seed is state the device's draws read (device-state, not 1.2①)."""
    from torchparity.api.classify import code_objects
    from torchparity.api.resolve import resolve
    from torchparity.judge.evidence import DEVICE_STATE, from_footprint

    api = "torch.Generator.manual_seed"
    obj = resolve(api).obj
    (sc,) = devmod.scenarios(api, obj)
    result, entries = execute(sc, "float32", emu, footprint=True, api_obj=obj, api_codes=code_objects(obj))
    assert result.status == "pass" and "hollow" not in result.tags, result.detail
    assert (result.own.how, result.own.observes, result.own.calls) == ("subtype", True, 2), result.own
    assert result.own.steers is True and from_footprint(entries, result.own) == DEVICE_STATE
    assert torch.Generator.__dict__.get("manual_seed") is None  # the emulator's class is itself again


def _reads_y_dtype(device, dtype):
    y = torch.ones(2, device=device)
    return y.dtype


def _closes_over_dtype(device, dtype):
    def inner():
        return torch.ones(2, dtype=dtype)
    return inner()


def _shadows_dtype(device, dtype):
    def inner(dtype):
        return torch.ones(2, dtype=dtype)
    return inner(torch.float32)


def test_reads_dtype_follows_the_binding_not_the_name():
    """Issue 48 item 5: reads_dtype matched by name — ``y.dtype`` reached the module-level
    helper called ``dtype`` (runtime.cases.dtype), so torch.Tensor's legacy-constructor case
    was asked in four dtypes that all ran float32. Now: the body's own ``dtype`` binding."""
    from torchparity.dtypes import DTYPE_FREE
    from torchparity.scenarios.sources import runtime
    from torchparity.scenarios.sources.base import reads_dtype
    from torchparity.scenarios.sources.runtime import cases

    assert not reads_dtype(cases.Tensor)
    (sc,) = runtime.scenarios("torch.Tensor", None)
    assert sc.dtypes == ("float32",) and DTYPE_FREE in sc.tags
    assert not reads_dtype(_reads_y_dtype) and not reads_dtype(_shadows_dtype)
    assert reads_dtype(_closes_over_dtype) and reads_dtype(cases.device)
