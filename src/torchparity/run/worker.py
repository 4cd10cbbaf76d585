"""Worker process: runs cases sent by the parent, one JSON line per message.

Parent -> worker (stdin): ``{"op": "init", "device": spec, "modules": [...]}`` once, then
``{"op": "case", "id": n, "case": {...}}`` per case, ``{"op": "exit"}`` at the end.
Worker -> parent (the original stdout; the worker's own prints go to stderr):
``{"event": "ready"}``, ``{"event": "fatal", "message": ...}``, ``{"event": "start", "id": n}``,
``{"event": "result", "id": n, "payload": {...}}``.

A segfault or abort kills only this process; the parent records it as that case's crash.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def _protocol_stream():
    """Keep the real stdout for the protocol; route everything else to stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


def main() -> int:
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    proto = _protocol_stream()

    def send(**msg) -> None:
        proto.write(json.dumps(msg, default=str) + "\n")
        proto.flush()

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
    send(event="ready", pid=os.getpid())

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
            payload = {"harness_error": f"{type(exc).__name__}: {exc}"}
        send(event="result", id=case_id, payload=payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
