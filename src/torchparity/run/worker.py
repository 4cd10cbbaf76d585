"""Worker process: runs cases sent by the parent, one JSON line per message.

Parent -> worker (stdin): ``{"op": "init", "device": spec, "modules": [...], "warm": [...]}``
once, then ``{"op": "case", "id": n, "case": {...}}`` per case, ``{"op": "exit"}`` at the end.
Worker -> parent (the original stdout; the worker's own prints go to stderr):
``{"event": "ready", "warmup_s": s}``, ``{"event": "fatal", "message": ...}``,
``{"event": "start", "id": n}``, ``{"event": "result", "id": n, "payload": {...}}``.

A segfault or abort kills only this process; the parent records it as that case's crash.

Hygiene: the worker dies with the parent (a parent-death signal where the kernel has one,
and a watchdog on the parent's pid everywhere), SIGTERM ends it and every process below
it, and after every case the processes the scenario started are killed (the worker is a
subreaper, so even those started in a new session stay in its tree). Before "ready" it
imports what the first case would otherwise pay for on its clock (``torch._dynamo``,
which the footprint recorder reaches; the handlers; the scenario modules; ``warm``).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback

from . import proctree
from .answer import harness_error

PARENT_ENV = "TORCHPARITY_POOL_PID"
WATCH_INTERVAL_S = 0.5
ALWAYS_WARM = ("torch._dynamo",)  # reached by the footprint recorder on first use


def _protocol_stream():
    """Keep the real stdout for the protocol; route everything else to stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


def _end_tree_and_exit(code: int) -> None:
    """Kill every process this worker started (scenario children included) and exit now."""
    try:
        proctree.kill_descendants(os.getpid())
    finally:
        os._exit(code)


def _guard_parent() -> None:
    """Never outlive the pool: parent-death signal (Linux) plus a pid watchdog thread."""
    expected = int(os.environ.get(PARENT_ENV, "0") or 0) or os.getppid()
    signal.signal(signal.SIGTERM, lambda *_: _end_tree_and_exit(128 + signal.SIGTERM))
    proctree.die_with_parent(signal.SIGTERM)
    proctree.become_subreaper()
    if os.getppid() != expected:  # the parent died before the signal was armed
        _end_tree_and_exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCH_INTERVAL_S)
            if os.getppid() != expected:
                _end_tree_and_exit(1)

    threading.Thread(target=watch, name="torchparity-parent-watch", daemon=True).start()


_BACKEND_PROCESSES: list = []  # running when the worker became ready: the backend's own


def _after_case() -> None:
    """End whatever the case left running (not the backend's own helpers) and collect it."""
    if proctree.kill_descendants(os.getpid(), keep=_BACKEND_PROCESSES):
        proctree.reap_children()
    else:
        proctree.reap_children(wait_s=0)


def _import_ahead() -> None:
    """What every worker imports, whatever its device and cases: done before reading the
    init, so a worker started before its run was known (a spare) has it when the init comes.
    A failure here is met again, and reported, where the init's set-up imports it."""
    for name in ("torch",) + ALWAYS_WARM:
        try:
            importlib.import_module(name)
        except Exception:
            return


def _warm(init) -> float:
    """Imports the first case would otherwise pay for on its clock; returns the seconds."""
    start = time.monotonic()
    names = list(ALWAYS_WARM) + list(init.get("warm", []))
    for name in names:
        module, _, func = name.partition(":")
        try:
            obj = importlib.import_module(module)
            if func:
                getattr(obj, func)()
        except Exception:  # a warm-up is an optimisation: the case will meet the problem
            traceback.print_exc()
    try:
        from ..scenarios import registry
        from . import handlers

        handlers._load_builtin_handlers()
        registry.load_suites(init.get("modules", []))
    except Exception:
        traceback.print_exc()
    return time.monotonic() - start


def main() -> int:
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    _guard_parent()
    proto = _protocol_stream()

    def send(**msg) -> None:
        proto.write(json.dumps(msg, default=str) + "\n")
        proto.flush()

    _import_ahead()
    line = sys.stdin.readline()
    if not line:
        return 1
    init = json.loads(line)
    try:
        from ..devices import get_adapter
        from . import handlers

        adapter = get_adapter(init["device"])
        reason = adapter.unavailable_reason()
        if reason:
            send(event="fatal", message=reason)
            return 3
        adapter.setup()
        context = handlers.WorkerContext(adapter=adapter, modules=init.get("modules", []),
                                         options=init.get("options", {}))
    except Exception as exc:  # setup problems end the run with one clear line
        from ..errors import TorchparityError

        message = str(exc) if isinstance(exc, TorchparityError) else (
            f"worker setup failed: {type(exc).__name__}: {exc}")
        traceback.print_exc()
        send(event="fatal", message=message)
        return 3
    warmup = _warm(init)
    _BACKEND_PROCESSES[:] = proctree.descendants(os.getpid())
    send(event="ready", pid=os.getpid(), warmup_s=round(warmup, 3))

    try:
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("op") == "exit":
                break
            case_id = msg["id"]
            send(event="start", id=case_id)
            try:
                payload = handlers.handle(context, msg["case"])
            except Exception as exc:  # a harness bug in one case must not end the others
                traceback.print_exc()
                payload = harness_error(f"{type(exc).__name__}: {exc}").wire()
            finally:
                _after_case()
            send(event="result", id=case_id, payload=payload)
    finally:
        proctree.kill_descendants(os.getpid())  # at the end, everything goes
        proctree.reap_children(wait_s=0.2)
        # the parent waits for this exit: the interpreter's last collections would walk every
        # object torch and the op database made (about a second); frozen, they are skipped
        gc.freeze()
    return 0


if __name__ == "__main__":
    sys.exit(main())
