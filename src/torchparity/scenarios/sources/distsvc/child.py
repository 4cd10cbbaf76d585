"""What runs in the child processes of the ``distsvc`` source.

Two kinds of children:

- entry points handed to ``torch.distributed.elastic`` launchers (``start_processes``,
  ``LocalElasticAgent``): :func:`device_step` (a small computation on the device, its
  result returned), :func:`failing_step` (raises, under ``errors.record``);
- the ranks of a 2-process world (:data:`ENTRY`, started by
  ``distsvc.procs.run_world``): each sets the device up, runs one body of ``BODIES``
  (RPC, ``torch.distributed.autograd``, ``RemoteModule``, process-group set-up
  variants) and writes its sections' results. A body is a list of sections, each one
  run and reported on its own, so one refusal does not hide the others.

Rendezvous for a world: the parent hosts a ``TCPStore`` on 127.0.0.1 and the ranks join it
as clients (``TORCHELASTIC_USE_AGENT_STORE``); TensorPipe and gloo are held to the loopback
interface (``TP_SOCKET_IFNAME`` / ``GLOO_SOCKET_IFNAME``). Every rank dies with its parent.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Dict

import torch

from .store import payload

_STATE: Dict[str, Any] = {"device": "cpu"}
TIMEOUT = timedelta(seconds=60)


def setup(spec: str) -> str:
    """Set the device of ``spec`` up in this process; the torch device to use."""
    if spec == "cpu":
        _STATE["device"] = "cpu"
        return "cpu"
    from ....devices import get_adapter

    adapter = get_adapter(spec)
    adapter.setup()
    _STATE["device"] = adapter.torch_device
    return _STATE["device"]


# -- entry points for the elastic launchers --------------------------------------------------

def device_step(spec: str, k: int):
    import torch.distributed as dist

    device = setup(spec)
    x = payload(device, torch.float32) * (k + 1)
    return {"x": x.cpu(), "launched": dist.is_torchelastic_launched(),
            "local_rank": os.environ.get("LOCAL_RANK"), "world": os.environ.get("WORLD_SIZE")}


def recorded_step(spec: str, k: int):
    """:func:`device_step` under a footprint recorder, in the process a launcher started:
    its ``world.recorded_call`` entry (``value`` or ``error``, ``footprint``, ``files``),
    for the launcher's caller to attribute (``world.absorb_footprints``)."""
    import functools

    from ....devices import get_adapter
    from ..world import recorded_call

    setup(spec)
    return recorded_call(functools.partial(device_step, spec, k), get_adapter(spec), [__file__])


def failing_step(spec: str, k: int):
    from torch.distributed.elastic.multiprocessing.errors import record

    @record
    def main():
        device = setup(spec)
        x = payload(device, torch.float32) * (k + 1)
        raise ValueError(f"step {k} refused: sum {x.sum().item():.3f}")
    return main()


