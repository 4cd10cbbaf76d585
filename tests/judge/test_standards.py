"""Precision standards: the requirements of PRECISION.md, each as a test that can fail."""

import math
import warnings

import pytest
import torch

from torchparity.judge import standards
from torchparity.judge.compare import compare_outputs
from torchparity.judge.standards import THRESHOLDS, judge_values
from torchparity.results.models import Cause, Status

G = torch.Generator().manual_seed(1)


def _golden_case(dtype, fn=torch.exp, n=1000):
    """Inputs in ``dtype``; CPU output in ``dtype``; golden in float64 on the same inputs."""
    hi = torch.complex128 if dtype.is_complex else torch.float64
    x = (torch.randn(n, generator=G, dtype=hi) * 2).to(dtype)
    return fn(x), fn(x.to(hi))


def test_nan_in_ten_percent_of_device_outputs_fails():
    # the field's best tool masks NaN positions out of its metrics and misses this
    cpu, golden = _golden_case(torch.float16)
    dev = cpu.clone()
    dev[::10] = float("nan")
    for g in (golden, None):  # with a golden and against the CPU alone
        j = compare_outputs(cpu, dev, "cpu", golden=g)
        assert (j.status, j.cause) == (Status.FAIL, Cause.MISMATCH)
        assert j.metric.name == "nan_mismatch" and j.metric.value == 100
        assert j.metric.threshold == 0 and j.metric.standard == "special_values"
        assert "NaN" in j.detail


def test_bf16_correctly_rounded_output_passes():
    # the field's best tool flags this as a warning; rounding the exact result is the best
    # a bf16 device can do, so it must pass cleanly
    x = torch.randn(4096, generator=G, dtype=torch.float64).to(torch.bfloat16)
    golden = torch.sin(x.double()) * 3.7
    cpu = torch.sin(x) * 3.7  # the CPU's own bf16 arithmetic: two roundings
    dev = golden.to(torch.bfloat16)  # correctly rounded
    assert not torch.equal(cpu, dev)
    j = compare_outputs(cpu, dev, "cpu", golden=golden)
    assert j.status == Status.PASS and not j.warn, j.detail
    assert j.metric.standard == "golden bfloat16"


def test_integer_off_by_one_fails():
    cpu = torch.arange(100, dtype=torch.int32)
    dev = cpu.clone()
    dev[37] += 1
    j = compare_outputs(cpu, dev, "cpu")
    assert (j.status, j.cause) == (Status.FAIL, Cause.MISMATCH)
    assert (j.metric.name, j.metric.value, j.metric.threshold, j.metric.standard) == (
        "mismatched_elements", 1.0, 0.0, "exact")
    assert "flat index 37" in j.detail
    # bool and index outputs too
    assert compare_outputs(torch.tensor([True, False]), torch.tensor([True, True]), "cpu").status == Status.FAIL
    vals, idx = torch.sort(torch.tensor([3.0, 1.0, 2.0]))
    j = compare_outputs((vals, idx), (vals, idx.flip(0)), "cpu")
    assert j.status == Status.FAIL and j.metric.standard == "exact"


@pytest.mark.parametrize("seed", range(5))
def test_random_ops_fail_only_past_the_two_sample_tests_level(seed):
    g = torch.Generator().manual_seed(seed)
    big_cpu = torch.rand(5000, generator=g)
    # another generator, the same distribution (or nothing to compare): never a fail
    for dev in (torch.rand(5000, generator=g), torch.full((5000,), float("nan"))):
        j = compare_outputs(big_cpu, dev, "cpu", kind="random")
        assert j.status in (Status.PASS, Status.SKIP), j
        assert j.metric is not None and j.metric.standard == "random"
    # another distribution: the KS test at significance 1e-5 fails it
    for dev in (torch.randn(5000, generator=g) * 100, torch.zeros(5000)):
        j = compare_outputs(big_cpu, dev, "cpu", kind="random")
        assert j.status == Status.FAIL and j.metric.name == "ks_statistic", j
        assert j.metric.threshold == pytest.approx(
            THRESHOLDS["random"]["*"]["ks_coefficient_fail"] * (2 / 5000) ** 0.5)
    small = compare_outputs(torch.rand(5, generator=g), torch.rand(5, generator=g), "cpu", kind="random")
    assert (small.status, small.cause) == (Status.SKIP, Cause.NOT_COMPARABLE)
    assert (small.metric.name, small.metric.threshold) == ("numel", THRESHOLDS["random"]["*"]["min_numel"])
    # a wrong shape is not randomness: still a failure
    assert compare_outputs(big_cpu, big_cpu[:10], "cpu", kind="random").cause == Cause.METADATA


def test_uninitialised_outputs_are_not_compared():
    a = torch.empty(64).fill_(1.0)
    b = torch.empty(64).fill_(float("nan"))
    j = compare_outputs(a, b, "cpu", kind="uninitialised")
    assert j.status == Status.PASS and j.metric.standard == "uninitialised"
    assert compare_outputs(a, b[:3], "cpu", kind="uninitialised").cause == Cause.METADATA
    assert compare_outputs(a, b.double(), "cpu", kind="uninitialised").cause == Cause.METADATA


