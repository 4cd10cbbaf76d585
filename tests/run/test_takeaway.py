"""Taking the API away (issue 48): the API's own footprint is what disappears without it,
and a case whose judged outcome does not change without it is hollow, never an answer."""

from __future__ import annotations

import torch

from torchparity.api.classify import code_objects
from torchparity.devices import get_adapter
from torchparity.judge.evidence import row_evidence
from torchparity.results.models import FootprintEntry, Text
from torchparity.run.execute import execute
from torchparity.run.takeaway import PERTURBED, Takeaway, bounded, own_entries, perturbed
from torchparity.scenarios.registry import Scenario

T = Text(en="x", zh="x")


def _run(fn, api_obj, dtype="float32", compare="values"):
    sc = Scenario(id="c", api="x", fn=fn, description=T, expected=T, compare=compare)
    result, entries = execute(sc, dtype, get_adapter("cpu"), footprint=True, api_obj=api_obj,
                              api_codes=code_objects(api_obj))
    result.evidence = row_evidence(result.status, result.cause, entries, own=result.own)
    return result, entries


def _ops(entries, source):
    return {e.op for e in entries if e.source == source}


def test_a_case_that_drops_the_apis_result_is_hollow(fixture_path):
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        x = torch.ones(3, dtype=dtype, device=device)
        lib.doubled(x)  # called, but nothing of it is returned
        return x + 1

    result, _ = _run(case, lib.doubled)
    assert result.status == "skip" and result.cause == "not_comparable", result
    assert "hollow" in result.tags and result.detail.startswith("hollow:")
    assert result.own.observes is False and result.own.method == "takeaway"


def test_a_case_that_never_calls_the_api_is_hollow(fixture_path):
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        return torch.ones(3, dtype=dtype, device=device) * 2

    result, _ = _run(case, lib.doubled)
    assert result.status == "skip" and "never calls the API" in result.detail, result.detail
    assert result.own.calls == 0


def test_a_case_that_returns_the_apis_result_observes_it(fixture_path):
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        return lib.doubled(torch.ones(3, dtype=dtype, device=device))

    result, entries = _run(case, lib.doubled)
    assert result.status == "pass" and result.own.observes is True, result
    assert "aten.mul" in _ops(entries, "api")
    assert result.evidence == "device-compute"


def test_host_only_api_with_device_scaffolding_is_host_only(fixture_path):
    """The frames say device-state ("indirect": the scenario's device work); taking the
    API away leaves every device op in place: the API's own footprint is empty."""
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        x = torch.ones(2, 3, dtype=dtype, device=device)
        y = torch.sin(x).sum()  # the scenario's own device work
        return list(lib.shape_of(x)), y

    result, entries = _run(case, lib.shape_of)
    assert result.status == "pass" and result.own.observes is True, result
    assert not _ops(entries, "api"), entries
    assert result.evidence == "host-only"
    # the frames' attribution alone (no own record) calls it device-state
    assert row_evidence(result.status, result.cause, entries) == "device-state"


def test_ops_of_a_helper_the_api_calls_are_its_own_and_the_scenarios_stay_the_scenarios(fixture_path):
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        x = torch.ones(3, dtype=dtype, device=device)
        return lib.scaled_loss(x), lib.helper(x - 5)  # the scenario calls the helper too

    result, entries = _run(case, lib.scaled_loss)
    api = {e.op: e.count for e in entries if e.source == "api"}
    scen = {e.op: e.count for e in entries if e.source == "scenario"}
    assert api.get("aten.mul") == 1 and api.get("aten.relu") == 1, entries
    assert scen.get("aten.relu") == 1 and scen.get("aten.sub") == 1, entries


def test_a_class_api_owns_the_methods_it_defines(fixture_path):
    import tp_fixture_takeaway as lib

    take = Takeaway(lib.Stepper)
    assert take.how == "code" and [f.__name__ for f in take.targets] == ["step"]

    def case(device, dtype):
        s = lib.Stepper(2.0)
        return s.step(torch.zeros(3, dtype=dtype, device=device)) * 3

    result, entries = _run(case, lib.Stepper)
    assert result.own.observes is True
    assert _ops(entries, "api") == {"aten.add"} and "aten.mul" in _ops(entries, "scenario"), entries


