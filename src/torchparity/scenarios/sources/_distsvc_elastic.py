"""The ``distsvc`` cases of ``torch.distributed.elastic`` that run in this process:
events, metrics, timers, rendezvous and the agent's data classes.

Each case computes on the device and routes what it computed through the API (an event's
metadata, a metric's value, a rendezvous store, a timer-guarded block) and returns what
came out, with anything that depends on the clock, the host name or a process id left
out (or compared as a fact: "a positive int"). Rendezvous runs on stores in this process:
a ``TCPStore`` on 127.0.0.1 (a port the kernel picks) or a ``HashStore``; nothing waits
longer than a few seconds.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
from datetime import timedelta
from typing import Callable, Dict, List, Tuple

from ._distsvc_store import dec, enc, payload, tcp_store

RUN_ID = "tp-run"


def _total(device, dtype) -> float:
    return round(float(payload(device, dtype).float().sum().item()), 4)


# -- events ---------------------------------------------------------------------------------

def events_case(device, dtype):
    from torch.distributed.elastic import events
    from torch.distributed.elastic.events import api as ea

    value = _total(device, dtype)
    ev = ea.Event(name="tp.step", source=ea.EventSource.WORKER, timestamp=7,
                  metadata={"sum": value, "ok": True, "tag": "x", "none": None})
    back = ea.Event.deserialize(ev.serialize())
    handler = events.get_logging_handler("console")
    null = events.get_logging_handler()
    events.record(ev)  # the default destination, "null": recorded and dropped
    meta_types = [isinstance(v, tuple(t for t in (str, int, float, bool, type(None))))
                  for v in ev.metadata.values()]
    return [back.name, back.source.name, back.timestamp, back.metadata, meta_types,
            type(handler).__name__, type(null).__name__, [s.name for s in ea.EventSource],
            str(ea.EventMetadataValue)]


def rdzv_event_case(device, dtype):
    """``construct_and_record_rdzv_event`` recorded to a handler that keeps the message."""
    from torch.distributed.elastic import events
    from torch.distributed.elastic.events.api import NodeState

    seen: List[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    from torch.distributed.elastic.events import handlers

    keep = Keep()
    old = handlers._log_handlers.get("dynamic_rendezvous")
    handlers._log_handlers["dynamic_rendezvous"] = keep  # the "null" default drops the event
    logger = events._get_or_create_logger("dynamic_rendezvous")
    logger.addHandler(keep)
    try:
        events.construct_and_record_rdzv_event(
            run_id=RUN_ID, message=f"sum={_total(device, dtype)}", node_state=NodeState.RUNNING,
            name="tp", hostname="h", pid=1, master_endpoint="127.0.0.1:1", local_id=0, rank=0)
    finally:
        logger.removeHandler(keep)
        handlers._log_handlers["dynamic_rendezvous"] = old
    import json

    got = [json.loads(s) for s in seen]
    for g in got:  # the clock
        g.pop("timestamp", None)
    return got


# -- metrics --------------------------------------------------------------------------------

def metrics_case(device, dtype):
    from torch.distributed.elastic import metrics
    from torch.distributed.elastic.metrics import api as ma

    kept: List[Tuple[str, str, int]] = []

    class Keep(ma.MetricHandler):
        def emit(self, data):
            kept.append((data.group_name, data.name, data.value))

    old = dict(ma._metrics_map)
    try:
        metrics.configure(Keep(), group="tp")
        x = payload(device, dtype)
        metrics.put_metric("sum10", int((x.float().sum() * 10).round().item()), "tp")

        @metrics.prof(group="tp")
        def step(t):
            return (t * 2).sum()

        y = step(x)
        out = io.StringIO()
        metrics.configure(ma.ConsoleMetricHandler(), group="console")
        with contextlib.redirect_stdout(out):
            metrics.put_metric("n", 3, "console")
        metrics.configure(ma.NullMetricHandler(), group="null")
        metrics.put_metric("n", 3, "null")
    finally:
        ma._metrics_map.clear()
        ma._metrics_map.update(old)
    line = out.getvalue().strip().split("]", 1)[-1].strip()  # "[timestamp][group]: name=value"
    timed = [(g, n, v) for g, n, v in kept if not n.endswith(".duration.ms")]
    return [timed, y, line]


# -- timers ---------------------------------------------------------------------------------

def local_timer_case(device, dtype):
    """LocalTimerServer + LocalTimerClient over a multiprocessing queue; ``expires`` guards a
    device computation; the server's own methods driven directly."""
    import multiprocessing as mp
    import time

    from torch.distributed.elastic import timer

    q = mp.get_context("spawn").Queue()
    server = timer.LocalTimerServer(q, max_interval=0.05)
    server.start()
    try:
        client = timer.LocalTimerClient(q)
        timer.configure(client)
        with timer.expires(after=60, scope="step"):
            y = payload(device, dtype) * 2
        client.acquire("explicit", time.time() + 60)
        client.release("explicit")
    finally:
        server.stop()
        q.close()
        q.join_thread()
    # the TimerServer methods on a server that was never started
    s2 = timer.LocalTimerServer(mp.get_context("spawn").Queue(), max_interval=1)
    now = time.time()
    s2.register_timers([timer.TimerRequest(1, "a", now - 5), timer.TimerRequest(1, "b", now + 60),
                        timer.TimerRequest(2, "a", now - 5)])
    expired = s2.get_expired_timers(now)
    expired_view = {w: sorted(r.scope_id for r in reqs) for w, reqs in expired.items()}
    s2.clear_timers({1})
    after = s2.get_expired_timers(now)
    return [y, expired_view, sorted(after), timer.TimerRequest(1, "a", 5.0) == timer.TimerRequest(1, "a", 5.0)]


