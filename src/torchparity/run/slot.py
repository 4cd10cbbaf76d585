"""One device slot: a single worker process that runs one case at a time, synchronously.

The local :class:`~torchparity.run.pool.WorkerPool` drives many workers from one loop; a
remote executor (``run.ray_executor``) puts one :class:`Slot` in each of its actors. Both
speak the same protocol to the same worker (``run.worker``), so a case gets the same
treatment either way: its clock starts when it is sent to a ready worker, a worker that
dies costs only its case (``crash``, with the signal and the tail of its stderr), a case
that overruns its timeout gets its worker killed with its whole tree (``timeout``), and
the next case gets a fresh worker.
"""

from __future__ import annotations

import selectors
import subprocess
import time
from typing import Any, Dict, Optional

from ..errors import DeviceUnavailableError, TorchparityError
from . import proctree
from .pool import (
    DEFAULT_STARTUP_TIMEOUT,
    CaseEvent,
    crash_event,
    killed_from_outside,
    outside_kill_event,
    worker_process_env,
)
from .pool import Worker as _Worker
from .pool import signal_name as _signal_name


class Slot:
    """A worker process for one device slot; :meth:`run` one case after another."""

    def __init__(self, init: Dict[str, Any], env: Optional[Dict[str, str]] = None,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT):
        self.init = init
        self.env = worker_process_env(env)
        self.startup_timeout = startup_timeout
        self.worker: Optional[_Worker] = None
        self.warmups: list = []
        self._orphans: Optional[proctree.OrphanCatcher] = None
        self._last_rc: Optional[int] = None  # how the last crashed worker ended
        self._last_tail = ""
        self._ran_before = 0  # cases the worker of the last case had answered before it

    def start(self) -> float:
        """Start the worker and wait for "ready"; returns its warm-up seconds.

        Raises DeviceUnavailableError when the worker says the device cannot be used,
        TorchparityError when it dies or stays silent before it is ready."""
        if self.worker is not None:
            return 0.0
        if self._orphans is None:
            self._orphans = proctree.OrphanCatcher()
        w = _Worker(self.init, self.env)
        deadline = time.monotonic() + self.startup_timeout
        with selectors.DefaultSelector() as sel:
            sel.register(w.proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    w.kill()
                    raise TorchparityError(
                        f"worker did not start within {self.startup_timeout:g} s")
                if not sel.select(timeout=min(left, 5.0)):
                    continue
                msgs, closed = w.lines()
                for msg in msgs:
                    if msg.get("event") == "fatal":
                        w.kill()
                        raise DeviceUnavailableError(msg.get("message", "worker setup failed"))
                    if msg.get("event") == "ready":
                        w.ready = True
                        warmup = float(msg.get("warmup_s") or 0.0)
                        self.warmups.append(warmup)
                        self.worker = w
                        return warmup
                if closed:
                    rc = _wait(w)
                    tail = w.stderr_tail()
                    w.close()
                    raise TorchparityError(
                        f"worker failed to start ({_signal_name(rc)}): {tail or 'no output'}")

    def run(self, index: int, case: Dict[str, Any], timeout: float) -> CaseEvent:
        """Run one case; a crash or a timeout of the worker is the case's event, and the
        next case starts a fresh worker. A worker killed from outside runs the case once
        more on a fresh worker; a second such kill is a harness error (as the pool). A
        worker that dies after it answered other cases may have died of what they left:
        the case runs once more on a fresh worker, whose end is its answer (as the pool)."""
        event = self._run_once(index, case, timeout)
        if event.kind == "crash" and killed_from_outside(self._last_rc):
            event = self._run_once(index, case, timeout)
            if event.kind == "crash" and killed_from_outside(self._last_rc):
                event = outside_kill_event(index, self._last_rc, self._last_tail, event.seconds)
        elif event.kind == "crash" and self._ran_before:
            event = self._run_once(index, case, timeout)
            if event.kind == "crash":
                event = crash_event(index, self._last_rc, self._last_tail, event.seconds, again=True)
        return event

    def _run_once(self, index: int, case: Dict[str, Any], timeout: float) -> CaseEvent:
        self._last_rc, self._last_tail = None, ""
        self.start()
        w = self.worker
        assert w is not None
        self._ran_before = w.ran
        sent = time.monotonic()
        deadline = sent + timeout
        if not w.send({"op": "case", "id": index, "case": case}):
            return self._crashed(index, sent)
        with selectors.DefaultSelector() as sel:
            sel.register(w.proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._end(kill=True)
                    return CaseEvent(index, "timeout",
                                     detail=f"no result within {timeout:g} s; worker killed",
                                     seconds=time.monotonic() - sent)
                if not sel.select(timeout=min(left, 5.0)):
                    continue
                msgs, closed = w.lines()
                for msg in msgs:
                    if msg.get("event") == "result" and msg.get("id") == index:
                        w.ran += 1
                        return CaseEvent(index, "result", payload=msg.get("payload", {}),
                                         seconds=time.monotonic() - sent)
                if closed:
                    return self._crashed(index, sent)

    def _crashed(self, index: int, sent: float) -> CaseEvent:
        w = self.worker
        assert w is not None
        rc = _wait(w)
        tail = w.stderr_tail()
        self._last_rc, self._last_tail = rc, tail
        self._end(kill=False)
        return crash_event(index, rc, tail, time.monotonic() - sent)

    def _end(self, kill: bool) -> None:
        w, self.worker = self.worker, None
        if w is None:
            return
        if kill:
            w.kill()
        else:
            w.close()
        if self._orphans is not None:
            self._orphans.collect(())  # what a crashed worker's scenario left running

    def close(self) -> None:
        """End the worker (gracefully when idle) and stop catching orphans."""
        w = self.worker
        if w is not None:
            graceful = w.proc.poll() is None and w.send({"op": "exit"})
            if graceful:
                try:
                    w.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    graceful = False
            self._end(kill=not graceful)
        if self._orphans is not None:
            self._orphans.close()
            self._orphans = None


def _wait(w: _Worker) -> Optional[int]:
    rc = w.proc.poll()
    if rc is None:
        try:
            rc = w.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            w.kill()
            rc = w.proc.poll()
    return rc