def test_a_torch_function_is_taken_away_through_torch_function(fixture_path):
    def case(device, dtype):
        x = torch.arange(4, dtype=dtype, device=device)
        return torch.cumsum(x, 0) + torch.sin(x)

    result, entries = _run(case, torch.cumsum)
    assert result.own.how == "torch-function" and result.own.observes is True, result.own
    assert _ops(entries, "api") == {"aten.cumsum"}, entries
    assert "aten.sin" in _ops(entries, "scenario")


def test_a_case_that_cannot_go_on_without_the_apis_value_keeps_going_on_the_replayed_value(fixture_path):
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        x = torch.ones(3, dtype=dtype, device=device)
        n = lib.shape_of(x)[0]
        return torch.zeros(4, dtype=dtype, device=device)[: n + 1].reshape(n + 1)  # needs n == 3

    result, entries = _run(case, lib.shape_of)
    # the perturbed shape (4,) makes the slice too short for reshape(5): the run without the
    # API ends early, then the recorded shape is replayed and the case runs to its end
    assert result.own.observes is True and result.own.stub == "replayed", result.own
    assert result.evidence == "host-only"


def test_the_code_swap_is_undone_and_calls_through_while_recording(fixture_path):
    import tp_fixture_takeaway as lib

    take = Takeaway(lib.doubled)
    code = lib.doubled.__code__
    with take.recording():
        assert torch.equal(lib.doubled(torch.ones(2)), torch.full((2,), 2.0))
    with take.stubbing("perturbed"):
        assert torch.equal(lib.doubled(torch.ones(2)), torch.full((2,), 5.0))  # 2 + |2| + 1
    assert lib.doubled.__code__ is code and lib.doubled.__kwdefaults__ is None
    assert torch.equal(lib.doubled(torch.ones(2)), torch.full((2,), 2.0))


def test_stand_ins_differ_from_what_they_stand_in_for():
    for value in (True, 0, -1.0, "a", torch.float32, torch.Size([2]), (1, 2.0), {"a": 1},
                  torch.tensor([-1.0, 0.0, 3.0]), torch.tensor([0, 5]), torch.tensor([True, False])):
        p = perturbed(value)
        if isinstance(value, torch.Tensor):
            assert not torch.equal(p, value), value
        else:
            assert p != value, value
    assert perturbed(object()) is None  # an object's behaviour is not replayed


def test_own_entries_move_what_stays_to_the_scenario_and_what_disappears_to_the_api():
    e = lambda op, src, n: FootprintEntry(op=op, source=src, count=n, dtypes=["float32"])  # noqa: E731
    normal = [e("aten.mm", "scenario", 1), e("aten.relu", "api", 2), e("aten.add", "callable", 1)]
    without = [e("aten.relu", "scenario", 1)]
    own, moved = own_entries(normal, without)
    got = {(x.op, x.source): x.count for x in own}
    assert got == {("aten.mm", "api"): 1, ("aten.relu", "api"): 1, ("aten.relu", "scenario"): 1,
                   ("aten.add", "callable"): 1}
    assert "aten.mm: scenario -> api (1)" in moved and "aten.relu: api -> scenario (1)" in moved
    low, _ = own_entries(normal, without, lower_bound=True)
    assert {(x.op, x.source): x.count for x in low}[("aten.relu", "api")] == 2


def test_a_class_only_constructed_keeps_the_frames_and_one_never_made_is_hollow(fixture_path):
    import tp_fixture_takeaway as lib

    def made(device, dtype):
        s = lib.Stepper(2.0)
        return torch.full((2,), s.scale, dtype=dtype, device=device)

    result, _ = _run(made, lib.Stepper)
    assert result.status == "pass" and result.own.method == "frames", result.own
    assert result.own.observes is None and "constructing it" in result.own.reason

    def never(device, dtype):  # another class, as an example about a look-alike would
        return torch.nn.Identity()(torch.ones(2, dtype=dtype, device=device))

    result, _ = _run(never, lib.Stepper)
    assert result.status == "skip" and "never calls the API" in result.detail, result.detail


