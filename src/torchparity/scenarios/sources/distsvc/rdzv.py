"""The ``distsvc`` cases of ``torch.distributed.elastic.rendezvous`` (in this process).

Rendezvous runs on stores this process holds: a ``TCPStore`` on 127.0.0.1 (a port the
kernel picks), a ``FileStore`` in a temporary folder or a ``HashStore``; a one-node
rendezvous hands out a store through which a device tensor travels. Nothing waits longer
than a few seconds (a join that must time out is given 1 s).
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta

from .store import dec, enc, loopback_handler, payload, tcp_store

RUN_ID = "tp-run"


def params_case(device, dtype):
    from torch.distributed.elastic.rendezvous import RendezvousParameters

    x = payload(device, dtype)
    p = RendezvousParameters("c10d", "127.0.0.1:0", RUN_ID, 1, 2, local_addr="127.0.0.1",
                             count=str(int(x.numel())), flag="yes", off="0", none=None)
    got = [p.backend, p.endpoint, p.run_id, p.min_nodes, p.max_nodes, p.local_addr,
           p.get("count"), p.get("absent", "dflt"), p.get_as_int("count"), p.get_as_int("absent", 3),
           p.get_as_bool("flag"), p.get_as_bool("off"), p.get_as_bool("absent", True)]
    try:
        p.get_as_int("flag")
    except ValueError as exc:
        got.append(type(exc).__name__)
    return got


def memory_backend(name: str = "memory"):
    """A ``RendezvousBackend`` written here: the state in a dict, with a fencing token."""
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import RendezvousBackend

    class Memory(RendezvousBackend):
        def __init__(self):
            self.state, self.token, self.calls = None, 0, []

        @property
        def name(self):
            return name

        def get_state(self):
            self.calls.append("get")
            return None if self.state is None else (self.state, self.token)

        def set_state(self, state, token=None):
            self.calls.append("set")
            if token != (self.token if self.state is not None else None):
                return (self.state, self.token, False) if self.state is not None else None
            self.state, self.token = state, self.token + 1
            return self.state, self.token, True
    return Memory()


def _timeout():
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import RendezvousTimeout

    return RendezvousTimeout(join=timedelta(seconds=20), last_call=timedelta(seconds=1),
                             close=timedelta(seconds=5), heartbeat=timedelta(seconds=5))


def _one_node(handler, device, dtype):
    """Rendezvous of one node; a device tensor travels through the store it hands out."""
    info = loopback_handler(handler).next_rendezvous()
    x = payload(device, dtype) + info.rank + info.world_size
    info.store.set("x", enc(x))
    return info, [info.rank, info.world_size, dec(info.store.get("x"), device),
                  type(info.bootstrap_store_info).__name__]


def dynamic_memory_case(device, dtype):
    """DynamicRendezvousHandler.from_backend on a RendezvousBackend subclass: the handler
    API end to end (next_rendezvous, queries, set_closed, shutdown)."""
    import torch.distributed as dist
    from torch.distributed.elastic.rendezvous.api import RendezvousClosedError
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import DynamicRendezvousHandler

    backend = memory_backend()
    h = DynamicRendezvousHandler.from_backend(RUN_ID, dist.HashStore(), backend, 1, 1,
                                              local_addr="127.0.0.1", timeout=_timeout())
    try:
        info, got = _one_node(h, device, dtype)
        got += [h.get_backend(), h.get_run_id(), h.is_closed(), h.num_nodes_waiting(),
                h.use_agent_store]
        h.set_closed()
        got.append(h.is_closed())
        try:
            h.next_rendezvous()
            got.append("joined a closed rendezvous")
        except RendezvousClosedError as exc:
            got.append(type(exc).__name__)
    finally:
        got.append(h.shutdown())
    return got + [sorted(set(backend.calls))]


def c10d_case(device, dtype):
    """c10d rendezvous backend on a TCPStore (127.0.0.1, a port the kernel picks) and
    create_handler with it."""
    from torch.distributed.elastic.rendezvous import RendezvousParameters
    from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import create_handler

    store = tcp_store()
    backend = C10dRendezvousBackend(store, RUN_ID)
    x = payload(device, dtype)
    first = backend.set_state(enc(x))  # no token: only when nothing is there yet
    state, token = backend.get_state()
    again = backend.set_state(enc(x * 2), token)
    stale = backend.set_state(enc(x * 3), token)  # the old token: refused
    got = [backend.name, dec(first[0], device), first[2], dec(state, device), dec(again[0], device),
           again[2], stale[2], dec(stale[0], device)]
    params = RendezvousParameters("c10d", f"127.0.0.1:{store.port}", RUN_ID + "2", 1, 1,
                                  local_addr="127.0.0.1", join_timeout="20", last_call_timeout="1")
    h = create_handler(store, C10dRendezvousBackend(store, RUN_ID + "2"), params)
    try:
        info, more = _one_node(h, device, dtype)
        got += more + [h.get_backend(), h.use_agent_store]
    finally:
        h.shutdown()
        del store
    return got


def c10d_create_backend_case(device, dtype):
    """create_backend from RendezvousParameters: a TCPStore it hosts on 127.0.0.1, and a
    FileStore on a temporary file."""
    from torch.distributed.elastic.rendezvous import RendezvousParameters
    from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import create_backend

    x = payload(device, dtype)
    got = []
    # the server create_backend hosts (multi-tenant, on this port) is this loopback one: the
    # store torch would start itself listens on every interface
    server = tcp_store(multi_tenant=True)
    params = RendezvousParameters("c10d", f"127.0.0.1:{server.port}", RUN_ID, 1, 1, is_host="true",
                                  read_timeout="10")
    backend, store = create_backend(params)
    backend.set_state(enc(x))
    got += [backend.name, type(store).__name__, dec(backend.get_state()[0], device)]
    del backend, store, server
    with tempfile.TemporaryDirectory(prefix="torchparity-rdzv-") as tmp:
        params = RendezvousParameters("c10d", os.path.join(tmp, "store"), RUN_ID, 1, 1, store_type="file")
        backend, store = create_backend(params)
        backend.set_state(enc(x + 1))
        got += [type(store).__name__, dec(backend.get_state()[0], device)]
        del backend, store
    return got


def registry_case(device, dtype):
    """RendezvousHandlerRegistry: register a creator, create a handler through it."""
    import torch.distributed as dist
    from torch.distributed.elastic.rendezvous import RendezvousHandlerRegistry, RendezvousParameters
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import create_handler

    reg = RendezvousHandlerRegistry()
    reg.register("tp-memory", lambda p: create_handler(dist.HashStore(), memory_backend("tp-memory"), p))
    params = RendezvousParameters("tp-memory", "", RUN_ID, 1, 1, local_addr="127.0.0.1",
                                  last_call_timeout="1")
    h = reg.create_handler(params)
    try:
        info, got = _one_node(h, device, dtype)
    finally:
        h.shutdown()
    try:
        reg.create_handler(RendezvousParameters("absent", "", RUN_ID, 1, 1))
        got.append("created")
    except ValueError as exc:
        got.append(type(exc).__name__)
    return got


def timeout_case(device, dtype):
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import RendezvousTimeout

    x = payload(device, dtype)
    secs = int(x.float().abs().sum().round().item())
    t = RendezvousTimeout(join=timedelta(seconds=secs), last_call=timedelta(seconds=2))
    d = RendezvousTimeout()
    return [t.join.total_seconds(), t.last_call.total_seconds(), t.close.total_seconds(),
            t.heartbeat.total_seconds(), d.join.total_seconds(), d.last_call.total_seconds(),
            d.close.total_seconds(), d.heartbeat.total_seconds()]


def store_info_case(device, dtype):
    """RendezvousStoreInfo.build: rank 0 publishes its address, rank 1 reads it."""
    import torch.distributed as dist
    from torch.distributed.elastic.rendezvous import RendezvousInfo
    from torch.distributed.elastic.rendezvous.api import RendezvousStoreInfo

    store = dist.HashStore()
    x = payload(device, dtype)
    port = 20000 + int(x.numel())
    r0 = RendezvousStoreInfo.build(0, store, local_addr="127.0.0.1", server_port=port)
    r1 = RendezvousStoreInfo.build(1, store, local_addr="127.0.0.9")
    info = RendezvousInfo(store, 1, 2, r1)
    return [r0.master_addr, r0.master_port, r1.master_addr, r1.master_port, info.rank, info.world_size,
            info.store is store, info.bootstrap_store_info.master_addr, x]


def errors_case(device, dtype):
    """The rendezvous errors, each raised where the API raises it or by hand."""
    import torch.distributed as dist
    from torch.distributed.elastic.rendezvous import api as ra
    from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import (
        DynamicRendezvousHandler,
        RendezvousTimeout,
    )

    got = []
    store = dist.HashStore()
    backend = C10dRendezvousBackend(store, RUN_ID)
    store.set("torch.rendezvous." + RUN_ID, "!not base64!")  # a corrupt state
    try:
        backend.get_state()
        got.append("read")
    except ra.RendezvousStateError as exc:
        got.append(type(exc).__name__)
    # two nodes wanted, one comes: the join times out
    h = DynamicRendezvousHandler.from_backend(
        RUN_ID + "t", dist.HashStore(), memory_backend(), 2, 2, local_addr="127.0.0.1",
        timeout=RendezvousTimeout(join=timedelta(seconds=1), last_call=timedelta(seconds=1)))
    try:
        h.next_rendezvous()
        got.append("joined")
    except ra.RendezvousTimeoutError as exc:
        got.append(type(exc).__name__)
    finally:
        h.shutdown()
    x = payload(device, dtype)
    for cls in (ra.RendezvousError, ra.RendezvousClosedError, ra.RendezvousTimeoutError,
                ra.RendezvousConnectionError, ra.RendezvousStateError, ra.RendezvousGracefulExitError):
        try:
            raise cls(f"sum {x.float().sum().item():.3f}")
        except ra.RendezvousError as exc:
            got.append([type(exc).__name__, str(exc)])
    return got
