"""Taking the API away inside a world's ranks (issue 48): a world case's API runs in rank
processes, and is taken away there by the rule that decides in-process cases
(``run.takeaway_world``, ``run.execute.take_away``)."""

from __future__ import annotations

import functools

import pytest
import torch

from torchparity.api.classify import code_objects
from torchparity.devices import get_adapter
from torchparity.results.models import Text
from torchparity.run.execute import execute
from torchparity.scenarios.registry import Scenario
from torchparity.scenarios.sources import find

T = Text(en="x", zh="x")


@functools.lru_cache(maxsize=None)
def _world(api: str, scenario_id: str):
    """A world case of the distributed source, checked on the CPU with its footprint (the
    worlds of one API are started once for the module's tests)."""
    obj = eval(api)
    sc = find("distributed", api, obj, scenario_id)
    return execute(sc, "float32", get_adapter("cpu"), footprint=True, api_obj=obj,
                   api_codes=code_objects(obj))


def _fresh_world_run(sc, obj):
    """``sc`` checked on the CPU with its footprint, the kept world batches forgotten before
    and after: a world whose ``_run_phases`` a test replaced neither meets nor leaves one."""
    from torchparity.scenarios.sources import world as W

    W.forget_batches()
    try:
        return execute(sc, "float32", get_adapter("cpu"), footprint=True, api_obj=obj,
                       api_codes=code_objects(obj))[0]
    finally:
        W.forget_batches()


def _barrier_world():
    """The barrier world case, built here (its ranks answer through ``_run_phases``)."""
    from torchparity.scenarios.sources import world as W

    return Scenario(id="world2-barrier", api="torch.distributed.barrier",
                    fn=lambda device, dtype: W.run_world("barrier", device, dtype), description=T,
                    expected=T, tags=("distributed",))


def _in_process(observed: bool):
    """An in-process case of ``torch.distributed.get_world_size``-like shape: a library
    function whose result the case returns (observed) or drops (not)."""
    import tp_fixture_takeaway as lib

    def case(device, dtype):
        x = torch.ones(3, dtype=dtype, device=device)
        y = lib.doubled(x)
        return y if observed else x + 1

    sc = Scenario(id="c", api="tp_fixture_takeaway.doubled", fn=case, description=T, expected=T)
    return execute(sc, "float32", get_adapter("cpu"), footprint=True, api_obj=lib.doubled,
                   api_codes=code_objects(lib.doubled))


@pytest.mark.slow
def test_a_world_cases_api_gets_its_own_footprint_from_the_takeaway():
    """all_gather, taken away in both ranks: its collective is what disappears, so it is
    the API's own; the case's gathered list changes, so the case observes it."""
    result, entries = _world("torch.distributed.all_gather", "world2-all_gather")
    assert result.status == "pass", result.detail
    own = result.own
    assert own.method == "takeaway" and own.observes is True, own
    assert own.how == "code" and own.calls == 2, own  # one call per rank, summed
    api_ops = {e.op for e in entries if e.source == "api"}
    assert any("allgather" in op for op in api_ops), entries
    # the body's own tensors stay the scenario's
    assert any(e.source == "scenario" for e in entries), entries


@pytest.mark.slow
def test_a_world_case_that_does_not_depend_on_its_api_is_hollow():
    """Every rank passes a barrier with or without it: the case's values are the same
    without the API, so the row is no answer."""
    result, _ = _world("torch.distributed.barrier", "world2-barrier")
    assert result.own.method == "takeaway" and result.own.observes is False, result.own
    assert result.status == "skip" and result.cause == "not_comparable", result
    assert "hollow" in result.tags and "the judged outcome is the same without the API" in result.detail


@pytest.mark.slow
@pytest.mark.parametrize("where", ["in-process", "world"])
@pytest.mark.parametrize("observed", [True, False])
def test_in_process_and_world_cases_are_decided_by_the_same_rule(fixture_path, where, observed):
    if where == "world":
        api, sid = (("torch.distributed.all_gather", "world2-all_gather") if observed
                    else ("torch.distributed.barrier", "world2-barrier"))
        result, _ = _world(api, sid)
    else:
        result, _ = _in_process(observed)
    own = result.own
    assert (own.method, own.stub, own.observes) == ("takeaway", "perturbed", observed), own
    assert own.reason == ("the judged outcome changes without the API" if observed
                          else "the judged outcome is the same without the API"), own.reason
    assert ("hollow" in result.tags) is (not observed)
    assert result.status == ("pass" if observed else "skip"), result.detail