def test_a_factory_torch_does_not_route_is_taken_away_through_its_bindings(fixture_path):
    from torchparity.run.takeaway import _routed

    assert not _routed(torch.fft.rfftfreq)

    def case(device, dtype):
        return torch.fft.rfftfreq(6, dtype=dtype, device=device) * 2

    result, entries = _run(case, torch.fft.rfftfreq)
    assert result.own.how == "attribute" and result.own.observes is True, result.own
    assert result.own.calls == 1  # torch.fft's own name for it is not its __name__
    assert "aten.mul" in _ops(entries, "scenario"), entries


def test_a_python_property_is_taken_away_through_its_getter():
    class Box:
        @property
        def size(self):
            return 3

    take = Takeaway(vars(Box)["size"])
    assert take.how == "code"
    with take.recording():
        assert Box().size == 3
    with take.stubbing("perturbed"):
        assert Box().size == 4
    assert Box().size == 3


_COUNTERPART = r"""
import torch
from torchparity.devices import get_adapter
from torchparity.judge.evidence import row_evidence
from torchparity.run.execute import execute
from torchparity.scenarios.sources import find

adapter = get_adapter("emu:ascend-a2")
adapter.setup()
for api in ("torch.cuda.max_memory_reserved", "torch.cuda.reset_accumulated_host_memory_stats",
            "torch.cuda.Stream.wait_stream"):
    obj = eval(api)
    sc = find("devmod", api, obj, "devmod_" + api.rsplit(".", 1)[-1])
    result, entries = execute(sc, "float32", adapter, footprint=True, api_obj=obj)
    print(result.status, result.cause, result.own.observes,
          row_evidence(result.status, result.cause, entries, own=result.own),
          sorted(e.op for e in entries if e.source == "api" and e.op.startswith("runtime.npu.")))
"""


def test_a_cuda_counter_asked_of_the_npu_is_its_counterpart_taken_away():
    """torch.cuda.max_memory_reserved on the emulated NPU is answered by torch.npu's member:
    taken away, the case's exact stat check turns, and the evidence is device-state; the
    host-memory reset, which the emulator cannot count, is its limit, not a pass."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _COUNTERPART], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.split("\n")
    assert lines[0].startswith("pass None True device-state"), out.stdout
    assert lines[1].split()[:2] == ["skip", "emulator_limit"], out.stdout
    # a stream's method, asked of torch.cuda and answered by torch.npu.Stream's, is the API's
    # device-state call; the emulator's streams are synchronous, so waiting or not reads the
    # same: the row is hollow, no answer
    assert lines[2].startswith("skip not_comparable False none"), out.stdout
    assert "runtime.npu.Stream.wait_stream" in lines[2], out.stdout


def test_own_methods_called_by_the_constructor_are_construction_not_taken_away(fixture_path):
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        s = lib.Scheduler(torch.ones(2, dtype=dtype, device=device))  # step() once inside
        s.step()  # and once by the case: the one taken away
        return s.x

    result, entries = _run(case, lib.Scheduler)
    assert result.own.method == "takeaway" and result.own.stub == "perturbed", result.own
    assert result.own.calls == 1 and result.own.observes is True
    api = {e.op: e.count for e in entries if e.source == "api"}
    assert api == {"aten.mul": 1}, entries


def test_a_worlds_body_is_not_the_apis_indirect_work():
    from torchparity.judge.evidence import from_footprint
    from torchparity.run.takeaway import frames_only

    body = [FootprintEntry(op="c10d.broadcast_", source="scenario", count=1, dtypes=["float32"]),
            FootprintEntry(op="aten.add", source="scenario", count=2, dtypes=["float32"])]
    world = frames_only("a world's ranks run the API")
    world.steers = False
    assert from_footprint(body, world) == "host-only"
    steering = frames_only("taken away, the run dispatched other device ops")
    steering.steers = True
    assert from_footprint(body, steering) == "device-state"
    assert from_footprint(body, frames_only("a constant")) == "device-state"  # undecided: as before


def test_a_class_owns_what_its_family_defines_but_not_the_frameworks_bases():
    from torchparity.api.classify import class_functions

    lazy = class_functions(torch.nn.LazyLinear)
    assert lazy["forward"][0] is torch.nn.Linear.forward  # inherited from its own family
    assert "_call_impl" not in lazy and "to" not in lazy  # torch.nn.Module's machinery
    take = Takeaway(torch.nn.LazyLinear)
    assert torch.nn.Linear.forward in take.targets and take.init is torch.nn.LazyLinear.__init__
    assert "step" not in class_functions(torch.optim.lr_scheduler.ExponentialLR)  # LRScheduler's


def test_a_marker_compared_by_identity_is_not_taken_away_nor_hollow():
    """Issue 48: torch.library.fallthrough_kernel is passed to Library.impl, which registers
    a fallthrough for it, and never called: its case was 'hollow: the case never calls the
    API'. A function whose body only raises is a marker: nothing to take away, labelled."""
    from torchparity.run.takeaway import only_raises

    take = Takeaway(torch.library.fallthrough_kernel)
    assert take.how is None and "marker passed by identity" in take.why, take.why
    assert only_raises(torch.library.fallthrough_kernel)
    assert not only_raises(torch.nn.functional.relu)

    def _raises_after_work(x):
        x = x + 1
        raise ValueError(x)
    assert not only_raises(_raises_after_work)