def test_device_error_judged_relative_to_the_cpu_error():
    cpu, golden = _golden_case(torch.float32, fn=lambda t: torch.exp(t).cumsum(0))
    cpu_err = ((cpu.double() - golden).abs() / golden.abs()).max()
    # as accurate as the CPU: pass, even though it differs from the CPU
    dev = (golden * (1 + cpu_err * 0.5)).float()
    assert compare_outputs(cpu, dev, "cpu", golden=golden).status == Status.PASS
    # 30x the CPU's error: fail, and the metric says so
    bad = (golden * (1 + max(cpu_err, 2 ** -20) * 30)).float()
    j = compare_outputs(cpu, bad, "cpu", golden=golden)
    assert j.status == Status.FAIL
    assert j.metric.name.endswith("_ratio") and j.metric.value > j.metric.threshold
    row = THRESHOLDS["golden"]["float32"]
    assert j.metric.threshold == row[j.metric.name + "_fail"]
    assert "golden" in j.detail


def test_warn_between_thresholds_and_worst_status_wins():
    x = torch.linspace(1, 2, 1000, dtype=torch.float64)
    cpu = x.float()
    row = THRESHOLDS["cpu"]["float32"]
    mid = (row["mean_rel_diff_warn"] + row["mean_rel_diff_fail"]) / 2
    warn_dev = (x * (1 + mid)).float()
    j = compare_outputs(cpu, warn_dev, "cpu")
    assert j.status == Status.PASS and j.warn and j.metric.name == "mean_rel_diff"
    assert j.metric.threshold == row["mean_rel_diff_warn"]
    # worst wins: pass + warn -> warn; + fail -> fail; the failing metric is reported
    both = compare_outputs((cpu, cpu), (cpu, warn_dev), "cpu")
    assert both.warn
    nan_dev = cpu.clone()
    nan_dev[0] = float("nan")
    three = compare_outputs((cpu, cpu, cpu), (cpu, warn_dev, nan_dev), "cpu")
    assert three.status == Status.FAIL and three.metric.name == "nan_mismatch"


def test_special_values_inf_and_signed_zero():
    c = torch.tensor([1.0, float("inf"), -0.0, 0.0])
    assert compare_outputs(c, torch.tensor([1.0, -math.inf, -0.0, 0.0]), "cpu").metric.name == "inf_mismatch"
    j = compare_outputs(c, torch.tensor([1.0, math.inf, 0.0, 0.0]), "cpu")
    assert j.status == Status.FAIL and j.metric.name == "signed_zero_mismatch"
    # meaningful only where the golden agrees with the CPU's sign of zero
    c16 = torch.tensor([-0.0, 1.0], dtype=torch.float16)
    d16 = torch.tensor([0.0, 1.0], dtype=torch.float16)
    assert compare_outputs(c16, d16, "cpu", golden=torch.tensor([0.0, 1.0], dtype=torch.float64)).status == Status.PASS
    assert compare_outputs(c16, d16, "cpu", golden=torch.tensor([-0.0, 1.0], dtype=torch.float64)).status == Status.FAIL


def test_golden_is_lazy_and_only_used_when_bits_differ():
    calls = []

    def golden():
        calls.append(1)
        return torch.ones(3, dtype=torch.float64)

    a = torch.ones(3)
    assert compare_outputs(a, a.clone(), "cpu", golden=golden).status == Status.PASS
    assert calls == []
    compare_outputs(a, a + 1e-7, "cpu", golden=golden)
    assert calls == [1]
    # a golden that cannot be computed (e.g. no float64 kernel): judged against the CPU
    def broken():
        raise RuntimeError("no float64 kernel")

    j = compare_outputs(a, a + 1e-7, "cpu", golden=broken)
    assert j.metric.standard == "cpu float32"


