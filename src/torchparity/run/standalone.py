"""One worker case judged in this process: what the test files of ``gentest`` run.

A test file that ``torchparity gentest`` writes for a generated source (OpInfo, module,
optim, distribution, the code-block sources, distributed worlds, upstream replays) holds
each case as data: the worker case ``scenarios.sources.case_for`` makes for ``check``
(the source's own route: the ``opinfo`` kind runs the op_db entry's samples, ``source``
re-makes the scenario by its source and runs it, ``upstream`` replays the test; a
code-block case's function is in the file itself, as code, and runs in place of the
source's). Each test hands its case to :func:`judge`, which runs it through the same
handler a ``check`` worker runs, on the device of the test session: the same CPU
reference, the same comparison and tolerances (``judge.standards``), the same causes. So a test's outcome is ``check``'s row,
and :func:`expect` turns it into the test's assertion.

The device is the test session's: ``pytest --torchparity-device SPEC`` (which sets
``TORCHPARITY_DEVICE``) or that variable; see :func:`device_spec`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

ENV = "TORCHPARITY_DEVICE"
# a file that receives one JSON line per judged test (benchmarks/gentest_coverage.py)
LOG_ENV = "TORCHPARITY_GENTEST_LOG"
# the test tree an upstream replay's test lives in (the tree ``check --tests`` read): a
# generated file names no folder of the machine it was made on
TESTS_ENV = "TORCHPARITY_TESTS"
FROM_ENV = "$" + TESTS_ENV
_CONTEXT: Dict[str, Any] = {}


class NoDevice(Exception):
    """No device named for the test session (and no default that can work here)."""


def no_device_message(default: Optional[str]) -> str:
    return (f"no device for these tests: set {ENV}=SPEC or run pytest --torchparity-device SPEC "
            f"(cpu, npu[:N], cuda[:N], emu:ascend-a2, ...)"
            + ("; the default npu needs torch_npu, which is not installed" if default == "npu" else ""))


def device_spec(default: Optional[str] = None) -> str:
    """The spec of the session's device: ``TORCHPARITY_DEVICE``, else ``default`` where it
    can work here (``npu`` only with torch_npu installed), else :class:`NoDevice`."""
    spec = (os.environ.get(ENV) or "").strip()
    if spec:
        return spec
    if default and (default != "npu" or importlib.util.find_spec("torch_npu") is not None):
        return default
    raise NoDevice(no_device_message(default))


def session_device(default: Optional[str], module: str = "__main__") -> str:
    """:func:`device_spec` for a test file's import, or :func:`exit_without_device`."""
    try:
        return device_spec(default)
    except NoDevice:
        pass  # outside the handler: no exception chain in the message
    exit_without_device(default, module)
    raise AssertionError("unreachable")


def exit_without_device(default: Optional[str], module: str = "__main__") -> None:
    """For a test file's import (``module``: its ``__name__``): one line naming what to set
    instead of a traceback. Run as a script, on stderr with exit status 2; collected by
    pytest, as the file's collection error (``pytest.fail(pytrace=False)``: the line only)."""
    msg = no_device_message(default)
    if module != "__main__" and "pytest" in sys.modules:
        import pytest

        pytest.fail(msg, pytrace=False)
    sys.stderr.write(msg + "\n")
    raise SystemExit(2)


def context(spec: Optional[str] = None):
    """The worker context of this process's device (set up once)."""
    spec = spec or device_spec()
    ctx = _CONTEXT.get(spec)
    if ctx is None:
        from ..devices import get_adapter
        from .handlers import WorkerContext

        os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
        adapter = get_adapter(spec)
        reason = adapter.unavailable_reason()
        if reason:
            raise NoDevice(f"{ENV}={spec}: {reason}")
        adapter.setup()
        ctx = _CONTEXT[spec] = WorkerContext(adapter=adapter)
    return ctx


@dataclass
class Outcome:
    """A case's answer: check's row (status, cause, detail)."""

    status: str
    cause: Optional[str]
    detail: str

    def __str__(self) -> str:
        return f"{self.status}{f' ({self.cause})' if self.cause else ''}: {self.detail}"


def portable(case: Dict[str, Any]) -> Tuple[Dict[str, Any], Optional[str]]:
    """A worker case as a generated file holds it: an upstream replay's test tree becomes
    ``$TORCHPARITY_TESTS`` (read when the test runs); also the folder replaced (None when
    the case names none)."""
    root = case.get("root") if case.get("kind") == "upstream" else None
    if not root:
        return dict(case), None
    return dict(case, root=FROM_ENV), str(root)


def missing_tree(case: Dict[str, Any]) -> Optional[str]:
    """Why a case cannot run here (its test tree is not named), or None."""
    if case.get("root") == FROM_ENV and not os.environ.get(TESTS_ENV):
        return (f"an upstream test: set {TESTS_ENV}=DIR to the test tree it comes from "
                f"({case.get('file', '')})")
    return None


def located(case: Dict[str, Any]) -> Dict[str, Any]:
    """The case with ``$TORCHPARITY_TESTS`` read (see :func:`portable`)."""
    if case.get("root") == FROM_ENV:
        return dict(case, root=os.environ.get(TESTS_ENV, ""))
    return case


