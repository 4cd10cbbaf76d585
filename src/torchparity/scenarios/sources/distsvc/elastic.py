"""The ``distsvc`` cases of ``torch.distributed.elastic`` that run in this process:
events, metrics and timers, and the table of every in-process elastic case (the
rendezvous cases are in ``distsvc.rdzv``).

Each case computes on the device and routes what it computed through the API (an event's
metadata, a metric's value, a timer-guarded block) and returns what came out, with
anything that depends on the clock, the host name or a process id left out.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
from typing import Callable, Dict, List, Tuple

from . import rdzv as R
from .store import payload

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
    from torch.distributed.elastic.timer import api as timer_api

    q = mp.get_context("spawn").Queue()
    server = timer.LocalTimerServer(q, max_interval=0.05)
    server.start()
    previous = timer_api._timer_client
    try:
        client = timer.LocalTimerClient(q)
        timer.configure(client)
        with timer.expires(after=60, scope="step"):
            y = payload(device, dtype) * 2
        client.acquire("explicit", time.time() + 60)
        client.release("explicit")
    finally:
        timer_api._timer_client = previous  # the process-wide client, as it was
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
        "params", R.params_case, "parameters and typed getters")
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
    add(handler_api, "dynamic-memory", R.dynamic_memory_case,
        "a one-node rendezvous on a RendezvousBackend subclass; a device tensor through its store")
    add(["rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend",
         "rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend.get_state",
         "rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend.name",
         "rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend.set_state",
         "rendezvous.dynamic_rendezvous.create_handler", "rendezvous.RendezvousHandler.next_rendezvous",
         "rendezvous.dynamic_rendezvous.RendezvousBackend.get_state",
         "rendezvous.dynamic_rendezvous.RendezvousBackend.set_state"], "c10d-tcp", R.c10d_case,
        "c10d backend on a TCPStore (127.0.0.1): states with fencing tokens, then a handler")
    add(["rendezvous.c10d_rendezvous_backend.create_backend"], "create-backend", R.c10d_create_backend_case,
        "create_backend hosting a TCPStore on 127.0.0.1, and on a FileStore")
    add(["rendezvous.RendezvousHandlerRegistry"], "registry", R.registry_case,
        "register a creator, create a handler, an unknown backend refused")
    add(["rendezvous.dynamic_rendezvous.RendezvousTimeout",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.close",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.heartbeat",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.join",
         "rendezvous.dynamic_rendezvous.RendezvousTimeout.last_call"], "timeouts", R.timeout_case,
        "given and default timeouts")
    add(["rendezvous.api.RendezvousStoreInfo", "rendezvous.api.RendezvousStoreInfo.build",
         "rendezvous.RendezvousInfo"], "store-info", R.store_info_case, "rank 0 publishes, rank 1 reads")
    add(["rendezvous.api.RendezvousClosedError", "rendezvous.api.RendezvousConnectionError",
         "rendezvous.api.RendezvousError", "rendezvous.api.RendezvousGracefulExitError",
         "rendezvous.api.RendezvousStateError", "rendezvous.api.RendezvousTimeoutError"], "errors", R.errors_case,
        "a corrupt state, a join that times out, each error raised and caught")
    return r
