"""Batched replays for ``explain-skips`` on a device that lives in this process's memory
(the CPU, the emulated device): one test file is imported once per side for all of its
listed tests, instead of once per test and side.

A long-lived process (``python -m torchparity.app.explain_skips_replay``, the *zygote*)
imports torch, the device and torch's test framework once; for every request (one test
file, one side, its tests) it forks a child that imports the file and runs the tests one
by one, each under an alarm of ``per_test`` seconds, writing each outcome as soon as it has
it. The zygote watches the child: one that overruns the alarm by far is killed with its
process tree and one that dies is a crash, both of the test it was running; a fresh child
goes on with the tests after it. The fork is of the emulated device's own process: a real
accelerator does not survive a fork, so hardware takes the worker pool's ``upstream``
case kind instead (``app/explain_skips.py``).

An Ascend test file imports ``torch_npu``: with ``emu:<profile>`` the zygote runs under
torchparity's stand-in (``npu_testing.environ``), so the file imports and its tests run
on the emulated device unchanged. For the CPU side, ``instantiate_device_type_tests`` is
made to instantiate the generic classes for the CPU (Ascend's files ask for the NPU only),
so that a test failing on the device can be told apart from one failing everywhere.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, Callable, Dict, List, Optional

# names a generic test's class carries for each side: the vendor's list says PRIVATEUSE1,
# the stand-in's device type makes NPU classes where a file does not say only_for
DEVICE_SUFFIXES = ("PRIVATEUSE1", "NPU")
CPU_SUFFIXES = ("CPU",)
DEVICE_NAMES = ("npu", "privateuse1")


class TestOverran(Exception):
    """Raised in a replayed test by its alarm."""


# -- the child: one file, one side ----------------------------------------------------------

class _Outcomes(unittest.TestResult):
    def __init__(self) -> None:
        super().__init__()
        self.row: Optional[Dict[str, str]] = None
        self.sub_failed = False

    def _set(self, outcome: str, detail: str = "", exc_type: str = "", inner=None) -> None:
        if self.row is not None and self.row["outcome"] in ("fail", "error"):
            return  # the first failure (of a subtest) is the test's
        self.row = {"outcome": outcome, "detail": _short(detail)}
        if exc_type:
            self.row["exc_type"] = exc_type
        if inner:  # what it was raised from or while handling: the device's own error, kept whole
            self.row["chain"] = [{"exc_type": r["exc_type"], "detail": _short(r["detail"])} for r in inner]

    def _exc(self, err, outcome: str) -> None:
        from ..run.upstream_runner import inner_errors

        exc_type, value, _ = err
        name = getattr(exc_type, "__name__", str(exc_type))
        if name == TestOverran.__name__:
            outcome = "timeout"
        self._set(outcome, f"{name}: {value}".strip(), name, inner_errors(value))

    def addSuccess(self, test) -> None:
        if self.row is None:
            self._set("pass")

    def addFailure(self, test, err) -> None:
        self._exc(err, "fail")

    def addError(self, test, err) -> None:
        self._exc(err, "error")

    def addSkip(self, test, reason) -> None:
        self._set("skip", str(reason))

    def addExpectedFailure(self, test, err) -> None:
        self._set("xfail")

    def addUnexpectedSuccess(self, test) -> None:
        self._set("xpass", "passed, but the test is marked expectedFailure")

    def addSubTest(self, test, subtest, err) -> None:
        if err is not None:
            self._exc(err, "fail" if issubclass(err[0], test.failureException) else "error")


def _short(text: str, limit: int = 400) -> str:
    text = text.split("\n\nTo execute this test, run the following")[0].strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _only_for_cpu() -> None:
    """Make ``instantiate_device_type_tests`` instantiate for the CPU whatever the file asks."""
    import torch.testing._internal.common_device_type as cdt

    original = cdt.instantiate_device_type_tests
    if getattr(original, "_torchparity_cpu", False):
        return

    def instantiate(generic, scope, except_for=None, only_for=None, **kwargs):
        # the stand-in's torch_npu.testing excludes the CPU through the environment
        keys = ("PYTORCH_TESTING_DEVICE_EXCEPT_FOR", "PYTORCH_TESTING_DEVICE_ONLY_FOR",
                "PYTORCH_TESTING_DEVICE_FOR_CUSTOM")
        saved = {k: os.environ.pop(k) for k in keys if k in os.environ}
        try:
            return original(generic, scope, only_for=["cpu"], **kwargs)
        finally:
            os.environ.update(saved)

    instantiate._torchparity_cpu = True
    cdt.instantiate_device_type_tests = instantiate


def _find(mod, test: Dict[str, Any], side: str):
    """(class, method name) of a listed test on this side, or (None, why)."""
    from ..run.upstream_runner import parametrized

    outer, _, inner = test["cls"].rpartition(".")
    suffixes = (CPU_SUFFIXES if side == "cpu" else DEVICE_SUFFIXES) if test["generic"] else ("",)
    klass = None
    for suffix in suffixes:
        obj = mod
        try:
            for part in ([*outer.split(".")] if outer else []) + [inner + suffix]:
                obj = getattr(obj, part)
        except AttributeError:
            continue
        klass = obj
        break
    if klass is None:
        made = sorted(n for n in vars(mod) if n.startswith(inner) and n != inner)
        return None, (f"no class {inner}{'/'.join(suffixes)} in the file (made: {', '.join(made[:6]) or 'none'})")
    names = test["cpu_names"] if side == "cpu" else test["names"]
    for name in names:
        if callable(getattr(klass, name, None)):
            return klass, name
    if not test["generic"]:
        copies = parametrized(klass, test["names"][0])
        if copies:
            return klass, sorted(copies.values())[0]
    elif test.get("head"):
        copies = renamed_copies(klass, test["head"], test.get("tail", ""),
                                CPU_NAMES if side == "cpu" else DEVICE_NAMES)
        if copies:
            return klass, copies
    return None, f"{klass.__name__} has no test {names[0]}"


CPU_NAMES = ("cpu",)


def renamed_copies(klass, head: str, tail: str, devices) -> List[str]:
    """The copies of generic test ``head`` that ``@parametrize`` made since the list named
    it (``test_addcmul_npu_int16`` became ``test_addcmul_use_cpu_scalar_True_npu_int16`` and
    ``..._False_...``): methods ``head_<params>_<device><tail>`` whose function is ``head``."""
    out = []
    for n in sorted(dir(klass)):
        if n.startswith(head + "_") and any(n.endswith(f"_{d}{tail}") for d in devices):
            fn = getattr(klass, n, None)
            if callable(fn) and getattr(fn, "__name__", None) == head:
                out.append(n)
    return out


def _run_one(mod, test: Dict[str, Any], side: str, torch_device: str, per_test: float) -> Dict[str, str]:
    import torch

    klass, name = _find(mod, test, side)
    if klass is None:
        return {"outcome": "absent", "detail": name}
    names = name if isinstance(name, list) else [name]  # a renamed test: all its copies
    result = _Outcomes()

    def overran(signum, frame):
        raise TestOverran(f"did not finish in {per_test:g} s")

    old = signal.signal(signal.SIGALRM, overran)
    signal.setitimer(signal.ITIMER_REAL, per_test)
    default = not test["generic"] and side == "device"
    try:
        if default:
            torch.set_default_device(torch_device)
        unittest.TestSuite([klass(n) for n in names]).run(result)
    except TestOverran as exc:  # in a fixture outside the test
        result._set("timeout", str(exc), TestOverran.__name__)
    except BaseException as exc:  # noqa: BLE001 - the test's own problem is its answer
        result._set("error", f"{type(exc).__name__}: {exc}", type(exc).__name__)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if default:
            torch.set_default_device(None)
    row = result.row or {"outcome": "error", "detail": "the test did not run"}
    row["method"] = ", ".join(f"{klass.__name__}.{n}" for n in names)
    if isinstance(name, list):
        row["renamed"] = names
    return row


def _child(request: Dict[str, Any], start: int, write: Callable[[Dict[str, Any]], None]) -> None:
    import torch

    from ..run.upstream_runner import load_test_module

    torch.set_num_threads(1)
    side = request["side"]
    if side == "cpu":
        _only_for_cpu()
    began = time.monotonic()
    try:
        mod = load_test_module(request["root"], request["rel"])
    except BaseException as exc:  # noqa: BLE001 - the file's own failure to import
        write({"file_error": _short(f"{type(exc).__name__}: {exc}"), "load_s": round(time.monotonic() - began, 2)})
        return
    write({"loaded": True, "load_s": round(time.monotonic() - began, 2)})
    for i, test in enumerate(request["tests"][start:], start):
        write({"start": i})
        began = time.monotonic()
        row = _run_one(mod, test, side, request["torch_device"], request["per_test"])
        row["seconds"] = round(time.monotonic() - began, 3)  # the test's own time (the store keeps it)
        write({"index": i, "row": row})


def _fork_child(request: Dict[str, Any], start: int):
    from ..run import proctree

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(read_fd)
            proctree.die_with_parent(signal.SIGKILL)
            out = os.fdopen(write_fd, "w", encoding="utf-8")
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)

            def write(obj):
                out.write(json.dumps(obj, default=str) + "\n")
                out.flush()
            _child(request, start, write)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _serve(request: Dict[str, Any], emit: Callable[[Dict[str, Any]], None]) -> None:
    """Run one request in forked children, restarting after a test that kills or hangs one."""
    from ..run import proctree

    tests = request["tests"]
    per_test, load_timeout = float(request["per_test"]), float(request["load_timeout"])
    start = 0
    while start < len(tests):
        pid, fd = _fork_child(request, start)
        buf, current, loaded, done_to, load_s = b"", None, False, start, None
        deadline = time.monotonic() + load_timeout
        problem = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                problem = "timeout"
                break
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                if "file_error" in msg:
                    for i in range(start, len(tests)):
                        emit({"index": i, "row": {"outcome": "file_error", "detail": msg["file_error"],
                                                  "load_s": msg.get("load_s")}})
                    done_to = len(tests)
                elif "loaded" in msg:
                    loaded, load_s = True, msg.get("load_s")
                elif "start" in msg:
                    current = msg["start"]
                    deadline = time.monotonic() + per_test * 2 + 10  # the alarm is the first bound
                elif "index" in msg:
                    msg["row"]["load_s"] = load_s  # the file's import, shared by its tests
                    emit(msg)
                    done_to = msg["index"] + 1
                    current = None
        if problem:
            proctree.kill_tree(pid)
        os.close(fd)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = 0
        if done_to >= len(tests):
            return
        if not loaded:  # the import itself hung or died: the whole file's answer
            why = (f"importing the file did not finish in {load_timeout:g} s" if problem
                   else f"the process died importing the file ({_status(status)})")
            for i in range(done_to, len(tests)):
                emit({"index": i, "row": {"outcome": "file_error", "detail": why}})
            return
        stuck = current if current is not None else done_to
        why = (f"did not finish in {per_test * 2 + 10:g} s (the process was ended)" if problem
               else f"the test process died: {_status(status)}")
        emit({"index": stuck, "row": {"outcome": "timeout" if problem else "crash", "detail": why}})
        start = stuck + 1


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        try:
            return signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.waitstatus_to_exitcode(status)}"


def zygote_main() -> int:
    """Read {"device": spec} then one request per line; write {"id", ...} lines."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    first = json.loads(sys.stdin.readline())
    import warnings

    warnings.simplefilter("ignore")
    import torch

    from .. import npu_testing

    if os.environ.get(npu_testing.ENV_VAR):
        import torch_npu  # noqa: F401 - the stand-in: it sets the emulated device up
    else:
        from ..devices import get_adapter

        get_adapter(first["device"]).setup()
    import torch.testing._internal.common_device_type  # noqa: F401
    import torch.testing._internal.common_methods_invocations  # noqa: F401
    import torch.testing._internal.common_utils  # noqa: F401

    del torch
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)

        def emit(msg, rid=request["id"]):
            msg["id"] = rid
            proto.write(json.dumps(msg, default=str) + "\n")
            proto.flush()
        _serve(request, emit)
        emit({"done": True})
    return 0


