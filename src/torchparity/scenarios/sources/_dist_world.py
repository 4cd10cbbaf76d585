"""A world of local rank processes for the ``distributed`` source.

:func:`run_world` starts ``WORLD_SIZE`` fresh interpreters (``python -m`` this module),
each one a rank: it sets the device up as this process has it (``devices.spec_for_device``:
the emulated device's profile travels with it), joins a process group with the device's
collective backend (``DeviceAdapter.collective_backend()``: gloo for the CPU, nccl, hccl,
or gloo over host memory for the emulated device) and runs one body of
``distributed.BODIES``. The outputs of every rank come back as a list, rank by rank.

Rendezvous: this process hosts a ``TCPStore`` on 127.0.0.1 on a port the kernel picks
(no race for a free port) and the ranks join it as clients. Bounded: the store and the
process group time out after ``COLLECTIVE_TIMEOUT_S``; the whole world after
``WORLD_TIMEOUT_S``, and once one rank fails the others get ``GRACE_S`` to finish. No
orphans: every rank asks the kernel to kill it when this process dies (Linux), and
whatever still runs when the world ends is killed and reaped.

A rank that raises reports the exception's type and message; :func:`run_world` raises it
here (builtin exception types as themselves, others as ``RuntimeError`` naming the type),
so a device refusal reads as it would in a single process.
"""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, List

import torch

WORLD_SIZE = 2
COLLECTIVE_TIMEOUT_S = 60.0
WORLD_TIMEOUT_S = 180.0
GRACE_S = 5.0
SEED = 0
_POLL_S = 0.02


class WorldError(RuntimeError):
    """The world did not finish: a rank crashed, hung or could not start."""


def _to(tree: Any, device: str) -> Any:
    if isinstance(tree, torch.Tensor):
        return tree.to(device)
    if isinstance(tree, (list, tuple)):
        return [_to(v, device) for v in tree]
    if isinstance(tree, dict):
        return {k: _to(v, device) for k, v in tree.items()}
    return tree


def run_world(body: str, device: str, dtype: torch.dtype, world_size: int = WORLD_SIZE,
              timeout_s: float = WORLD_TIMEOUT_S) -> List[Any]:
    """Run ``distributed.BODIES[body]`` in a world of ``world_size`` ranks on ``device``;
    the per-rank outputs, moved to ``device`` (ints, bools and None as they are)."""
    import torch.distributed as dist

    from ...devices import spec_for_device

    spec = spec_for_device(device)
    store = dist.TCPStore("127.0.0.1", 0, world_size, is_master=True,
                          timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S), wait_for_workers=False)
    with tempfile.TemporaryDirectory(prefix="torchparity-world-") as tmp:
        args = {"body": body, "spec": spec, "dtype": str(dtype).replace("torch.", ""),
                "world_size": world_size, "port": store.port, "dir": tmp}
        env = dict(os.environ)
        env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
        env["TORCHPARITY_WORLD_PARENT"] = str(os.getpid())
        procs = []
        try:
            for rank in range(world_size):
                err = open(Path(tmp) / f"rank{rank}.err", "wb")
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", __name__, json.dumps(dict(args, rank=rank))],
                    stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env))
                err.close()
            _wait(procs, timeout_s)
        finally:
            _end(procs)
            del store
        return [_to(v, device) for v in _collect(Path(tmp), procs, world_size)]


def _wait(procs, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            return
        if any(c not in (None, 0) for c in codes):  # one failed: the others may wait forever
            deadline = min(deadline, time.monotonic() + GRACE_S)
        time.sleep(_POLL_S)


def _end(procs) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:  # unkillable (D state): nothing more to do here
            pass


def _collect(tmp: Path, procs, world_size: int) -> List[Any]:
    results, errors = [], []
    for rank in range(world_size):
        path = tmp / f"rank{rank}.pt"
        if not path.exists():
            code = procs[rank].returncode
            why = "hung (killed at the time limit)" if code in (-9, None) else f"exited with {code}"
            tail = _tail(tmp / f"rank{rank}.err")
            errors.append((0, "WorldError", f"rank {rank} {why} without a result{tail}"))
            results.append(None)
            continue
        got = torch.load(path, map_location="cpu", weights_only=False)
        if "error" in got:
            errors.append((1, got["error"][0], f"{got['error'][1]} (rank {rank})"))
            results.append(None)
        else:
            results.append(got["value"])
    if errors:
        errors.sort(key=lambda e: -e[0])  # a rank's own exception explains more than a hang
        _, kind, message = errors[0]
        klass = getattr(builtins, kind, None)
        if kind == "WorldError":
            raise WorldError(message)
        if isinstance(klass, type) and issubclass(klass, Exception):
            raise klass(message)
        raise RuntimeError(f"{kind}: {message}")
    return results


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return (": " + " | ".join(text[-lines:]))[:400] if text else ""


# -- inside a rank -------------------------------------------------------------------------

def _die_with_parent() -> None:
    """SIGKILL this rank when the process that started it dies (Linux prctl)."""
    try:
        import ctypes
        import ctypes.util
        import signal

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if str(os.getppid()) != os.environ.get("TORCHPARITY_WORLD_PARENT", str(os.getppid())):
        os._exit(1)  # the parent died before the signal was armed


def rank_device(adapter, rank: int) -> str:
    """The device a rank uses: one device per rank on a real accelerator (collective
    libraries refuse two ranks on one device), index 0 on the emulated one (each rank is
    its own process with its own emulated device)."""
    if adapter.type == "cpu":
        return "cpu"
    if adapter.emulated:
        return adapter.torch_device
    module = getattr(torch, adapter.type, None)
    if module is not None and hasattr(module, "set_device"):
        module.set_device(rank)
    return f"{adapter.type}:{rank}"


def _rank_main(args: dict) -> int:
    _die_with_parent()
    import torch.distributed as dist

    from ...devices import get_adapter
    from . import distributed

    rank, world_size = args["rank"], args["world_size"]
    out = Path(args["dir"]) / f"rank{rank}.pt"
    try:
        adapter = get_adapter(args["spec"])
        adapter.setup()
        backend = adapter.collective_backend()
        if backend is None:
            raise RuntimeError(f"the device {adapter.spec} has no torch.distributed backend")
        device = rank_device(adapter, rank)
        store = dist.TCPStore("127.0.0.1", args["port"], world_size, is_master=False,
                              timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
        dist.init_process_group(backend, store=store, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    except Exception as exc:
        torch.save({"error": (type(exc).__name__, f"world set-up failed: {_first(exc)}")}, out)
        return 1
    try:
        torch.manual_seed(SEED + rank)
        value = distributed.BODIES[args["body"]](rank, world_size, device, getattr(torch, args["dtype"]))
        torch.save({"value": _to(value, "cpu")}, out)
        code = 0
    except Exception as exc:  # the API's own answer on this device, reported as data
        torch.save({"error": (type(exc).__name__, _first(exc))}, out)
        code = 1
    try:
        dist.destroy_process_group()
    except Exception:
        pass
    return code


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), type(exc).__name__)[:500]


if __name__ == "__main__":
    sys.exit(_rank_main(json.loads(sys.argv[1])))