def binary_step(argv) -> int:
    """The binary of the ``subprocess_case`` (``python -m ...distsvc.binary SPEC K MARKS``):
    ``device_step`` printed as a list; rank ``K`` 0 leaves its mark (its pid) in the folder
    ``MARKS`` once it has printed and ends at once; rank 3 waits for that mark and for that
    process to be gone (60 s at most), then exits 1. A failure ends the context's other
    children (SIGTERM): rank 0 still tearing down its interpreter when rank 3 failed read
    ``{0: -15}`` on the emulated device, whose children exit slower."""
    import time

    spec, k, marks = argv[0], argv[1], argv[2]
    r = device_step(spec, int(k))
    print(r["x"].tolist(), flush=True)
    mark = os.path.join(marks, "r0.done")
    t = time.monotonic() + 60
    if k == "0":
        with open(mark + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(mark + ".tmp", mark)
        sys.stderr.flush()
        os._exit(0)  # no teardown between the mark and the exit
    while not os.path.exists(mark) and time.monotonic() < t:
        time.sleep(0.05)
    pid = int(open(mark).read()) if os.path.exists(mark) else None
    while pid is not None and _running(pid) and time.monotonic() < t:
        time.sleep(0.05)
    return 1


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# -- functions the RPC world calls on its peer -------------------------------------------------

def remote_step(x: torch.Tensor, k: float) -> torch.Tensor:
    """Runs on the callee: the CPU tensor it got, computed on the callee's device."""
    return (x.to(_STATE["device"]) * k + 1).cpu()


def remote_grad_step(x: torch.Tensor, k: float) -> torch.Tensor:
    return (x.to(_STATE["device"]) * x.to(_STATE["device"]) * k).cpu()


def async_add(to: str, x: torch.Tensor, k: float):
    from torch.distributed import rpc

    return rpc.rpc_async(to, remote_step, args=(x, k)).then(lambda fut: fut.wait() * 2)


def _async_execution(fn):
    from torch.distributed.rpc.functions import async_execution

    return async_execution(fn)


async_add = _async_execution(async_add)  # same name: pickled by reference


def module_weight_sum(rref) -> torch.Tensor:
    return sum(p.detach().sum() for p in rref.local_value().parameters()).cpu()


class StepSGD(torch.optim.SGD):
    """SGD as it is, under a name ``DistributedOptimizer`` has no TorchScript counterpart
    for: its step on the owner is then a Python call served over RPC, which the owner's
    recorder hears (:func:`_record_served_calls`); torch's own ``SGD`` is stepped by a
    scripted function that no recorder hears, and the step read as host-only."""


class DeviceLinear(torch.nn.Module):
    """A Linear that takes CPU input and returns CPU output, computing on its own device."""

    def __init__(self, n: int, m: int):
        super().__init__()
        self.lin = torch.nn.Linear(n, m)

    def forward(self, x):
        return self.lin(x.to(self.lin.weight.device)).cpu()


# -- world bodies ----------------------------------------------------------------------------

_CALLEE: list = []  # footprint records of the Python calls this rank served (RPC threads)


def _record_served_calls(adapter) -> None:
    """Record the footprint of every Python call this rank serves over RPC: the callee's
    device work runs in TensorPipe's threads, where a dispatch mode entered elsewhere never
    applies (modes are per thread), so the recorder is entered in the serving thread, around
    torch's own entry point for a served call (``rpc.internal._run_function``, looked up
    when the agent starts). Each op keeps its frames down to :func:`_served` (this file:
    the scenario's code, which sent the call); records wait in ``_CALLEE`` for
    :func:`drain_served`."""
    from torch.distributed.rpc import internal

    from ....api.footprint import StackRecorder

    run = getattr(internal._run_function, "__wrapped__", internal._run_function)

    def _served(python_udf):
        recorder = StackRecorder(adapter.type, runtime=False)
        with recorder:
            result = run(python_udf)
        _CALLEE.extend(recorder.records())
        return result
    _served.__wrapped__ = run
    internal._run_function = _served


def drain_served() -> list:
    """The records of the calls served since the last drain (sent to the caller)."""
    got, _CALLEE[:] = list(_CALLEE), []
    return got


def _rpc_init(rank: int, world: int):
    from torch.distributed import rpc

    from ....devices import get_adapter

    _record_served_calls(_STATE.get("adapter") or get_adapter("cpu"))
    opts = rpc.TensorPipeRpcBackendOptions(init_method="env://", rpc_timeout=30, num_worker_threads=8)
    rpc.init_rpc(f"w{rank}", rank=rank, world_size=world, rpc_backend_options=opts)


def _rpc_sections(rank: int, device: str) -> Dict[str, Callable[[], Any]]:
    from torch.distributed import autograd as dist_autograd
    from torch.distributed import rpc

    if rank != 0:
        return {}
    x = payload(device, torch.float32)

    def sync():
        return rpc.rpc_sync("w1", remote_step, args=(x.cpu(), 2.0))

    def asynch():
        fut = rpc.rpc_async("w1", remote_step, args=(x.cpu(), 3.0))
        return [fut.wait(), fut.done()]

    def remote():
        rref = rpc.remote("w1", remote_step, args=(x.cpu(), 4.0))
        local = rpc.RRef(x.cpu() * 5)
        return [rref.to_here(), rref.owner().name, rref.owner_name(), rref.is_owner(),
                rref.rpc_sync().sum(), rref.rpc_async().mean().wait(), rref.remote().max().to_here(),
                local.local_value(), local.is_owner(), local.owner_name(), isinstance(rref, rpc.PyRRef)]

    def worker_info():
        info, me = rpc.get_worker_info("w1"), rpc.get_worker_info()
        return [info.name, info.id, me.name, me.id, isinstance(info, rpc.WorkerInfo),
                rpc.rpc_sync(info, remote_step, args=(x.cpu(), 1.0))]

    def async_execution():
        return rpc.rpc_sync("w1", async_add, args=("w0", x.cpu(), 6.0))

    def autograd():
        with dist_autograd.context() as cid:
            t = x.cpu().clone().requires_grad_()
            loss = rpc.rpc_sync("w1", remote_grad_step, args=(t, 2.0)).sum()
            dist_autograd.backward(cid, [loss])
            grads = dist_autograd.get_gradients(cid)
            return [grads[t], len(grads), isinstance(cid, int)]

    def remote_module():
        from torch.distributed.nn.api.remote_module import RemoteModule

        rm = RemoteModule(f"w1/{device}", DeviceLinear, args=(6, 2))
        out = rm.forward(x.cpu().reshape(1, 6)).detach()
        # Tensor.cpu run by the owner: a device tensor never crosses the wire
        params = [p.rpc_sync().cpu().detach() for p in rm.remote_parameters()]
        mref = rm.get_module_rref()
        return [out, params, rpc.rpc_sync("w1", module_weight_sum, args=(mref,)), mref.owner_name()]

    def dist_optim():
        # the parameters live on the callee's device (a RemoteModule): gradients reach them
        # by distributed autograd, and the optimizer steps them there, where they are owned
        from torch.distributed.nn.api.remote_module import RemoteModule
        from torch.distributed.optim import DistributedOptimizer

        rm = RemoteModule(f"w1/{device}", DeviceLinear, args=(6, 2))
        opt = DistributedOptimizer(StepSGD, rm.remote_parameters(), lr=0.5)
        with dist_autograd.context() as cid:
            loss = rm.forward(x.cpu().reshape(1, 6)).sum()
            dist_autograd.backward(cid, [loss])
            opt.step(cid)
        return [p.rpc_sync().cpu().detach() for p in rm.remote_parameters()]

    return {"rpc_sync": sync, "rpc_async": asynch, "remote": remote, "worker_info": worker_info,
            "async_execution": async_execution, "autograd": autograd,
            "remote_module": remote_module, "dist_optim": dist_optim}


def rpc_body(rank: int, world: int, device: str, backend: str) -> Dict[str, Any]:
    from torch.distributed import rpc

    take = _STATE.get("takeaway")
    if take and take.get("setup_runner"):  # the API may be the set-up's (init_rpc): taken away there
        out = _setup_taken_away(rank, world, device, take)
        if out is not None:
            return out
    else:
        _rpc_init(rank, world)
    try:
        out = _run_sections(_rpc_sections(rank, device), remote=True)
    finally:
        rpc.shutdown()
    out["shutdown"] = {"value": True}
    return out


def _pg_sections(rank: int, world: int, device: str, backend: str) -> Dict[str, Callable[[], Any]]:
    import torch.distributed as dist

    def init_env():
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world, timeout=TIMEOUT)
        t = payload(device, torch.float32) * (rank + 1)
        dist.all_reduce(t)
        return [t, dist.get_backend() == backend, dist.is_initialized(), dist.get_world_size()]

    def reduce_op():
        t = payload(device, torch.float32) + rank
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dist.all_reduce(t, op=dist.reduce_op.SUM)
            same = dist.reduce_op.MAX == dist.ReduceOp.MAX
        return [t, same]

    def monitored_barrier():
        dist.monitored_barrier(timeout=timedelta(seconds=30))
        return payload(device, torch.float32) + rank

    def register_backend():
        dist.destroy_process_group()
        name = "tp_relay"
        inner = dist.Backend._plugins.get(backend.upper())

        def create(store, r, size, timeout):
            if inner is not None:
                return inner.creator_fn(store, r, size, timeout)
            return dist.ProcessGroupGloo(store, r, size, timeout)
        devices = sorted({"cpu", torch.device(device).type})
        dist.Backend.register_backend(name, create, devices=devices)
        store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, False,
                              timeout=TIMEOUT)
        dist.init_process_group(name, store=dist.PrefixStore("relay", store), rank=rank, world_size=world,
                                timeout=TIMEOUT)
        t = payload(device, torch.float32) * (rank + 2)
        dist.all_reduce(t)
        return [t, dist.get_backend(), name.upper() in dist.Backend._plugins,
                dist.Backend(name) == name]

    return {"init_env": init_env, "reduce_op": reduce_op, "monitored_barrier": monitored_barrier,
            "register_backend": register_backend}


