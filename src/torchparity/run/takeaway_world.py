"""Take the API away inside a world's ranks (``run.takeaway``'s rule, for world cases).

A world case (``sources.world.run_world``: distributed, distpar) runs its API in rank
processes, where the process that judges the case cannot swap it. So the ranks take it
away themselves: :class:`WorldTakeaway` stands for ``run.takeaway.Takeaway`` in
``run.execute.take_away`` (the same rule decides: own footprint = what disappears, bounded by
the ops run during the API's calls; a case whose judged outcome is the same without the API
is hollow; a run that ends early decides nothing about the ops it never reached), and its
``recording()`` / ``stubbing(kind)`` ask ``run_world`` for one run of a world of its own
(``sources.world.taking_away``) in which every rank runs each case through :func:`in_rank`:

1. once recorded, the API's top-level calls kept (``Takeaway.recording``), under the rank's
   footprint recorder as any world case;
2. once with every call answered by a ``perturbed`` stand-in, then once with the recorded
   results ``replayed`` (skipped where the two stand-ins are the same: every call returned
   None), every rank alike, so that a collective taken away is taken away on every rank
   (taken away on one only, its peers would wait on it).

Each run has a shared folder of its own (``world.fresh_dir``: a checkpoint the recorded run
saved is not there for the run without the API that saved it). Between two runs the ranks
meet at the world's store (not its process group) and start a
fresh process group: a stand-in may have left a peer waiting, until the takeaway world's
collective timeout, on what the API would have sent (a ``send`` taken away: its ``recv``
times out), which closes its pairs. Each rank sends back what its takeaway saw (how, the
calls, the ops run during them); the process that judges sums them over the ranks. A world
that does not finish under takeaway decides nothing: "takeaway inconclusive", the frames'
attribution kept (``run.execute.take_away``).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..scenarios.sources.base import resolve_quiet
from ..scenarios.sources.world import recorded_call, taking_away
from .takeaway import PERTURBED, REPLAYED, Takeaway, counterpart

RUNNER = f"{__name__}:in_rank"
SETUP_RUNNER = f"{__name__}:in_rank_setup"


class WorldTakeaway:
    """The API of a world case, taken away in its ranks: what ``run.execute.take_away``
    reads of a ``Takeaway`` (``how``, ``why``, ``calls``, ``during``, ``names``,
    ``replays_data``, ``init``, ``constructed``), summed over the ranks that reported, and
    its ``recording()`` / ``stubbing(kind)`` contexts. ``served``: a ``run_world`` answered
    (a world of another kind, distsvc's, does not take the API away); ``inconclusive``: why
    the world under takeaway decided nothing."""

    in_ranks = True

    def __init__(self, api: str):
        self.api = api
        self.runner = RUNNER
        self.setup_runner = SETUP_RUNNER
        self.which = "record"
        self.served = False
        self.inconclusive = ""
        self.ended = ""  # a run without the API that did not finish in a rank (its outcome)
        self.infos: List[Dict[str, Any]] = []

    def report(self, infos: Sequence[Dict[str, Any]]) -> None:
        self.infos = [i for i in infos if i]

    def _first(self, key: str, default: Any = None) -> Any:
        return next((i[key] for i in self.infos if i.get(key) is not None), default)

    @property
    def how(self) -> Optional[str]:
        return self._first("how") if self.infos else None

    @property
    def why(self) -> str:
        return self._first("why", "") or ("no rank reported its takeaway" if not self.infos else "")

    @property
    def calls(self) -> int:
        return sum(int(i.get("calls", 0)) for i in self.infos)

    @property
    def constructed(self) -> int:
        return sum(int(i.get("constructed", 0)) for i in self.infos)

    @property
    def init(self) -> Optional[bool]:
        return True if any(i.get("init") for i in self.infos) else None

    @property
    def replays_data(self) -> bool:
        return all(i.get("replays_data", True) for i in self.infos)

    def _union(self, key: str) -> List[str]:
        """The ranks' lists under ``key``, joined in order, each name once."""
        return list(dict.fromkeys(n for i in self.infos for n in i.get(key, [])))

    @property
    def names(self) -> List[str]:
        return self._union("names")

    @property
    def followed(self) -> List[str]:
        return self._union("followed")

    @property
    def during(self) -> Dict[str, int]:
        total: Dict[str, int] = defaultdict(int)
        for i in self.infos:
            for op, n in i.get("during", {}).items():
                total[op] += int(n)
        return total

    def recording(self):
        self.which = "record"
        return taking_away(self)

    def stubbing(self, kind: str):
        self.which = kind
        return taking_away(self)


def rank_takeaway(api: str, device_type: str) -> Optional[Takeaway]:
    """The rank's ``Takeaway`` of ``api``, made as the judging process makes it in-process
    (``run.execute.execute``); None where the name does not resolve."""
    obj = resolve_quiet(api)
    if obj is None:
        return None
    return Takeaway(counterpart(obj, device_type), also_named=[getattr(obj, "__name__", "")], stands_for=obj)


def _info(take: Optional[Takeaway], api: str) -> Dict[str, Any]:
    if take is None:
        return {"how": None, "why": f"{api} does not resolve in the rank"}
    return {"how": take.how, "why": take.why, "calls": take.calls, "during": dict(take.during),
            "names": take.names, "replays_data": take.replays_data, "constructed": take.constructed,
            "init": take.init is not None, "followed": list(take.followed)}


def in_rank(call: Callable[[], Any], adapter: Any, files: Sequence[str], world: Any,
            api: str) -> Dict[str, Any]:
    """One world case in a rank with ``api`` taken away (see the module doc): the entry of
    each run, ``{"runs": {"record"|"perturbed"|"replayed": entry}, "takeaway": info}``.
    Every rank makes the same runs: whether the replayed run is needed is agreed through
    ``world.sync``, and each run ends with ``world.rejoin``."""
    take = rank_takeaway(api, adapter.type)
    runs: Dict[str, Any] = {}
    mark = getattr(world, "mark", None) or (lambda *args: None)
    world.fresh_dir("record")
    with take.recording() if take is not None and take.how is not None else contextlib.nullcontext():
        runs["record"] = recorded_call(call, adapter, files)
    info = _info(take, api)
    # word of each run's start and end: a world that does not finish is read from them
    # (``sources.world.unfinished_run``), the recorded run's entry kept for it
    mark("record", "end", {"runs": dict(runs), "takeaway": info})
    # every rank agrees on whether stand-ins run at all (the API taken away on every rank alike)
    hows = world.sync(info["how"])
    if take is None or any(h is None for h in hows):
        return {"runs": runs, "takeaway": info}
    world.rejoin()
    # the replayed stand-ins are the perturbed ones where every recorded call returned None
    same = all(v is None for vs in take.results.values() for v in vs)
    for kind in (PERTURBED, REPLAYED):
        world.fresh_dir(kind)
        mark(kind, "start")
        with take.stubbing(kind):
            runs[kind] = recorded_call(call, adapter, files)
        mark(kind, "end", {"runs": dict(runs), "takeaway": info})
        agreed = world.sync(same)
        world.rejoin()
        if all(agreed):
            break
    return {"runs": runs, "takeaway": info}


def in_rank_setup(setup: Callable[[], Any], call: Callable[[], Any], teardown: Callable[[], Any],
                  adapter: Any, files: Sequence[str], api: str) -> Optional[Dict[str, Any]]:
    """A world body whose set-up may call the API (``rpc.init_rpc``, before any section):
    ``setup()`` runs with the API's calls kept. Where it called the API, the body is the
    case, every rank alike: recorded (that set-up, ``call()``, ``teardown()``), then set up,
    called and torn down again with the API's calls answered by stand-ins (the real set-up
    is not made twice: it is what is taken away); its entry as :func:`in_rank`'s. Where it
    did not, None: the set-up stays made, and the section takes the API away
    (:func:`in_rank`)."""
    take = rank_takeaway(api, adapter.type)
    if take is None or take.how is None:
        setup()
        return None
    runs: Dict[str, Any] = {}
    with take.recording():
        setup()
        if take.calls:
            try:
                runs["record"] = recorded_call(call, adapter, files)
            finally:
                teardown()
    if "record" not in runs:
        return None
    info = _info(take, api)
    same = all(v is None for vs in take.results.values() for v in vs)
    for kind in (PERTURBED, REPLAYED):
        with take.stubbing(kind):
            try:
                setup()
                runs[kind] = recorded_call(call, adapter, files)
            except Exception as exc:  # the set-up without the API's result: this run's outcome
                runs[kind] = {"error": (type(exc).__name__, str(exc)[:300]), "footprint": [], "files": list(files)}
            finally:
                with contextlib.suppress(Exception):  # nothing was set up to tear down
                    teardown()
        if same:
            break
    return {"runs": runs, "takeaway": info}