def test_a_device_counterpart_that_only_raises_is_a_refusal_not_a_marker():
    """``torch.cuda.CUDAGraph`` asked of the emulated device is answered by its module's
    ``NPUGraph``, a stand-in that only raises "not supported": its row said "a marker
    passed by identity", which is false of it (issue 48)."""
    def refusing(*args, **kwargs):
        raise RuntimeError("NPUGraph is not supported by the emulated device")

    take = Takeaway(refusing, stands_for=torch.cuda.CUDAGraph)
    assert take.how is None and "counterpart of the API only raises" in take.why, take.why
    assert "marker" in Takeaway(torch.library.fallthrough_kernel).why  # the API itself: a marker


def test_ops_the_scenario_skips_on_the_apis_result_stay_the_scenarios(fixture_path):
    """Without the API the case takes another branch (a seed() that picks nothing makes a
    comparison short-circuit): the op it then never runs was no op of the API's."""
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        x = torch.ones(3, dtype=dtype, device=device)
        shape = lib.shape_of(x)  # host-only; taken away, the shape reads (4,)
        same = shape == (3,) and bool(torch.equal(x, x.clone()))  # runs only on the real shape
        return same

    result, entries = _run(case, lib.shape_of)
    assert result.own.observes is True, result.own
    assert not _ops(entries, "api"), entries  # equal/clone ran outside the API's call
    assert result.evidence == "host-only"


def test_a_property_of_a_host_object_is_no_device_state_but_a_tensors_is():
    import torch.distributed as dist

    from torchparity.run.execute import host_attribute

    assert host_attribute("torch.distributed.TCPStore.host", vars(dist.TCPStore)["host"])
    assert not host_attribute("torch.Tensor.is_cuda", vars(torch._C.TensorBase)["is_cuda"])
    assert not host_attribute("torch.distributed.TCPStore.set", dist.TCPStore.set)  # a method
    import torch.monitor as monitor
    assert host_attribute("torch.monitor.TensorboardEventHandler.__init__",
                          monitor.TensorboardEventHandler.__init__)
    assert not host_attribute("torch.nn.Linear.__init__", torch.nn.Linear.__init__)  # holds device data


def test_a_tensor_c_method_torch_overrides_does_not_list_is_taken_away_through_torch_function():
    """``Tensor.to_sparse_bsc`` is missing from ``torch.overrides``' list, yet its binding
    dispatches ``__torch_function__`` as every Tensor C method does: a mode takes it away."""
    take = Takeaway(torch.Tensor.to_sparse_bsc)
    assert take.how == "torch-function", take.why
    x = torch.arange(16.0).reshape(4, 4)
    with take.recording():
        kept = x.to_sparse_bsc((2, 2))
    with take.stubbing("perturbed"):
        other = x.to_sparse_bsc((2, 2))
    assert take.calls == 1 and other is not kept


