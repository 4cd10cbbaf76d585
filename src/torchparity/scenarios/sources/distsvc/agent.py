"""The ``distsvc`` cases of ``torch.distributed.elastic.agent``: a ``LocalElasticAgent``
running :func:`_distsvc_child.device_step` in one worker (under a footprint recorder there,
``recorded_step``: the worker's ops are attributed here, ``world.absorb_footprints``), once through ``run()`` and once
step by step through ``SimpleElasticAgent``'s own stages (rendezvous, rank assignment,
start, monitor, restart, stop, exit barrier, shutdown).

Rendezvous: a one-node c10d rendezvous on a ``TCPStore`` this process hosts on 127.0.0.1
(a port the kernel picks), with ``local_addr`` 127.0.0.1 so the master address handed to
workers is the loopback one, and the store rank 0 shares with the workers on 127.0.0.1 too. Bounded: every wait has a deadline (``AGENT_TIMEOUT_S``), the
workers are stopped and reaped by the agent, temporary log folders removed.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any, Dict, List

AGENT_TIMEOUT_S = 180.0


def _handler(store, run_id: str):
    from torch.distributed.elastic.rendezvous import RendezvousParameters
    from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import create_handler

    params = RendezvousParameters("c10d", f"127.0.0.1:{store.port}", run_id, 1, 1, local_addr="127.0.0.1",
                                  join_timeout="30", last_call_timeout="1")
    from .store import loopback_handler

    return loopback_handler(create_handler(store, C10dRendezvousBackend(store, run_id), params))


def _agent(device: str, run_id: str, tmp: str, max_restarts: int = 0):
    from torch.distributed.elastic.agent.server import WorkerSpec
    from torch.distributed.elastic.agent.server.local_elastic_agent import LocalElasticAgent
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs

    from . import child as C
    from .memo import spec_of as _spec
    from .store import tcp_store

    store = tcp_store()
    spec = WorkerSpec(role="tp", local_world_size=1, rdzv_handler=_handler(store, run_id),
                      entrypoint=C.recorded_step, args=(_spec(device), 4), max_restarts=max_restarts,
                      monitor_interval=0.1, local_addr="127.0.0.1")
    agent = LocalElasticAgent(spec, DefaultLogsSpecs(log_dir=tmp), start_method="spawn",
                              exit_barrier_timeout=30, shutdown_timeout=10)
    return store, spec, agent


def _worker_view(w) -> List[Any]:
    return [w.local_rank, w.global_rank, w.role_rank, w.world_size, w.role_world_size, w.id is not None]


def _values(result, device: str, entries: List[dict]) -> Dict[int, Any]:
    """The workers' return values by rank; each worker's recorded entry (its footprint)
    added to ``entries``; a worker's exception kept as data."""
    from ..world import to_device as _to

    out = {}
    for rank, v in sorted(result.return_values.items()):
        entries.append(v)
        out[rank] = _to(v.get("value", v.get("error")), device)
    return out


def _recorded(name: str, device: str, make) -> Dict[str, Any]:
    """``make()`` once per device (``memo``), the footprints its workers recorded attributed
    to the API of every case that reads it."""
    from ..world import absorb_footprints
    from .memo import memo as _memo

    value, entries = _memo(name, device, make)
    absorb_footprints(entries, device)
    return value


def agent_case(device: str, dtype) -> Dict[str, Any]:
    """LocalElasticAgent.run() on one worker; the RunResult, the worker group, its workers."""
    def make():
        from torch.distributed.elastic.agent.server import (
            ElasticAgent,
            SimpleElasticAgent,
            WorkerState,
        )
        from torch.distributed.elastic.agent.server.api import RunResult

        entries: List[dict] = []
        with tempfile.TemporaryDirectory(prefix="torchparity-agent-") as tmp:
            store, spec, agent = _agent(device, "tp-agent", tmp)
            try:
                result = agent.run()
            finally:
                spec.rdzv_handler.shutdown()
                del store
            wg = agent.get_worker_group()
            return {"state": result.state.name, "is_failed": result.is_failed(),
                    "return_values": _values(result, device, entries), "run_result": isinstance(result, RunResult),
                    "group": [wg.state.name, wg.group_rank, wg.group_world_size, wg.master_addr,
                              isinstance(wg.master_port, int)],
                    "workers": [_worker_view(w) for w in wg.workers],
                    "entrypoint": spec.get_entrypoint_name(),
                    "running": [s.name for s in WorkerState if WorkerState.is_running(s)],
                    "kinds": [isinstance(agent, ElasticAgent), isinstance(agent, SimpleElasticAgent)]}, entries
    return _recorded("agent", device, make)


def _until_done(agent, wg) -> Any:
    from torch.distributed.elastic.agent.server import WorkerState

    deadline = time.monotonic() + AGENT_TIMEOUT_S
    while True:
        res = agent._monitor_workers(wg)
        if not WorkerState.is_running(res.state) or time.monotonic() > deadline:
            return res
        time.sleep(0.1)


def agent_steps_case(device: str, dtype) -> Dict[str, Any]:
    """SimpleElasticAgent's stages called one by one on a LocalElasticAgent."""
    def make():
        from torch.distributed.elastic.agent.server import Worker, WorkerGroup, WorkerSpec

        entries: List[dict] = []
        with tempfile.TemporaryDirectory(prefix="torchparity-agent-") as tmp:
            store, spec, agent = _agent(device, "tp-steps", tmp, max_restarts=1)
            wg = agent.get_worker_group()
            got: Dict[str, Any] = {}
            try:
                agent._rendezvous(wg)
                got["rendezvous"] = [wg.group_rank, wg.group_world_size, [_worker_view(w) for w in wg.workers]]
                workers = agent._assign_worker_ranks(wg.store, 0, 1, spec)
                got["assign"] = [_worker_view(w) for w in workers]
                pids = agent._start_workers(wg)
                got["start"] = sorted(pids)
                for w in wg.workers:
                    w.id = pids[w.local_rank]
                first = _until_done(agent, wg)
                got["monitor"] = [first.state.name, _values(first, device, entries)]
                agent._restart_workers(wg)
                second = _until_done(agent, wg)
                got["restart"] = [second.state.name, _values(second, device, entries)]
                agent._stop_workers(wg)
                agent._initialize_workers(wg)
                third = _until_done(agent, wg)
                got["initialize"] = [third.state.name, _values(third, device, entries)]
                agent._exit_barrier()
                got["exit_barrier"] = True
            finally:
                agent._shutdown()
                spec.rdzv_handler.shutdown()
                del store
            got["shutdown"] = True
            manual = WorkerGroup(WorkerSpec(role="m", local_world_size=2, rdzv_handler=spec.rdzv_handler,
                                            entrypoint=os.path.basename("/bin/true")))
            got["group"] = [[_worker_view(w) for w in manual.workers], manual.state.name,
                            manual.spec.get_entrypoint_name(), _worker_view(Worker(local_rank=3))]
            return got, entries
    return _recorded("agent_steps", device, make)
