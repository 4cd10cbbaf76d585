"""``torch.distributed`` services as a scenario source: stores, RPC, distributed
autograd, elastic (rendezvous, agent, multiprocessing, timers, events, metrics) and the
process-group set-up the ``distributed`` source leaves out.

Each scenario runs real code of its API with the device under test in play: values are
computed on the device and travel through the API (a store, an RPC call, a rendezvous
store, an event, a metric, a launched worker's return value), and what comes back is
moved to the device and compared with the same code run on the CPU. Where a run starts
processes (2-rank RPC and process-group worlds, ``start_processes``,
``LocalElasticAgent``), the children set the device up as this process has it (the
emulated device's profile travels with its spec), every listener is on 127.0.0.1, every
wait is bounded, no child outlives the run and temporary folders are removed. Results
that depend on the clock, ports, process ids, host names or temporary paths are compared
as facts (a positive port, a path equal to the one given) or left out.

The cases are in ``distsvc.store`` (stores and in-process queries), ``distsvc.elastic``
(events, metrics, timers, rendezvous), ``distsvc.procs`` / ``distsvc.agent`` (what
starts processes) and ``distsvc.child`` (what runs in the children).

Not here, with the reason (:func:`why_not`): the etcd rendezvous, backend and store
(they need an etcd server and the ``python-etcd`` client; the harness starts no external
service).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Tuple

from ....results.models import Text
from ...registry import Scenario
from ..base import Case, ModuleSource, reproducer

NAME = "distsvc"
ORDER = 63
PREFIX = "torch.distributed."
DTYPES = ("float32",)

ETCD = ("torch.distributed.elastic.rendezvous.etcd_rendezvous.", "torch.distributed.elastic.rendezvous.etcd_",
        "torch.distributed.elastic.rendezvous.etcd_server.", "torch.distributed.elastic.rendezvous.etcd_store.")
ETCD_WHY = ("needs an etcd server (the etcd binary) and the python-etcd client, neither available "
            "here; the harness starts no external service")

_Row = Tuple[str, Callable[[str, Any], Any], str]

# (API suffix after PREFIX, world body, section, what): APIs answered by a 2-rank world
_WORLD_ROWS = [
    ("rpc.rpc_sync", "rpc", "rpc_sync", "a CPU copy of a device result sent, computed on the callee's device"),
    ("rpc.rpc_async", "rpc", "rpc_async", "a future of a callee's device computation"),
    ("rpc.remote", "rpc", "remote", "RRef of a callee's device result: to_here, owner, proxies"),
    ("rpc.PyRRef", "rpc", "remote", "RRef of a callee's device result: to_here, owner, proxies"),
    ("rpc.get_worker_info", "rpc", "worker_info", "worker names and ids, a call by WorkerInfo"),
    ("rpc.WorkerInfo", "rpc", "worker_info", "worker names and ids, a call by WorkerInfo"),
    ("rpc.functions.async_execution", "rpc", "async_execution", "a callee chaining a future to a third call"),
    ("rpc.init_rpc", "rpc", "rpc_sync", "TensorPipe on 127.0.0.1, env:// rendezvous, one call"),
    ("rpc.shutdown", "rpc", "shutdown", "graceful shutdown of both workers"),
    ("rpc.TensorPipeRpcBackendOptions", "rpc", "rpc_sync", "the options a world is made with"),
    ("autograd.context", "rpc", "autograd", "gradients through an RPC computed on the callee's device"),
    ("autograd.backward", "rpc", "autograd", "gradients through an RPC computed on the callee's device"),
    ("autograd.get_gradients", "rpc", "autograd", "gradients through an RPC computed on the callee's device"),
    ("nn.api.remote_module.RemoteModule.get_module_rref", "rpc", "remote_module",
     "a RemoteModule on the callee's device: forward, parameters, module RRef"),
    ("nn.api.remote_module.RemoteModule.remote_parameters", "rpc", "remote_module",
     "a RemoteModule on the callee's device: forward, parameters, module RRef"),
    ("optim.DistributedOptimizer", "rpc", "dist_optim",
     "SGD over a RemoteModule's parameters on the callee's device, gradients by distributed autograd"),
    ("optim.DistributedOptimizer.step", "rpc", "dist_optim",
     "SGD over a RemoteModule's parameters on the callee's device, gradients by distributed autograd"),
    ("init_process_group", "pg", "init_env", "env:// rendezvous, the device's backend, all_reduce"),
    ("get_backend", "pg", "init_env", "the backend the group was made with"),
    ("get_backend", "pg", "register_backend", "a registered backend's name"),
    ("monitored_barrier", "pg", "monitored_barrier", "on the device's backend"),
    ("reduce_op", "pg", "reduce_op", "the deprecated reduce_op.SUM in all_reduce"),
    ("Backend.register_backend", "pg", "register_backend",
     "a backend relaying to the device's, registered, made, used for all_reduce"),
]

_E = "elastic."
_M = _E + "multiprocessing."
_A = _E + "agent.server."


def _proc_rows() -> Dict[str, List[Tuple[str, str, str]]]:
    """API suffix -> [(case name in _distsvc_procs, scenario id, what)]."""
    mp = ("multiprocess_case", "start-fn", "start_processes with a function: 2 ranks, then one that raises")
    sp = ("subprocess_case", "start-bin", "start_processes with a binary: a rank computes, one exits 1")
    logs = ("logs_case", "logs", "where two ranks' logs go")
    err = ("error_handler_case", "error-file", "an error file written and read back")
    agent = ("agent_case", "agent-run", "LocalElasticAgent.run() of one worker computing on the device")
    steps = ("agent_steps_case", "agent-steps", "the agent's stages called one by one")
    health = ("healthcheck_case", "healthcheck", "made, started, stopped")
    opts = ("rpc_options_case", "options", "options, device maps and devices, backend enum")
    rows: Dict[str, List[Tuple[str, str, str]]] = {}

    def add(names, row):
        for n in names:
            rows.setdefault(n, []).append(row)

    add([_M + "start_processes", _M + "api.MultiprocessContext", _M + "api.PContext", _M + "api.RunProcsResult",
         _M + "errors.ChildFailedError", _M + "errors.ProcessFailure", _M + "errors.record"], mp)
    add([_M + "start_processes", _M + "api.SubprocessContext", _M + "api.PContext", _M + "api.RunProcsResult"], sp)
    add([_M + "api.DefaultLogsSpecs", _M + "api.DefaultLogsSpecs.reify", _M + "api.LogsDest", _M + "api.LogsSpecs",
         _M + "api.LogsSpecs.reify"], logs)
    add([_M + "errors.ErrorHandler", _M + "errors.ProcessFailure", _M + "errors.record"], err)
    add([_A + n for n in ("ElasticAgent", "ElasticAgent.get_worker_group", "ElasticAgent.run", "SimpleElasticAgent",
                          "WorkerState", "WorkerState.is_running", "api.RunResult",
                          "local_elastic_agent.LocalElasticAgent", "WorkerSpec", "WorkerSpec.get_entrypoint_name",
                          "Worker", "WorkerGroup")], agent)
    add([_A + "SimpleElasticAgent." + m for m in (
        "_assign_worker_ranks", "_exit_barrier", "_initialize_workers", "_monitor_workers", "_rendezvous",
        "_restart_workers", "_shutdown", "_start_workers", "_stop_workers")] + [_A + "Worker", _A + "WorkerGroup"],
        steps)
    add([_A + "health_check_server.HealthCheckServer", _A + "health_check_server.HealthCheckServer.start",
         _A + "health_check_server.HealthCheckServer.stop", _A + "health_check_server.create_healthcheck_server"],
        health)
    add([_E + "control_plane.worker_main"], ("worker_main_case", "worker-main", "around a device computation and one that raises"))
    add(["rpc." + n for n in ("BackendType", "RpcBackendOptions", "TensorPipeRpcBackendOptions",
                              "TensorPipeRpcBackendOptions.set_device_map")], opts)
    add(["rpc.TensorPipeRpcBackendOptions.set_devices"],
        ("rpc_set_devices_case", "set-devices", "devices set to the run's device and read back"))
    return rows


# the cases that start processes (2-rank worlds and launched workers): their snippet is the
# reproducer (a world is needed); every other case's is its body, standalone
_SPAWNS = ("multiprocess_case", "subprocess_case", "agent_case", "agent_steps_case")


@dataclass(frozen=True)
class Row:
    """One scenario of the table: a typed :class:`Case` (one case for every API it answers,
    the others its ``aliases``), what it checks, whether it starts processes."""

    case: Case
    what: str
    spawns: bool


@functools.lru_cache(maxsize=1)
def rows() -> Dict[str, List[Row]]:
    """API -> its rows, in table order (stores, elastic, worlds, processes); a (scenario
    id, body, params, what) listed for several APIs is one :class:`Case`, its first API
    ``api`` and the others ``aliases``."""
    from . import elastic as _distsvc_elastic
    from . import procs as _distsvc_procs
    from . import store as _distsvc_store

    listed: List[Tuple[str, tuple]] = []
    for api, api_rows in list(_distsvc_store.store_rows().items()) + list(_distsvc_elastic.rows().items()):
        for sid, fn, what in api_rows:
            body, params = fn if isinstance(fn, tuple) else (fn, {})
            listed.append((api, (sid, body, tuple(sorted(params.items())), what, False)))
    for suffix, world, section, what in _WORLD_ROWS:
        listed.append((PREFIX + suffix, (f"world2-{world}-{section}", _distsvc_procs.world_case,
                                         (("section", section), ("world", world)), what, True)))
    for suffix, proc_rows in _proc_rows().items():
        for case, sid, what in proc_rows:
            listed.append((PREFIX + suffix, (sid, getattr(_distsvc_procs, case), (), what, case in _SPAWNS)))
    apis: Dict[tuple, List[str]] = {}
    for api, key in listed:
        apis.setdefault(key, []).append(api)
    made = {key: Row(Case(names[0], key[1], dtypes=DTYPES, aliases=tuple(names[1:]), params=dict(key[2]),
                          id=key[0]), key[3], key[4])
            for key, names in apis.items()}
    out: Dict[str, List[Row]] = {}
    for api, key in listed:
        out.setdefault(api, []).append(made[key])
    return out


@functools.lru_cache(maxsize=1)
def table() -> Dict[str, List[Tuple[str, Callable, str, bool]]]:
    """API -> [(scenario id, fn(device, dtype), what, starts processes)], in table order."""
    return {api: [(r.case.id, r.case.fn(api), r.what, r.spawns) for r in api_rows]
            for api, api_rows in rows().items()}


def cases() -> List[Case]:
    """Every case of the table, once."""
    seen: Dict[int, Case] = {}
    for api_rows in rows().values():
        for r in api_rows:
            seen.setdefault(id(r.case), r.case)
    return list(seen.values())


def _known(api: str) -> bool:
    return api.startswith(PREFIX) and not api.startswith(ETCD)


@functools.lru_cache(maxsize=None)
def _scenarios(api: str) -> Tuple[Scenario, ...]:
    out = []
    for row, (sid, fn, what, spawns) in zip(rows().get(api, []), table().get(api, [])):
        where = ("in processes started for it (127.0.0.1 only, bounded)" if spawns
                 else "in this process (stores and listeners on 127.0.0.1)")
        out.append(Scenario(
            id=sid, api=api, fn=fn,
            description=Text(en=f"{api}: {what}; values computed on the device, run {where}",
                             zh=f"{api}: {what}; 数值在设备上计算, 运行于{'为其启动的进程中 (仅 127.0.0.1, 有时限)' if spawns else '本进程中 (存储与监听仅在 127.0.0.1)'}"),
            expected=Text(en="the same results as the same code run on the CPU",
                          zh="结果与同一段代码在 CPU 上运行的结果一致"),
            dtypes=DTYPES, source=NAME, module=fn.__module__, timeout_s=600.0 if spawns else 120.0,
            code=reproducer(NAME, api, sid) if spawns else row.case.snippet(api), tags=("distributed",)))
    return tuple(out)


def scenarios(api: str, obj: Any) -> List[Scenario]:
    if not _known(api):
        return []
    return list(_scenarios(api))


def owns(api: str) -> bool:
    return api.startswith(ETCD) or (_known(api) and api in table())


def why_not(api: str, obj: Any) -> str:
    if not api.startswith(PREFIX):
        return "not a torch.distributed API"
    if api.startswith(ETCD):
        return ETCD_WHY
    return "not a store, RPC, distributed autograd, elastic or process-group set-up API this source runs"


def members() -> List[str]:
    """Every API name it has a case for."""
    return sorted(table())


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=members)