def test_a_case_the_device_cannot_set_up_is_observed_on_the_cpu(fixture_path):
    """The device run ends before the API (the emulator refuses the case's setup): whether
    the case observes its API is decided by the CPU reference with the API taken away, and
    said so; a case that drops the API's result is hollow there too."""
    import tp_fixture_takeaway as lib

    from torchparity.results.models import Text as _T
    from torchparity.scenarios.registry import Scenario as _S

    def uses(device, dtype):
        if device != "cpu":
            raise RuntimeError("the device refuses the setup")
        return lib.doubled(torch.ones(3, dtype=dtype))

    def drops(device, dtype):
        if device != "cpu":
            raise RuntimeError("the device refuses the setup")
        x = torch.ones(3, dtype=dtype)
        lib.doubled(x)
        return x

    adapter = get_adapter("emu:ascend-a2")
    for fn, observes in ((uses, True), (drops, None)):
        sc = _S(id="c", api="x", fn=fn, description=_T(en="x", zh="x"), expected=_T(en="x", zh="x"))
        result, _ = execute(sc, "float32", adapter, footprint=True, api_obj=lib.doubled,
                            api_codes=code_objects(lib.doubled))
        # a row that is no pass leaves a case that does not observe undecided (``hollow``)
        assert result.own.observes is observes, result.own
        assert "decided on the CPU" in result.own.reason and result.own.method == "frames"
        assert ("changes" if observes else "is the same") in result.own.reason.split("decided on the CPU")[1]


def test_a_stand_in_differs_where_the_recorded_value_is_not_finite():
    """``inf + |inf| + 1`` is ``inf``: a stand-in of an infinite variance was the variance
    itself, and the case read as not observing it."""
    value = torch.tensor([float("inf"), float("-inf"), float("nan"), 1.0])
    p = perturbed(value)
    assert torch.isfinite(p).all() and not torch.equal(p, value), p
    assert perturbed(float("inf")) != float("inf")


def test_a_c_types_method_is_taken_away_through_a_subclass_standing_for_its_type(fixture_path):
    """``torch.Generator.manual_seed`` is called through its objects, which no rebinding of
    a module global bound to the method reaches (``lib.seed_generator``: rebinding it was
    "the case never calls the API", hollow and false). The objects the case makes through
    ``torch.Generator`` are made, during the run, of a subclass whose ``manual_seed`` is
    the stub: taken away, the case's draws change (issue 48). Outside the run the type is
    itself again."""
    import tp_fixture_takeaway as lib

    assert lib.seed_generator is torch.Generator.manual_seed
    assert Takeaway(torch.Generator.manual_seed).how == "subtype"
    before = torch.Generator  # the C type, or the emulator's class standing for it

    def case(device, dtype):
        g = torch.Generator().manual_seed(7)
        a = torch.rand(3, generator=g, dtype=dtype)
        g.manual_seed(7)  # the same draws again, seeded alike
        return [a.to(device), torch.rand(3, generator=g, dtype=dtype).to(device),
                isinstance(g, torch.Generator), repr(g).split(" object")[0]]

    result, _ = _run(case, torch.Generator.manual_seed)
    assert result.status == "pass" and "hollow" not in result.tags, result.detail
    assert result.own.how == "subtype" and result.own.calls == 2, result.own
    assert result.own.observes is True, result.own
    # the generator is the device under test's (here the CPU): its seed is state the
    # device's draws read, not host-only work
    assert result.own.steers is True and "whose state" in result.own.reason, result.own
    assert result.evidence == "device-state", result.evidence
    assert torch.Generator is before and type(torch.Generator()) is torch._C.Generator  # put back


def test_a_c_types_method_on_objects_it_does_not_reach_is_not_hollow(fixture_path):
    """Calls on objects not made through the type's name (``torch.default_generator``)
    keep the C method: a case that makes no call the subclass reaches, or whose outcome
    stays the same, is left undecided with the reason, never hollow."""
    def on_the_default(device, dtype):
        torch.default_generator.manual_seed(7)
        return torch.rand(3, dtype=dtype).to(device)

    result, _ = _run(on_the_default, torch.Generator.manual_seed)
    assert result.status == "pass" and "hollow" not in result.tags, result.detail
    assert result.own.method == "frames" and "no call of the API was reached" in result.own.reason, result.own

    def dropped(device, dtype):
        torch.Generator().manual_seed(3)  # reached, its result unused: the same outcome
        torch.default_generator.manual_seed(7)  # not reached
        return torch.rand(3, dtype=dtype).to(device)

    result, _ = _run(dropped, torch.Generator.manual_seed)
    assert "hollow" not in result.tags and result.own.observes is None, result.own
    assert "not decided" in result.own.reason, result.own.reason