# -- the parent side ----------------------------------------------------------------------------

def zygote_env(spec: str, worker_env: Dict[str, str]) -> Dict[str, str]:
    """The zygote's environment: the device's worker environment, and for ``emu:<profile>``
    torchparity's torch_npu stand-in (so Ascend's files import)."""
    env = dict(os.environ)
    env.update(worker_env or {})
    if spec.startswith("emu:"):
        from .. import npu_testing

        if npu_testing.real_torch_npu() is None:
            env = npu_testing.environ(spec, env)
    return env


class Zygote:
    """One zygote process. It starts at once (``Popen``) and is waited for at its first
    request, so that its start (torch, the device, the test framework: seconds) overlaps
    whatever the caller does meanwhile."""

    def __init__(self, spec: str, env: Dict[str, str], ready_timeout: float = 600.0, wait: bool = True):
        self.proc = subprocess.Popen([sys.executable, "-m", "torchparity.app.explain_skips_replay"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True, start_new_session=True)
        self.buf = b""  # read from the raw pipe: select() cannot see lines a file object has buffered
        self.proc.stdin.write(json.dumps({"device": spec}) + "\n")
        self.proc.stdin.flush()
        self.timeout = ready_timeout
        self.ready = False
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        if self.ready:
            return
        msg = self._read(self.timeout)
        if not msg or not msg.get("ready"):
            self.close()
            raise RuntimeError("the replay process did not start")
        self.ready = True

    def _read(self, timeout: float) -> Optional[Dict[str, Any]]:
        """The next line, or None when none came in ``timeout`` or the zygote is gone."""
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def run(self, request: Dict[str, Any], on_row: Callable[[int, Dict[str, str]], None],
            timeout: float) -> bool:
        """Send one request; on_row(index, row) per test; False if the zygote is lost."""
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(max(1.0, deadline - time.monotonic()))
            if msg is None:
                return False
            if msg.get("done"):
                return True
            if "index" in msg:
                on_row(msg["index"], msg["row"])

    def close(self) -> None:
        from ..run import proctree

        if self.proc.poll() is None:
            proctree.kill_tree(self.proc.pid)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


class ZygotePool:
    """``jobs`` zygotes kept for several :func:`run_requests` calls (the device round and
    the CPU round of explain-skips share them); :meth:`start` spawns them without waiting."""

    def __init__(self, spec: str, env: Dict[str, str], jobs: int):
        self.spec, self.env = spec, env
        self.slots: List[Optional[Zygote]] = [None] * max(1, jobs)

    def start(self) -> "ZygotePool":
        for i, z in enumerate(self.slots):
            if z is None:
                try:
                    self.slots[i] = Zygote(self.spec, self.env, wait=False)
                except OSError:
                    self.slots[i] = None
        return self

    def get(self, i: int) -> Zygote:
        """The ready zygote of slot ``i`` (a fresh one when it has none); RuntimeError when
        it does not start."""
        z = self.slots[i]
        if z is None:
            z = self.slots[i] = Zygote(self.spec, self.env, wait=False)
        try:
            z.wait_ready()
        except RuntimeError:
            self.slots[i] = None
            raise
        return z

    def drop(self, i: int) -> None:
        z, self.slots[i] = self.slots[i], None
        if z is not None:
            z.close()

    def close(self) -> None:
        for i in range(len(self.slots)):
            self.drop(i)


def run_requests(requests: List[Dict[str, Any]], spec: str, env: Dict[str, str], jobs: int,
                 on_row: Callable[[Dict[str, Any], int, Dict[str, str]], None],
                 pool: Optional[ZygotePool] = None) -> None:
    """Every request on ``jobs`` zygotes (those of ``pool``, which stays open, or fresh
    ones closed at the end); on_row(request, index, row) as rows come (from threads, one
    at a time). A test left without a row (a lost zygote) gets a crash row."""
    lock = threading.Lock()
    queue = list(requests)
    own = pool is None
    zygotes = pool if pool is not None else ZygotePool(spec, env, jobs)

    def worker(slot: int) -> None:
        while True:
            with lock:
                if not queue:
                    return
                request = queue.pop(0)
            got = set()

            def row(i, r, req=request, got=got):
                got.add(i)
                with lock:
                    on_row(req, i, r)
            try:
                zygote = zygotes.get(slot)
            except RuntimeError as exc:
                for i in range(len(request["tests"])):
                    row(i, {"outcome": "crash", "detail": str(exc)})
                continue
            budget = request["load_timeout"] + len(request["tests"]) * (request["per_test"] * 2 + 12)
            if not zygote.run(request, row, budget):
                zygotes.drop(slot)
                for i in range(len(request["tests"])):
                    if i not in got:
                        row(i, {"outcome": "crash", "detail": "the replay process was lost"})

    try:
        threads = [threading.Thread(target=worker, args=(slot,), daemon=True)
                   for slot in range(len(zygotes.slots))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        if own:
            zygotes.close()


if __name__ == "__main__":
    sys.exit(zygote_main())
