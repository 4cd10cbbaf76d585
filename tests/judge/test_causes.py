import pytest

from torchparity.judge.causes import CAUSE_TEXT
from torchparity.results.error_rules import ERROR_RULES, classify_exception
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


def test_a_refusal_is_what_the_table_calls_unsupported():
    from torchparity.results.error_rules import is_refusal

    assert is_refusal(RuntimeError("\"addmm_npu\" not implemented for 'Double'"))
    assert is_refusal(NotImplementedError("Could not run 'aten::_foo' with arguments from the 'PrivateUse1' backend."))
    assert not is_refusal(RuntimeError("torch.Generator(device='npu') is not supported by the emulated device"))
    assert not is_refusal(RuntimeError("The size of tensor a (4) must match the size of tensor b (3)"))