def test_a_method_of_a_c_type_python_cannot_subclass_is_not_taken_away():
    """``torch.dtype`` cannot be subclassed: its methods stay the frames', labelled."""
    take = Takeaway(torch.dtype.to_complex)
    assert take.how is None and "C type dtype" in take.why, take.why


def test_a_records_constructor_is_what_is_taken_away(fixture_path):
    """A dataclass defines no function but its generated constructor (and identity
    dunders): taking the constructor away is taking the record away, and a case that
    reads its fields observes it."""
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        s = lib.Settings(scale=3.0)
        return torch.ones(2, dtype=dtype, device=device) * s.scale + s.shift

    take = Takeaway(lib.Settings)
    assert take.how == "code", take.why
    result, _ = _run(case, lib.Settings)
    assert result.own.observes is True and result.own.calls == 1, result.own


def _release(event):
    event.set()


def test_a_run_that_waits_for_its_taken_away_api_is_given_up_and_the_api_put_back():
    """Without ``set_result`` a case's ``wait`` never returns: the run without the API is
    waited for a bounded time, and the API is put back from the waiting thread (the case
    of issue 47's CI failure: ``Future.set_result`` around a refused float64 matmul)."""
    import threading

    take = Takeaway(_release)
    with take.recording():
        _release(threading.Event())
    assert take.calls == 1

    def without_api():
        with take.stubbing(PERTURBED):
            event = threading.Event()
            _release(event)  # answered by a stand-in: the event is never set
            event.wait()
            return "finished"

    assert bounded(without_api, 0.5) == (False, None)
    take.abandon()
    event = threading.Event()
    _release(event)  # the real function again
    assert event.is_set()
    assert bounded(lambda: 7, 5.0) == (True, 7)


def test_an_abstract_method_is_taken_away_with_its_implementations_in_torch():
    """``LoadPlanner.create_global_plan`` is abstract: a case of it calls torch's
    implementation (``DefaultLoadPlanner.create_global_plan``), so swapping the abstract
    function's code alone left "the case never calls the API" (hollow) where the case
    depends on what the implementation returns. Its torch implementations are taken away
    with it, named in the reason; a case that drops the result is still hollow."""
    from torch.distributed.checkpoint import DefaultLoadPlanner, LoadPlanner
    from torch.distributed.checkpoint.planner import LoadPlan

    take = Takeaway(LoadPlanner.create_global_plan)
    assert DefaultLoadPlanner.create_global_plan in take.targets, take.targets
    assert "DefaultLoadPlanner.create_global_plan" in take.followed
    # a concrete method follows nothing
    assert Takeaway(DefaultLoadPlanner.lookup_tensor).followed == []

    def case(device, dtype):
        plans = DefaultLoadPlanner().create_global_plan([LoadPlan([]), LoadPlan([])])
        return torch.tensor([float(len(plans)), float(all(isinstance(p, LoadPlan) for p in plans))],
                            dtype=dtype, device=device)

    result, _ = _run(case, LoadPlanner.create_global_plan)
    assert result.status == "pass" and result.own.observes is True, result.detail
    assert "implementations in torch were taken away" in result.own.reason, result.own.reason


def test_an_abstract_property_follows_torchs_implementations_not_a_scenarios():
    """``Joinable.join_process_group`` (an abstract property): DDP's and ZeRO's getters
    are torch's implementations, taken away with it; a Joinable a scenario defines is the
    scenario's own code and is not."""
    from torch.distributed.algorithms import Joinable
    from torch.distributed.optim import ZeroRedundancyOptimizer

    class Mine(Joinable):
        def join_hook(self, **kwargs):
            return None

        @property
        def join_device(self):
            return torch.device("cpu")

        @property
        def join_process_group(self):
            return None

    take = Takeaway(Joinable.__dict__["join_process_group"])
    assert ZeroRedundancyOptimizer.__dict__["join_process_group"].fget in take.targets
    assert Mine.__dict__["join_process_group"].fget not in take.targets


