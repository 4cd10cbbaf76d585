"""``python -m torchparity.npu_testing [--device emu:<profile>] [--results OUT.json] FILE.py [ARGS]``

Runs one of Ascend's test files unchanged, as ``__main__``, with torchparity's ``torch_npu``
stand-in over the emulated device (default ``emu:ascend-a2``). With ``--results`` every
test's outcome (passed, failed, error, skipped, expected failure) and its traceback or
skip reason are written to OUT.json, and so is an error the file raised before its tests
ran. Bad input: one line, exit 2.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
import unittest
from pathlib import Path
from typing import List, Optional

from . import ENV_VAR, SITE, real_torch_npu

USAGE = ("usage: python -m torchparity.npu_testing [--device emu:<profile>] "
         "[--results OUT.json] FILE.py [ARGS...]")


class _Record:
    out: Optional[Path] = None
    tests: list = []
    before_tests: Optional[str] = None

    @classmethod
    def write(cls) -> None:
        if cls.out is None:
            return
        data = {"tests": cls.tests, "before_tests": cls.before_tests}
        cls.out.write_text(json.dumps(data, indent=1), encoding="utf-8")


class RecordingResult(unittest.TextTestResult):
    """unittest's text result that also keeps every outcome for ``--results``."""

    def _keep(self, test, outcome, detail=""):
        _Record.tests.append({"id": test.id(), "outcome": outcome, "detail": detail})
        _Record.write()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._keep(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._keep(test, "failed", self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self._keep(test, "error", self.errors[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._keep(test, "skipped", str(reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._keep(test, "expected_failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._keep(test, "unexpected_success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = "failed" if issubclass(err[0], test.failureException) else "error"
            self._keep(subtest, kind, self._exc_info_to_string(err, test))


def _parse(argv: List[str]):
    device, results = "emu:ascend-a2", None
    while argv and argv[0].startswith("--"):
        flag = argv.pop(0)
        if flag in ("--device", "--results") and argv:
            value = argv.pop(0)
            if flag == "--device":
                device = value
            else:
                results = value
        else:
            raise SystemExit(f"{USAGE}\nbad option {flag!r}")
    if not argv:
        raise SystemExit(USAGE)
    return device, results, argv[0], argv[1:]


def main(argv: Optional[List[str]] = None) -> int:
    try:
        device, results, file, rest = _parse(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        print(str(exc).splitlines()[-1], file=sys.stderr)
        return 2
    path = Path(file)
    if not device.startswith("emu:"):
        print(f"--device {device}: the adapter runs on the emulated device (emu:<profile>)",
              file=sys.stderr)
        return 2
    if not path.is_file():
        print(f"{file}: no such test file", file=sys.stderr)
        return 2
    real = real_torch_npu()
    if real:
        print(f"a real torch_npu is installed ({real}); run the tests with it, not the adapter",
              file=sys.stderr)
        return 2
    os.environ[ENV_VAR] = device
    sys.path[:0] = [str(path.resolve().parent), str(SITE)]
    sys.argv = [str(path)] + rest
    if results:
        _Record.out = Path(results)
        _Record.tests = []
        unittest.TextTestRunner.resultclass = RecordingResult
        _Record.write()
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        if not _Record.tests:
            _Record.before_tests = traceback.format_exc()
            _Record.write()
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
