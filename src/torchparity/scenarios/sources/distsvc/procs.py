"""The ``distsvc`` cases that start processes: 2-rank worlds (RPC, process-group set-up),
``torch.distributed.elastic.multiprocessing`` and ``LocalElasticAgent``.

A world (:func:`world_section`) is started once per body and device in this process and
its per-section results are kept (:data:`_WORLDS`): the APIs that share a world read their
section from it. Bounded: ``WORLD_TIMEOUT_S`` for a world, ``LAUNCH_TIMEOUT_S`` for a
launcher's children; every child dies with its parent, whatever still runs at the end is
killed and reaped (``world``'s helpers), temporary folders are removed. Nothing
listens beyond 127.0.0.1.

Children compute on the device of the run (the emulated device's profile travels in its
spec) and return CPU copies; here the tensors are moved back to the device, so the CPU
reference and the device run are compared alike.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict, List

import torch

from ...registry import HarnessFailure
from .memo import memo as _memo
from .memo import spec_of as _spec
from .store import payload

WORLD_TIMEOUT_S = 240.0
LAUNCH_TIMEOUT_S = 180.0
_WORLDS: Dict[tuple, Any] = {}


def _raise(kind: str, message: str):
    import builtins

    klass = getattr(builtins, kind, None)
    if isinstance(klass, type) and issubclass(klass, Exception):
        raise klass(message)
    raise RuntimeError(f"{kind}: {message}")


def _loopback_env() -> Dict[str, str]:
    env = dict(os.environ)
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    env.update({"TP_SOCKET_IFNAME": "lo", "GLOO_SOCKET_IFNAME": "lo", "MASTER_ADDR": "127.0.0.1",
                "TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RESTART_COUNT": "0",
                "TORCHPARITY_WORLD_PARENT": str(os.getpid())})
    env.pop("TORCHELASTIC_RUN_ID", None)
    return env


def _run_world(body: str, device: str, world: int = 2, takeaway: Any = None) -> List[dict]:
    """Start ``world`` ranks of ``distsvc.child`` running ``BODIES[body]``; per rank, its
    saved dict (``{"value": sections}`` or ``{"error": ...}``). A world whose rank was
    killed from outside is started once more (``world.retried_once``). ``takeaway``
    (``{"api", "runner", "section"}``): the ranks take the API away in that section."""
    from ..world import retried_once

    return retried_once(lambda: _start_world(body, device, world, takeaway))


def _start_world(body: str, device: str, world: int, takeaway: Any = None) -> List[dict]:
    from ..world import end_processes as _end
    from ..world import loopback_store, start_rank, world_failure
    from ..world import tail as _tail
    from ..world import wait_all as _wait
    from . import child as C

    store = loopback_store(world, timeout=timedelta(seconds=60))
    with tempfile.TemporaryDirectory(prefix="torchparity-distsvc-") as tmp:
        env = _loopback_env()
        env["MASTER_PORT"] = str(store.port)
        procs = []
        try:
            for rank in range(world):
                args = {"body": body, "spec": _spec(device), "rank": rank, "world_size": world, "dir": tmp,
                        "takeaway": takeaway}
                procs.append(start_rank(C.ENTRY, args, Path(tmp) / f"rank{rank}.err", env))
            waited = _wait(procs, WORLD_TIMEOUT_S)
        finally:
            killed = _end(procs)
            del store
        missing = {r: procs[r].returncode for r in range(world) if not (Path(tmp) / f"rank{r}.pt").exists()}
        if missing:
            raise world_failure(missing, killed, waited, lambda r: _why(Path(tmp), r, _tail),
                                {r: p.returncode for r, p in enumerate(procs)})
        return [torch.load(Path(tmp) / f"rank{r}.pt", map_location="cpu", weights_only=False)
                for r in range(world)]


def _why(tmp: Path, rank: int, tail) -> str:
    """Why ``rank`` ended: the exception its result file recorded, else its stderr's tail."""
    try:
        got = torch.load(tmp / f"rank{rank}.pt", map_location="cpu", weights_only=False)
    except Exception:  # no result file (or a torn one): what the rank printed
        return tail(tmp / f"rank{rank}.err")
    if isinstance(got, dict) and "error" in got:
        return ": " + ": ".join(str(x) for x in got["error"])[:400]
    return tail(tmp / f"rank{rank}.err")