def pg_body(rank: int, world: int, device: str, backend: str) -> Dict[str, Any]:
    import torch.distributed as dist

    out = _run_sections(_pg_sections(rank, world, device, backend), stop_on=("init_env",))
    try:
        dist.destroy_process_group()
    except Exception:
        pass
    return out


def _served_records() -> list:
    """Every rank's records of the calls it served for the section just run (the peers'
    asked over RPC, outside the section's own recorder)."""
    from torch.distributed import rpc

    got = drain_served()
    me = rpc.get_worker_info().name
    for peer in ("w0", "w1"):
        if peer != me:
            got += rpc.rpc_sync(peer, drain_served)
    return got


def _run_sections(sections: Dict[str, Callable[[], Any]], stop_on=(), remote: bool = False) -> Dict[str, Any]:
    """Each section run and reported on its own, with its footprint; ``remote``: the
    sections' device work runs in the ranks' RPC threads, whose served calls record their
    own footprint (:func:`_record_served_calls`), added to the section's."""
    from ....devices import get_adapter
    from ..world import recorded_call

    adapter = _STATE.get("adapter") or get_adapter("cpu")
    out: Dict[str, Any] = {}
    take = _STATE.get("takeaway")
    for name, fn in sections.items():
        print(f"distsvc: section {name}", file=sys.stderr, flush=True)  # where a hang stopped
        if take and name == take["section"]:  # the API taken away in it; the sections after: not run
            out[name] = _taken_away(fn, adapter, take, remote)
            break
        # the API's own answer on this device (or its exception, kept as data), with the
        # ops the section ran (the parent attributes them: ``world.absorb_footprints``)
        out[name] = recorded_call(fn, adapter, [__file__])
        if remote:  # with the ops the section's calls ran on their callees, this rank included
            out[name]["footprint"] += _served_records()
        if "error" in out[name] and name in stop_on:
            break
    return out


