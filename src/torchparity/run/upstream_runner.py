"""One side of an upstream test replay: import the test file, run one test, say how it went.

Runs in a disposable process (a fork of the worker, see ``upstream_handler``), once for
the CPU and once for the device under test, so what the test file does at import
(``instantiate_device_type_tests``, default dtypes, globals) never reaches the worker.

- A **device-generic** test (its class goes through ``instantiate_device_type_tests``)
  runs in the class torch made for the side's device type: ``TestFooCPU`` on the CPU,
  ``TestFooPRIVATEUSE1`` for npu and the emulated device, ``TestFooCUDA``; every variant
  torch made of it (``test_x_npu_float32``, ``test_x_npu_float64``, ``@ops`` variants)
  runs, or only the variants of one dtype.
- Any **other** test runs as written; on the device side the device is the default
  device (``torch.set_default_device``) first.

Outcomes per variant: ``pass``, ``fail`` (an assertion), ``error`` (an exception),
``skip`` (with the reason), ``xfail`` (an expected failure happened), ``xpass``.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
import traceback
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

DETAIL_CHARS = 400
# common_utils.TestCase appends how to rerun the test to every failure message
_RERUN_HINT = re.compile(r"\n+To execute this test, run the following.*", re.S)


def short(text: str) -> str:
    """A message on one line, without the rerun hint, at most DETAIL_CHARS."""
    text = _RERUN_HINT.sub("", str(text))
    return " ".join(text.split())[:DETAIL_CHARS]


def inner_errors(value: BaseException) -> List[Dict[str, str]]:
    """The exceptions a test's exception was raised from or while handling, outermost
    first and without itself (``results.error_rules.exception_chain``): assert_close's
    "Comparing ... resulted in the unexpected exception above" keeps the device's own
    error here, for the row to be classified on it."""
    from ..results.error_rules import exception_chain

    return [{"exc_type": type(e).__name__, "detail": short(f"{type(e).__name__}: {e}")}
            for e in exception_chain(value)[1:]] if isinstance(value, BaseException) else []


CLASS_SUFFIX = {"cpu": "CPU", "cuda": "CUDA", "mps": "MPS", "xpu": "XPU", "meta": "META"}


def _privateuse1_name() -> Optional[str]:
    import torch

    try:
        name = torch._C._get_privateuse1_backend_name()
    except Exception:
        return None
    return None if name == "privateuse1" and not hasattr(torch, "privateuse1") else name


def _ensure_privateuse1_base() -> None:
    """The device-type list of common_device_type is fixed when it is first imported: if
    that happened before the backend was registered (in the worker), add it now."""
    import torch.testing._internal.common_device_type as cdt

    available = getattr(cdt, "_is_privateuse1_backend_available", lambda: False)()
    if available and cdt.PrivateUse1TestBase not in cdt.device_type_test_bases:
        cdt.device_type_test_bases.append(cdt.PrivateUse1TestBase)


def load_test_module(root: str, rel: str):
    """Import ``root/rel`` as a module (not ``__main__``: its ``run_tests()`` stays put)."""
    path = Path(root) / rel
    for folder in (str(path.parent), str(root)):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    os.chdir(path.parent)
    name = rel[:-3].replace("/", ".") if rel.endswith(".py") else rel.replace("/", ".")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {rel}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def device_names(device_type: str) -> Tuple[str, List[str]]:
    """(class suffix, the names a test method may carry for it) for a device type."""
    pu1 = _privateuse1_name()
    if device_type in CLASS_SUFFIX:
        return CLASS_SUFFIX[device_type], [device_type]
    if pu1 is not None and device_type in (pu1, "privateuse1"):
        return "PRIVATEUSE1", sorted({pu1, "privateuse1"})
    return device_type.upper(), [device_type]


def variants(klass: type, test: str, names: List[str]) -> Dict[str, str]:
    """variant key ("float32", "add_float32", "-") -> method name, for the instantiated
    copies of ``test`` in ``klass``."""
    alt = "|".join(re.escape(n) for n in names)
    pattern = re.compile(rf"^{re.escape(test)}(?:_(?P<op>.+?))?_(?:{alt})(?:_(?P<rest>.+))?$")
    out: Dict[str, str] = {}
    for attr in sorted(dir(klass)):
        m = pattern.match(attr)
        fn = getattr(klass, attr, None) if m else None
        # the copies wrap the generic test (keep its __name__): test_mm_other_npu is no
        # variant of test_mm
        if m and callable(fn) and getattr(fn, "__name__", test) == test:
            key = "_".join(p for p in (m.group("op"), m.group("rest")) if p) or "-"
            out[key] = attr
    return out


def parametrized(klass: type, test: str) -> Dict[str, str]:
    """variant key -> method name for the copies ``@parametrize`` made of ``test`` (each
    wraps the original, so it keeps its ``__name__``)."""
    out: Dict[str, str] = {}
    for attr in sorted(dir(klass)):
        if attr.startswith(test + "_"):
            fn = getattr(klass, attr, None)
            if callable(fn) and getattr(fn, "__name__", None) == test:
                out[attr[len(test) + 1:]] = attr
    return out


class _Result(unittest.TestResult):
    def __init__(self) -> None:
        super().__init__()
        self.outcomes: Dict[str, Dict[str, str]] = {}

    @staticmethod
    def _name(test) -> str:
        return getattr(test, "_testMethodName", str(test))

    def _set(self, test, outcome: str, detail: str = "", exc_type: str = "",
             inner: Optional[List[Dict[str, str]]] = None) -> None:
        row: Dict[str, Any] = {"outcome": outcome, "detail": short(detail)}
        if exc_type:
            row["exc_type"] = exc_type
        if inner:
            row["chain"] = inner
        self.outcomes[self._name(test)] = row

    def addSuccess(self, test) -> None:
        self._set(test, "pass")

    def _exc(self, test, err, outcome: str) -> None:
        exc_type, value, _ = err
        message = f"{getattr(exc_type, '__name__', exc_type)}: {value}".strip()
        self._set(test, outcome, message, getattr(exc_type, "__name__", str(exc_type)), inner_errors(value))

    def addFailure(self, test, err) -> None:
        self._exc(test, err, "fail")

    def addError(self, test, err) -> None:
        # a setUpClass error is reported against a _ErrorHolder, not a test
        self._exc(test, err, "error")

    def addSkip(self, test, reason) -> None:
        self._set(test, "skip", str(reason))

    def addExpectedFailure(self, test, err) -> None:
        self._set(test, "xfail")

    def addUnexpectedSuccess(self, test) -> None:
        self._set(test, "xpass", "passed, but the test is marked expectedFailure")

    def addSubTest(self, test, subtest, err) -> None:
        if err is not None:
            outcome = "fail" if issubclass(err[0], test.failureException) else "error"
            self._exc(test, err, outcome)


def _lookup(mod, dotted: str):
    obj = mod
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def run_side(root: str, rel: str, cls: Optional[str], test: str, device: str,
             device_type: str, generic: bool, dtype: Optional[str] = None,
             default_device: bool = False) -> Dict[str, Any]:
    """Run one upstream test on one side; returns {"variants": {key: outcome row}} or
    {"absent": why} (nothing of the test exists for that device)."""
    import torch

    torch.set_num_threads(1)  # a fork of a process with a thread pool: stay single-threaded
    if generic:
        _ensure_privateuse1_base()
    mod = load_test_module(root, rel)
    if cls is None:  # a module-level test function (pytest style)
        return _run_function(mod, test, device, default_device)
    if generic:
        suffix, names = device_names(device_type)
        top, _, inner = cls.partition(".")
        name = top + suffix + (f".{inner}" if inner else "")
        try:
            klass = _lookup(mod, name)
        except AttributeError:
            made = sorted(n for n in vars(mod) if n.startswith(top) and n != top)
            return {"absent": f"no class {name}: instantiate_device_type_tests made "
                              f"{', '.join(made) or 'none'} for this file"}
        found = variants(klass, test, names)
        if dtype not in (None, "-"):
            found = {k: v for k, v in found.items() if k == dtype or k.endswith("_" + dtype)}
        if not found:
            return {"absent": f"{name} has no variant of {test}"
                              + (f" in {dtype}" if dtype not in (None, "-") else "")}
    else:
        try:
            klass = _lookup(mod, cls)
        except AttributeError:
            return {"absent": f"no class {cls} in {rel}"}
        if not (isinstance(klass, type) and issubclass(klass, unittest.TestCase)):
            return _run_plain_class(klass, test, device, default_device)  # pytest style
        if callable(getattr(klass, test, None)):
            found = {"-": test}
        else:  # instantiate_parametrized_tests replaced it by test_x_<params> copies
            found = parametrized(klass, test)
            if not found:
                return {"absent": f"{cls} has no method {test}"}
        if default_device:
            torch.set_default_device(device)
    suite = unittest.TestSuite(klass(method) for method in found.values())
    result = _Result()
    suite.run(result)
    rows: Dict[str, Dict[str, str]] = {}
    for key, method in found.items():
        rows[key] = result.outcomes.get(method) or _class_error(result)
    return {"variants": rows, "class": klass.__name__}


def _class_error(result: _Result) -> Dict[str, str]:
    """A variant without an outcome: setUpClass (or the suite) failed before it ran."""
    for holder, text in result.errors:
        if not hasattr(holder, "_testMethodName"):
            last = [ln for ln in text.strip().splitlines() if ln.strip()][-1:]
            return {"outcome": "error", "detail": short(last[0] if last else text)}
    for holder, reason in result.skipped:
        if not hasattr(holder, "_testMethodName"):
            return {"outcome": "skip", "detail": short(reason)}
    return {"outcome": "error", "detail": "the test did not run"}


def _run_function(mod, test: str, device: str, default_device: bool) -> Dict[str, Any]:
    fn = getattr(mod, test, None)
    if not callable(fn):
        return {"absent": f"no function {test}"}
    return _call(fn, test, device, default_device)


def _run_plain_class(klass, test: str, device: str, default_device: bool) -> Dict[str, Any]:
    """A pytest-style class (not a TestCase): a fresh instance, setup_method/teardown_method."""
    if not callable(getattr(klass, test, None)):
        return {"absent": f"{klass.__name__} has no method {test}"}
    try:
        instance = klass()
    except Exception as exc:
        return {"absent": f"{klass.__name__}() cannot be made here: {type(exc).__name__}: {exc}"}
    method = getattr(instance, test)
    setup = getattr(instance, "setup_method", None)
    teardown = getattr(instance, "teardown_method", None)

    def run() -> None:
        if callable(setup):
            setup(method)
        try:
            method()
        finally:
            if callable(teardown):
                teardown(method)

    return _call(run, test, device, default_device, fixtures_of=method)


def _call(fn, test: str, device: str, default_device: bool, fixtures_of=None) -> Dict[str, Any]:
    import torch

    needed = [p for p in inspect.signature(fixtures_of or fn).parameters.values()
              if p.default is inspect.Parameter.empty
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if needed:
        return {"absent": f"{test} takes pytest fixtures ({', '.join(p.name for p in needed)})"}
    if default_device:
        torch.set_default_device(device)
    try:
        fn()
    except unittest.SkipTest as exc:
        row = {"outcome": "skip", "detail": short(str(exc))}
    except AssertionError as exc:
        row = {"outcome": "fail", "detail": short(f"AssertionError: {exc}"),
               "exc_type": "AssertionError"}
    except Exception as exc:
        row = {"outcome": "error", "detail": short(f"{type(exc).__name__}: {exc}"),
               "exc_type": type(exc).__name__}
    except BaseException as exc:  # pytest.skip / pytest.fail raise outside Exception
        kind = type(exc).__name__
        if kind not in ("Skipped", "Failed", "XFailed"):
            raise
        outcome = {"Skipped": "skip", "Failed": "fail", "XFailed": "xfail"}[kind]
        row = {"outcome": outcome, "detail": short(str(exc))}
    else:
        row = {"outcome": "pass", "detail": ""}
    return {"variants": {"-": row}}


def format_error(exc: BaseException) -> str:
    return short("".join(traceback.format_exception_only(type(exc), exc)))


def main() -> int:
    """A side in a fresh interpreter (devices that cannot be used after a fork: a real
    npu or cuda): reads {"device": spec or null, "args": {...}} on stdin, writes the
    answer as one JSON line on the original stdout (the test's own output goes to
    stderr)."""
    import json
    import signal

    from . import proctree

    proctree.die_with_parent(signal.SIGKILL)
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.readline())
    try:
        if request.get("device"):
            from ..devices import get_adapter

            get_adapter(request["device"]).setup()  # before torch.testing._internal
        answer = run_side(**request["args"])
    except BaseException as exc:
        answer = {"error": format_error(exc)}
    proto.write(json.dumps(answer, default=str) + "\n")
    proto.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