def _statuses_battery():
    """One judgement per standard and outcome."""
    warnings.filterwarnings("ignore", "ComplexHalf support is experimental")
    out = []
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.complex64, torch.complex32):
        fn = (lambda t: t * 3.7) if dtype == torch.complex32 else torch.exp
        cpu, golden = _golden_case(dtype, fn=fn, n=300)
        out.append(judge_values(cpu, cpu.clone(), "o", golden=golden))
        out.append(judge_values(cpu, (golden * 1.001).to(dtype), "o", golden=golden))
        out.append(judge_values(cpu, (golden * 1.5).to(dtype), "o", golden=golden))
    cpu, golden = _golden_case(torch.float32, fn=torch.exp, n=300)  # an HF32-computed op
    out.append(judge_values(cpu, (golden * 1.0003).to(torch.float32), "o", golden=golden, compute_bits=10))
    out.append(judge_values(cpu, (golden * 1.01).to(torch.float32), "o", golden=golden, compute_bits=10))
    for dtype in (torch.float64, torch.complex128, torch.float32, torch.float16,
                  torch.bfloat16, torch.complex64, torch.complex32):
        x = torch.linspace(1, 3, 300, dtype=torch.float64).to(dtype)
        out.append(judge_values(x, x * (1 + 1e-9), "o"))
        out.append(judge_values(x, x * 1.5, "o"))
    for dtype in (torch.int64, torch.bool, torch.uint8):
        x = torch.ones(10, dtype=dtype)
        out.append(judge_values(x, x, "o"))
        out.append(judge_values(x, torch.zeros_like(x), "o"))
    r = torch.rand(500, generator=G)
    out.append(judge_values(r, r.flip(0), "o", kind="random"))
    out.append(judge_values(r, r * 10, "o", kind="random"))
    u = torch.linspace(0, 1, 500)  # KS statistic 0.14: past the 1e-3 level, short of 1e-5
    out.append(judge_values(u, u + 0.14, "o", kind="random"))
    out.append(judge_values(r[:3], r[:3], "o", kind="random"))
    c = torch.tensor([1.0, float("nan"), float("inf"), -0.0])
    out.append(judge_values(c, torch.tensor([1.0, 2.0, float("inf"), -0.0]), "o"))
    out.append(judge_values(c, torch.tensor([1.0, float("nan"), -float("inf"), -0.0]), "o"))
    out.append(judge_values(c, torch.tensor([1.0, float("nan"), float("inf"), 0.0]), "o"))
    out.append(compare_outputs(1.0, 1.5, "cpu"))
    out.append(compare_outputs(1.0, 1.0 + 1e-9, "cpu"))
    return out


def test_every_status_names_its_metric_and_threshold():
    seen = set()
    for j in _statuses_battery():
        seen.add((j.status, j.warn))
        assert j.metric is not None and j.metric.name and j.metric.standard, j
        if j.status in (Status.FAIL, Status.SKIP) or j.warn:
            assert j.metric.threshold is not None and j.metric.value is not None, j
            assert j.detail, j
        else:
            assert j.metric.threshold is not None, j
    assert {(Status.PASS, False), (Status.PASS, True), (Status.FAIL, False), (Status.SKIP, False)} <= seen


class _Recording(dict):
    def __init__(self, data, log, path=()):
        super().__init__({k: _Recording(v, log, path + (k,)) if isinstance(v, dict) else v
                          for k, v in data.items()})
        self.log, self.path = log, path

    def __getitem__(self, key):
        self.log.add(self.path + (key,))
        return super().__getitem__(key)


def test_every_row_and_column_of_the_threshold_table_is_read(monkeypatch):
    log = set()
    monkeypatch.setattr(standards, "THRESHOLDS", _Recording(THRESHOLDS, log))
    _statuses_battery()
    expected = {(std, row, col) for std, rows in THRESHOLDS.items()
                for row, cols in rows.items() for col in cols}
    read = {k for k in log if len(k) == 3}
    assert expected - read == set(), f"never read: {sorted(expected - read)}"
    # and the table holds nothing but these standards
    assert set(THRESHOLDS) == set(standards.STANDARDS)


def test_a_chip_computing_in_hf32_is_held_to_hf32s_bar():
    """A float32 output of an op the device reports computing with 10 mantissa bits (HF32
    convolutions, devices.precision) is judged by fp16's precision: an HF32 rounding passes,
    the float32 bar would fail it; a 1e-2 error still fails. A single cancelling element may
    carry any relative error under HF32 (no max-rel bound)."""
    cpu, golden = _golden_case(torch.float32, fn=torch.exp, n=300)
    from torchparity.devices.emulator.numerics import round_mantissa
    hf32 = round_mantissa(golden.to(torch.float32), 10)
    hf32[7] = hf32[7] * 1.05  # one element off as a cancelling sum may be
    assert judge_values(cpu, hf32, "o", golden=golden).status == Status.FAIL
    reduced = judge_values(cpu, hf32, "o", golden=golden, compute_bits=10)
    assert reduced.status == Status.PASS and "hf32" in reduced.metric.standard
    wrong = judge_values(cpu, (golden * 1.01).to(torch.float32), "o", golden=golden, compute_bits=10)
    assert wrong.status == Status.FAIL and wrong.metric.name in ("mean_rel_ratio", "rmse_ratio")


def test_the_device_report_reaches_the_judgement_it_precedes():
    """compare_outputs reads (and clears) what the device reported since the last judgement."""
    from torchparity.devices import precision
    from torchparity.judge.compare import compare_outputs
    cpu, golden = _golden_case(torch.float32, fn=torch.exp, n=300)
    from torchparity.devices.emulator.numerics import round_mantissa
    dev = round_mantissa(golden.to(torch.float32), 10)
    precision.note("aten::convolution", torch.float32, 10)
    assert compare_outputs(cpu, dev, "cpu", golden=golden).status == Status.PASS
    assert compare_outputs(cpu, dev, "cpu", golden=golden).status == Status.FAIL  # cleared
