"""Folding sample judgements into one (API, dtype) status: dtype discovery rules."""

from torchparity.judge.aggregate import Part, SampleOutcome, aggregate
from torchparity.judge.judgement import Judgement
from torchparity.results.models import Cause, Metric, Status

M = Metric(name="elements_differing_from_cpu", value=0.0, threshold=0.0, standard="cpu float32")


def _p(cat, status=Status.PASS, cause=None, detail="", metric=M, warn=False):
    return Part(cat, Judgement(status, cause, detail, metric, warn=warn))


PASS = _p("pass")
REFUSED = _p("unsupported", Status.UNSUPPORTED, Cause.DTYPE_LIMIT, "\"dot_npu\" not implemented for 'Double'")
SAME = _p("same_error", Status.SKIP, Cause.NOT_COMPARABLE, "RuntimeError: x (the CPU raises RuntimeError too)")
FAIL = _p("fail", Status.FAIL, Cause.MISMATCH, "output: NaN positions differ",
          Metric(name="nan_mismatch", value=3.0, threshold=0.0, standard="special_values"))
ERROR = _p("error", Status.ERROR, Cause.DEVICE_ERROR, "RuntimeError: boom")
WARN = _p("warn", detail="output: mean_rel_diff 1.7e-06 > 1.4e-06",
          metric=Metric(name="mean_rel_diff", value=1.7e-6, threshold=1.4e-6, standard="cpu float32"),
          warn=True)
NOT_COMPARABLE = _p("not_comparable", Status.SKIP, Cause.NOT_COMPARABLE, "random op")


def agg(*parts):
    return aggregate([p if isinstance(p, SampleOutcome) else SampleOutcome(p) for p in parts])


def test_all_pass_and_worst_first_ordering():
    assert agg(PASS, PASS).status == "pass"
    assert agg(PASS, WARN).status == "pass" and agg(PASS, WARN).detail.startswith("warn:")
    assert agg(PASS, REFUSED, FAIL).status == "fail"
    assert agg(PASS, FAIL, ERROR).status == "error"
    r = agg(PASS, FAIL)
    assert (r.cause, r.metric["name"]) == ("mismatch", "nan_mismatch") and "1 of 2 samples" in r.detail


def test_unsupported_partial_and_op_limit():
    r = agg(REFUSED, REFUSED)
    assert (r.status, r.cause) == ("unsupported", "dtype_limit")
    assert r.metric == {"name": "refused_samples", "value": 2.0, "threshold": 2.0, "standard": "support"}
    assert "dot_npu" in r.detail  # the device's own message is kept
    r = agg(PASS, REFUSED)
    assert (r.status, r.cause) == ("partial", "dtype_limit")
    # raising like the CPU on every sample is the op's contract: no answer about the
    # device, neither a limit nor support (issue 48: erfc_'s integer rows made it partial)
    r = agg(SAME, SAME)
    assert (r.status, r.cause) == ("skip", "not_comparable") and r.detail.startswith("both sides refused")
    assert r.metric is None
    r = agg(PASS, SAME)
    assert r.status == "pass" and "raise on the CPU too" in r.detail


def test_backward_refusal_makes_a_partial_but_backward_raising_like_cpu_does_not():
    r = agg(SampleOutcome(PASS, REFUSED), SampleOutcome(PASS, PASS))
    assert (r.status, r.cause) == ("partial", "dtype_limit") and "backward" in r.detail
    assert agg(SampleOutcome(PASS, SAME)).status == "pass"
    assert agg(SampleOutcome(PASS, FAIL)).status == "fail"


def test_not_comparable_only_is_a_skip_with_the_reason():
    r = agg(NOT_COMPARABLE, NOT_COMPARABLE)
    assert (r.status, r.cause) == ("skip", "not_comparable") and "random op" in r.detail
    assert agg(NOT_COMPARABLE, PASS).status == "pass"
    assert agg().status == "skip"
