"""A world of local rank processes for the ``distributed`` source.

:func:`run_world` starts ``WORLD_SIZE`` fresh interpreters (``python -m`` this module),
each one a rank: it sets the device up as this process has it (``devices.spec_for_device``:
the emulated device's profile travels with it), joins a process group with the device's
collective backend (``DeviceAdapter.collective_backend()``: gloo for the CPU, nccl, hccl,
or gloo over host memory for the emulated device) and runs one body of
``distributed.BODIES`` (or, named ``"<module>:<body>"``, of a sibling source's ``BODIES``:
``distpar``). The outputs of every rank come back as a list, rank by rank.

Rendezvous: this process hosts a ``TCPStore`` on 127.0.0.1 on a port the kernel picks
(no race for a free port) and the ranks join it as clients. Loopback only: a
``TCPStore`` given a host still listens on every interface, so :func:`loopback_store`
binds the socket to 127.0.0.1 itself and hands it over; the ranks' gloo, NCCL and HCCL
listen on ``lo`` (``LOOPBACK_ENV``). Bounded: the store and the
process group time out after ``COLLECTIVE_TIMEOUT_S``; the whole world after
``WORLD_TIMEOUT_S``, and once one rank fails the others get ``GRACE_S`` to finish. No
orphans: every rank asks the kernel to kill it when this process dies (Linux), and
whatever still runs when the world ends is killed and reaped.

A rank that raises reports the exception's type and message; :func:`run_world` raises it
here (builtin exception types as themselves, others as ``RuntimeError`` naming the type),
so a device refusal reads as it would in a single process.

Ranks are forked from a zygote (:func:`start_rank`): one process per parent that has
imported torch once, so a world starts in a fraction of a second instead of two fresh
interpreters' seconds. The scenario's dtypes still share one world (``batch``: the cases
run in turn in the same ranks, each seeded alike), and a case that may have put the ranks
out of step gets a world of its own (see :func:`run_world`, ``OUT_OF_STEP``).
"""

from __future__ import annotations

import builtins
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from ...api.footprint import RANKS_RECORDED, UNRECORDED, StackRecorder, active_recorder
from ...results.error_rules import classify_exception
from ..registry import HarnessFailure, ScaffoldingRefused

WORLD_SIZE = 2
COLLECTIVE_TIMEOUT_S = 60.0
WORLD_TIMEOUT_S = 180.0
GRACE_S = 5.0
SEED = 0
_POLL_S = 0.02


class WorldError(RuntimeError):
    """The world did not finish: a rank crashed or could not start (the device's answer)."""


class WorldKilled(HarnessFailure):
    """A rank was killed by a signal the device does not send (SIGKILL under load, ...)."""


class WorldTimeout(HarnessFailure):
    """A rank hung and was killed at the world's time limit: ``timeout``, as a case that
    overruns its own."""

    timed_out = True


# what ranks listen on: gloo and tensorpipe, NCCL's bootstrap and socket transport, and
# HCCL's host interface (real NPUs), all on the loopback
LOOPBACK_ENV = {"GLOO_SOCKET_IFNAME": "lo", "TP_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo",
                "HCCL_IF_IP": "127.0.0.1", "HCCL_SOCKET_IFNAME": "lo"}


def loopback_store(world_size: int = 1, port: int = 0, timeout: timedelta = timedelta(seconds=60),
                   **kw):
    """A master ``TCPStore`` listening on 127.0.0.1 only (``port`` 0: the kernel picks).

    ``TCPStore("127.0.0.1", ...)`` binds the wildcard address (``*:PORT``, IPv4 and IPv6),
    whatever the host: the socket is bound to loopback here and handed over
    (``master_listen_fd``; the store owns it from then on). ``kw``: ``wait_for_workers``,
    ``multi_tenant``, ``use_libuv``, as ``TCPStore`` takes them."""
    import socket

    import torch.distributed as dist

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
        bound = sock.getsockname()[1]
    except OSError:
        sock.close()
        raise
    kw.setdefault("wait_for_workers", False)
    fd = sock.detach()
    try:
        return dist.TCPStore("127.0.0.1", bound, world_size, True, timeout=timeout,
                             master_listen_fd=fd, **kw)
    except TypeError as exc:  # a torch whose TCPStore takes no listening socket
        os.close(fd)
        raise WorldError(f"this torch's TCPStore cannot be given a loopback socket ({exc}); "
                         "no world is started on every interface") from None
    except BaseException:
        os.close(fd)
        raise


def to_device(tree: Any, device: str) -> Any:
    if isinstance(tree, torch.Tensor):
        return tree.to(device)
    if isinstance(tree, (list, tuple)):
        return [to_device(v, device) for v in tree]
    if isinstance(tree, dict):
        return {k: to_device(v, device) for k, v in tree.items()}
    return tree