BODIES = {"rpc": rpc_body, "pg": pg_body}


def _setup_taken_away(rank: int, world: int, device: str, take: Dict[str, Any]) -> Any:
    """The RPC body with the API taken away around its set-up, where the set-up calls it
    (``run.takeaway_world.in_rank_setup``: the section ``take["section"]`` is the case);
    None where it does not (RPC is then set up, and the section takes the API away)."""
    import importlib

    from torch.distributed import rpc

    from ....devices import get_adapter

    module, _, function = take["setup_runner"].partition(":")
    runner = getattr(importlib.import_module(module), function)
    fn = _rpc_sections(rank, device).get(take["section"])
    served: list = []

    def call() -> Any:
        try:
            return fn() if fn is not None else None
        finally:  # the ops its calls ran on their callees (none where RPC was not set up)
            got: list = []
            if fn is not None:
                with contextlib.suppress(Exception):
                    got = _served_records()
            served.append(got)
    adapter = _STATE.get("adapter") or get_adapter("cpu")
    entry = runner(lambda: _rpc_init(rank, world), call, rpc.shutdown, adapter, [__file__], take["api"])
    if entry is None:
        return None
    _add_served(entry, served)
    out = {take["section"]: entry} if fn is not None else {}
    out["shutdown"] = {"value": True}
    return out