def world_section(body: str, section: str, device: str) -> List[Any]:
    """The per-rank results of one section of a world body (the world runs once per body
    and device in this process); a rank's exception is raised as the API's answer."""
    from ..world import takeaway_request

    request = takeaway_request()
    if request is not None:  # the API taken away in the ranks that run the section
        return _taken_away(body, section, device, request)
    key = (body, _spec(device))
    if key not in _WORLDS:
        try:
            _WORLDS[key] = ("ok", _run_world(body, device))
        except HarnessFailure as exc:  # not the API's answer: kept as it is, not re-typed
            _WORLDS[key] = ("harness", exc)
        except Exception as exc:  # the world itself failed: every section says so
            _WORLDS[key] = ("failed", (type(exc).__name__, str(exc)[:400]))
    state, ranks = _WORLDS[key]
    if state == "harness":
        raise type(ranks)(str(ranks))
    if state == "failed":
        _raise(*ranks)
    from ..world import absorb_footprints

    absorb_footprints([got.get("value", {}).get(section) or {} for got in ranks], device)
    values = []
    for rank, got in enumerate(ranks):
        if "error" in got:
            kind, msg = got["error"]
            _raise(kind, f"{msg} (rank {rank})")
        values.append(_rank_value(got["value"].get(section), rank, device))
    return values


def _rank_value(entry, rank: int, device):
    """One rank's answer for a section: its value on ``device``, None where it has none;
    its error raised again, with the rank named."""
    from ..world import to_device

    if not entry:
        return None
    if "error" in entry:
        kind, msg = entry["error"]
        _raise(kind, f"{msg} (rank {rank})")
    return to_device(entry["value"], device)


_TAKEN: Dict[tuple, Any] = {}  # (body, section, spec, api) -> the ranks' results, or why not


def _taken_away(body: str, section: str, device: str, request: Any) -> List[Any]:
    """One section of a world body with ``request.api`` taken away in the ranks that run it
    (``world.taking_away``; ``child._run_sections``: the section runs recorded, then with
    stand-ins, by ``request.runner``): the run ``request.which`` names, handed back as
    :func:`world_section` hands back a section, and the ranks' takeaway to ``request.report``.
    A world that does not finish, or a rank that failed outside its sections (setting RPC
    up), decides nothing: ``request.inconclusive`` says why."""
    from ..world import WorldError, absorb_footprints

    key = (body, section, _spec(device), request.api)
    if key not in _TAKEN:
        try:
            _TAKEN[key] = ("ok", _run_world(body, device, takeaway={
                "api": request.api, "runner": request.runner, "section": section,
                "setup_runner": getattr(request, "setup_runner", None)}))
        except Exception as exc:
            _TAKEN[key] = ("failed", f"{type(exc).__name__}: {str(exc)[:300]}")
    state, ranks = _TAKEN[key]
    request.served = True
    if state == "ok":
        failed = [got["error"] for got in ranks if "error" in got]
        state, ranks = ("failed", "a rank failed outside its sections: {}: {}".format(*failed[0])) if failed \
            else (state, ranks)
    entries = [got.get("value", {}).get(section) for got in ranks] if state == "ok" else []
    ran = [e for e in entries if e is not None]
    if state == "ok" and (not ran or any("runs" not in e for e in ran)):
        state, ranks = "failed", "no rank ran the section under takeaway"
    if state != "ok":
        request.inconclusive = f"the world under takeaway did not finish ({ranks})"
        raise WorldError(request.inconclusive)
    request.report([e.get("takeaway") or {} for e in ran])
    runs = [e["runs"] for e in ran]
    which = request.which if all(request.which in r for r in runs) else "perturbed"
    chosen = iter([r.get(which, r["record"]) for r in runs])
    per_rank = [next(chosen) if e is not None else {} for e in entries]
    absorb_footprints(per_rank, device)
    return [_rank_value(entry, rank, device) for rank, entry in enumerate(per_rank)]


def world_case(device: str, dtype, world: str, section: str) -> List[Any]:
    """The case of one section of the world body ``world`` (``child.BODIES``): its
    per-rank results, from the one world per body and device this process starts."""
    return world_section(world, section, device)


# -- elastic multiprocessing -----------------------------------------------------------------

def _view_result(res, device: str) -> Dict[str, Any]:
    from ..world import to_device as _to

    return {"return_values": {r: _to(v, device) for r, v in sorted(res.return_values.items())},
            "failed_ranks": sorted(res.failures), "is_failed": res.is_failed()}


def _message(f) -> str:
    """The first line of a ProcessFailure's message (a dict when the error file has one)."""
    message = f.message
    if isinstance(message, dict):
        message = message.get("message", "")
    message = str(message).strip()
    return message.splitlines()[0][:200] if message else ""


def _failure_view(f) -> List[Any]:
    return [f.local_rank, f.exitcode, _message(f), f.pid > 0, bool(f.error_file)]