def run_world(body: str, device: str, dtype: torch.dtype, world_size: int = WORLD_SIZE,
              timeout_s: float = WORLD_TIMEOUT_S, batch: Sequence[str] = (),
              golden: bool = False) -> List[Any]:
    """Run ``distributed.BODIES[body]`` in a world of ``world_size`` ranks on ``device``;
    the per-rank outputs, moved to ``device`` (ints, bools and None as they are).

    With ``batch`` (the dtype names of the scenario, ``dtype`` among them), the first call
    runs every dtype of the batch in one world, one case after the other, and keeps each
    case's per-rank outcome for the calls that follow in this process: one world start
    instead of one per dtype. A case in which a rank raised may have left the world out of
    step, so the cases after it are not kept (it is: its ranks started in step); a
    batch world that does not finish keeps nothing. Those dtypes get a world of their own.

    ``golden``: the float64 golden of the case (:func:`computing_golden`), on the CPU:
    each rank runs the body in ``dtype`` while the body's own helpers, which make its
    models and inputs, round them to ``dtype`` and compute on in float64. The golden of a
    world is computed in its ranks; a dispatch mode in this process (``golden.py``) would
    see none of their ops, and the CPU's own low-precision answer would pass for it.
    """
    from ...devices import spec_for_device

    if _TAKING_AWAY and not golden:  # the API taken away in the ranks (``taking_away``)
        return _taken_away(body, device, dtype, world_size, timeout_s, batch, _TAKING_AWAY[-1])
    if golden:
        device = "cpu"
        batch = tuple(GOLDEN + d for d in batch)
    name = (GOLDEN if golden else "") + _dtype_name(dtype)
    spec = spec_for_device(device)
    key = (body, spec, world_size, tuple(batch))
    if name in batch:
        if key not in _BATCHES:
            pair = None if golden else paired_spec(spec)
            if pair is None:
                _BATCHES[key] = _run_batch(body, spec, batch, world_size, timeout_s)
            else:
                _BATCHES.update(_run_pair(body, (spec, pair), batch, world_size, timeout_s))
                _BATCHES.setdefault(key, {})  # a pair that did not finish: worlds of their own
        if name in _BATCHES[key]:
            return _finish(_BATCHES[key][name], device)
    return _finish(_run_cases([(body, name)], device, world_size, timeout_s)[0], device)


_BATCHES: Dict[tuple, Dict[str, List[dict]]] = {}  # kept outcomes, per batch and dtype


def forget_batches() -> None:
    """Drop the batch outcomes this process kept: the next ``run_world`` starts its world."""
    _BATCHES.clear()
    _TAKEN.clear()


# -- the API taken away in the ranks ---------------------------------------------------------
#
# A world case's API runs in its ranks, so it is taken away there: while a request is
# entered (:func:`taking_away`, by the process that judges the case), ``run_world`` runs the
# body in a world of its own whose ranks run each case through the request's ``runner``
# (``"module:function"``, called in the rank as ``runner(call, adapter, files, world)``: it
# runs the case once recorded, then with the API answered by stand-ins, every rank alike,
# agreeing through ``world.sync`` whether one more run is needed and starting a fresh process
# group, ``world.rejoin``, after a run in which a rank raised: a stand-in may leave a peer
# waiting, until its collective timeout, on what the API would have sent). Each case's entry
# per rank is then ``{"runs": {which: entry}, "takeaway": info}``; ``run_world`` hands back
# the run the request names (``request.which``) as it hands back a case, and the ranks'
# ``info`` to ``request.report``. A world that does not finish decides nothing:
# ``request.inconclusive`` says why. The world runs the batch's dtypes (one world per body,
# API and device); its time limit is the body's times ``TAKEAWAY_RUNS``, its collectives'
# ``TAKEAWAY_COLLECTIVE_S`` (a collective that waits on a peer's taken away call fails then).
_TAKING_AWAY: List[Any] = []
_TAKEN: Dict[tuple, Any] = {}  # (body, spec, world size, dtypes, api) -> per dtype, or why not
TAKEAWAY_RUNS = 3  # recorded, perturbed, replayed
TAKEAWAY_COLLECTIVE_S = 15.0


def takeaway_request() -> Optional[Any]:
    """The request of the :class:`taking_away` entered last, or None: a world started now
    takes that request's API away in its ranks."""
    return _TAKING_AWAY[-1] if _TAKING_AWAY else None


class taking_away:  # noqa: N801 - a context manager, used as a function
    """While entered, ``run_world`` takes ``request.api`` away in its ranks (see above)."""

    def __init__(self, request: Any) -> None:
        self.request = request

    def __enter__(self) -> Any:
        _TAKING_AWAY.append(self.request)
        return self.request

    def __exit__(self, *exc: Any) -> None:
        _TAKING_AWAY.remove(self.request)


def _taken_away(body: str, device: str, dtype: torch.dtype, world_size: int, timeout_s: float,
                batch: Sequence[str], request: Any) -> List[Any]:
    from ...devices import spec_for_device

    name = _dtype_name(dtype)
    spec = spec_for_device(device)
    order = _order(batch) if name in batch else [name]
    key = (body, spec, world_size, tuple(order), request.api)
    if key not in _TAKEN or (not isinstance(_TAKEN[key], str) and name not in _TAKEN[key]):
        if key in _TAKEN:  # cut after a case that put the world out of step: one of its own
            order, key = [name], (body, spec, world_size, (name,), request.api)
        take = {"api": request.api, "runner": request.runner}
        def start() -> List[List[dict]]:
            return _run_phases([(spec, [(body, d) for d in order])], world_size,
                               timeout_s * TAKEAWAY_RUNS, takeaway=take)
        try:
            try:
                outcomes = start()
            except OutsideTheRuns:  # the harness's failure: once more, as a kill from outside
                outcomes = start()
        except RunWithoutApiEnded as exc:  # the world ended in a run without the API: its outcome
            outcomes = exc.outcomes
        except (WorldError, HarnessFailure, OSError) as exc:
            outcomes = f"{type(exc).__name__}: {first_line(exc)[:300]}"
        if isinstance(outcomes, str):
            _TAKEN[key] = outcomes
        else:
            kept = _kept(order, [[e.get("runs", {}).get("record", e) for e in per_rank]
                                 for per_rank in outcomes])
            _TAKEN[key] = {d: per_rank for d, per_rank in zip(order, outcomes) if d in kept}
    got = _TAKEN[key]
    request.served = True
    if isinstance(got, str) or name not in got:
        request.inconclusive = (f"the world under takeaway did not finish ({got})" if isinstance(got, str)
                                else "the world under takeaway did not reach this case")
        raise WorldError(request.inconclusive)
    per_rank = got[name]
    if any("runs" not in e for e in per_rank):  # the case never ran in a rank (set-up failed)
        request.report([])
        return _finish(per_rank, device)
    request.report([e.get("takeaway") or {} for e in per_rank])
    runs = [e["runs"] for e in per_rank]
    which = request.which if all(request.which in r for r in runs) else "perturbed"
    chosen = [r.get(which, r["record"]) for r in runs]
    ended = [e["error"][1] for e in chosen if e.get("error", ("",))[0] == RunWithoutApiEnded.__name__]
    if ended:  # said on the row: this run's outcome is that it did not finish
        request.ended = ended[0]
    return _finish(chosen, device)