def _add_served(entry: Dict[str, Any], served: list) -> None:
    """Each run's footprint with the ops its calls ran on their callees (``served``, in the
    order of the runs). The recorded run's are counted as run during the API's calls
    (``info["during"]``, the bound of what disappearing makes the API's): a peer serves only
    what the section asks, in its own threads, where this rank's count of the ops run
    during the API's calls never reaches (``DistributedOptimizer.step`` steps the
    parameters on their owner)."""
    for run, records in zip(entry["runs"].values(), served):
        run["footprint"] = (run.get("footprint") or []) + records
    info = entry.get("takeaway")
    if served and isinstance(info, dict) and isinstance(info.get("during"), dict):
        for op, _frames, n, _dtypes in served[0]:
            info["during"][op] = info["during"].get(op, 0) + int(n)


class _Alone:
    """The world a section's takeaway runner asks (``run.takeaway_world.in_rank``) where only
    this rank runs the section (its peer serves its calls): nothing to agree on, no process
    group to join again, no folder to share."""

    def sync(self, value: Any) -> list:
        return [value]

    def rejoin(self) -> None:
        pass

    def fresh_dir(self, tag: str) -> None:
        pass


def _taken_away(fn: Callable[[], Any], adapter, take: Dict[str, Any], remote: bool) -> Dict[str, Any]:
    """The section ``fn`` run by the takeaway runner the parent named (recorded, then with
    the API answered by stand-ins): its entry ``{"runs": ..., "takeaway": info}``, each run
    with the ops its calls ran on their callees (``remote``). An API the section never calls
    (the body's set-up may: ``init_rpc`` is taken away there, ``_setup_taken_away``) is not
    taken away in it: said so (``how`` None), never "the case never calls the API"."""
    import importlib

    module, _, function = take["runner"].partition(":")
    runner = getattr(importlib.import_module(module), function)
    served: list = []

    def call() -> Any:
        try:
            return fn()
        finally:
            if remote:
                served.append(_served_records())
    entry = runner(call, adapter, [__file__], _Alone(), take["api"])
    _add_served(entry, served)
    info = entry.get("takeaway") or {}
    if info.get("how") is not None and not info.get("calls"):
        info["how"], info["why"] = None, ("the section never calls the API (the world around it may): "
                                          "not taken away there")
    return entry


def _rank_main(args: dict) -> int:
    from ..world import die_with_parent as _die_with_parent
    from ..world import first_line as _first
    from ..world import rank_device

    _die_with_parent()
    if os.environ.get("TORCHPARITY_DISTSVC_STACKS"):  # debugging a hang: stacks after N s
        import faulthandler

        faulthandler.dump_traceback_later(float(os.environ["TORCHPARITY_DISTSVC_STACKS"]))
    rank, world = args["rank"], args["world_size"]
    out = Path(args["dir"]) / f"rank{rank}.pt"
    try:
        if args["spec"] == "cpu":
            device, backend = setup("cpu"), "gloo"
        else:
            from ....devices import get_adapter

            adapter = get_adapter(args["spec"])
            adapter.setup()
            _STATE["adapter"] = adapter
            backend = adapter.collective_backend() or "gloo"
            device = rank_device(adapter, rank)
            _STATE["device"] = device
        torch.manual_seed(args.get("seed", 0) + rank)
        _STATE["takeaway"] = args.get("takeaway")
        value = BODIES[args["body"]](rank, world, device, backend)
        torch.save({"value": value}, out)
    except Exception as exc:
        torch.save({"error": (type(exc).__name__, _first(exc))}, out)
        return 1
    return 0


ENTRY = f"{__name__}:_rank_main"  # for world.start_rank; not -m: pickled functions keep this module's name

