import pytest

from torchparity.judge.causes import CAUSE_TEXT, ERROR_RULES, classify_exception
from torchparity.results.models import Cause, Status


@pytest.mark.parametrize("rule", ERROR_RULES, ids=lambda r: r.cause.value + ":" + r.example[:30])
def test_every_rule_matches_its_example(rule):
    assert classify_exception("RuntimeError", rule.example) == (rule.status, rule.cause)


def test_ordinary_errors_are_not_unsupported():
    assert classify_exception("RuntimeError", "shape '[2, 3]' is invalid for input of size 5") is None
    assert classify_exception("ValueError", "bad value") is None


def test_backend_rows_come_first():
    extra = [(r"shape '\[2, 3\]'", "unsupported", "feature_limit")]
    assert classify_exception("RuntimeError", "shape '[2, 3]' is invalid", extra) == (
        Status.UNSUPPORTED, Cause.FEATURE_LIMIT)


def test_every_cause_has_both_texts():
    for cause in Cause:
        assert CAUSE_TEXT[cause].en and CAUSE_TEXT[cause].zh