def judge(case: Dict[str, Any], dtype: str, sample: Optional[int] = None,
          spec: Optional[str] = None, body: Optional[Callable[..., Any]] = None,
          kwargs: Optional[Dict[str, Any]] = None, quiet: bool = False) -> Outcome:
    """Run worker case ``case`` in ``dtype`` (only OpInfo sample ``sample`` when given) on
    the session's device, as a check worker does; its row. ``body``: the file's own copy
    of a code-block case's function, run (with ``kwargs``) in place of the source's."""
    from .answer import Answer
    from .handlers import handle

    ctx = context(spec)
    run = dict(located(case), dtype=dtype, footprint=False)
    if sample is not None:
        run["sample"] = int(sample)
    if body is not None:
        from ..scenarios.sources.base import body_call

        run["fn"] = body_call(body, kwargs or {}, quiet)
    answer = Answer.model_validate(handle(ctx, run))
    return Outcome(status=str(answer.status), cause=answer.cause, detail=answer.detail)


def limits_apply(recorded: Optional[str], spec: str) -> bool:
    """Whether limits recorded by check on device ``recorded`` hold for ``spec``: the same
    emulated profile, or a real device of the same type (``npu:0`` and ``npu:1``)."""
    if not recorded:
        return False
    if recorded == spec:
        return True
    from ..devices import get_adapter

    a, b = get_adapter(recorded), get_adapter(spec)
    return not a.emulated and not b.emulated and a.type == b.type


# statuses of check's row that mean the device refuses (part of) the case
REFUSED = ("unsupported", "partial")


def expect(test, entry: Dict[str, Any], dtype: str, sample: Optional[int] = None,
           body: Optional[Callable[..., Any]] = None) -> Outcome:
    """Judge one case of a generated test file and assert it is check's answer (``body``:
    the file's own code of the case, see :func:`judge`; its keyword arguments are the
    entry's ``kwargs``).

    Without a recorded limit the case must pass (``skip`` where check cannot compare either:
    not comparable, the CPU refuses the sample too). With one recorded for this device
    (``entry["limits"][dtype]``: status, cause), the device must refuse as recorded: the
    same cause; a whole-case refusal (``unsupported``) that now passes fails the test
    (the limit no longer holds), while for a ``partial`` row a single sample may pass.
    """
    spec = device_spec()
    where = f"{entry['case'].get('api', '')} [{entry['id']}, {dtype}" + (
        f", sample {sample}]" if sample is not None else "]")
    why = missing_tree(entry["case"])
    if why:  # not run: the harness lacks a setting, never an answer about the device
        test.skipTest(f"{where}: {why}"[:500])
    out = judge(entry["case"], dtype, sample, spec, body=body, kwargs=entry.get("kwargs"),
                quiet=bool(entry.get("quiet")))
    limits = entry.get("limits", {}) if limits_apply(entry.get("limits_device"), spec) else {}
    limit = limits.get(dtype)
    verdict, message = _decide(out, limit, sample)
    _log(entry, dtype, sample, spec, out, verdict)
    if verdict == "skip":
        test.skipTest(f"{where}: {message}"[:500])
    if verdict == "fail":
        test.fail(f"{where}: {message}"[:2000])
    return out


def _decide(out: Outcome, limit: Optional[Dict[str, str]], sample: Optional[int]):
    """(pass | refused | skip | fail, message) of one judged case (see :func:`expect`)."""
    if out.status == "skip":
        return "skip", f"not judged, as in check: {out.detail}"
    if sample is not None and out.status == "unsupported" and out.cause == "op_limit" \
            and (not limit or limit.get("cause") != "op_limit"):
        # this sample raises on the CPU too: the op's own limit, not a device question
        return "skip", f"the CPU refuses this sample too: {out.detail}"
    if limit:
        if out.status in REFUSED and out.cause == limit.get("cause"):
            return "refused", ""  # refused as check recorded it on this device
        if out.status == "pass" and limit.get("status") == "partial" and sample is not None:
            return "pass", ""  # a partial row: some samples run
        return "fail", (f"check recorded {limit.get('status')} ({limit.get('cause')}) on this "
                        f"device, it now gives {out}")
    if out.status != "pass":
        return "fail", str(out)
    return "pass", ""


def _log(entry: Dict[str, Any], dtype: str, sample: Optional[int], spec: str, out: Outcome,
         verdict: str) -> None:
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    line = {"api": entry.get("api") or entry["case"].get("api"), "id": entry["id"], "dtype": dtype, "sample": sample,
            "device": spec, "status": out.status, "cause": out.cause, "verdict": verdict,
            "detail": out.detail[:300]}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


def samples_of(case: Dict[str, Any], dtype: str) -> int:
    """How many samples a worker case is judged by, one test each (an ``opinfo`` case:
    its entry's samples); 0 for a case judged whole."""
    return opinfo_samples(case, dtype) if case.get("kind") == "opinfo" else 0


def opinfo_samples(case: Dict[str, Any], dtype: str) -> int:
    """How many samples the ``opinfo`` case makes in ``dtype`` (at most its
    ``max_samples``); 0 where OpInfo makes none (the case is then judged whole)."""
    import torch

    from ..scenarios import opinfo as oi
    from .opinfo_handler import wants_grads

    e = oi.OpEntry(api=case["api"], key=case["key"], db=case.get("db", "op_db"),
                   call=case.get("call", "op"))
    op = e.opinfo
    dt = getattr(torch, dtype)
    grads = bool(case.get("grads", True)) and wants_grads(op, dt, e.call, "cpu")
    try:
        n = len(oi.make_samples(op, dt, requires_grad=grads, reference=bool(case.get("reference"))))
    except Exception:  # the case reports it itself (skip: OpInfo cannot make samples)
        return 0
    limit = case.get("max_samples")
    return min(n, int(limit)) if limit else n
