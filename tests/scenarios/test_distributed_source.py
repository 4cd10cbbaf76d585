"""The ``distributed`` source: collectives in a world of 2 local rank processes."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from tests.devices.emulator.helpers import run_python
from tests.support import ranks_alive
from torchparity.scenarios import sources
from torchparity.scenarios.sources import distributed
from torchparity.scenarios.sources.world import WorldTimeout, run_world


def _rank_input(rank: int, dtype: torch.dtype) -> torch.Tensor:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(rank)  # the harness seeds each rank with its rank
        return distributed._input(rank, dtype)


def test_all_reduce_in_a_cpu_world():
    from torchparity.api.classify import code_objects
    from torchparity.api.footprint import FootprintRecorder
    from torchparity.judge.evidence import from_footprint
    from torchparity.scenarios.sources.world import RANKS_RECORDED

    before = ranks_alive()
    sc = sources.find("distributed", "torch.distributed.all_reduce", dist.all_reduce,
                      "world2-all_reduce_sum")
    # the ranks record their own footprint; it reaches the recorder running here, the
    # collective attributed to the API by the API's own code (as in one process)
    rec = FootprintRecorder("cpu", api_objects=[dist.all_reduce], api_codes=code_objects(dist.all_reduce),
                            user_files=[sc.source_file], runtime=True)
    with rec:
        per_rank = sc.fn("cpu", torch.float32)
    got = {(e.op, e.source): e for e in rec.entries()}
    assert got[("c10d.allreduce_", "api")].count == 2  # one per rank
    assert got[("c10d.allreduce_", "api")].dtypes == ["float32"]
    assert got[(RANKS_RECORDED, "scenario")].count == 2
    assert from_footprint(rec.entries()) == "device-compute"
    expected = _rank_input(0, torch.float32) + _rank_input(1, torch.float32)
    assert len(per_rank) == 2
    for got in per_rank:
        torch.testing.assert_close(got, expected)
    assert ranks_alive() <= before  # no rank left behind


def test_a_world_past_its_time_is_killed():
    before = ranks_alive()
    # a hang killed at the limit is the harness's timeout, not the device's answer
    with pytest.raises(WorldTimeout, match="rank 0 hung"):
        run_world("barrier", "cpu", torch.float32, timeout_s=0.01)  # a forked world needs > 50 ms
    assert ranks_alive() <= before


def test_scenarios_cover_the_collectives_and_say_why_not():
    sc = sources.source("distributed").scenarios
    assert [s.id for s in sc("torch.distributed.all_reduce", dist.all_reduce)][0] == "world2-all_reduce_sum"
    assert all(s.source == "distributed" for s in sc("torch.distributed.send", dist.send))
    assert sc("torch.distributed.init_process_group", dist.init_process_group) == []
    assert sc("torch.mm", torch.mm) == []
    assert "2-rank harness" in distributed.why_not("torch.distributed.get_backend", dist.get_backend)
    assert set(b for rows in distributed.APIS.values() for b, _, _ in rows) <= set(distributed.BODIES)


def test_the_a2_profile_takes_the_all_reduce_dtypes_from_the_hccl_source():
    # The c10d rules now follow torch_npu's HCCL process group (sources/ascend-hccl.yaml:
    # Ascend/pytorch torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:170 checkSupportedDataType,
    # called by allreduce at :4765); the docs list (torch-distributed.md) is kept as the note.
    from torchparity.devices.profiles import load_profile

    entry = load_profile("ascend-a2").op_support("c10d.allreduce_")
    assert "ProcessGroupHCCL.cpp" in entry.source and "torch-distributed.md" in entry.note
    assert "float32" in entry.dtypes and "float64" not in entry.dtypes


@pytest.mark.slow
def test_all_reduce_on_the_emulated_device(tmp_path):
    """Through the harness on emu:ascend-a2, judged against the CPU world; float64 is
    refused in every rank as torch_npu's HCCL process group does below Ascend950
    (ProcessGroupHCCL.cpp:170 checkSupportedDataType; the A2 docs agree)."""
    out = run_python("""
        import torch, torch.distributed as dist
        from torchparity.devices import get_adapter
        from torchparity.results.error_rules import classify_exception
        from torchparity.run.execute import execute
        from torchparity.scenarios import sources
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        sc = sources.find("distributed", "torch.distributed.all_reduce", dist.all_reduce,
                          "world2-all_reduce_sum")
        result, _ = execute(sc, "float32", adapter)
        print("float32", result.status, result.emulated, result.detail)
        try:
            sc.fn(adapter.torch_device, torch.float64)
            print("float64 ran")
        except RuntimeError as exc:
            status, cause = classify_exception(type(exc).__name__, str(exc))
            print("float64", status.value, cause.value, exc)
        """, tmp_path, timeout=240)
    assert "float32 pass True matches the CPU" in out
    assert "float64 unsupported dtype_limit" in out
    assert "\"allreduce_npu\" not implemented for 'Double' (rank 0)" in out


def test_a_batch_keeps_the_cases_before_the_first_raise(monkeypatch):
    from torchparity.scenarios.sources import world as _dist_world

    calls = []

    def fake_world(cases, device, world_size, timeout_s):
        calls.append(cases)
        if len(cases) == 1:
            return [[{"value": 9}, {"value": 9}]]
        refused = ("RuntimeError", "\"allreduce_npu\" not implemented for 'Half'")
        return [[{"value": 1}, {"value": 1}], [{"error": refused}, {"error": refused}],
                [{"value": 2}, {"value": 2}], [{"value": 3}, {"value": 3}]]

    monkeypatch.setattr(_dist_world, "_run_cases", fake_world)
    monkeypatch.setattr(_dist_world, "_BATCHES", {})
    monkeypatch.setenv(_dist_world.PAIR_ENV, "0")  # a world per device, whatever this process hosts
    batch = ("float32", "float16", "bfloat16", "int32")
    assert run_world("b", "cpu", torch.float32, batch=batch) == [1, 1]
    with pytest.raises(RuntimeError, match=r"not implemented for 'Half' \(rank 0\)"):
        run_world("b", "cpu", torch.float16, batch=batch)  # a refusal is the case's answer
    # the cases after a raise are not kept, though their ranks answered alike
    assert run_world("b", "cpu", torch.bfloat16, batch=batch) == [9, 9]
    assert run_world("b", "cpu", torch.int32, batch=batch) == [9, 9]
    assert calls[1:] == [[("b", "bfloat16")], [("b", "int32")]]


def test_a_raise_on_one_rank_leaves_the_rest_of_the_batch_to_worlds_of_their_own(monkeypatch):
    # the pipelining worlds on emu:ascend-a2: rank 0 refuses float64, rank 1 waits on the
    # recv and times out, and every case after it in that world read "pair closure"
    # (42 error rows of 20 APIs in the whole-list run). float64 runs last in a batch, and
    # nothing after a case in which a rank raised is kept.
    from torchparity.scenarios.sources import world as _dist_world

    calls = []
    refused = ("RuntimeError", "\"addmm_npu\" not implemented for 'Double'")
    timed_out = ("RuntimeError", "Timed out waiting 60000ms for recv operation to complete")
    closed = ("RuntimeError", "Application timeout caused pair closure")

    def fake_world(cases, device, world_size, timeout_s):
        calls.append([d for _, d in cases])
        if len(cases) == 1:
            if cases[0][1] == "float64":
                return [[{"error": refused}, {"error": timed_out}]]
            return [[{"value": 7}, {"value": 7}]]
        return [[{"value": 1}, {"value": 1}], [{"error": refused}, {"error": timed_out}],
                [{"error": closed}, {"error": closed}], [{"error": closed}, {"error": closed}]]

    monkeypatch.setattr(_dist_world, "_run_cases", fake_world)
    monkeypatch.setattr(_dist_world, "_BATCHES", {})
    monkeypatch.setenv(_dist_world.PAIR_ENV, "0")  # a world per device, whatever this process hosts
    batch = ("float32", "float64", "float16", "bfloat16")
    assert run_world("b", "cpu", torch.float32, batch=batch) == [1, 1]
    assert calls[0] == ["float32", "float16", "bfloat16", "float64"]  # float64 last
    _dist_world._BATCHES.clear()
    monkeypatch.setattr(_dist_world, "_LAST", ())
    assert run_world("b", "cpu", torch.float32, batch=batch) == [1, 1]
    with pytest.raises(RuntimeError, match=r"not implemented for 'Double' \(rank 0\)"):
        run_world("b", "cpu", torch.float64, batch=batch)
    assert run_world("b", "cpu", torch.float16, batch=batch) == [7, 7]
    assert run_world("b", "cpu", torch.bfloat16, batch=batch) == [7, 7]
    assert calls[2:] == [["float16"], ["bfloat16"]]


def test_a_ranks_refusal_is_the_case_error_before_what_its_peer_raised_because_of_it(monkeypatch):
    # a pipeline stage on rank 1 refused float64; rank 0, waiting on it, read "pair
    # closure": the row said device_error where the device had refused a dtype
    from torchparity.scenarios.sources import world as _dist_world

    closed = ("RuntimeError", "Application timeout caused pair closure")
    refused = ("RuntimeError", "\"addmm_npu\" not implemented for 'Double'")
    monkeypatch.setattr(_dist_world, "_run_cases",
                        lambda cases, device, world_size, timeout_s: [[{"error": closed}, {"error": refused}]])
    monkeypatch.setattr(_dist_world, "_BATCHES", {})
    monkeypatch.setenv(_dist_world.PAIR_ENV, "0")
    with pytest.raises(RuntimeError, match=r"not implemented for 'Double' \(rank 1\)"):
        run_world("b", "cpu", torch.float64)
    monkeypatch.setattr(_dist_world, "_run_cases",
                        lambda cases, device, world_size, timeout_s: [[{"error": closed}, {"error": closed}]])
    with pytest.raises(RuntimeError, match=r"pair closure \(rank 0\)"):
        run_world("b", "cpu", torch.float64)


def test_in_a_golden_case_inputs_are_the_case_dtypes_values_and_buffers_float64(monkeypatch):
    """``world.computing_golden``: a collective's golden starts from the float16 values
    of the case and sums them, and writes into its buffers, in float64."""
    from torchparity.scenarios.sources import world

    x16 = _rank_input(0, torch.float16)
    monkeypatch.setattr(world, "_GOLDEN", [True])
    x = _rank_input(0, torch.float16)
    assert x.dtype == torch.float64 and torch.equal(x, x16.double())
    assert distributed._compute(torch.bfloat16) == torch.float64
    assert distributed._compute(torch.int32) == torch.int32  # integers are exact: as they are


def test_a_collectives_golden_is_asked_of_a_cpu_world_not_of_the_cpus_answer(monkeypatch):
    """A collective world case's golden asks the ranks for it (``run_world(golden=True)``);
    the default golden (``golden.py``'s dispatch mode in this process) saw no rank op and
    returned the CPU's own float16 sum as the "float64" golden."""
    from torchparity.scenarios.sources import world

    asked = []

    def fake(body, device, dtype, **kw):
        asked.append((body, device, kw.get("golden", False)))
        return [torch.zeros(4, dtype=torch.float64)] * 2

    monkeypatch.setattr(world, "run_world", fake)
    sc = next(s for s in distributed.scenarios("torch.distributed.all_reduce", dist.all_reduce)
              if s.id == "world2-all_reduce_sum")
    got = sc.golden(torch.float16)
    assert asked == [("all_reduce_sum", "cpu", True)]
    assert all(t.dtype == torch.float64 for t in got)


@pytest.mark.slow  # a CPU world (~5 s with the zygote's start)
def test_the_golden_of_a_float16_all_reduce_is_the_float64_sum_of_the_float16_inputs():
    sc = next(s for s in distributed.scenarios("torch.distributed.all_reduce", dist.all_reduce)
              if s.id == "world2-all_reduce_sum")
    golden = sc.golden(torch.float16)
    cpu = sc.fn("cpu", torch.float16)
    want = _rank_input(0, torch.float16).double() + _rank_input(1, torch.float16).double()
    assert all(torch.equal(g, want) for g in golden)
    assert not torch.equal(cpu[0].double(), want)  # the CPU's float16 sum rounds: not a golden


def _host_emulated(monkeypatch, emu, phases, cases):
    """This process made to host ``emu`` (its torch device ``privateuseone``), pairing on,
    no batch kept, and the world starts replaced by ``phases`` and ``cases``: the devices
    module, patched."""
    import torchparity.devices as devices
    from torchparity.scenarios.sources import world as _dist_world

    monkeypatch.delenv(_dist_world.PAIR_ENV, raising=False)
    monkeypatch.setattr(_dist_world, "_run_phases", phases)
    monkeypatch.setattr(_dist_world, "_run_cases", cases)
    monkeypatch.setattr(_dist_world, "_BATCHES", {})
    monkeypatch.setattr(devices, "hosted_spec", lambda: emu)
    monkeypatch.setattr(devices, "spec_for_device", lambda d: emu if d.startswith("privateuseone") else d)
    return devices


def test_a_paired_world_keeps_each_phase_up_to_its_own_first_raise(monkeypatch):
    """Where this process hosts an emulated device, one world runs a batch on the CPU and
    then on the device (``PAIR_ENV``); each phase keeps its cases up to its own raise, and
    the device's refusal does not cost the CPU reference its kept cases."""
    from torchparity.scenarios.sources import world as _dist_world

    emu = "emu:ascend-a2"
    phases_seen, singles = [], []
    refused = ("RuntimeError", "\"allreduce_npu\" not implemented for 'Half'")

    def fake_phases(phases, world_size, timeout_s):
        phases_seen.append([(spec, [d for _, d in cases]) for spec, cases in phases])
        cpu = [[{"value": i}, {"value": i}] for i in range(3)]
        dev = [[{"value": 10}, {"value": 10}], [{"error": refused}, {"error": refused}],
               [{"value": 12}, {"value": 12}]]
        return cpu + dev

    def fake_cases(cases, device, world_size, timeout_s):
        singles.append((device, cases))
        return [[{"value": 99}, {"value": 99}]]

    devices = _host_emulated(monkeypatch, emu, fake_phases, fake_cases)
    assert _dist_world.paired_spec("cpu") == emu and _dist_world.paired_spec(emu) == "cpu"
    batch = ("float32", "float16", "bfloat16")
    assert run_world("b", "cpu", torch.float32, batch=batch) == [0, 0]
    assert phases_seen == [[("cpu", list(batch)), (emu, list(batch))]]  # the CPU first
    assert run_world("b", "cpu", torch.bfloat16, batch=batch) == [2, 2]
    assert run_world("b", "privateuseone:0", torch.float32, batch=batch) == [10, 10]
    with pytest.raises(RuntimeError, match="not implemented for 'Half'"):
        run_world("b", "privateuseone:0", torch.float16, batch=batch)
    assert singles == []  # everything so far came from the one world
    assert run_world("b", "privateuseone:0", torch.bfloat16, batch=batch) == [99, 99]
    assert singles == [("privateuseone:0", [("b", "bfloat16")])]  # after the raise: a world of its own
    assert len(phases_seen) == 1
    monkeypatch.setenv(_dist_world.PAIR_ENV, "0")
    assert _dist_world.paired_spec("cpu") is None
    monkeypatch.setattr(devices, "hosted_spec", lambda: "cpu")
    monkeypatch.delenv(_dist_world.PAIR_ENV)
    assert _dist_world.paired_spec("cpu") is None  # nothing emulated hosted here


def test_a_paired_world_that_does_not_finish_leaves_each_case_a_world_of_its_own(monkeypatch):
    """A paired world whose rank crashed (a device fault) is no answer for either phase:
    the case asked runs alone (no KeyError on the batch it never filled), and the CPU
    reference is asked again later, not taken from the crashed world."""
    from torchparity.scenarios.sources import world as _dist_world

    emu = "emu:ascend-a2"
    singles = []

    def crashed(phases, world_size, timeout_s):
        raise _dist_world.WorldError("rank 0 exited with -6 without a result")

    def fake_cases(cases, device, world_size, timeout_s):
        singles.append((device, cases))
        return [[{"value": 7}, {"value": 7}]]

    _host_emulated(monkeypatch, emu, crashed, fake_cases)
    batch = ("float32", "float16")
    assert run_world("b", "privateuseone:0", torch.float32, batch=batch) == [7, 7]
    assert run_world("b", "cpu", torch.float32, batch=batch) == [7, 7]
    assert singles == [("privateuseone:0", [("b", "float32")]), ("cpu", [("b", "float32")])]