def test_a_launchers_kept_run_is_made_again_and_its_api_decided_here(fixture_path):
    """The elastic cases (``distsvc``: an agent, ``start_processes``) run their API in this
    process and keep the run per device (``distsvc.memo``): the recorded run and the run
    without the API were handed the kept result, never called the API, and the workers'
    absorbed footprints made the row "a world's ranks run the API in processes of their
    own" (``WorkerState``, ``SimpleElasticAgent._rendezvous``, ``RunProcsResult``). While
    the API is taken away the kept result is made again, and an API that ran here is
    decided here, workers or not."""
    import tp_fixture_takeaway as lib

    from torchparity.scenarios.sources.distsvc.memo import memo
    from torchparity.scenarios.sources.world import absorb_footprints

    def case(device, dtype):
        def make():
            absorb_footprints([{"footprint": [], "files": []}], device)  # a worker's, as the agent's
            return lib.doubled(torch.ones(3, dtype=dtype, device=device))
        return memo("test-launcher", device, make)

    sc = Scenario(id="c", api="x", fn=case, description=T, expected=T, tags=("distributed",))
    result, _ = execute(sc, "float32", get_adapter("cpu"), footprint=True, api_obj=lib.doubled,
                        api_codes=code_objects(lib.doubled))
    assert result.own.method == "takeaway" and result.own.observes is True, result.own
    assert result.own.calls == 1 and "hollow" not in result.tags


def test_a_c_class_whose_own_members_are_properties_is_taken_away_through_them():
    """``torch.distributed.TCPStore`` (a pybind class) defines ``host``, ``port`` and
    ``libuvBackend`` and nothing else of its own: "defines no function of its own to take
    away" left it to the frames. Its properties are taken away as values, together; a
    case that reads them observes it, and reading them dispatches nothing: host-only."""
    import torch.distributed as dist

    from torchparity.scenarios.sources.world import loopback_store

    def case(device, dtype):
        store = loopback_store(1, timeout=__import__("datetime").timedelta(seconds=20))
        try:
            store.set("k", "v")
            return [store.host, store.libuvBackend, store.port > 0,
                    torch.ones(2, dtype=dtype, device=device) * 2]
        finally:
            del store

    result, _ = _run(case, dist.TCPStore)
    assert result.own.how == "value" and result.own.observes is True, result.own
    assert result.status == "pass" and result.evidence == "host-only", (result.status, result.evidence)


def _default_hook(x):
    """A default that does nothing (a hook a subclass may fill)."""


def test_a_case_of_an_api_that_does_nothing_is_no_hollow_case():
    """An API whose code is empty cannot be observed by any case: the same outcome without
    it is no sign of a hollow case. The row keeps its verdict, says why, and the API is
    host-only by its code (issue 48: ``LoadPlanner.commit_tensor``, whose only torch
    implementation is ``pass``)."""

    def case(device, dtype):
        x = torch.ones(3, dtype=dtype, device=device)
        _default_hook(x)
        return x * 2

    result, _ = _run(case, _default_hook)
    assert result.status == "pass" and "hollow" not in result.tags, result
    assert result.own.empty is True and result.own.observes is None
    assert result.own.reason.startswith("the API does nothing in torch: its body is empty")
    assert result.evidence == "host-only"


def test_what_does_nothing_in_torch_is_read_from_its_code_and_its_torch_overrides():
    import torch.distributed.checkpoint as dcp
    import torch.nn.parallel  # noqa: F401  DDP's join hook overrides JoinHook's defaults
    from torch.distributed.algorithms import JoinHook

    from torchparity.run.takeaway import does_nothing

    said = does_nothing(dcp.LoadPlanner.commit_tensor)  # abstract; torch's one override: pass
    assert said.startswith("the API does nothing in torch") and "DefaultLoadPlanner.commit_tensor" in said
    assert does_nothing(JoinHook.main_hook) == ""  # empty, but torch's own subclass fills it
    assert does_nothing(torch.nn.Module.extra_repr) == ""  # returns a value
    assert does_nothing(torch.abs) == "" and does_nothing(torch.float32) == ""
    assert does_nothing(dcp.LoadPlanner.create_global_plan) == ""  # its override computes
