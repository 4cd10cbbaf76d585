"""Cases on a Ray cluster: one actor per device slot, each hosting a :class:`~.slot.Slot`.

An actor asks Ray for the device's own resource -- ``{"NPU": 1}`` for Ascend (Ray then
sets ``ASCEND_RT_VISIBLE_DEVICES`` for it), ``{"GPU": 1}`` for cuda, one CPU for the CPU
and for an emulated device (one emulator profile per process, as locally). Inside, the
actor runs the same worker process as the local pool, so per-case timeouts, crash capture
and the payload are the pool's: a segfault or a timeout ends only the actor's child
worker. An actor that dies itself (killed, its node lost) ends its in-flight case as
``crash``; a fresh actor takes its place and the run goes on. Events reach ``on_event``
in this process as each case finishes, so results stream into the store as today.

Ray is optional (``pip install 'torchparity[ray]'``); this module imports it only when
an executor runs.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ..errors import DeviceUnavailableError, InputError, TorchparityError
from .pool import (
    DEFAULT_STARTUP_TIMEOUT,
    MAX_STARTUP_FAILURES,
    CaseEvent,
)
from .pool import (
    terminate_as_interrupt as _terminate_as_interrupt,
)

# a stuck actor (not its worker: the slot ends those itself) is killed this long after
# its case's own timeout plus the start-up allowance (a case after a crash or a timeout
# first starts a fresh worker, off the case's clock), and the case is recorded as a timeout
ACTOR_GRACE_S = 60.0


def slot_resources(device_type: str, emulated: bool) -> Tuple[str, float]:
    """The Ray resource one slot of this device asks for, and how much."""
    if emulated or device_type == "cpu":
        return "CPU", 1.0
    if device_type == "npu":
        return "NPU", 1.0
    if device_type == "cuda":
        return "GPU", 1.0
    raise InputError(f"--executor ray: no Ray resource known for device type '{device_type}'")


class SlotActor:
    """What runs inside each Ray actor: a Slot, and the events as plain dicts."""

    def __init__(self, init: Dict[str, Any], extra_env: Dict[str, str],
                 startup_timeout: float):
        from .slot import Slot

        env = dict(os.environ)  # the actor's own, with what Ray set (visible devices)
        env.update(extra_env)
        self.slot = Slot(init, env, startup_timeout)

    def start(self) -> Dict[str, Any]:
        try:
            warmup = self.slot.start()
        except DeviceUnavailableError as exc:
            return {"fatal": str(exc)}
        except TorchparityError as exc:
            return {"failed": str(exc)}
        import ray

        return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(),
                "warmup_s": warmup}

    def run(self, index: int, case: Dict[str, Any], timeout: float) -> Dict[str, Any]:
        try:
            return asdict(self.slot.run(index, case, timeout))
        except DeviceUnavailableError as exc:  # a replacement worker could not start
            return {"fatal": str(exc)}
        except TorchparityError as exc:
            return {"failed": str(exc)}

    def stop(self) -> None:
        self.slot.close()


class _Member:
    def __init__(self, handle: Any, ref: Any, now: float):
        self.handle = handle
        self.ref = ref  # the call in flight: start() or run()
        self.index: Optional[int] = None  # the case in flight, if any
        self.since = now
        self.ready = False
        self.info: Dict[str, Any] = {}


class RayExecutor:
    """Runs cases on Ray actors with the local pool's interface (see ``run.executors``).

    ``address``: the cluster to join (``auto``, ``HOST:PORT``, ``ray://...``); None joins
    the Ray already initialised in this process, else starts a private local one on the
    loopback. ``jobs``: at most that many actors (None: one per slot of the cluster).
    ``resources`` replaces the device's own resource request (tests stand in NPUs)."""

    def __init__(self, init: Dict[str, Any], *, jobs: Optional[int] = None,
                 extra_env: Optional[Dict[str, str]] = None, device_type: str = "cpu",
                 emulated: bool = False, address: Optional[str] = None,
                 resources: Optional[Dict[str, float]] = None,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT):
        self.init = init
        self.jobs = jobs
        self.extra_env = dict(extra_env or {})
        self.address = address
        self.startup_timeout = startup_timeout
        if resources is None:
            key, amount = slot_resources(device_type, emulated)
            resources = {key: amount}
        self.resources = dict(resources)
        self.warmups: List[float] = []
        self.started: List[Dict[str, Any]] = []  # pid and node of every actor that got ready
        self.spawned = 0  # actors asked for, replacements included
        self.on_ready: Optional[Callable[[Dict[str, Any]], None]] = None  # tests watch this

    def _actor_options(self) -> Dict[str, Any]:
        res = dict(self.resources)
        opts: Dict[str, Any] = {"num_cpus": res.pop("CPU", 0), "max_restarts": 0,
                                "max_concurrency": 1}
        if "GPU" in res:
            opts["num_gpus"] = res.pop("GPU")
        if res:
            opts["resources"] = res
        return opts

    def slots(self, ray: Any) -> int:
        """How many actors the cluster has room for (before ``jobs`` caps it)."""
        have = ray.cluster_resources()
        counts = [int(have.get(k, 0) // v) for k, v in self.resources.items() if v > 0]
        n = min(counts) if counts else 0
        if n < 1:
            wanted = ", ".join(f"{k}: {v:g}" for k, v in self.resources.items())
            raise DeviceUnavailableError(
                f"the Ray cluster has no room for one slot ({wanted}); it has "
                + ", ".join(f"{k} {v:g}" for k, v in sorted(have.items())
                            if not k.startswith("node:") and "memory" not in k))
        return n

    def run(self, cases: List[Dict[str, Any]], timeouts: Iterable[float],
            on_event: Callable[[CaseEvent], None], skip: Iterable[int] = ()) -> None:
        timeouts = list(timeouts)
        skipped = set(skip)
        pending = [i for i in range(len(cases)) if i not in skipped]
        if not pending:
            return
        import ray

        joined_here = False
        if not ray.is_initialized():
            _connect(ray, self.address)
            joined_here = True
        restore = _terminate_as_interrupt()
        try:
            self._run(ray, cases, timeouts, on_event, pending)
        finally:
            restore()
            if joined_here:
                ray.shutdown()

    def _run(self, ray: Any, cases, timeouts, on_event, pending_list: List[int]) -> None:
        from collections import deque

        from ray.exceptions import RayActorError, RayError

        pending = deque(pending_list)
        limit = self.slots(ray)
        if self.jobs:
            limit = min(limit, self.jobs)
        actor_cls = ray.remote(SlotActor).options(**self._actor_options())
        members: List[_Member] = []
        failures = 0

        def spawn() -> None:
            handle = actor_cls.remote(self.init, self.extra_env, self.startup_timeout)
            self.spawned += 1
            members.append(_Member(handle, handle.start.remote(), time.monotonic()))

        def drop(m: _Member) -> None:
            members.remove(m)
            try:
                ray.kill(m.handle, no_restart=True)
            except Exception:  # already gone
                pass

        def dispatch(m: _Member) -> None:
            m.ref = None
            m.index = None
            if pending:
                idx = pending.popleft()
                m.index = idx
                m.since = time.monotonic()
                m.ref = m.handle.run.remote(idx, cases[idx], timeouts[idx])

        def startup_failed(m: _Member, message: str) -> None:
            nonlocal failures
            if m.index is not None:
                pending.appendleft(m.index)  # not run: it goes to the next slot
            drop(m)
            failures += 1
            if failures >= MAX_STARTUP_FAILURES:
                raise TorchparityError(f"Ray actor's worker failed to start: {message}")

        try:
            while pending or any(m.index is not None for m in members):
                in_flight = sum(1 for m in members if m.index is not None)
                while pending and len(members) < min(limit, len(pending) + in_flight):
                    spawn()
                refs = [m.ref for m in members if m.ref is not None]
                done, _ = ray.wait(refs, num_returns=1, timeout=1.0) if refs else ([], [])
                for ref in done:
                    m = next((x for x in members if x.ref == ref), None)
                    if m is None:
                        continue
                    try:
                        reply = ray.get(ref)
                    except RayActorError as exc:  # the actor itself died
                        if m.index is None:
                            startup_failed(m, _first_line(exc))
                            continue
                        idx = m.index
                        drop(m)
                        on_event(CaseEvent(idx, "crash",
                                           detail=f"Ray actor died: {_first_line(exc)}",
                                           seconds=time.monotonic() - m.since))
                        continue
                    except RayError as exc:
                        startup_failed(m, _first_line(exc))
                        continue
                    if "fatal" in reply:
                        raise DeviceUnavailableError(reply["fatal"])
                    if "failed" in reply:
                        startup_failed(m, reply["failed"])
                        continue
                    if not m.ready:  # start() answered
                        m.ready = True
                        m.info = reply
                        failures = 0
                        self.warmups.append(float(reply.get("warmup_s") or 0.0))
                        self.started.append(reply)
                        if self.on_ready:
                            self.on_ready(reply)
                        dispatch(m)
                        continue
                    on_event(CaseEvent(**reply))
                    dispatch(m)
                now = time.monotonic()
                for m in list(members):
                    allowance = timeouts[m.index] + self.startup_timeout + ACTOR_GRACE_S \
                        if m.index is not None else 0.0
                    if m.index is not None and now > m.since + allowance:
                        idx = m.index
                        drop(m)
                        on_event(CaseEvent(idx, "timeout",
                                           detail=f"no result within {timeouts[idx]:g} s; "
                                                  "Ray actor killed",
                                           seconds=now - m.since))
                    elif not m.ready and now > m.since + self.startup_timeout + ACTOR_GRACE_S:
                        drop(m)
                        if not any(x.ready for x in members):
                            raise TorchparityError(
                                f"no Ray actor started within {self.startup_timeout:g} s "
                                f"(asked for {self.resources})")
        finally:
            idle = [m for m in members if m.ready and m.index is None]
            stops = [m.handle.stop.remote() for m in idle]
            if stops:
                try:
                    ray.wait(stops, num_returns=len(stops), timeout=15)
                except Exception:
                    pass
            for m in list(members):
                drop(m)


def _connect(ray: Any, address: Optional[str]) -> None:
    kwargs: Dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                  logging_level="ERROR")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address:
        _reachable(address)
        kwargs["address"] = address
    else:  # a private instance for this run, on the loopback only
        kwargs["_node_ip_address"] = "127.0.0.1"
    try:
        ray.init(**kwargs)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise InputError(f"--ray-address {address or '(local)'}: cannot join the Ray cluster: "
                         f"{_first_line(exc)}") from None


def _reachable(address: str, wait_s: float = 10.0) -> None:
    """A HOST:PORT that nothing answers on is refused at once (Ray itself retries for
    minutes); ``auto`` and ``ray://`` addresses are left to Ray."""
    import socket

    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--ray-address {address}: expected HOST:PORT, auto or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=wait_s).close()
    except OSError as exc:
        raise InputError(f"--ray-address {address}: no Ray cluster answers there "
                         f"({exc.strerror or exc})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
