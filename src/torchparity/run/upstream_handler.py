"""The "upstream" case kind: one upstream test, run on the CPU and on the device, compared.

Each side runs in a fork of the worker (``upstream_runner.run_side``): the worker has
torch, the device and ``torch.testing._internal`` imported already, so a side costs the
test file's own import, and nothing the test file does at import stays behind. A real
accelerator (npu, cuda) does not survive a fork: there each side runs in a fresh
interpreter (``python -m torchparity.run.upstream_runner``) that sets the device up first. A side is
bounded by the case's ``side_timeout``; a side that overruns it is killed with its whole
process tree (``proctree.kill_tree``), one that dies is a crash of that side. The fork
dies with the worker (parent-death signal), and the worker ends its tree after every case.

The test passes when its device outcome equals its CPU outcome. A test that fails (or is
skipped, or cannot be loaded) on the CPU is "not comparable": recorded as a skip with
the reason, never as a pass or a failure of the device.
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

from ..results.error_rules import classify_chain
from ..results.models import Cause, Status
from . import proctree
from .answer import Answer
from .context import WorkerContext, register

DEFAULT_SIDE_TIMEOUT = 120.0
PASSING = ("pass", "xfail")


def _fork_side(args: Dict[str, Any], timeout: float) -> Dict[str, Any]:
    """run_side(**args) in a fork; its answer, or {"crash"|"timeout"|"error": detail}."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(read_fd)
            faulthandler.disable()  # a crash is this side's answer, not a dump in the log
            proctree.die_with_parent(signal.SIGKILL)
            from .upstream_runner import format_error, run_side

            try:
                answer = run_side(**args)
            except BaseException as exc:  # the file does not import, setUpClass blows up
                answer = {"error": format_error(exc)}
            data = json.dumps(answer, default=str).encode()
            with os.fdopen(write_fd, "wb") as fh:
                fh.write(data)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks: List[bytes] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
    if timed_out:
        proctree.kill_tree(pid)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"timeout": f"did not finish in {timeout:g} s"}
    raw = b"".join(chunks)
    if not raw:
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            return {"crash": f"the test process died: {name}"}
        return {"crash": f"the test process exited ({os.waitstatus_to_exitcode(status)}) "
                         "without an answer"}
    return json.loads(raw)


