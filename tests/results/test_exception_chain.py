"""Exceptions kept whole: a device's refusal under a wrapper decides the row (issue 44, item 3)."""

from __future__ import annotations

import unittest

import pytest

from torchparity.results.error_rules import (
    classify_chain,
    classify_exception_chain,
    exception_chain,
)
from torchparity.results.models import Cause, Status
from torchparity.run.upstream_handler import compare
from torchparity.run.upstream_runner import inner_errors

REFUSAL = "\"isclose_npu\" not implemented for 'ComplexFloat'"


def _wrapped() -> BaseException:
    """What assert_close raises when the device refuses its isclose: a RuntimeError raised
    while handling the refusal (torch/testing/_comparison.py: "Comparing ... resulted in the
    unexpected exception above", no ``from``)."""
    try:
        try:
            raise RuntimeError(REFUSAL)
        except Exception:
            raise RuntimeError("Comparing\n\nTensorOrArrayPair(...)\n\nresulted in the unexpected "  # noqa: B904 - as torch.testing does
                               "exception above.")
    except RuntimeError as exc:
        return exc


def test_the_refusal_under_assert_closes_wrapper_decides():
    outer = _wrapped()
    assert [type(e).__name__ for e in exception_chain(outer)] == ["RuntimeError", "RuntimeError"]
    found, inner = classify_exception_chain(outer)
    assert found == (Status.UNSUPPORTED, Cause.DTYPE_LIMIT)
    assert str(inner) == REFUSAL


def test_a_test_failure_is_not_looked_through():
    """assertRaisesRegex whose pattern did not match: its AssertionError was raised while
    handling the device's error, and the mismatch (not the error) is the test's answer."""
    class T(unittest.TestCase):
        def runTest(self):
            with self.assertRaisesRegex(RuntimeError, "weight tensor should be defined"):
                raise RuntimeError(REFUSAL)

    with pytest.raises(AssertionError) as info:
        T().runTest()
    assert info.value.__context__ is not None  # Python keeps it; the chain stops there
    assert exception_chain(info.value) == [info.value]
    _, inner = classify_exception_chain(info.value)
    assert inner is info.value


def test_a_replayed_rows_chain_classifies_on_the_device_error():
    """A replayed test's row keeps the exceptions under its own (``chain``); the CPU-vs-device
    comparison classifies on the innermost one a rule knows and leads with its text."""
    outer = _wrapped()
    row = {"outcome": "error", "detail": "RuntimeError: Comparing TensorOrArrayPair(...)",
           "exc_type": "RuntimeError", "chain": inner_errors(outer)}
    assert row["chain"] == [{"exc_type": "RuntimeError", "detail": f"RuntimeError: {REFUSAL}"}]
    cpu = {"variants": {"-": {"outcome": "pass", "detail": ""}}}
    got = compare(cpu, {"variants": {"-": row}}, "npu")
    assert (got["status"], got["cause"]) == ("unsupported", "dtype_limit")
    assert REFUSAL in got["detail"] and "raised within RuntimeError: Comparing" in got["detail"]
    # without its chain the same row is a plain device error
    bare = compare(cpu, {"variants": {"-": {k: v for k, v in row.items() if k != "chain"}}}, "npu")
    assert bare["cause"] == "device_error"


def test_classify_chain_prefers_the_innermost_known_error():
    chain = [("RuntimeError", "Comparing ..."), ("RuntimeError", "stage 0 failed"),
             ("RuntimeError", "Could not run 'aten::foo' with arguments from the 'PrivateUse1' backend.")]
    assert classify_chain(chain) == ((Status.UNSUPPORTED, Cause.NO_KERNEL), 2)
    assert classify_chain([("RuntimeError", "boom")]) == (None, 0)