def _start(fn_name: str, device: str, entry: Any, args: Dict[int, tuple], tmp: str):
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs, start_processes

    env = _loopback_env()
    envs = {r: {k: env[k] for k in ("PYTHONPATH", "TP_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME") if k in env}
            for r in args}
    pc = start_processes(fn_name, entry, args, envs, DefaultLogsSpecs(log_dir=tmp), start_method="spawn")
    try:
        res = pc.wait(timeout=LAUNCH_TIMEOUT_S, period=0.1)
    finally:
        pc.close()
    return pc, res


def multiprocess_case(device: str, dtype) -> Dict[str, Any]:
    """start_processes with a function: a MultiprocessContext; one rank ok, one raising
    under ``errors.record``."""
    def make():
        from torch.distributed.elastic.multiprocessing import api as ma
        from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

        from . import child as C

        spec = _spec(device)
        with tempfile.TemporaryDirectory(prefix="torchparity-elastic-") as tmp:
            pc, ok = _start("tp_ok", device, C.device_step, {0: (spec, 0), 1: (spec, 1)}, tmp)
            pc2, bad = _start("tp_bad", device, C.failing_step, {0: (spec, 2)}, tmp)
        err = ChildFailedError("tp_bad", bad.failures) if bad.failures else None
        return {"ok": _view_result(ok, device), "kinds": [type(pc).__name__, isinstance(pc, ma.PContext),
                                                          isinstance(ok, ma.RunProcsResult)],
                "failed": _view_result(bad, device),
                "failures": {r: _failure_view(f) for r, f in bad.failures.items()},
                "child_failed": None if err is None else [err.name, sorted(err.failures),
                                                          err.get_first_failure()[0]]}
    return _memo("multiprocess", device, make)


def subprocess_case(device: str, dtype) -> Dict[str, Any]:
    """start_processes with a binary: a SubprocessContext whose children compute on the
    device and print the result; one exits non-zero."""
    def make():
        from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs, start_processes
        from torch.distributed.elastic.multiprocessing.api import Std

        spec = _spec(device)
        # the failing child (3) exits only once the other has printed and left its mark:
        # a failure ends the context's other children (SIGTERM), and which one got there
        # first must not decide the answer
        binary = ("-m", f"{__package__}.binary")  # child.binary_step
        with tempfile.TemporaryDirectory(prefix="torchparity-elastic-") as tmp:
            env = _loopback_env()
            envs = {r: {"PYTHONPATH": env.get("PYTHONPATH", "")} for r in (0, 1)}
            marks = os.path.join(tmp, "marks")
            os.makedirs(marks)
            pc = start_processes("tp_bin", sys.executable,
                                 {0: (*binary, spec, "0", marks), 1: (*binary, spec, "3", marks)},
                                 envs, DefaultLogsSpecs(log_dir=tmp, redirects=Std.OUT), start_method="spawn")
            try:
                res = pc.wait(timeout=LAUNCH_TIMEOUT_S, period=0.1)
            finally:
                pc.close()
            printed = Path(res.stdouts[0]).read_text().strip().splitlines() if res.stdouts.get(0) else []
        x = torch.tensor(json.loads(printed[-1])).to(device) if printed else None
        return {"kind": type(pc).__name__, "printed": x, "return_values": res.return_values,
                "failures": {r: f.exitcode for r, f in res.failures.items()}}
    return _memo("subprocess", device, make)


def logs_case(device: str, dtype) -> List[Any]:
    """DefaultLogsSpecs.reify: where the logs of two ranks go (paths relative to the log
    folder, whose run-specific part is replaced)."""
    from torch.distributed.elastic.multiprocessing.api import (
        DefaultLogsSpecs,
        LogsDest,
        LogsSpecs,
        Std,
    )

    x = payload(device, dtype)
    with tempfile.TemporaryDirectory(prefix="torchparity-logs-") as tmp:
        spec = DefaultLogsSpecs(log_dir=tmp, redirects={0: Std.OUT, 1: Std.ALL}, tee=Std.ERR)
        dest = spec.reify({0: {"TORCHELASTIC_RUN_ID": "tp"}, 1: {"TORCHELASTIC_RUN_ID": "tp"}})

        def rel(paths):
            return {r: os.path.basename(os.path.dirname(p)) + "/" + os.path.basename(p) if p else ""
                    for r, p in sorted(paths.items())}
        got = [isinstance(spec, LogsSpecs), isinstance(dest, LogsDest), rel(dest.stdouts), rel(dest.stderrs),
               rel(dest.tee_stdouts), rel(dest.tee_stderrs), rel(dest.error_files),
               spec.root_log_dir == tmp, LogsDest().stdouts]
    return got + [x]