# An emulated case asks a batch twice: on the CPU (its reference) and on the device. Where
# this process hosts the emulated device, one world answers both: its ranks set the device
# up, run the batch on CPU tensors over gloo first, then join a new process group on the
# device's backend and run the batch there. (The emulator is registered in the CPU phase,
# as the autograd engine needs, but CPU tensors never reach it: a CPU world's ranks.)
# One world start instead of two. Not for a real accelerator: its plugin (torch_npu) patches
# torch and torch.distributed as it loads, and the CPU reference would run under that.
PAIR_ENV = "TORCHPARITY_WORLD_PAIR"  # "0": the CPU reference in a world of its own


def paired_spec(spec: str) -> Optional[str]:
    """The spec whose batch one world runs together with ``spec``'s: the emulated device
    this process hosts for ``"cpu"``, ``"cpu"`` for that device; None otherwise (not
    hosted here, a real device, or ``TORCHPARITY_WORLD_PAIR=0``)."""
    from ...devices import hosted_spec

    if os.environ.get(PAIR_ENV, "1") == "0":
        return None
    hosted = hosted_spec()
    if not hosted.startswith("emu:"):
        return None
    return {"cpu": hosted, hosted: "cpu"}.get(spec)


# dtypes devices refuse most (Ascend chips: float64): run last in a batch world, so that a
# refusal, which ends what the world keeps, ends it after the others ran
_LAST = ("float64", "complex128")


def _run_batch(body: str, spec: str, batch: Sequence[str], world_size: int,
               timeout_s: float) -> Dict[str, List[dict]]:
    """Every dtype of ``batch`` in one world; the outcomes kept, per dtype. A case in which
    a rank raised is its own answer (its ranks started in step), but it may leave the world
    out of step for the next (a peer still waiting on a send that never comes, then a
    closed pair for every case after it): nothing after it is kept."""
    order = _order(batch)
    try:
        outcomes = _run_cases([(body, d) for d in order], spec, world_size, timeout_s)
    except (WorldError, HarnessFailure):  # each dtype gets a world of its own
        return {}
    return _kept(order, outcomes)


def _run_pair(body: str, specs: Tuple[str, str], batch: Sequence[str], world_size: int,
              timeout_s: float) -> Dict[tuple, Dict[str, List[dict]]]:
    """``batch`` on the CPU, then on the hosted emulated device, in one world (``PAIR_ENV``):
    the kept outcomes of each, by ``run_world``'s batch key. Each phase starts in step (a
    new process group), so each keeps its cases up to its own first raise; a world that
    does not finish, or a rank out of step, leaves the rest to worlds of their own."""
    order = _order(batch)
    first, second = sorted(specs, key=lambda s: s != "cpu")
    cases = [(body, d) for d in order]
    try:
        outcomes = _run_phases([(first, cases), (second, cases)], world_size, timeout_s)
    except (WorldError, HarnessFailure):
        return {}
    return {(body, first, world_size, tuple(batch)): _kept(order, outcomes[:len(order)]),
            (body, second, world_size, tuple(batch)): _kept(order, outcomes[len(order):])}


def _order(batch: Sequence[str]) -> List[str]:
    return sorted(batch, key=lambda d: d in _LAST)


def _kept(order: Sequence[str], outcomes: List[List[dict]]) -> Dict[str, List[dict]]:
    kept = {}
    for d, per_rank in zip(order, outcomes):
        kept[d] = per_rank
        if any("error" in entry or out_of_step(entry) for entry in per_rank):
            break  # the cases after it get worlds of their own
    return kept


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")




def absorb_footprints(per_rank: List[dict], device: str) -> None:
    """The ops every rank recorded for this case, added to the footprint recorder running
    here (if one is, on ``device``'s type), attributed to the API by its rules; with one
    ``RANKS_RECORDED`` entry (count: the ranks that sent theirs; an empty entry is a rank
    that ran no part of the case, an RPC server), so a world whose ranks ran no device op
    reads as recorded, not as missing; an ``UNRECORDED`` entry where a rank that ran sent
    none (its work ran where no recorder reached: the row is "not recorded")."""
    recorder = active_recorder()
    if recorder is None or recorder.device_type != torch.device(device).type:
        return
    ran = [entry for entry in per_rank if entry]  # {}: a rank that ran no part of this case
    sent = [entry for entry in ran if entry.get("footprint") is not None]
    for entry in sent:
        recorder.absorb(entry["footprint"], entry.get("files", ()))
    # the op that raised, from the rank whose error is the case's (a refusal first, as
    # case_error picks it; a body may also hand a refusal back as its value): who issued
    # it decides as in-process (scaffolding never does)
    failing = [e for e in sent if e.get("failed")]
    failing.sort(key=lambda e: not ("error" in e and classify_exception(*e["error"]) is not None))
    for entry in failing[:1]:
        recorder.absorb_failure(entry["failed"], entry.get("files", ()))
    if sent and len(sent) == len(ran):
        recorder.absorb([[RANKS_RECORDED, [], len(sent), []]])
    elif len(sent) < len(ran):  # some rank's work was not recorded: the footprint is partial
        recorder.absorb([[UNRECORDED, [], len(ran) - len(sent), []]])