def _spawn_side(args: Dict[str, Any], timeout: float, device: Optional[str],
                env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """run_side(**args) in a fresh interpreter (``upstream_runner.main``), which sets the
    device up first when ``device`` is given."""
    proc = subprocess.Popen([sys.executable, "-m", "torchparity.run.upstream_runner"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    request = json.dumps({"device": device, "args": args}) + "\n"
    try:
        out, _ = proc.communicate(request.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        proctree.kill_tree(proc.pid)
        proc.communicate()
        return {"timeout": f"did not finish in {timeout:g} s"}
    finally:
        if proc.poll() is None:
            proctree.kill_tree(proc.pid)
            proc.wait()
    lines = [ln for ln in out.decode(errors="replace").splitlines() if ln.strip()]
    if not lines:
        code = proc.returncode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return {"crash": f"the test process died: {name}"}
        return {"crash": f"the test process exited ({code}) without an answer"}
    return json.loads(lines[-1])


def isolation(adapter) -> str:
    """"fork" where the device lives in this process's memory (the CPU, the emulated
    device); "spawn" for a real accelerator, whose runtime does not survive a fork."""
    return "fork" if adapter.type == "cpu" or adapter.emulated else "spawn"


def _prepare(ctx: WorkerContext) -> None:
    """Import torch's test framework once in the worker, so every fork starts with it."""
    if "upstream_ready" in ctx.cache:
        return
    import torch.testing._internal.common_device_type  # noqa: F401
    import torch.testing._internal.common_utils  # noqa: F401

    ctx.cache["upstream_ready"] = True


def _side_args(case: Dict[str, Any], device: str, device_type: str,
               default_device: bool) -> Dict[str, Any]:
    return {"root": case["root"], "rel": case["file"], "cls": case.get("cls"),
            "test": case["test"], "device": device, "device_type": device_type,
            "generic": bool(case.get("generic")), "dtype": case.get("dtype"),
            "default_device": default_device}


@register("upstream")
def handle_upstream(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    _prepare(ctx)
    timeout = float(case.get("side_timeout") or DEFAULT_SIDE_TIMEOUT)
    adapter = ctx.adapter
    started = time.monotonic()
    mode = case.get("isolation") or isolation(adapter)
    if mode == "fork":
        def side(args: Dict[str, Any], device: Optional[str]) -> Dict[str, Any]:
            return _fork_side(args, timeout)
    else:
        def side(args: Dict[str, Any], device: Optional[str]) -> Dict[str, Any]:
            return _spawn_side(args, timeout, device)
    cpu = side(_side_args(case, "cpu", "cpu", False), None)
    dev = None
    if "variants" in cpu and any(r["outcome"] in PASSING for r in cpu["variants"].values()):
        dev = side(_side_args(case, adapter.torch_device, adapter.type, True), adapter.spec)
    payload = compare(cpu, dev, adapter.type, adapter.error_patterns())
    payload["seconds"] = round(time.monotonic() - started, 3)
    return Answer.model_validate(payload).wire()


# -- comparing the two sides -----------------------------------------------------------

def _side_problem(side: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    for key in ("timeout", "crash", "error", "absent"):
        if key in side:
            return key, str(side[key])
    return None


def _row(status: Status, cause: Optional[Cause], detail: str, **extra) -> Dict[str, Any]:
    out = {"status": status.value, "cause": cause.value if cause else None, "detail": detail[:600]}
    out.update(extra)
    return out


def classify_row(row: Dict[str, Any], patterns) -> Tuple[Status, Cause, str]:
    """(status, cause, detail) of a device row: an error is classified on the innermost
    exception of its chain a rule knows (the device's refusal under assert_close's
    "Comparing ..." wrapper), whose text then leads the detail."""
    detail = row.get("detail", "")
    if row["outcome"] == "fail":
        return Status.FAIL, Cause.MISMATCH, detail
    if row["outcome"] == "xpass":
        return Status.FAIL, Cause.EXCEPTION_MISMATCH, detail
    chain = [(row.get("exc_type", ""), detail)] + [(c.get("exc_type", ""), c.get("detail", ""))
                                                   for c in row.get("chain") or []]
    found, i = classify_chain(chain, patterns)
    if i:
        detail = f"{chain[i][1]} (raised within {' '.join(detail.split())[:120]})"
    return (found if found else (Status.ERROR, Cause.DEVICE_ERROR)) + (detail,)


def compare(cpu: Dict[str, Any], dev: Optional[Dict[str, Any]], device_type: str,
            patterns=()) -> Dict[str, Any]:
    """The case's row from the two sides' answers (see the module doc)."""
    problem = _side_problem(cpu)
    if problem is not None:
        kind, text = problem
        return _row(Status.SKIP, Cause.NOT_COMPARABLE, f"not comparable: on the CPU, {kind}: {text}",
                    outcomes={"cpu": kind})
    cpu_rows: Dict[str, Dict[str, str]] = cpu["variants"]
    runnable = {k: r for k, r in cpu_rows.items() if r["outcome"] in PASSING}
    if not runnable:
        key, first = next(iter(cpu_rows.items()))
        why = "skipped" if first["outcome"] == "skip" else "fails"
        cause = Cause.UPSTREAM_SKIP if why == "skipped" else Cause.NOT_COMPARABLE
        label = "" if key == "-" else f" [{key}]"
        return _row(Status.SKIP, cause,
                    f"not comparable: {why} on the CPU too{label}: {first['detail'] or first['outcome']}",
                    outcomes={"cpu": {k: r["outcome"] for k, r in cpu_rows.items()}})
    assert dev is not None
    problem = _side_problem(dev)
    if problem is not None:
        kind, text = problem
        status, cause = {"timeout": (Status.TIMEOUT, Cause.TIMEOUT),
                         "crash": (Status.CRASH, Cause.CRASH),
                         "absent": (Status.SKIP, Cause.UPSTREAM_SKIP)}.get(
            kind, (Status.ERROR, Cause.DEVICE_ERROR))
        return _row(status, cause, f"passes on the CPU; on {device_type}, {kind}: {text}",
                    outcomes={"cpu": "pass", "device": kind})
    dev_rows: Dict[str, Dict[str, str]] = dev["variants"]
    passed: List[str] = []
    bad: List[Tuple[str, Status, Cause, str]] = []
    skipped: List[str] = []
    for key, cpu_row in runnable.items():
        d = dev_rows.get(key)
        label = "" if key == "-" else f"[{key}] "
        if d is None:
            skipped.append(f"{label}not made for {device_type}")
        elif d["outcome"] == cpu_row["outcome"]:
            passed.append(key)
        elif d["outcome"] == "skip":
            skipped.append(f"{label}skipped on {device_type}: {d['detail']}")
        else:
            status, cause, detail = classify_row(d, patterns)
            bad.append((key, status, cause, f"{label}{d['outcome']} on {device_type}: {detail}"))
    others = len(cpu_rows) - len(runnable)
    tail = f"; {others} variant(s) not comparable (fail or skip on the CPU)" if others else ""
    outcomes = {"cpu": {k: r["outcome"] for k, r in cpu_rows.items()},
                "device": {k: r["outcome"] for k, r in dev_rows.items()}}
    if bad:
        order = [Status.FAIL, Status.ERROR, Status.UNSUPPORTED]
        key, status, cause, _ = min(bad, key=lambda b: order.index(b[1]) if b[1] in order else 9)
        text = "; ".join(b[3] for b in bad)
        ok = f" ({len(passed)} variant(s) pass)" if passed else ""
        return _row(status, cause, f"passes on the CPU, not on the device: {text}{ok}{tail}",
                    outcomes=outcomes)
    if passed:
        shown = "" if passed == ["-"] else f" ({', '.join(passed)})"
        extra = f"; {'; '.join(skipped)}" if skipped else ""
        return _row(Status.PASS, None, f"same outcome on the CPU and the device{shown}{extra}{tail}",
                    outcomes=outcomes)
    return _row(Status.SKIP, Cause.UPSTREAM_SKIP,
                f"passes on the CPU; not run on the device: {'; '.join(skipped)}", outcomes=outcomes)
