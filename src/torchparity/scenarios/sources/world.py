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

Starting a world costs two interpreters (seconds); the scenario's dtypes share one
(``batch``: the cases run in turn in the same ranks, each seeded alike), and a case that
may have put the ranks out of step gets a world of its own (see :func:`run_world`).
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

from ...api.footprint import UNRECORDED, StackRecorder, active_recorder
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
              timeout_s: float = WORLD_TIMEOUT_S, batch: Sequence[str] = ()) -> List[Any]:
    """Run ``distributed.BODIES[body]`` in a world of ``world_size`` ranks on ``device``;
    the per-rank outputs, moved to ``device`` (ints, bools and None as they are).

    With ``batch`` (the dtype names of the scenario, ``dtype`` among them), the first call
    runs every dtype of the batch in one world, one case after the other, and keeps each
    case's per-rank outcome for the calls that follow in this process: one world start
    instead of one per dtype. A case in which a rank raised may have left the world out of
    step, so the cases after it are not kept (it is: its ranks started in step); a
    batch world that does not finish keeps nothing. Those dtypes get a world of their own.
    """
    from ...devices import spec_for_device

    name = _dtype_name(dtype)
    key = (body, device, spec_for_device(device), world_size, tuple(batch))
    if name in batch:
        if key not in _BATCHES:
            _BATCHES[key] = _run_batch(body, device, batch, world_size, timeout_s)
        if name in _BATCHES[key]:
            return _finish(_BATCHES[key][name], device)
    return _finish(_run_cases([(body, name)], device, world_size, timeout_s)[0], device)


_BATCHES: Dict[tuple, Dict[str, List[dict]]] = {}  # kept outcomes, per batch and dtype


# dtypes devices refuse most (Ascend chips: float64): run last in a batch world, so that a
# refusal, which ends what the world keeps, ends it after the others ran
_LAST = ("float64", "complex128")


def _run_batch(body: str, device: str, batch: Sequence[str], world_size: int,
               timeout_s: float) -> Dict[str, List[dict]]:
    """Every dtype of ``batch`` in one world; the outcomes kept, per dtype. A case in which
    a rank raised is its own answer (its ranks started in step), but it may leave the world
    out of step for the next (a peer still waiting on a send that never comes, then a
    closed pair for every case after it): nothing after it is kept."""
    order = sorted(batch, key=lambda d: d in _LAST)
    try:
        outcomes = _run_cases([(body, d) for d in order], device, world_size, timeout_s)
    except (WorldError, HarnessFailure):  # each dtype gets a world of its own
        return {}
    kept = {}
    for d, per_rank in zip(order, outcomes):
        kept[d] = per_rank
        if any("error" in entry for entry in per_rank):
            break  # the cases after it get worlds of their own
    return kept


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


RANKS_RECORDED = "runtime.world.ranks_recorded"  # footprint entry: the ranks' ops are in it


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
    """Start a world, run ``cases`` ((body, dtype name) pairs) in turn in every rank;
    per case, the entry of every rank: ``{"value": ...}`` or ``{"error": (type, message)}``.
    Raises WorldError when a rank does not finish (``world_failure``); a world whose rank
    was killed from outside is started once more first."""
    return retried_once(lambda: _start_world(cases, device, world_size, timeout_s))


def _start_world(cases: List[Tuple[str, str]], device: str, world_size: int,
                 timeout_s: float) -> List[List[dict]]:
    from ...devices import spec_for_device

    store = loopback_store(world_size, timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    with tempfile.TemporaryDirectory(prefix="torchparity-world-") as tmp:
        args = {"cases": cases, "spec": spec_for_device(device), "world_size": world_size,
                "port": store.port, "dir": tmp}
        env = dict(os.environ)
        env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
        env.update(LOOPBACK_ENV)
        env["TORCHPARITY_WORLD_PARENT"] = str(os.getpid())
        procs = []
        try:
            for rank in range(world_size):
                err = open(Path(tmp) / f"rank{rank}.err", "wb")
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", __name__, json.dumps(dict(args, rank=rank))],
                    stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env))
                err.close()
            waited = wait_all(procs, timeout_s)
        finally:
            killed = end_processes(procs)
            del store
        return _collect(Path(tmp), procs, world_size, len(cases), killed, waited)


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

    from ...devices import get_adapter

    rank, world_size = args["rank"], args["world_size"]
    out = Path(args["dir"]) / f"rank{rank}.pt"
    try:
        adapter = get_adapter(args["spec"])
        adapter.setup()
        backend = adapter.collective_backend()
        if backend is None:
            raise RuntimeError(f"the device {adapter.spec} has no torch.distributed backend")
        device = rank_device(adapter, rank)
        store = dist.TCPStore("127.0.0.1", args["port"], world_size, is_master=False,
                              timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
        dist.init_process_group(backend, store=store, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    except Exception as exc:
        torch.save({"setup_error": (type(exc).__name__, f"world set-up failed: {first_line(exc)}")}, out)
        return 1
    os.environ["TORCHPARITY_WORLD_DIR"] = args["dir"]  # shared by the ranks, removed after
    results = []
    for body, dtype in args["cases"]:
        torch.manual_seed(SEED + rank)
        try:
            fn = _body(body)
        except Exception as exc:
            results.append({"error": (type(exc).__name__, first_line(exc))})
            continue
        call = functools.partial(fn, rank, world_size, device, getattr(torch, dtype))
        results.append(recorded_call(call, adapter, _files_of(fn)))
    torch.save({"cases": results}, out)
    try:
        dist.destroy_process_group()
    except Exception:
        pass
    return 0


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
    return entry


def _files_of(fn) -> List[str]:
    """The source files of a body: the scenario's code, for the parent's attribution."""
    code = getattr(fn, "__code__", None)
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    return sorted({f for f in (getattr(code, "co_filename", None), getattr(module, "__file__", None)) if f})


def _body(name: str):
    """The body called ``name``: ``distributed.BODIES[name]``, or ``BODIES[name]`` of a
    sibling source module when written ``"<module>:<name>"`` (``"distpar:ddp"``)."""
    import importlib

    module, _, key = name.rpartition(":")
    return importlib.import_module(f"{__package__}.{module or 'distributed'}").BODIES[key]


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), type(exc).__name__)[:500]


# public names of the helpers other modules use


if __name__ == "__main__":
    sys.exit(_rank_main(json.loads(sys.argv[1])))