def _finish(per_rank: List[dict], device: str) -> List[Any]:
    """The per-rank values, or the exception of the case (:func:`case_error`); the ranks'
    footprints go to the recorder running here (:func:`absorb_footprints`)."""
    absorb_footprints(per_rank, device)
    errors = [(rank, entry["error"]) for rank, entry in enumerate(per_rank) if "error" in entry]
    if not errors:
        return [to_device(entry["value"], device) for entry in per_rank]
    raise case_error(errors)


def case_error(errors: Sequence[Tuple[int, Tuple[str, str]]]) -> Exception:
    """The exception of a case from its ranks' (rank, (type name, message)) errors: a
    rank's device refusal before what its peers raised because of it (a recv timed out, a
    closed pair), else the first rank's."""
    refusals = [e for e in errors if classify_exception(*e[1]) is not None]
    rank, (kind, message) = (refusals or errors)[0]
    return rank_error(kind, f"{message} (rank {rank})")


def rank_error(kind: str, message: str) -> Exception:
    """The exception a rank reported by type name and message, as the parent raises it: a
    builtin type as itself, a refused scaffolding as :class:`ScaffoldingRefused` ("scaffolding
    refused", never the API's answer), any other type as a RuntimeError naming it."""
    klass = ScaffoldingRefused if kind == ScaffoldingRefused.__name__ else getattr(builtins, kind, None)
    if isinstance(klass, type) and issubclass(klass, Exception):
        return klass(message)
    return RuntimeError(f"{kind}: {message}")


def _run_cases(cases: List[Tuple[str, str]], device: str, world_size: int,
               timeout_s: float) -> List[List[dict]]:
    """Start a world on ``device`` (a torch device or its spec), run ``cases`` ((body,
    dtype name) pairs) in turn in every rank; per case, the entry of every rank:
    ``{"value": ...}`` or ``{"error": (type, message)}``. Raises WorldError when a rank
    does not finish (``world_failure``); a world whose rank was killed from outside is
    started once more first."""
    from ...devices import spec_for_device

    return _run_phases([(spec_for_device(device), cases)], world_size, timeout_s)


def _run_phases(phases: List[Tuple[str, List[Tuple[str, str]]]], world_size: int,
                timeout_s: float, takeaway: Optional[dict] = None) -> List[List[dict]]:
    """:func:`_run_cases` for a world whose ranks run phases in turn, each (spec, cases) in
    a process group of its own on that spec's device; the entries of every phase's cases,
    in order."""
    return retried_once(lambda: _start_world(phases, world_size, timeout_s, takeaway))