def file_timer_case(device, dtype):
    """FileTimerServer on a FIFO in a temporary folder, FileTimerClient acquiring and
    releasing around a device computation (nothing expires: nothing is killed)."""
    from torch.distributed.elastic import timer

    with tempfile.TemporaryDirectory(prefix="torchparity-timer-") as tmp:
        path = os.path.join(tmp, "watchdog")
        logged: List[str] = []
        server = timer.FileTimerServer(path, RUN_ID, max_interval=0.05,
                                       log_event=lambda name, req: logged.append(name))
        server.start()
        try:
            import time

            for _ in range(100):  # the server opens its FIFO in its thread
                if os.path.exists(path):
                    break
                time.sleep(0.02)
            client = timer.FileTimerClient(path)
            with timer.expires(after=60, scope="step", client=client):
                y = payload(device, dtype) + 1
            client.acquire("again", __import__("time").time() + 60)
            client.release("again")
        finally:
            server.stop()
    return [y, isinstance(client, timer.TimerClient), isinstance(server, timer.TimerServer)]


def debug_info_case(device, dtype):
    from torch.distributed.elastic.timer import debug_info_logging as dl

    x = payload(device, dtype)
    dl.log_debug_info_for_expired_timers(RUN_ID, {})  # nothing expired: nothing dumped
    dl.log_debug_info_for_expired_timers(RUN_ID, {os.getpid(): [f"scope{int(x.numel())}"]})
    return [x]


# -- rendezvous -----------------------------------------------------------------------------

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
    info = handler.next_rendezvous()
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
    import socket

    from torch.distributed.elastic.rendezvous import RendezvousParameters
    from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import create_backend

    x = payload(device, dtype)
    got = []
    with socket.socket() as sock:  # a free port for the store create_backend hosts
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    params = RendezvousParameters("c10d", f"127.0.0.1:{port}", RUN_ID, 1, 1, is_host="true",
                                  read_timeout="10")
    backend, store = create_backend(params)
    backend.set_state(enc(x))
    got += [backend.name, type(store).__name__, dec(backend.get_state()[0], device)]
    del backend, store
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


