"""A pool of worker processes with per-case timeouts and crash isolation.

Cases are handed out one at a time to idle workers. A worker that dies (segfault, abort,
os._exit) costs only its in-flight case, recorded as ``crash``; a case that overruns its
timeout gets its worker killed and is recorded as ``timeout``. Either way a fresh worker
takes over the remaining cases. A worker killed from outside (SIGKILL under memory
pressure, SIGTERM, ...: ``killed_from_outside``) is no answer of the device: its case runs
once more on a fresh worker, and a second such kill is a ``harness_error``.

Nothing is left behind: a killed worker is killed with its whole process tree (scenario
children in a new session included, see ``proctree``); workers die with this process
(see ``worker``); SIGTERM here is handled like Ctrl-C (``Terminated``), so the workers are
ended and what was recorded is kept. A case's clock starts when it is sent to a worker
that said "ready", after its warm-up imports; the warm-up seconds are in ``warmups``.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, Iterable, List, Optional, Tuple

from ..errors import DeviceUnavailableError, Terminated, TorchparityError
from . import proctree
from .worker import PARENT_ENV

DEFAULT_STARTUP_TIMEOUT = 300.0
MAX_STARTUP_FAILURES = 3


@dataclass
class CaseEvent:
    """What became of one case: a payload from the worker, or a crash / timeout."""

    index: int
    kind: str  # "result" | "crash" | "timeout"
    payload: Dict[str, Any] = field(default_factory=dict)
    detail: str = ""
    seconds: float = 0.0


def signal_name(returncode: Optional[int]) -> str:
    if returncode is None:
        return "unknown exit"
    if returncode < 0:
        try:
            return f"{signal.Signals(-returncode).name} (signal {-returncode})"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


OUTSIDE_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


def killed_from_outside(returncode: Optional[int]) -> bool:
    """A worker ended by a signal no device sends and the pool did not send (it kills only
    at a time limit, and then says ``timeout``): SIGKILL (the OOM killer under load, a
    user), SIGTERM, SIGINT, SIGHUP. A crash of the worker itself (SIGSEGV, SIGABRT, ...)
    is not."""
    return returncode is not None and returncode < 0 and -returncode in OUTSIDE_SIGNALS


def outside_kill_event(index: int, returncode: Optional[int], tail: str, seconds: float) -> CaseEvent:
    """The event of a case whose worker was killed from outside on its second try too: a
    harness error (the case could not be run here), never the device's answer."""
    detail = (f"the worker was killed from outside twice ({signal_name(returncode)}; not by the "
              "device, not by torchparity: memory pressure or a user)") + (f"; stderr: {tail}" if tail else "")
    return CaseEvent(index, "result", payload={"harness_error": detail}, seconds=seconds)


def crash_event(index: int, returncode: Optional[int], tail: str, seconds: float,
                again: bool = False) -> CaseEvent:
    """The event of a case whose worker died of itself (``again``: on the fresh worker the
    case was given after its first worker, which had run other cases, died)."""
    detail = (f"worker died: {signal_name(returncode)}" + (" (again on a fresh worker)" if again else "")
              + (f"; stderr: {tail}" if tail else ""))
    return CaseEvent(index, "crash", detail=detail, seconds=seconds)


