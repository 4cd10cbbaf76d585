"""Randomness (issue 20 item 3): a seeded random API repeats its draws on the device (a
fail otherwise, never a warning); draws are judged against the CPU's by a two-sample KS
test at a stated significance; distribution classes are judged by what they compute."""

from __future__ import annotations

import warnings

import torch

from torchparity.judge import standards
from torchparity.results.models import Status
from torchparity.run.execute import execute
from torchparity.scenarios.sources import distribution, member


def _seed_ignoring_normal(monkeypatch):
    """A device whose normal_ ignores the seed: it draws from a generator nobody seeds."""
    loose = torch.Generator().manual_seed(12345)
    orig = torch.nn.init.normal_

    # torch's own parameter names: under a torch-function mode (a default device) the
    # original hands the call back to the module's `normal_` by keyword (`tensor=`)
    def normal_(tensor, mean=0.0, std=1.0, generator=None):
        if tensor.device.type == "cpu":
            return orig(tensor, mean, std, generator)
        with torch.no_grad():
            return tensor.copy_(torch.randn(tensor.shape, generator=loose, dtype=tensor.dtype) * std + mean)
    monkeypatch.setattr(torch.nn.init, "normal_", normal_)


def test_init_normal_that_ignores_the_seed_fails(emu, monkeypatch):
    (sc,) = [s for s in member.scenarios("torch.nn.init.normal_", None) if "float32" in s.dtypes]
    ok, _ = execute(sc, "float32", emu)
    assert ok.status == "pass", ok.detail
    _seed_ignoring_normal(monkeypatch)
    bad, _ = execute(sc, "float32", emu)
    assert (bad.status, bad.cause) == ("fail", "mismatch"), bad.detail
    assert "same seed" in bad.detail


def test_seeded_repeat_of_an_opinfo_random_op_fails_not_warns():
    from torchparity.run import opinfo_restricted as RS

    class Case:  # the attributes judge_seeded reads of an OpInfo sample case
        device, device_type, standards_used = "cpu", "cpu", set()

    class Again:
        exc, value = None, torch.randn(256, generator=torch.Generator().manual_seed(1))

    RS._MIRRORS["cpu"] = False  # a generator that does not mirror the CPU's (a real chip)
    try:
        cpu = torch.randn(256, generator=torch.Generator().manual_seed(2))
        dev = torch.randn(256, generator=torch.Generator().manual_seed(3))
        j = RS.judge_seeded(Case(), cpu, dev, "output", lambda: Again())
    finally:
        RS._MIRRORS.pop("cpu", None)
    assert j.status == Status.FAIL and not j.warn, j.detail
    assert "one seed" in j.detail


def test_a_sampler_with_the_wrong_spread_fails_the_two_sample_test():
    g = torch.Generator().manual_seed(0)
    cpu = torch.randn(4096, generator=g)
    dev = torch.randn(4096, generator=g) * 1.3  # std 1.3 instead of 1
    j = standards.judge_random(cpu, dev, "output")
    assert j.status == Status.FAIL and not j.warn, j.detail
    assert "significance 1e-5" in j.detail


def test_two_sample_test_false_fail_rate_on_a_correct_device():
    """Independent draws of one distribution (what a correct device with its own
    generator gives): no fail in 300 trials (expected rate ~1e-5 each)."""
    g = torch.Generator().manual_seed(7)
    fails = 0
    for i in range(300):
        n = 64 if i % 2 else 1024
        j = standards.judge_random(torch.rand(n, generator=g), torch.rand(n, generator=g), "o")
        fails += j.status == Status.FAIL
    assert fails == 0


def test_distribution_classes_are_judged_by_what_they_compute(cpu):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for api in ("torch.distributions.Normal", "torch.distributions.StudentT",
                    "torch.distributions.Independent"):
            (sc,) = [s for s in distribution.scenarios(api, None) if s.id == "construct"]
            out = sc.fn("cpu", torch.float32)
            assert {"log_prob", "cdf", "mean", "variance", "entropy"} <= set(out), (api, out)
            assert isinstance(out["log_prob"], torch.Tensor) and isinstance(out["mean"], torch.Tensor)
            result, _ = execute(sc, "float32", cpu)
            assert result.status == "pass", result.detail


def test_a_wrong_log_prob_on_the_device_fails_the_class_row(emu, monkeypatch):
    from torch.distributions import Normal

    (sc,) = [s for s in distribution.scenarios("torch.distributions.Normal", None) if s.id == "construct"]
    orig = Normal.log_prob

    def log_prob(self, value):
        out = orig(self, value)
        return out * 1.01 if out.device.type != "cpu" else out
    monkeypatch.setattr(Normal, "log_prob", log_prob)
    result, _ = execute(sc, "float32", emu)
    # the patch dispatches one more mul on the device only: the cause may name that path
    assert result.status == "fail" and result.cause in ("mismatch", "device_path"), result.detail
    assert "log_prob" in result.detail


def test_a_zero_probability_category_reaches_multinomial_log_prob_branch(emu):
    """Multinomial.log_prob writes 0 where a count of 0 meets a -inf logit (an in-place
    index_put_): its zero-probability scenario makes that write happen, so a device whose
    in-place ops write a new tensor fails it (the plain scenario's mask is empty)."""
    from torchparity.devices.emulator import faults

    scs = distribution.scenarios("torch.distributions.multinomial.Multinomial.log_prob", None)
    (sc,) = [s for s in scs if s.id == "log_prob[zero-probability]"]
    assert "-inf" in sc.code
    ok, _ = execute(sc, "float32", emu)
    assert ok.status == "pass", ok.detail
    with faults.injecting(["inplace-copy"]):
        bad, _ = execute(sc, "float32", emu)
    # the device's NaN where the CPU writes 0 (the logits normalised through logsumexp
    # meet the same in-place fill first: the device raises where the CPU does not)
    assert bad.status in ("fail", "error") and bad.cause not in ("harness_error", "timeout"), bad
    # a continuous distribution has no such category
    assert distribution.B.zero_probability_spec(torch.distributions.Normal) is None


def test_opinfo_nan_sample_and_random_ops_largest_samples_first():
    from torchparity.scenarios import opinfo as oi

    total = oi.entry("op_db", "sum")
    samples = oi.make_samples(total, torch.float32)
    nan = oi.nan_sample(total, samples, torch.float32)
    assert nan is not None and bool(torch.isnan(nan.input).any())
    assert not any(bool(torch.isnan(s.input).any()) for s in samples)  # the originals kept
    assert oi.nan_sample(total, samples, torch.int64) is None
    assert oi.nan_sample(oi.entry("op_db", "add"), oi.make_samples(oi.entry("op_db", "add"), torch.float32),
                         torch.float32) is None
    bern = oi.make_samples(oi.entry("op_db", "bernoulli"), torch.float32)
    sizes = [s.input.numel() for s in bern]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] >= 24


def test_layout_fixed_ops_get_a_dense_permuted_sample():
    """OpInfo's noncontiguous() is not dense, so empty_like's result is contiguous on
    every backend; the permuted sample is dense, and preserve_format keeps its strides."""
    from torchparity.scenarios import opinfo as oi

    op = oi.entry("op_db", "empty_like")
    permuted = [p for p in map(oi.permuted_sample, oi.make_samples(op, torch.float32)) if p is not None]
    assert permuted
    x = permuted[0].input
    assert not x.is_contiguous() and torch.empty_like(x).stride() == x.stride()
    assert torch.empty_like(oi.make_samples(op, torch.float32)[1].noncontiguous().input).is_contiguous()