def error_handler_case(device: str, dtype) -> List[Any]:
    """ErrorHandler writing a device-made error to the error file, and ProcessFailure
    reading it back."""
    from torch.distributed.elastic.multiprocessing.errors import (
        ErrorHandler,
        ProcessFailure,
        record,
    )

    x = payload(device, dtype)
    with tempfile.TemporaryDirectory(prefix="torchparity-errors-") as tmp:
        path = os.path.join(tmp, "error.json")
        old = os.environ.get("TORCHELASTIC_ERROR_FILE")
        os.environ["TORCHELASTIC_ERROR_FILE"] = path
        try:
            handler = ErrorHandler()
            handler.initialize()
            try:
                raise ValueError(f"sum {x.sum().item():.3f}")
            except ValueError as exc:
                handler.record_exception(exc)
            failure = ProcessFailure(local_rank=0, pid=4242, exitcode=1, error_file=path)

            @record
            def fine():
                return x * 2
            y = fine()
        finally:
            if old is None:
                os.environ.pop("TORCHELASTIC_ERROR_FILE", None)
            else:
                os.environ["TORCHELASTIC_ERROR_FILE"] = old
        return [_message(failure), failure.exitcode, failure.signal_name(), y]


def healthcheck_case(device: str, dtype) -> List[Any]:
    from torch.distributed.elastic.agent.server.health_check_server import (
        HealthCheckServer,
        create_healthcheck_server,
    )

    x = payload(device, dtype)
    server = create_healthcheck_server(lambda: int(x.numel()), port=0, timeout=5)
    server.start()
    server.stop()
    return [isinstance(server, HealthCheckServer), server._alive_callback(), x]


def worker_main_case(device: str, dtype) -> List[Any]:
    """control_plane.worker_main around a device computation and around one that raises.
    Without ``TORCH_WORKER_SERVER_SOCKET``: the C++ worker server it would start on a unix
    socket hung in its shutdown here (torch 2.13), so no run starts it."""
    from torch.distributed.elastic.control_plane import TORCH_WORKER_SERVER_SOCKET, worker_main

    old = os.environ.pop(TORCH_WORKER_SERVER_SOCKET, None)
    try:
        with worker_main():
            y = payload(device, dtype) * 3
        try:
            with worker_main():
                raise ValueError(f"sum {(payload(device, dtype) - 1).sum().item():.3f}")
        except ValueError as exc:
            raised = str(exc)
    finally:
        if old is not None:
            os.environ[TORCH_WORKER_SERVER_SOCKET] = old
    return [y, raised]


def rpc_options_case(device: str, dtype) -> List[Any]:
    """TensorPipe options: a device map set and read back (device names compared as "the
    run's device"), the base options, the backend enum. No refusal is caught: a side that
    raises raises (a refusal turned into a string would pass where both sides refuse)."""
    from torch.distributed import rpc

    dev = torch.device(device)

    def norm(d):
        return "RUN_DEVICE" if torch.device(d).type == dev.type else str(d)
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=4, rpc_timeout=12.5, init_method="env://")
    got = [isinstance(opts, rpc.RpcBackendOptions), opts.rpc_timeout, opts.init_method, opts.num_worker_threads]
    opts.set_device_map("w1", {dev: dev})
    got.append({w: {norm(a): norm(b) for a, b in m.items()} for w, m in opts.device_maps.items()})
    base = rpc.RpcBackendOptions(rpc_timeout=7.0, init_method="env://")
    x = payload(device, dtype)
    return got + [base.rpc_timeout, base.init_method, rpc.BackendType.TENSORPIPE.name,
                  rpc.backend_registry.backend_registered("TENSORPIPE"), x]


def rpc_set_devices_case(device: str, dtype) -> List[Any]:
    """TensorPipeRpcBackendOptions.set_devices with the run's device, read back. Where it
    refuses (torch 2.13 takes CUDA devices only) it raises: a refusal on both sides is
    "both sides refused", never a pass."""
    from torch.distributed import rpc

    dev = torch.device(device)
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=4, rpc_timeout=12.5, init_method="env://")
    opts.set_devices([dev])
    return [[d.type == dev.type for d in opts.devices], payload(device, dtype)]


from .agent import agent_case, agent_steps_case  # noqa: E402  (split for length)

__all__: List[str] = ["world_section", "world_case", "multiprocess_case", "subprocess_case", "logs_case",
                      "error_handler_case", "healthcheck_case", "worker_main_case", "rpc_options_case",
                      "rpc_set_devices_case",
                      "agent_case", "agent_steps_case"]