def _start_world(phases: List[Tuple[str, List[Tuple[str, str]]]], world_size: int,
                 timeout_s: float, takeaway: Optional[dict] = None) -> List[List[dict]]:
    store = loopback_store(world_size, timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    with tempfile.TemporaryDirectory(prefix="torchparity-world-") as tmp:
        args = {"phases": [[spec, list(cases)] for spec, cases in phases],
                "world_size": world_size, "port": store.port, "dir": tmp, "takeaway": takeaway}
        env = dict(os.environ)
        env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
        env.update(LOOPBACK_ENV)
        env["TORCHPARITY_WORLD_PARENT"] = str(os.getpid())
        procs = []
        try:
            for rank in range(world_size):
                procs.append(start_rank(f"{__name__}:_rank_main", dict(args, rank=rank),
                                        Path(tmp) / f"rank{rank}.err", env))
            waited = wait_all(procs, timeout_s)
        finally:
            killed = end_processes(procs)
            del store
        n_cases = sum(len(cases) for _, cases in phases)
        try:
            return _collect(Path(tmp), procs, world_size, n_cases, killed, waited)
        except (WorldError, WorldTimeout) as exc:  # not WorldKilled: a kill from outside is ours
            if not takeaway:
                raise
            ended = unfinished_run(Path(tmp), world_size, exc)
            if ended is None:  # outside every run without the API: the harness's
                raise OutsideTheRuns(f"{first_line(exc)} [outside the runs of the case: the harness's "
                                     f"(setting up, joining a process group, between runs)]") from None
            raise ended from None


class OutsideTheRuns(WorldError):
    """A world under takeaway that failed outside every run of its cases with the API taken
    away (setting up, joining a process group again between runs, agreeing at the store: a
    Gloo ``connectFullMesh`` that timed out under load): the harness's, never the API's
    answer; started once more, then inconclusive."""


class RunWithoutApiEnded(WorldError):
    """A world under takeaway that did not finish because a run of a case with its API
    taken away did not (a rank crashed or hung in it, after every rank had finished the
    case's recorded run): that run's outcome, as a run without the API that raises or
    never finishes is in-process. ``outcomes``: the entries of the cases before it, and of
    it (each rank's recorded run, and the run that did not finish as its error)."""

    def __init__(self, message: str, outcomes: List[List[dict]]):
        super().__init__(message)
        self.outcomes = outcomes


def unfinished_run(tmp: Path, world_size: int, failure: BaseException) -> Optional[RunWithoutApiEnded]:
    """Where a world under takeaway failed inside a run without the API (its ranks' marks,
    ``RankWorld.mark``): every rank finished the case's recorded run, and a rank began a
    ``perturbed`` or ``replayed`` run it never ended. None where it failed anywhere else
    (setting up, joining or rejoining a process group, agreeing at the store, the recorded
    run): the harness's, which decides nothing."""
    done: List[List[dict]] = []
    for rank in range(world_size):
        path = tmp / f"rank{rank}.partial.pt"
        try:
            done.append(torch.load(path, map_location="cpu", weights_only=False)["cases"] if path.exists() else [])
        except Exception:
            return None
    case = min(len(d) for d in done)
    marks = tmp / "progress"
    per_rank: List[dict] = []
    ended_in: List[Tuple[int, str]] = []
    for rank in range(world_size):
        if not (marks / f"rank{rank}-case{case}-record-end.pt").exists():
            return None  # the recorded run did not end in every rank
        last = [k for k in ("replayed", "perturbed", "record") if (marks / f"rank{rank}-case{case}-{k}-end.pt").exists()]
        entry = torch.load(marks / f"rank{rank}-case{case}-{last[0]}-end.pt", map_location="cpu", weights_only=False)
        for kind in ("perturbed", "replayed"):
            began = (marks / f"rank{rank}-case{case}-{kind}-start").exists()
            if began and not (marks / f"rank{rank}-case{case}-{kind}-end").exists():
                ended_in.append((rank, kind))
        per_rank.append(entry)
    if not ended_in:
        return None
    rank, kind = ended_in[0]
    why = (f"the {kind} run without the API did not finish in rank {rank} "
           f"({type(failure).__name__}: {first_line(failure)[:300]})")
    for entry in per_rank:  # a rank that ended the run keeps its entry
        entry["runs"].setdefault(kind, {"error": ("RunWithoutApiEnded", why)})
    outcomes = [[done[r][i] for r in range(world_size)] for i in range(case)] + [per_rank]
    return RunWithoutApiEnded(why, outcomes)


# -- starting a rank ------------------------------------------------------------------------
#
# A fresh interpreter spends seconds before a rank's first collective: importing torch, and
# torch._dynamo, which the first op under a footprint recorder's dispatch mode imports
# (about 2.5 s and 2.2 s here, against 0.1 s for the case itself). So ranks are forked from
# a zygote: one process per parent that imported ``PRELOAD`` once, has run no op,
# initialised no device and started no thread, and forks a rank per request; each rank
# then sets its device up as a fresh process would. (multiprocessing's forkserver would
# re-run the caller's main script in every child.)

PRELOAD = ("torch", "torch.distributed", "torch._dynamo", "torch.distributed.optim",
           "torch.distributed.checkpoint", "torch.distributed.pipelining", __name__)
SPAWN_ENV = "TORCHPARITY_WORLD_SPAWN"  # "exec": every rank a fresh interpreter (the slow way)
ZYGOTE_READY_S = 120.0


class Zygote:
    """The zygote of this process, its pipes and the exit codes it reported."""

    def __init__(self) -> None:
        from ...devices import hosted_spec

        env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")  # no device plugin before a rank picks
        code = f"import sys; from {__name__} import zygote_main; zygote_main(sys.argv[1])"
        self.proc = subprocess.Popen([sys.executable, "-c", code, hosted_spec()], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.buf = b""
        self.codes: Dict[int, int] = {}
        self.ready = False

    def _messages(self, timeout: float) -> List[dict]:
        """The messages that arrive within ``timeout`` (at least one read is tried)."""
        import select

        fd = self.proc.stdout.fileno()
        got = []
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise OSError("the rank zygote is gone")
            self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "exit" in msg:
                self.codes[msg["exit"]] = msg["code"]
            got.append(msg)
        return got

    def fork(self, request: dict) -> int:
        deadline = time.monotonic() + ZYGOTE_READY_S
        while not self.ready:
            if time.monotonic() > deadline:
                raise OSError("the rank zygote did not start")
            self.ready = any(m.get("ready") for m in self._messages(1.0))
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + ZYGOTE_READY_S
        while time.monotonic() < deadline:
            for msg in self._messages(1.0):
                if "pid" in msg:
                    return msg["pid"]
        raise OSError("the rank zygote did not answer")

    def poll(self, pid: int) -> Optional[int]:
        if pid not in self.codes:
            self._messages(0)
        return self.codes.get(pid)


_ZYGOTE: Dict[str, Any] = {}


def _zygote() -> Zygote:
    """The zygote of this process (started at the first call, again after it died)."""
    z = _ZYGOTE.get("z")
    if z is not None and z.proc.poll() is not None:
        z = None  # it died (killed from outside): start another
    if z is None:
        z = _ZYGOTE["z"] = Zygote()
    return z


def zygote_pid() -> Optional[int]:
    """The pid of this process's rank zygote while it runs (it outlives worlds), else None."""
    z = _ZYGOTE.get("z")
    return z.proc.pid if z is not None and z.proc.poll() is None else None


class ForkedRank:
    """A rank forked by the zygote, seen as the ``Popen`` the world's helpers
    (:func:`wait_all`, :func:`end_processes`) expect: ``poll``, ``returncode``, ``kill``,
    ``wait``, ``pid``."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid

    def poll(self) -> Optional[int]:
        try:
            return self.zygote.poll(self.pid)
        except OSError:  # the zygote died: so did the rank (it dies with the zygote)
            return self.zygote.codes.setdefault(self.pid, -9)

    @property
    def returncode(self) -> Optional[int]:
        return self.poll()

    def kill(self) -> None:
        import signal

        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self, timeout: Optional[float] = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"rank {self.pid}", timeout)
            time.sleep(_POLL_S)
        return self.poll()


def start_rank(entry: str, args: dict, err: Path, env: Dict[str, str]):
    """Start one rank running ``entry`` (``"module:function"``, called with ``args``; its
    int is the exit code) with ``env`` as its whole environment and stdout/stderr in
    ``err``: forked by the zygote, or a fresh interpreter where ``TORCHPARITY_WORLD_SPAWN=exec``
    or no zygote could start. A ``Popen``-like handle."""
    if os.environ.get(SPAWN_ENV) != "exec":
        try:
            zygote = _zygote()
            request = {"entry": entry, "args": args, "err": str(err), "env": env, "parent": os.getpid()}
            return ForkedRank(zygote, zygote.fork(request))
        except OSError:
            _ZYGOTE.pop("z", None)
    module, _, function = entry.partition(":")
    code = (f"import json, sys; from {module} import {function}; "
            f"sys.exit({function}(json.loads(sys.argv[1])))")
    with open(err, "wb") as out:
        return subprocess.Popen([sys.executable, "-c", code, json.dumps(args)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)


def zygote_main(spec: str = "cpu") -> None:
    """The zygote: import ``PRELOAD``, warm what ranks setting up ``spec`` (the device its
    parent hosts) share, say ready, then per request line fork a rank
    (:func:`_forked_main`) and answer its pid; report each rank's exit code as it ends;
    end when the parent closes the pipe (its ranks die with it: ``die_with_parent``)."""
    import importlib
    import select

    for module in PRELOAD:
        try:
            importlib.import_module(module)
        except Exception:
            pass
    try:
        from ...devices import prefork

        prefork(spec)  # an emulated device's imports, op lookups and profile, shared by its ranks
    except Exception:
        pass
    out = sys.stdout.buffer
    out.write(b'{"ready": true}\n')
    out.flush()
    buf = b""
    children: set = set()
    while True:
        ready, _, _ = select.select([0], [], [], 0.05)
        if ready:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _forked_main(request)
                children.add(pid)
                out.write((json.dumps({"pid": pid}) + "\n").encode())
                out.flush()
        for pid in list(children):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                out.write((json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}) + "\n").encode())
                out.flush()


def _forked_main(request: dict) -> None:
    """A forked rank: stdin from /dev/null, its output to the request's ``err``, the
    request's ``env`` as its environment, then its ``entry``; never returns."""
    import importlib

    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        fd = os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["TORCHPARITY_WORLD_PARENT"] = str(os.getppid())  # the zygote: it ends with the parent
        die_with_parent()
        os.kill(request["parent"], 0)  # ProcessLookupError: whoever asked for this rank is gone
        module, _, function = request["entry"].partition(":")
        code = getattr(importlib.import_module(module), function)(request["args"])
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def wait_all(procs, timeout_s: float) -> str:
    """Wait for the ranks: ``"done"`` (all ended), ``"grace"`` (one failed and the others
    did not end within ``GRACE_S``) or ``"timeout"`` (still running at ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    grace = False
    while time.monotonic() < deadline:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            return "done"
        if not grace and any(c not in (None, 0) for c in codes):  # the others may wait forever
            grace = True
            deadline = min(deadline, time.monotonic() + GRACE_S)
        time.sleep(_POLL_S)
    return "grace" if grace else "timeout"


def end_processes(procs) -> set:
    """Kill the ranks still running and reap all; the indices of those killed here."""
    killed = set()
    for i, p in enumerate(procs):
        if p.poll() is None:
            p.kill()
            killed.add(i)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:  # unkillable (D state): nothing more to do here
            pass
    return killed


def killed_from_outside(returncode: Any) -> bool:
    """A process ended by a signal no device sends and this code did not send: SIGKILL (the
    OOM killer under load, a user), SIGTERM, SIGINT, SIGHUP. A rank's own crash (SIGSEGV,
    SIGABRT, SIGBUS, SIGFPE, SIGILL) is the device's answer; a kill at a time limit is ours."""
    import signal

    outside = {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    return isinstance(returncode, int) and returncode < 0 and -returncode in outside


def world_failure(missing: Dict[int, Any], killed: set, waited: str, why_of,
                  codes: Optional[Dict[int, Any]] = None) -> Exception:
    """The exception for a world whose ranks ``missing`` ({rank: exit code}) left no result:
    a rank's own failure first (``WorldError``: the device's answer), then a rank killed
    from outside (``WorldKilled``: the harness's, retried once), then ranks killed here at
    the time limit (``WorldTimeout``). ``why_of(rank)``: the tail of its stderr; ``codes``
    ({rank: exit code} of every rank): a hang after another rank failed names that rank."""
    own = [r for r, code in missing.items() if r not in killed and not killed_from_outside(code)]
    if own:
        r = own[0]
        return WorldError(f"rank {r} exited with {missing[r]} without a result{why_of(r)}")
    outside = [r for r, code in missing.items() if r not in killed]
    if outside:
        r = outside[0]
        return WorldKilled(f"rank {r} was killed by signal {-missing[r]} from outside (not by the "
                           f"device, not by torchparity) without a result{why_of(r)}")
    r = next(iter(missing))
    limit = "its time limit"
    if waited != "timeout":
        failed = [(q, c) for q, c in (codes or {}).items() if q not in missing and c not in (None, 0)]
        limit = "the grace period after a rank failed" if not failed else (
            f"the grace period after rank {failed[0][0]} exited with {failed[0][1]}{why_of(failed[0][0])};"
            f" rank {r}")
    return WorldTimeout(f"rank {r} hung (killed at {limit}) without a result{why_of(r)}")


def retried_once(start: Callable[[], Any]) -> Any:
    """``start()`` (a world), once more when a rank was killed from outside the first time;
    a second such kill raises (``WorldKilled``: a harness failure, never the device's)."""
    try:
        return start()
    except WorldKilled:
        return start()


def _collect(tmp: Path, procs, world_size: int, n_cases: int, killed: set = frozenset(),
             waited: str = "done") -> List[List[dict]]:
    ranks: Dict[int, Any] = {}
    for rank in range(world_size):
        path = tmp / f"rank{rank}.pt"
        if path.exists():
            ranks[rank] = torch.load(path, map_location="cpu", weights_only=False)
    for got in ranks.values():
        if "setup_error" in got:  # the world never formed: every case gets its answer
            return [[{"error": got["setup_error"]}] * world_size for _ in range(n_cases)]
    missing = {r: procs[r].returncode for r in range(world_size) if r not in ranks}
    if missing:
        raise world_failure(missing, killed, waited, lambda r: tail(tmp / f"rank{r}.err"),
                            {r: p.returncode for r, p in enumerate(procs)})
    return [[ranks[r]["cases"][i] for r in range(world_size)] for i in range(n_cases)]


def tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return (": " + " | ".join(text[-lines:]))[:400] if text else ""


# -- inside a rank -------------------------------------------------------------------------

def die_with_parent() -> None:
    """SIGKILL this rank when the process that started it dies (Linux prctl)."""
    try:
        import ctypes
        import ctypes.util
        import signal

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if str(os.getppid()) != os.environ.get("TORCHPARITY_WORLD_PARENT", str(os.getppid())):
        os._exit(1)  # the parent died before the signal was armed


def rank_device(adapter, rank: int) -> str:
    """The device a rank uses: one device per rank on a real accelerator (collective
    libraries refuse two ranks on one device), index 0 on the emulated one (each rank is
    its own process with its own emulated device)."""
    if adapter.type == "cpu":
        return "cpu"
    if adapter.emulated:
        return adapter.torch_device
    module = getattr(torch, adapter.type, None)
    count = module.device_count() if hasattr(module, "device_count") else None
    if count is not None and count <= rank:
        raise RuntimeError(f"a world of ranks on {adapter.type} needs one device per rank; "
                           f"rank {rank} finds {count} device(s)")
    if module is not None and hasattr(module, "set_device"):
        module.set_device(rank)
    return f"{adapter.type}:{rank}"


def _rank_main(args: dict) -> int:
    die_with_parent()
    import torch.distributed as dist

    rank, world_size = args["rank"], args["world_size"]
    out = Path(args["dir"]) / f"rank{rank}.pt"
    os.environ["TORCHPARITY_WORLD_DIR"] = args["dir"]  # shared by the ranks, removed after
    store = None
    results: List[dict] = []
    total = sum(len(cases) for _, cases in args["phases"])
    try:
        # every phase's device set up before any case runs: torch's autograd engine makes its
        # device queues at the first backward, and a device registered later gets none
        adapters = [_set_up(spec) for spec, _ in args["phases"]]
    except Exception as exc:
        torch.save({"setup_error": (type(exc).__name__, f"world set-up failed: {first_line(exc)}")}, out)
        return 1
    for index, (adapter, (_, cases)) in enumerate(zip(adapters, args["phases"])):
        try:
            store = store or dist.TCPStore("127.0.0.1", args["port"], world_size, is_master=False,
                                           timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
            take = args.get("takeaway")
            limit = TAKEAWAY_COLLECTIVE_S if take else COLLECTIVE_TIMEOUT_S
            device = _join(adapter, rank, world_size, dist.PrefixStore(f"phase{index}", store), limit)
        except Exception as exc:
            torch.save({"setup_error": (type(exc).__name__, f"world set-up failed: {first_line(exc)}")}, out)
            return 1
        world = RankWorld(store, adapter, rank, world_size, f"phase{index}", limit, args["dir"]) if take else None
        for body, dtype in cases:
            if world is not None:
                world.case = len(results)
            results.append(_run_case(body, dtype, rank, world_size, device, adapter, take, world))
            if world is not None:  # the cases done so far, for a world that does not finish
                torch.save({"cases": results}, Path(args["dir"]) / f"rank{rank}.partial.pt")
            if out_of_step(results[-1]):  # a peer may wait on this rank forever: end, so it need not
                results += [{"error": ("WorldOutOfStep", "not run: an earlier case put the world "
                                                         "out of step")}] * (total - len(results))
                break
        try:
            dist.destroy_process_group()
        except Exception:
            pass
        if len(results) == total:
            break
    torch.save({"cases": results}, out)
    return 0


def _set_up(spec: str):
    """The adapter of ``spec``, its device set up in this rank."""
    from ...devices import get_adapter

    adapter = get_adapter(spec)
    adapter.setup()
    return adapter


def _join(adapter, rank: int, world_size: int, store, timeout_s: float = COLLECTIVE_TIMEOUT_S) -> str:
    """Join a process group on ``adapter``'s collective backend: the torch device this rank
    uses in it."""
    import torch.distributed as dist

    backend = adapter.collective_backend()
    if backend is None:
        raise RuntimeError(f"the device {adapter.spec} has no torch.distributed backend")
    device = rank_device(adapter, rank)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=timeout_s))
    return device


class RankWorld:
    """What a rank's takeaway runner (``taking_away``) asks of its world: :meth:`sync`, every
    rank's answer to one question (through the world's store, not its process group, which a
    stand-in may have broken), :meth:`rejoin`, a fresh process group (a peer that waited
    on a taken away call has closed its pairs), and :meth:`fresh_dir`."""

    def __init__(self, store, adapter, rank: int, world_size: int, prefix: str, timeout_s: float,
                 base: str = ""):
        self.store, self.adapter, self.rank, self.world_size = store, adapter, rank, world_size
        self.prefix, self.timeout_s = prefix, timeout_s
        self.asked = 0
        self.joined = 0
        self.runs = 0
        self.base = base  # the world's shared folder
        self.case = 0  # the index of the case running, among the world's

    def mark(self, kind: str, stage: str, entry: Optional[dict] = None) -> None:
        """Leave word that this rank began (``stage`` "start") or ended ("end") the case's
        ``kind`` run, with the case's entry so far (``entry``, at the recorded run's end):
        a world that does not finish is read from them (:func:`unfinished_run`)."""
        if not self.base:
            return
        folder = Path(self.base) / "progress"
        folder.mkdir(exist_ok=True)
        name = f"rank{self.rank}-case{self.case}-{kind}-{stage}"
        if entry is not None:
            torch.save(entry, folder / f"{name}.pt")
        (folder / name).touch()

    def sync(self, value: Any) -> List[Any]:
        self.asked += 1
        key = f"{self.prefix}/takeaway/{self.asked}"
        self.store.set(f"{key}/{self.rank}", json.dumps(value))
        return [json.loads(self.store.get(f"{key}/{r}")) for r in range(self.world_size)]

    def fresh_dir(self, tag: str) -> None:
        """A folder of its own for the next run, shared by the ranks (a body's
        ``util.world_dir``): what one run saved there (a checkpoint) must not be found by the
        run without the API that would have saved it."""
        if self.base:
            self.runs += 1
            path = os.path.join(self.base, f"takeaway-{self.runs}-{tag}")
            os.makedirs(path, exist_ok=True)
            os.environ["TORCHPARITY_WORLD_DIR"] = path

    def rejoin(self) -> None:
        import torch.distributed as dist

        try:
            dist.destroy_process_group()
        except Exception:
            pass
        self.joined += 1
        _join(self.adapter, self.rank, self.world_size,
              dist.PrefixStore(f"{self.prefix}.takeaway{self.joined}", self.store), self.timeout_s)


def _run_case(body: str, dtype: str, rank: int, world_size: int, device: str, adapter,
              takeaway: Optional[dict] = None, world: Optional[RankWorld] = None) -> dict:
    """One case in this rank, seeded alike in every case: its entry."""
    torch.manual_seed(SEED + rank)
    name, _, parts = body.partition("@")
    _PARTS[:] = [frozenset(parts.split(",")) if parts else None]
    _GOLDEN[0] = dtype.startswith(GOLDEN)
    dtype = dtype[len(GOLDEN):] if _GOLDEN[0] else dtype
    try:
        fn = _body(name)
    except Exception as exc:
        return {"error": (type(exc).__name__, first_line(exc))}
    call = functools.partial(fn, rank, world_size, device, getattr(torch, dtype))
    if takeaway:  # the runner the process that asked named (``taking_away``), seeded alike
        import importlib

        module, _, function = takeaway["runner"].partition(":")
        runner = getattr(importlib.import_module(module), function)

        def seeded() -> Any:
            torch.manual_seed(SEED + rank)
            return call()
        return runner(seeded, adapter, _files_of(fn), world, takeaway["api"])
    return recorded_call(call, adapter, _files_of(fn))


def recorded_call(call: Callable[[], Any], adapter, files: Sequence[str]) -> Dict[str, Any]:
    """``call()`` in a rank, under a footprint recorder that does not know the API
    (``StackRecorder``: each op keeps the frames it came from; the process that started
    the world attributes them, :func:`absorb_footprints`), with the device's collectives
    that bypass torch's dispatcher heard too (``adapter.observe_collectives``). The
    rank's entry: ``{"value": ...}`` (on the CPU) or ``{"error": (type, message)}``, with
    ``footprint`` (ops up to a failure included) and ``files`` (the scenario's code: what
    the parent counts as the scenario's frames)."""
    recorder = StackRecorder(adapter.type, stop=recorded_call.__code__)
    entry: Dict[str, Any] = {"files": list(files)}
    try:
        with recorder, adapter.observe_collectives(recorder.note):
            value = call()
        entry["value"] = to_device(value, "cpu")
    except Exception as exc:  # the API's own answer on this device, reported as data
        entry["error"] = (type(exc).__name__, first_line(exc))
    entry["footprint"] = recorder.records()
    entry["failed"] = recorder.failure()  # the op whose kernel raised, with its frames
    return entry


def _files_of(fn) -> List[str]:
    """The source files of a body: the scenario's code, for the parent's attribution."""
    code = getattr(fn, "__code__", None)
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    return sorted({f for f in (getattr(code, "co_filename", None), getattr(module, "__file__", None)) if f})


# A body may be made of parts, run in turn in one world (distpar's ``util.part``). A
# rank whose part failed where its peers' did not may have left a peer waiting on a
# message that never comes: its value then carries ``OUT_OF_STEP``, the rank ends its
# world at once (the peer's wait fails instead of timing out), the cases after it are not
# kept, and a part named after the body (``"<body>@<part>,..."``) runs in a world of its own.
OUT_OF_STEP = "__world_out_of_step__"
_PARTS: List[Optional[frozenset]] = [None]


# A case whose dtype name starts with GOLDEN computes its float64 golden (``run_world``'s
# ``golden``): the body is called with the dtype after the prefix, and its helpers that make
# values ask :func:`computing_golden`.
GOLDEN = "golden:"
_GOLDEN: List[bool] = [False]


def computing_golden() -> bool:
    """Whether the running case computes the float64 golden: values made in the case's
    dtype, then upcast to float64 (complex128) before anything computes with them."""
    return _GOLDEN[0]


def only_parts() -> Optional[frozenset]:
    """The parts the running case asked for (``"<body>@a,b"``), or None: all of them."""
    return _PARTS[0]


def out_of_step(entry: dict) -> bool:
    """A rank's case entry whose body said it left the world out of step."""
    value = entry.get("value")
    return isinstance(value, dict) and bool(value.get(OUT_OF_STEP))


def _body(name: str):
    """The body called ``name``: ``distributed.BODIES[name]``, or ``BODIES[name]`` of a
    sibling source module when written ``"<module>:<name>"`` (``"distpar:ddp"``)."""
    import importlib

    module, _, key = name.rpartition(":")
    return importlib.import_module(f"{__package__}.{module or 'distributed'}").BODIES[key]


def first_line(exc: BaseException) -> str:
    """A rank's exception as one line: all its lines joined (a torch_npu / aclnn refusal
    names the dtype on a later line: "call aclnnAddmm failed, error code is 161002" then
    "... not implemented for DT_DOUBLE"), cut to a readable length."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return (" ".join(lines) or type(exc).__name__)[:1000]