def rows() -> Dict[str, List[Tuple[str, Callable, str]]]:
    E = "torch.distributed.elastic."
    r: Dict[str, List[Tuple[str, Callable, str]]] = {}

    def add(names, sid, fn, what):
        for n in names:
            r.setdefault(E + n, []).append((sid, fn, what))

    add(["events.api.Event", "events.api.EventMetadataValue", "events.api.EventSource",
         "events.get_logging_handler", "events.record"], "event", events_case,
        "an event carrying a device result, serialised, parsed back, recorded")
    add(["events.construct_and_record_rdzv_event"], "rdzv-event", rdzv_event_case,
        "a rendezvous event with a device result, as the logger receives it")
    add(["metrics.api.ConsoleMetricHandler", "metrics.api.MetricHandler", "metrics.api.NullMetricHandler",
         "metrics.configure", "metrics.prof", "metrics.put_metric"], "metrics", metrics_case,
        "metrics from device results through handlers (durations left out)")
    add(["timer.LocalTimerClient", "timer.LocalTimerServer", "timer.TimerRequest", "timer.TimerServer",
         "timer.TimerServer.clear_timers", "timer.TimerServer.get_expired_timers",
         "timer.TimerServer.register_timers", "timer.configure", "timer.expires", "timer.TimerClient",
         "timer.TimerClient.acquire", "timer.TimerClient.release"], "local-timer", local_timer_case,
        "a device computation under expires(), the server's timer book-keeping")
    add(["timer.FileTimerClient", "timer.FileTimerServer", "timer.TimerClient", "timer.TimerClient.acquire",
         "timer.TimerClient.release", "timer.expires"], "file-timer", file_timer_case,
        "file (FIFO) timer server and client around a device computation")
    add(["timer.debug_info_logging.log_debug_info_for_expired_timers"], "debug-info", debug_info_case,
        "logging expired timers (none, then one scope)")
    add(["rendezvous.RendezvousParameters", "rendezvous.RendezvousParameters.get",
         "rendezvous.RendezvousParameters.get_as_bool", "rendezvous.RendezvousParameters.get_as_int"],
        "params", params_case, "parameters and typed getters")
    handler_api = ["rendezvous.RendezvousHandler", "rendezvous.RendezvousHandler.get_backend",
                   "rendezvous.RendezvousHandler.get_run_id", "rendezvous.RendezvousHandler.is_closed",
                   "rendezvous.RendezvousHandler.next_rendezvous",
                   "rendezvous.RendezvousHandler.num_nodes_waiting", "rendezvous.RendezvousHandler.set_closed",
                   "rendezvous.RendezvousHandler.shutdown", "rendezvous.RendezvousHandler.use_agent_store",
                   "rendezvous.dynamic_rendezvous.DynamicRendezvousHandler",
                   "rendezvous.dynamic_rendezvous.DynamicRendezvousHandler.from_backend",
                   "rendezvous.dynamic_rendezvous.RendezvousBackend",
                   "rendezvous.dynamic_rendezvous.RendezvousBackend.get_state",
                   "rendezvous.dynamic_rendezvous.RendezvousBackend.name",
                   "rendezvous.dynamic_rendezvous.RendezvousBackend.set_state",
                   "rendezvous.api.RendezvousClosedError", "rendezvous.RendezvousInfo"]
    add(handler_api, "dynamic-memory", dynamic_memory_case,
        "a one-node rendezvous on a RendezvousBackend subclass; a device tensor through its store")
    add(["rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend",
         "rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend.get_state",
         "rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend.name",
         "rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend.set_state",
         "rendezvous.dynamic_rendezvous.create_handler", "rendezvous.RendezvousHandler.next_rendezvous",
         "rendezvous.dynamic_rendezvous.RendezvousBackend.get_state",
         "rendezvous.dynamic_rendezvous.RendezvousBackend.set_state"], "c10d-tcp", c10d_case,
        "c10d backend on a TCPStore (127.0.0.1): states with fencing tokens, then a handler")
    add(["rendezvous.c10d_rendezvous_backend.create_backend"], "create-backend", c10d_create_backend_case,
        "create_backend hosting a TCPStore on 127.0.0.1, and on a FileStore")
    add(["rendezvous.RendezvousHandlerRegistry"], "registry", registry_case,
        "register a creator, create a handler, an unknown backend refused")
    add(["rendezvous.dynamic_rendezvous.RendezvousTimeout",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.close",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.heartbeat",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.join",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.last_call"], "timeouts", timeout_case,
        "given and default timeouts")
    add(["rendezvous.api.RendezvousStoreInfo", "rendezvous.api.RendezvousStoreInfo.build",
         "rendezvous.RendezvousInfo"], "store-info", store_info_case, "rank 0 publishes, rank 1 reads")
    add(["rendezvous.api.RendezvousClosedError", "rendezvous.api.RendezvousConnectionError",
         "rendezvous.api.RendezvousError", "rendezvous.api.RendezvousGracefulExitError",
         "rendezvous.api.RendezvousStateError", "rendezvous.api.RendezvousTimeoutError"], "errors", errors_case,
        "a corrupt state, a join that times out, each error raised and caught")
    return r