@pytest.mark.slow
def test_a_world_that_does_not_finish_under_takeaway_decides_nothing(monkeypatch):
    """A world killed at its time limit while the API is taken away is no hollow and no
    footprint: "takeaway inconclusive", the frames' attribution kept."""
    from torchparity.scenarios.sources import world as W

    real = W._run_phases

    def hanging(phases, world_size, timeout_s, takeaway=None):
        if takeaway:
            raise W.WorldTimeout("rank 1 hung (killed at its time limit) without a result")
        return real(phases, world_size, timeout_s)

    monkeypatch.setattr(W, "_run_phases", hanging)
    obj = torch.distributed.barrier
    W.forget_batches()  # before find: the source's case must not meet a kept batch
    result = _fresh_world_run(find("distributed", "torch.distributed.barrier", obj, "world2-barrier"), obj)
    assert result.status == "pass" and "hollow" not in result.tags, result.detail
    assert result.own.method == "frames" and result.own.observes is None, result.own
    assert result.own.reason.startswith("takeaway inconclusive: the world under takeaway did not "
                                        "finish (WorldTimeout"), result.own.reason


def _marks(tmp_path, ranks):
    """A world folder as its ranks leave it (``RankWorld.mark``): per rank, the runs of
    case 0 it began and ended."""
    from torchparity.scenarios.sources.world import RankWorld

    for rank, (began, ended) in enumerate(ranks):
        w = RankWorld(None, None, rank, len(ranks), "p", 1.0, str(tmp_path))
        runs = {}
        for kind in began:
            if kind != "record":
                w.mark(kind, "start")
            if kind in ended:
                runs[kind] = {"value": torch.ones(1), "footprint": [], "files": []}
                w.mark(kind, "end", {"runs": dict(runs), "takeaway": {"how": "code", "calls": 1}})


def test_a_world_that_ended_in_a_run_without_the_api_is_that_runs_outcome(tmp_path):
    """In-process, a run without the API that raises or never finishes is its outcome
    (the case observes the API). A world whose rank crashed or hung in such a run was
    "takeaway inconclusive" instead: read from the ranks' marks, it is that run's
    outcome; a world that failed anywhere else (joining again between runs, the recorded
    run) still decides nothing."""
    from torchparity.scenarios.sources.world import RunWithoutApiEnded, WorldError, unfinished_run

    failure = WorldError("rank 1 exited with -11 without a result")
    _marks(tmp_path, [(["record", "perturbed"], ["record", "perturbed"]),
                      (["record", "perturbed"], ["record"])])
    ended = unfinished_run(tmp_path, 2, failure)
    assert isinstance(ended, RunWithoutApiEnded), ended
    assert "perturbed run without the API did not finish in rank 1" in str(ended)
    (case,) = ended.outcomes
    assert all("value" in rank["runs"]["record"] for rank in case)
    assert case[1]["runs"]["perturbed"]["error"][0] == "RunWithoutApiEnded"
    assert "value" in case[0]["runs"]["perturbed"]  # rank 0 ended its run: its own entry


@pytest.mark.parametrize("ranks", [
    [(["record", "perturbed"], ["record", "perturbed"])] * 2,  # both ended: it failed rejoining
    [(["record"], ["record"]), (["record"], [])],  # the recorded run did not end in rank 1
])
def test_a_world_that_failed_outside_a_run_without_the_api_decides_nothing(tmp_path, ranks):
    from torchparity.scenarios.sources.world import WorldError, unfinished_run

    _marks(tmp_path, ranks)
    assert unfinished_run(tmp_path, 2, WorldError("rank 1 exited with 1 without a result")) is None


def test_a_world_ended_in_a_run_without_the_api_is_decided_as_a_run_that_raised(monkeypatch):
    """The row of a world whose run without the API did not finish: the case observes the
    API (as in-process, where that run raised), the frames' footprint kept, said so."""
    from torchparity.scenarios.sources import world as W

    ones = {"value": torch.ones(2), "footprint": [], "files": []}
    info = {"how": "code", "why": "", "calls": 1, "during": {}, "names": ["barrier"],
            "replays_data": True, "constructed": 0, "init": False}

    def phases(phases, world_size, timeout_s, takeaway=None):
        if takeaway:
            why = "the perturbed run without the API did not finish in rank 1 (WorldError: ...)"
            raise W.RunWithoutApiEnded(why, [[{"runs": {"record": ones, "perturbed": {
                "error": ("RunWithoutApiEnded", why)}}, "takeaway": info}] * 2])
        return [[ones] * 2 for _, cases in phases for _ in cases]

    monkeypatch.setattr(W, "_run_phases", phases)
    result = _fresh_world_run(_barrier_world(), torch.distributed.barrier)
    own = result.own
    assert own.method == "frames" and own.observes is True, own
    assert "did not finish in rank 1" in own.reason and "inconclusive" not in own.reason, own.reason
    assert "hollow" not in result.tags and result.status == "pass", result.detail


