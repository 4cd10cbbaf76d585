import torch
from torch.autograd import gradcheck

from torchparity.api import footprint as fp
from torchparity.api.classify import code_objects


def _record(api, fn):
    rec = fp.FootprintRecorder("cpu", api_objects=[api], api_codes=code_objects(api),
                               user_files=[__file__])
    with rec:
        fn()
    return rec.entries()


def _ops(entries, source):
    return {e.op: e for e in entries if e.source == source}


def user_mul(x):
    return x.mul(5)


def test_gradcheck_fast_mode_issues_dot_and_norm_itself_slow_mode_does_not():
    x = torch.rand(6, dtype=torch.float64, requires_grad=True)
    fast = _record(gradcheck, lambda: gradcheck(user_mul, (x,), fast_mode=True))
    slow = _record(gradcheck, lambda: gradcheck(user_mul, (x,), fast_mode=False))
    api_fast = _ops(fast, "api")
    assert api_fast["aten.dot"].dtypes == ["float64"]
    assert api_fast["aten.linalg_vector_norm"].dtypes == ["float64"]
    assert "aten.dot" not in _ops(slow, "api") and "aten.linalg_vector_norm" not in _ops(slow, "api")
    # the user's mul is told apart from gradcheck's own work, backward included
    assert "aten.mul" in _ops(slow, "callable")


def test_unpack_dual_issues_an_op_enter_dual_level_none():
    import torch.autograd.forward_ad as fwAD

    x, t = torch.rand(3), torch.rand(3)

    def run_unpack():
        with fwAD.dual_level():
            fwAD.unpack_dual(fwAD.make_dual(x, t))

    assert fp.involvement(_record(fwAD.unpack_dual, run_unpack)) == "direct"

    def run_enter():
        level = fwAD.enter_dual_level()
        fwAD.make_dual(x, t, level=level)
        fwAD.exit_dual_level(level=level)

    entries = _record(fwAD.enter_dual_level, run_enter)
    assert not [e for e in entries if e.source == "api"]
    assert fp.involvement(entries) == "indirect"


def test_builtin_api_window_via_torch_function_mode():
    a, b = torch.rand(2, 2), torch.rand(2, 2)
    entries = _record(torch.mm, lambda: torch.mm(a, b) + 1)
    assert "aten.mm" in _ops(entries, "api")
    assert "aten.add" in _ops(entries, "scenario")


def test_other_device_types_are_not_recorded():
    rec = fp.FootprintRecorder("npu", api_objects=[torch.add])
    with rec:
        torch.add(torch.ones(2), 1)
    assert rec.entries() == []


def test_merge_and_compute_ops():
    e1 = fp.FootprintEntry(op="aten.dot", dtypes=["float64"], count=1, source="api")
    e2 = fp.FootprintEntry(op="aten.dot", dtypes=["float32"], count=2, source="api")
    e3 = fp.FootprintEntry(op="aten.view", dtypes=["float32"], count=2, source="api")
    merged = fp.merge([e1, e2, e3])
    assert merged[0].count == 3 and merged[0].dtypes == ["float32", "float64"]
    assert [e.op for e in fp.compute_ops(merged)] == ["aten.dot"]
    assert fp.involvement([]) == "none"


def _rank_body_all_reduce(t):
    import torch.distributed as dist

    dist.all_reduce(t)
    return t


def _rank_body_host_only():
    import torch.distributed as dist

    x = torch.empty(2)  # an allocation: no device work
    return dist.is_available(), x.shape


def _world1():
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)


def test_a_rank_records_frames_and_the_parent_attributes_them():
    """A rank does not know the API: StackRecorder keeps each op's frames; the process that
    knows the API attributes them with the single-process rule (``absorb``)."""
    import torch.distributed as dist

    from torchparity.api.classify import code_objects
    from torchparity.api.footprint import FootprintRecorder, StackRecorder
    from torchparity.judge.evidence import from_footprint

    def here():  # the frame that calls the scenario's code: the harness's, left out
        with rank:
            return _rank_body_all_reduce(torch.ones(3))

    _world1()
    try:
        rank = StackRecorder("cpu", stop=here.__code__)
        here()
    finally:
        dist.destroy_process_group()
    records = rank.records()
    ops = {r[0] for r in records}
    assert "c10d.allreduce_" in ops
    assert all(all(here.__code__.co_name not in f for f in r[1]) for r in records)
    parent = FootprintRecorder("cpu", api_objects=[dist.all_reduce], api_codes=code_objects(dist.all_reduce),
                               user_files=[__file__])
    parent.absorb(records)
    got = {(e.op, e.source) for e in parent.entries()}
    assert ("c10d.allreduce_", "api") in got
    assert from_footprint(parent.entries()) == "device-compute"
    # the same records read for another API: its ops are the scenario's, not the API's
    other = FootprintRecorder("cpu", api_objects=[dist.is_available],
                              api_codes=code_objects(dist.is_available), user_files=[__file__])
    other.absorb(records)
    assert ("c10d.allreduce_", "scenario") in {(e.op, e.source) for e in other.entries()}


def test_a_host_only_rank_body_is_host_only_evidence():
    import torch.distributed as dist

    from torchparity.api.classify import code_objects
    from torchparity.api.footprint import FootprintRecorder, StackRecorder
    from torchparity.judge.evidence import from_footprint

    def here():
        with rank:
            return _rank_body_host_only()

    rank = StackRecorder("cpu", stop=here.__code__)
    here()
    parent = FootprintRecorder("cpu", api_objects=[dist.is_available],
                               api_codes=code_objects(dist.is_available), user_files=[__file__])
    parent.absorb(rank.records())
    assert [(e.op, e.source) for e in parent.entries()] == [("aten.empty", "scenario")]
    assert from_footprint(parent.entries()) == "host-only"


def _record_runtime(api, fn):
    rec = fp.FootprintRecorder("cpu", api_objects=[api], api_codes=code_objects(api),
                               user_files=[__file__], runtime=True)
    with rec:
        fn()
    return rec.entries()


def reads_device_stats():  # an API whose own code reads the device state through torch._C
    return torch._C._accelerator_getAccelerator()


def test_a_device_state_read_through_a_c_entry_point_is_a_runtime_entry_of_the_api():
    """Issue 48 item 2: on real hardware torch.accelerator.memory.max_memory_reserved goes
    through torch._C._accelerator_getDeviceStats; the recorder sees such C entry points
    (runtime entries, attributed like ops) and torch.accelerator.memory's functions."""
    entries = _record_runtime(reads_device_stats, reads_device_stats)
    assert _ops(entries, "api")["runtime._C._accelerator_getAccelerator"].count == 1
    import torch.accelerator.memory as am

    real = getattr(am.max_memory_reserved, "__wrapped__", am.max_memory_reserved)
    def call():  # torch's own function (no backend routes it); a Python device may refuse it
        try:
            real()
        except RuntimeError:
            pass
    entries = _record_runtime(real, call)
    # its read of the counters (memory_stats, then _accelerator_getDeviceStats) is the API's
    assert list(_ops(entries, "api")) == ["runtime.accelerator.memory.memory_stats"], entries
    # the _C calls inside that read are part of it, not entries of their own
    assert not any(e.op.startswith("runtime._C.") for e in entries), entries
    # a scenario reading device state around another API: the scenario's, not the API's
    entries = _record_runtime(user_mul, lambda: reads_device_stats())
    assert _ops(entries, "scenario")["runtime._C._accelerator_getAccelerator"].count == 1
    assert torch._C._accelerator_getAccelerator.__class__.__name__ == "builtin_function_or_method"  # restored