def worker_process_env(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment of a worker process started by this process (``env`` or ours)."""
    out = dict(os.environ if env is None else env)
    out.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    out.setdefault("PYTHONUNBUFFERED", "1")
    out[PARENT_ENV] = str(os.getpid())
    return out


class Worker:
    def __init__(self, init: Optional[Dict[str, Any]], env: Dict[str, str]):
        """Start a worker process; ``init`` None: it imports torch while it waits for its
        init (:meth:`begin`), sent when the caller knows it."""
        self.env = env
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "torchparity.run.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            env=env, start_new_session=True,
        )
        self.buffer = b""
        self.ready = False
        self.case: Optional[int] = None
        self.ran = 0  # cases this worker answered
        self.deadline = 0.0
        self.started_at = time.monotonic()
        if init is not None:
            self.begin(init)

    def begin(self, init: Dict[str, Any]) -> bool:
        return self.send(dict(init, op="init"))

    def send(self, msg: Dict[str, Any]) -> bool:
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def lines(self) -> Tuple[List[Dict[str, Any]], bool]:
        """Messages available now, and whether the worker's stdout closed."""
        try:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
        except OSError:
            chunk = b""
        if not chunk:
            return [], True
        self.buffer += chunk
        *complete, self.buffer = self.buffer.split(b"\n")
        msgs = []
        for raw in complete:
            if raw.strip():
                try:
                    msgs.append(json.loads(raw))
                except json.JSONDecodeError:
                    continue
        return msgs, False

    def stderr_tail(self, limit: int = 400) -> str:
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - 4000))
            text = self.stderr.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        tail = " | ".join(lines[-3:])
        return tail[-limit:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            proctree.kill_tree(self.proc.pid)  # its group and its new-session children too
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.close()

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.stderr.close()
        except OSError:
            pass


class SpareWorker:
    """A worker process started before its run is known (before the caller has imported
    torch, resolved its APIs or picked the device): it imports torch meanwhile. A pool
    :meth:`~WorkerPool.adopt` s it; :meth:`close` ends it if none did."""

    def __init__(self, env: Optional[Dict[str, str]] = None):
        self.env = worker_process_env(env)
        self._worker: Optional[Worker] = Worker(None, self.env)

    @property
    def pid(self) -> Optional[int]:
        """The started worker's pid while nobody took it."""
        return self._worker.proc.pid if self._worker is not None else None

    def take(self, env: Dict[str, str]) -> Optional[Worker]:
        """The started worker, for a pool whose workers get ``env`` (None, and the worker
        ended, where its environment is another: it would run in the wrong one)."""
        worker, self._worker = self._worker, None
        if worker is not None and worker.env != env:
            worker.kill()
            return None
        return worker

    def close(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.kill()


class WorkerPool:
    """Runs cases on ``jobs`` workers for one device.

    ``init`` is sent to every worker (device spec, scenario modules, options).
    """

    def __init__(self, init: Dict[str, Any], jobs: int = 1, env: Optional[Dict[str, str]] = None,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT):
        self.init = init
        self.jobs = max(1, jobs)
        self.env = worker_process_env(env)
        self.startup_timeout = startup_timeout
        self.warmups: List[float] = []  # seconds each worker spent warming up, off the clocks
        self._early: List[Worker] = []  # started before the cases were known (prestart)

    def prestart(self, n: int = 1) -> None:
        """Start ``n`` workers now, with the current ``init``, before the cases are planned:
        each sets up and warms up while the caller plans, and :meth:`run` uses it first."""
        while len(self._early) < n:
            self._early.append(Worker(self.init, self.env))

    def adopt(self, spare: SpareWorker) -> bool:
        """Take ``spare``'s started worker as this pool's first, given the current ``init``;
        False where it could not be (another environment, or it has died)."""
        worker = spare.take(self.env)
        if worker is None:
            return False
        if not worker.begin(self.init):
            worker.kill()
            return False
        self._early.append(worker)
        return True

    def discard(self) -> None:
        """End the started workers :meth:`run` did not take (no case, an interruption)."""
        while self._early:
            self._early.pop().kill()

    def run(self, cases: List[Dict[str, Any]], timeouts: Iterable[float],
            on_event: Callable[[CaseEvent], None], skip: Iterable[int] = ()) -> None:
        timeouts = list(timeouts)
        skipped = set(skip)
        pending: Deque[int] = deque(i for i in range(len(cases)) if i not in skipped)
        if not pending:
            return
        selector = selectors.DefaultSelector()
        workers: List[Worker] = []
        startup_failures = 0
        sent_at: Dict[int, float] = {}
        retried: set = set()  # cases whose worker was killed from outside once
        # cases whose worker died after running others: once more, first on a fresh one
        fresh_only: set = set()

        def spawn() -> None:
            if self._early:  # started while the caller planned: set up, maybe ready
                w = self._early.pop(0)
            else:
                w = Worker(self.init, self.env)
            w.deadline = time.monotonic() + self.startup_timeout
            selector.register(w.proc.stdout, selectors.EVENT_READ, w)
            workers.append(w)

        def retire(w: Worker, kill: bool) -> None:
            try:
                selector.unregister(w.proc.stdout)
            except (KeyError, ValueError):
                pass
            workers.remove(w)
            if kill:
                w.kill()
            else:
                try:
                    w.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    w.kill()
                    return
                w.close()

        def dispatch(w: Worker) -> None:
            if not pending:
                return
            idx = next((i for i in pending if not (w.ran and i in fresh_only)), None)
            if idx is None:  # only cases for a fresh worker are left: make room for one
                retire(w, kill=not w.send({"op": "exit"}))
                return
            pending.remove(idx)
            w.case = idx
            sent_at[idx] = time.monotonic()
            w.deadline = sent_at[idx] + timeouts[idx]
            if not w.send({"op": "case", "id": idx, "case": cases[idx]}):
                pending.appendleft(idx)  # died before it got it; EOF handling follows
                w.case = None

        def requeue(idx: int, dead: Worker) -> None:
            """``idx`` to run again first; an idle worker takes it (or, where it must run on a
            fresh worker, makes room for one), else nothing would, as no worker would ask."""
            pending.appendleft(idx)
            for other in list(workers):
                if other is not dead and other.ready and other.case is None and other in workers:
                    dispatch(other)

        restore = terminate_as_interrupt()
        orphans = proctree.OrphanCatcher()
        try:
            for _ in range(min(self.jobs, len(pending))):
                spawn()
            while pending or any(w.case is not None for w in workers):
                # keep enough workers alive for the remaining work
                in_flight = sum(1 for w in workers if w.case is not None)
                while pending and len(workers) < min(self.jobs, len(pending) + in_flight):
                    spawn()
                now = time.monotonic()
                wait = max(0.0, min((w.deadline for w in workers), default=now + 1.0) - now)
                events = selector.select(timeout=min(wait, 5.0))
                for key, _ in events:
                    w: Worker = key.data
                    if w not in workers:
                        continue
                    msgs, closed = w.lines()
                    for msg in msgs:
                        ev = msg.get("event")
                        if ev == "ready":
                            w.ready = True
                            self.warmups.append(float(msg.get("warmup_s") or 0.0))
                            startup_failures = 0
                            dispatch(w)
                        elif ev == "fatal":
                            raise DeviceUnavailableError(msg.get("message", "worker setup failed"))
                        elif ev == "result" and msg.get("id") == w.case:
                            idx = w.case
                            w.case = None
                            w.ran += 1
                            on_event(CaseEvent(idx, "result", payload=msg.get("payload", {}),
                                               seconds=time.monotonic() - sent_at[idx]))
                            dispatch(w)
                    if closed:
                        rc = w.proc.poll()
                        if rc is None:
                            try:
                                rc = w.proc.wait(timeout=10)
                            except subprocess.TimeoutExpired:
                                rc = None
                        tail = w.stderr_tail()
                        if w.case is not None:
                            idx = w.case
                            w.case = None
                            if killed_from_outside(rc) and idx not in retried:
                                retried.add(idx)  # once more, on a fresh worker
                                requeue(idx, w)
                            elif killed_from_outside(rc):
                                on_event(outside_kill_event(idx, rc, tail, time.monotonic() - sent_at[idx]))
                            elif w.ran and idx not in fresh_only:
                                # the state an earlier case left may be what died: the case
                                # is its own answer only from a worker that ran nothing else
                                fresh_only.add(idx)
                                requeue(idx, w)
                            else:
                                on_event(crash_event(idx, rc, tail, time.monotonic() - sent_at[idx],
                                                     again=idx in fresh_only))
                        elif not w.ready:
                            startup_failures += 1
                            if startup_failures >= MAX_STARTUP_FAILURES:
                                raise TorchparityError(
                                    f"worker failed to start ({signal_name(rc)}): {tail or 'no output'}")
                        retire(w, kill=False)
                        orphans.collect(w.proc.pid for w in workers)  # what a crash left
                now = time.monotonic()
                for w in list(workers):
                    if now < w.deadline:
                        continue
                    if w.case is not None:
                        idx = w.case
                        w.case = None
                        retire(w, kill=True)
                        on_event(CaseEvent(idx, "timeout",
                                           detail=f"no result within {timeouts[idx]:g} s; worker killed",
                                           seconds=now - sent_at[idx]))
                    elif not w.ready:
                        retire(w, kill=True)
                        raise TorchparityError(
                            f"worker did not start within {self.startup_timeout:g} s")
                    else:
                        w.deadline = now + 3600  # idle, waiting for work
        finally:
            for w in list(workers):
                graceful = (w.ready and w.case is None and w.proc.poll() is None
                            and w.send({"op": "exit"}))
                retire(w, kill=not graceful)
            selector.close()
            orphans.close()
            restore()
            self.discard()


def terminate_as_interrupt() -> Callable[[], None]:
    """While the pool runs, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt), so
    the callers end the workers and keep what was recorded; returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        return lambda: None  # someone else handles (or ignores) it

    def handler(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, previous)