def test_a_world_that_failed_outside_the_runs_is_started_once_more(monkeypatch):
    """A takeaway world whose rank failed joining Gloo again between runs (``connectFullMesh``
    timed out under load: 9 worlds of the 200-API sample) decided nothing. It is the
    harness's failure, so the world is started once more, as after a kill from outside; a
    second such failure still decides nothing."""
    from torchparity.scenarios.sources import world as W

    ones = {"value": torch.ones(2), "footprint": [], "files": []}
    info = {"how": "code", "why": "", "calls": 1, "during": {}, "names": ["barrier"],
            "replays_data": True, "constructed": 0, "init": False}
    starts = []

    def phases(phases, world_size, timeout_s, takeaway=None):
        if takeaway:
            starts.append(1)
            if len(starts) == 1:
                raise W.OutsideTheRuns("rank 1 exited with 1: Gloo connectFullMesh failed [outside the runs]")
            return [[{"runs": {"record": ones, "perturbed": {"value": torch.zeros(2), "footprint": [],
                                                             "files": []}}, "takeaway": info}] * 2]
        return [[ones] * 2 for _, cases in phases for _ in cases]

    monkeypatch.setattr(W, "_run_phases", phases)
    result = _fresh_world_run(_barrier_world(), torch.distributed.barrier)
    assert len(starts) == 2 and result.own.method == "takeaway" and result.own.observes is True, result.own


def test_an_api_a_bodys_set_up_calls_is_taken_away_around_the_whole_body():
    """``rpc.init_rpc`` is called by the RPC body's set-up, before any section: taken away
    in the section it was "never called" there. ``in_rank_setup`` takes it away around the
    set-up (recorded once, then set up again with stand-ins, the section and the teardown
    run each time); an API the set-up does not call leaves the set-up made and the
    section to take it away."""
    import torch.nn.functional as F

    from torchparity.run.takeaway_world import in_rank_setup

    state, torn = {}, []
    x = torch.tensor([-1.0, 2.0])

    def setup():
        state["y"] = F.relu(x)

    def call():
        return state["y"] * 2

    adapter = get_adapter("cpu")
    got = in_rank_setup(setup, call, lambda: torn.append(1), adapter, [], "torch.nn.functional.relu")
    runs, info = got["runs"], got["takeaway"]
    assert info["how"] == "code" and info["calls"] == 1, info
    assert torch.equal(runs["record"]["value"], torch.tensor([0.0, 4.0]))
    assert not torch.equal(runs["perturbed"]["value"], runs["record"]["value"]), runs
    assert len(torn) == len(runs)  # torn down after every run

    state.clear()
    assert in_rank_setup(setup, call, lambda: None, adapter, [], "torch.nn.functional.gelu") is None
    assert "y" in state  # set up for real: the section takes the API away


def test_a_world_case_whose_harness_also_calls_the_api_here_is_decided_in_its_world(
        monkeypatch, fixture_path):
    """A launcher's API that ran in the judging process is decided there; a world case's
    API is decided in its ranks even where the process that starts the world calls it too
    (its harness: moving results, a store), since a world took the request."""
    import tp_fixture_takeaway as lib

    from torchparity.scenarios.sources import world as W

    ones = {"value": torch.ones(2), "footprint": [], "files": []}
    info = {"how": "code", "why": "", "calls": 1, "during": {}, "names": ["doubled"],
            "replays_data": True, "constructed": 0, "init": False}

    def phases(phases, world_size, timeout_s, takeaway=None):
        if takeaway:
            return [[{"runs": {"record": ones, "perturbed": {"value": torch.zeros(2), "footprint": [],
                                                             "files": []}}, "takeaway": info}] * 2]
        return [[ones] * 2 for _, cases in phases for _ in cases]

    def case(device, dtype):
        lib.doubled(torch.ones(1))  # the harness, here
        return W.run_world("barrier", device, dtype)

    monkeypatch.setattr(W, "_run_phases", phases)
    sc = Scenario(id="w", api="tp_fixture_takeaway.doubled", fn=case, description=T, expected=T,
                  tags=("distributed",))
    result = _fresh_world_run(sc, lib.doubled)
    assert result.own.method == "takeaway" and result.own.observes is True, result.own
    assert result.own.calls == 2, result.own  # the ranks' calls, not this process's
