"""Precision standards: is one output tensor of the device close enough to the CPU's?

``THRESHOLDS`` is the one table of numbers the judge uses: standard -> dtype -> column.
Every row and every column is read by the code below (a test proves it by recording
which entries are looked up). Standards:

``golden``
    Floating outputs whose float64 (complex128) "golden" computation exists: the CPU ran
    the same op on the same inputs upcast. The device's error against the golden is
    divided by the CPU's own error in the same dtype (never less than ``floor``), so the
    CPU sets the bar and no second device is needed. Relative errors use
    ``max(|golden|, small)`` as the denominator (absolute error below ``small``).
    Metrics: maximum and mean relative error, relative RMSE; each ratio has a warn and a
    fail threshold.
``cpu``
    Floating outputs without a more precise golden (float64 outputs, hand scenarios,
    outputs whose dtype is fixed by the op): the device against the CPU's output in the
    same dtype, relative difference with the same small-value guard.
``special_values``
    NaN and inf positions (and the sign of inf) must match the CPU's output element-wise;
    so must the sign of zero where it is meaningful: both are zero and, when a golden
    exists, the golden is zero with the CPU's sign. Checked before any value metric, so
    NaN on the device can never hide inside the value metrics.
``exact``
    Integer, bool and index outputs: every element equal.
``random``
    Outputs of random ops: values are not comparable element-wise; with at least
    ``min_numel`` elements the two empirical distributions are compared by the
    two-sample Kolmogorov-Smirnov test. The statistic D is judged against
    ``c * sqrt((n + m) / (n m))``: ``c`` = 1.95 (significance 1e-3) warns, ``c`` = 2.47
    (significance 1e-5) fails — the probability that draws of a correct device fail is
    at most about 1e-5 per compared output (measured: benchmarks/ks_false_fail.py).
``scalar``
    Python numbers returned by an API.

Outputs of uninitialised-memory ops (``empty`` and friends) are judged on metadata only
(``compare.py``); no table entry is needed for them.

Status order, worst first: error > fail > warn > pass (> skip, for "not comparable").
"""

from __future__ import annotations

import math
import sys
from typing import Dict, List, Mapping, Optional, Tuple

import torch

from ..dtypes import dtype_name
from ..results.models import Cause, Metric, Status
from .judgement import Judgement

INF = math.inf


def _low_row(small: float, floor: float) -> Dict[str, float]:
    """float16 / bfloat16: mean / RMSE ratios fail past 8. A correct device within 1 ulp
    (msprobe's bound for these dtypes) whose output feeds a derivative that cancels
    (sigmoid's s * (1 - s) near s = 1: one ulp of s is half of 1 - s) shows several times
    the CPU's error (measured: RMSE ratio 4.86 on nn.Sigmoid's float16 input gradient under
    device noise); a value off by 1e-2 is still 10-20x past a float16 CPU's error."""
    return dict(_golden_row(small, floor), mean_rel_ratio_warn=4.0, mean_rel_ratio_fail=8.0,
                rmse_ratio_warn=4.0, rmse_ratio_fail=8.0)


def _golden_row(small: float, floor: float) -> Dict[str, float]:
    # mean / RMSE ratios fail past 4: a correct device whose transcendental functions are
    # within 1-2 ulp (the CUDA Math API's bounds for expf, sinf, tanhf; msprobe accepts 32)
    # has about 2-4x the mean error of a CPU that rounds correctly (measured: 2.05x on
    # nn.Sigmoid's input gradient under device noise failed the earlier bar of 2), while a
    # value off by 1e-4 relative is 100x past a float32 CPU's error
    return {"small": small, "floor": floor,
            "max_rel_ratio_warn": 5.0, "max_rel_ratio_fail": 10.0,
            "mean_rel_ratio_warn": 2.0, "mean_rel_ratio_fail": 4.0,
            "rmse_ratio_warn": 2.0, "rmse_ratio_fail": 4.0}


def _cpu_row(small: float, unit: float) -> Dict[str, float]:
    return {"small": small,
            "max_rel_diff_warn": 5 * unit, "max_rel_diff_fail": 10 * unit,
            "mean_rel_diff_warn": 1.5 * unit, "mean_rel_diff_fail": 2 * unit}


# standard -> dtype ("*": every dtype) -> column -> value.
# floor / unit per dtype: fp16 2^-10 (its epsilon), bf16 2^-7 (its epsilon: a correctly
# rounded bf16 result is within half of it), fp32 2^-20, fp64 2^-40; small-value bounds
# fp16 / bf16 2^-10, fp32 2^-20, fp64 2^-40. Complex dtypes follow their real parts.
THRESHOLDS: Dict[str, Dict[str, Dict[str, float]]] = {
    "golden": {
        "float16": _low_row(2.0 ** -10, 2.0 ** -10),
        "bfloat16": _low_row(2.0 ** -10, 2.0 ** -7),
        "float32": _golden_row(2.0 ** -20, 2.0 ** -20),
        "complex32": _low_row(2.0 ** -10, 2.0 ** -10),
        "complex64": _golden_row(2.0 ** -20, 2.0 ** -20),
        # a float32 output of an op the chip computes with 10 mantissa bits by default
        # (HF32 convolutions on Ascend A2/A3, devices.precision): fp16's precision, so
        # fp16's floor and small-value bound; the chip is held to its own bar. No bound on
        # the worst element: the rounding error of a reduced-precision sum is bounded by
        # the sum of its terms' magnitudes, which the output does not show, so an element
        # that cancels may carry any relative error (measured: 2.1e-2 on a conv2d weight
        # gradient of a correct HF32 device); mean relative error and RMSE bound the rest.
        # Mean / RMSE as fp16's row too (fail past 8): a weight gradient summed over many
        # HF32 products of a correct chip measured a mean ratio of 5.3 against fp16's floor.
        "hf32": dict(_low_row(2.0 ** -10, 2.0 ** -10), max_rel_ratio_warn=INF,
                     max_rel_ratio_fail=INF),
    },
    "cpu": {
        "float16": _cpu_row(2.0 ** -10, 2.0 ** -10),
        "bfloat16": _cpu_row(2.0 ** -10, 2.0 ** -7),
        "float32": _cpu_row(2.0 ** -20, 2.0 ** -20),
        "float64": _cpu_row(2.0 ** -40, 2.0 ** -40),
        "complex32": _cpu_row(2.0 ** -10, 2.0 ** -10),
        "complex64": _cpu_row(2.0 ** -20, 2.0 ** -20),
        "complex128": _cpu_row(2.0 ** -40, 2.0 ** -40),
    },
    "special_values": {
        "*": {"nan_mismatch_fail": 0, "inf_mismatch_fail": 0, "signed_zero_mismatch_fail": 0},
    },
    "exact": {
        "*": {"mismatched_elements_fail": 0},
    },
    "random": {
        # KS threshold = coefficient * sqrt((n + m) / (n m)); c(alpha) = sqrt(-ln(alpha / 2) / 2):
        # 1.95 is the 1e-3 critical value (warn), 2.47 the 1e-5 one (fail)
        "*": {"min_numel": 64, "ks_coefficient_warn": 1.95, "ks_coefficient_fail": 2.47},
    },
    "scalar": {
        "*": {"rtol": 1.3e-6, "atol": 1e-5},
    },
}

STANDARDS = tuple(THRESHOLDS)
HIGHER = {torch.float16: torch.float64, torch.bfloat16: torch.float64,
          torch.float32: torch.float64, torch.complex32: torch.complex128,
          torch.complex64: torch.complex128}


def row(standard: str, dtype: Optional[torch.dtype] = None) -> Mapping[str, float]:
    """The table row of ``standard`` for ``dtype`` (or its ``*`` row)."""
    rows = THRESHOLDS[standard]
    if "*" in rows:
        return rows["*"]
    return rows[dtype_name(dtype)]


def has_row(standard: str, dtype: torch.dtype) -> bool:
    rows = THRESHOLDS[standard]
    return "*" in rows or dtype_name(dtype) in rows


def golden_applies(cpu: torch.Tensor, golden: Optional[torch.Tensor]) -> bool:
    """A golden is usable for this leaf: more precise than the CPU output, same shape."""
    return (golden is not None and isinstance(golden, torch.Tensor)
            and HIGHER.get(cpu.dtype) == golden.dtype and golden.shape == cpu.shape
            and has_row("golden", cpu.dtype))


def scalar_close(a: complex, b: complex) -> Tuple[bool, Metric]:
    r = row("scalar")
    rtol, atol = r["rtol"], r["atol"]
    nan_a = any(math.isnan(v) for v in (a.real, a.imag))
    nan_b = any(math.isnan(v) for v in (b.real, b.imag))
    if nan_a or nan_b:
        ok = all(math.isnan(x) == math.isnan(y) for x, y in ((a.real, b.real), (a.imag, b.imag)))
        return ok, Metric(name="nan_mismatch", value=0.0 if ok else 1.0, threshold=0.0,
                          standard="scalar")
    if a == b:
        return True, Metric(name="abs_diff", value=0.0, threshold=atol, standard="scalar")
    diff = abs(a - b)
    allowed = atol + rtol * abs(a)
    return diff <= allowed, Metric(name="abs_diff", value=_num(diff), threshold=_num(allowed),
                                   standard=f"scalar rtol={rtol:g} atol={atol:g}")


# -- helpers ----------------------------------------------------------------------------

def _num(x) -> Optional[float]:
    """A JSON-safe float: NaN becomes None, infinities the largest finite float."""
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return math.copysign(sys.float_info.max, x)
    return x


def _fmt(x: Optional[float]) -> str:
    if x is None:
        return "-"
    if x == 0 or (abs(x) >= 1e-3 and abs(x) < 1e5):
        return f"{x:.4g}"
    return f"{x:.3e}"


def _real_view(t: torch.Tensor) -> torch.Tensor:
    """Complex tensors as their real and imaginary parts (special-value checks)."""
    if t.is_complex():
        if t.dtype == torch.complex32:
            t = t.to(torch.complex64)
        return torch.view_as_real(t.resolve_conj().resolve_neg())
    return t


def _bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same bits (NaN payloads and signed zeros included): a cheap exact pass."""
    if a.is_conj() or a.is_neg():
        a = a.resolve_conj().resolve_neg()
    if b.is_conj() or b.is_neg():
        b = b.resolve_conj().resolve_neg()
    size = a.element_size()
    view = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(size)
    try:
        if view is None:  # complex128: 16 bytes
            return torch.equal(_real_view(a).contiguous().view(torch.int64),
                               _real_view(b).contiguous().view(torch.int64))
        return torch.equal(a.contiguous().view(view), b.contiguous().view(view))
    except RuntimeError:
        return False


def _decide(candidates: List[Tuple[str, float, float, float]], standard: str) -> Tuple[str, Metric]:
    """(name, value, warn, fail) per metric -> level and the metric that decided it.

    fail: the metric furthest past its fail threshold; warn: furthest past its warn
    threshold; pass: the metric closest to its fail threshold.
    """
    def sev(value: float, limit: float) -> float:
        if limit == INF:
            return 0.0
        if limit <= 0:
            return INF if value > limit else 0.0
        return value / limit

    fails = [c for c in candidates if c[1] > c[3]]
    if fails:
        n, v, _w, f = max(fails, key=lambda c: sev(c[1], c[3]))
        return "fail", Metric(name=n, value=_num(v), threshold=f, standard=standard)
    warns = [c for c in candidates if c[1] > c[2]]
    if warns:
        n, v, w, _f = max(warns, key=lambda c: sev(c[1], c[2]))
        return "warn", Metric(name=n, value=_num(v), threshold=w, standard=standard)
    n, v, _w, f = max(candidates, key=lambda c: sev(c[1], c[3]))
    return "pass", Metric(name=n, value=_num(v), threshold=f, standard=standard)


def _judgement(level: str, metric: Metric, detail: str) -> Judgement:
    if level == "fail":
        return Judgement(Status.FAIL, Cause.MISMATCH, detail, metric)
    return Judgement(Status.PASS, None, detail if level == "warn" else "", metric,
                     warn=level == "warn")


# -- the standards ----------------------------------------------------------------------

def judge_exact(cpu: torch.Tensor, dev: torch.Tensor, path: str) -> Judgement:
    limit = row("exact")["mismatched_elements_fail"]
    if torch.equal(cpu, dev):
        n = 0
    else:
        if cpu.is_floating_point() or cpu.is_complex():  # not reached for exact dtypes
            n = int((~((cpu == dev) | (cpu.isnan() & dev.isnan()))).sum())
        else:
            n = int((cpu != dev).sum())
    metric = Metric(name="mismatched_elements", value=float(n), threshold=float(limit),
                    standard="exact")
    if n > limit:
        idx = (cpu != dev).reshape(-1).nonzero()
        first = int(idx[0]) if idx.numel() else 0
        flat_c, flat_d = cpu.reshape(-1), dev.reshape(-1)
        return Judgement(Status.FAIL, Cause.MISMATCH,
                         f"{path}: {n} of {cpu.numel()} elements differ (exact match required; "
                         f"first at flat index {first}: CPU {flat_c[first].item()!r}, "
                         f"device {flat_d[first].item()!r})", metric)
    return Judgement(Status.PASS, None, "", metric)


def judge_special_values(cpu: torch.Tensor, dev: torch.Tensor, golden: Optional[torch.Tensor],
                         path: str) -> Optional[Judgement]:
    """NaN / inf / signed-zero positions; None when they all match."""
    r = row("special_values")
    c, d = _real_view(cpu), _real_view(dev)
    nan_c, nan_d = torch.isnan(c), torch.isnan(d)
    n_nan = int((nan_c != nan_d).sum())
    if n_nan > r["nan_mismatch_fail"]:
        extra_d = int((nan_d & ~nan_c).sum())
        return Judgement(Status.FAIL, Cause.MISMATCH,
                         f"{path}: NaN positions differ in {n_nan} of {c.numel()} elements "
                         f"({extra_d} NaN on the device only, {n_nan - extra_d} on the CPU only)",
                         Metric(name="nan_mismatch", value=float(n_nan),
                                threshold=float(r["nan_mismatch_fail"]), standard="special_values"))
    inf_any = torch.isinf(c) | torch.isinf(d)
    n_inf = int((inf_any & (c != d)).sum())
    if n_inf > r["inf_mismatch_fail"]:
        return Judgement(Status.FAIL, Cause.MISMATCH,
                         f"{path}: inf positions or signs differ in {n_inf} of {c.numel()} elements",
                         Metric(name="inf_mismatch", value=float(n_inf),
                                threshold=float(r["inf_mismatch_fail"]), standard="special_values"))
    zero = (c == 0) & (d == 0)
    if golden is not None:
        g = _real_view(golden)
        zero &= (g == 0) & (torch.signbit(g) == torch.signbit(c))
    n_sign = int((zero & (torch.signbit(c) != torch.signbit(d))).sum())
    if n_sign > r["signed_zero_mismatch_fail"]:
        return Judgement(Status.FAIL, Cause.MISMATCH,
                         f"{path}: the sign of zero differs in {n_sign} of {c.numel()} elements "
                         "(-0.0 against +0.0)",
                         Metric(name="signed_zero_mismatch", value=float(n_sign),
                                threshold=float(r["signed_zero_mismatch_fail"]),
                                standard="special_values"))
    return None


def _upcast(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.complex128 if t.is_complex() else torch.float64)


def _errors(x: torch.Tensor, ref: torch.Tensor, small: float) -> Tuple[float, float, float]:
    """(max rel, mean rel, relative RMSE) of x against ref; small-value guard ``small``."""
    diff = (x - ref).abs()
    mag = ref.abs()
    rel = diff / mag.clamp_min(small)
    rms_ref = float(mag.square().mean().sqrt())
    rmse = float(diff.square().mean().sqrt()) / max(rms_ref, small)
    return float(rel.max()), float(rel.mean()), rmse


REDUCED_ROWS = {10: "hf32"}  # mantissa bits a chip computes with -> its golden row


def judge_golden(cpu: torch.Tensor, dev: torch.Tensor, golden: torch.Tensor, path: str,
                 compute_bits: Optional[int] = None) -> Judgement:
    """``compute_bits``: the device reported computing this output's ops with that many
    mantissa bits (``devices.precision``): judged by the row of that precision, named in
    the standard."""
    reduced = None
    if compute_bits is not None and cpu.dtype == torch.float32:
        reduced = next((REDUCED_ROWS[b] for b in sorted(REDUCED_ROWS) if compute_bits <= b), None)
    r = THRESHOLDS["golden"][reduced] if reduced else row("golden", cpu.dtype)
    small, floor = r["small"], r["floor"]
    c, d, g = _upcast(cpu), _upcast(dev), golden
    mask = torch.isfinite(c) & torch.isfinite(d) & torch.isfinite(g)
    if mask.ndim and not bool(mask.all()):
        c, d, g = c[mask], d[mask], g[mask]
    if c.numel() == 0:
        return Judgement(Status.PASS, None, "", Metric(name="finite_elements", value=0.0,
                                                       threshold=None, standard="golden"))
    cmax, cmean, crmse = _errors(c, g, small)
    dmax, dmean, drmse = _errors(d, g, small)
    ratios = [
        ("max_rel_ratio", dmax / max(cmax, floor), r["max_rel_ratio_warn"], r["max_rel_ratio_fail"]),
        ("mean_rel_ratio", dmean / max(cmean, floor), r["mean_rel_ratio_warn"], r["mean_rel_ratio_fail"]),
        ("rmse_ratio", drmse / max(crmse, floor), r["rmse_ratio_warn"], r["rmse_ratio_fail"]),
    ]
    standard = f"golden {dtype_name(cpu.dtype)}" + (f" ({reduced} compute)" if reduced else "")
    level, metric = _decide(ratios, standard)
    detail = ""
    if level != "pass":
        errs = {"max_rel_ratio": (dmax, cmax), "mean_rel_ratio": (dmean, cmean),
                "rmse_ratio": (drmse, crmse)}[metric.name]
        detail = (f"{path}: {metric.name} {_fmt(metric.value)} > {_fmt(metric.threshold)} "
                  f"(error against the float64 golden: device {_fmt(errs[0])}, CPU {_fmt(errs[1])}, "
                  f"floor {_fmt(floor)})")
    return _judgement(level, metric, detail)


def judge_cpu(cpu: torch.Tensor, dev: torch.Tensor, path: str) -> Judgement:
    r = row("cpu", cpu.dtype)
    small = r["small"]
    c, d = _upcast(cpu), _upcast(dev)
    mask = torch.isfinite(c) & torch.isfinite(d)
    if mask.ndim and not bool(mask.all()):
        c, d = c[mask], d[mask]
    if c.numel() == 0:
        return Judgement(Status.PASS, None, "", Metric(name="finite_elements", value=0.0,
                                                       threshold=None, standard="cpu"))
    rel = (d - c).abs() / c.abs().clamp_min(small)
    mx, mean = float(rel.max()), float(rel.mean())
    cands = [("max_rel_diff", mx, r["max_rel_diff_warn"], r["max_rel_diff_fail"]),
             ("mean_rel_diff", mean, r["mean_rel_diff_warn"], r["mean_rel_diff_fail"])]
    level, metric = _decide(cands, f"cpu {dtype_name(cpu.dtype)}")
    detail = ""
    if level != "pass":
        where = int(rel.reshape(-1).argmax())
        detail = (f"{path}: {metric.name} {_fmt(metric.value)} > {_fmt(metric.threshold)} "
                  f"against the CPU in the same dtype (worst element: CPU "
                  f"{c.reshape(-1)[where].item():.6g}, device {d.reshape(-1)[where].item():.6g})")
    return _judgement(level, metric, detail)


def judge_random(cpu: torch.Tensor, dev: torch.Tensor, path: str) -> Judgement:
    r = row("random")
    n = min(cpu.numel(), dev.numel())
    if n < r["min_numel"]:
        return Judgement(Status.SKIP, Cause.NOT_COMPARABLE,
                         f"{path}: random op; {n} elements are too few to compare distributions",
                         Metric(name="numel", value=float(n), threshold=float(r["min_numel"]),
                                standard="random"))
    a = _upcast(_real_view(cpu).reshape(-1)) if cpu.dtype != torch.bool else cpu.reshape(-1).double()
    b = _upcast(_real_view(dev).reshape(-1)) if dev.dtype != torch.bool else dev.reshape(-1).double()
    a, b = a[~torch.isnan(a)], b[~torch.isnan(b)]
    if a.numel() == 0 or b.numel() == 0:
        return Judgement(Status.SKIP, Cause.NOT_COMPARABLE, f"{path}: random op; only NaN",
                         Metric(name="numel", value=0.0, threshold=float(r["min_numel"]),
                                standard="random"))
    stat = ks_statistic(a, b)
    scale = math.sqrt((a.numel() + b.numel()) / (a.numel() * b.numel()))
    warn, fail = r["ks_coefficient_warn"] * scale, r["ks_coefficient_fail"] * scale
    level, metric = _decide([("ks_statistic", stat, warn, fail)], "random")
    limit = fail if level == "fail" else warn
    detail = "" if level == "pass" else (
        f"{path}: random op; the value distributions differ (two-sample KS statistic "
        f"{stat:.3g} > {limit:.3g}, significance {'1e-5' if level == 'fail' else '1e-3'}, "
        f"{a.numel()} vs {b.numel()} draws)")
    return _judgement(level, metric, detail)


def ks_statistic(a: torch.Tensor, b: torch.Tensor) -> float:
    """Two-sample Kolmogorov-Smirnov statistic of two 1-D float64 tensors."""
    a, _ = a.sort()
    b, _ = b.sort()
    values = torch.cat([a, b])
    fa = torch.searchsorted(a, values, right=True).double() / a.numel()
    fb = torch.searchsorted(b, values, right=True).double() / b.numel()
    return float((fa - fb).abs().max())


def judge_values(cpu: torch.Tensor, dev: torch.Tensor, path: str, *,
                 golden: Optional[torch.Tensor] = None, kind: str = "values",
                 compute_bits: Optional[int] = None) -> Judgement:
    """Judge two CPU tensors of equal dtype and shape (``dev`` copied from the device)."""
    if cpu.numel() == 0:
        return Judgement(Status.PASS, None, "", Metric(name="elements", value=0.0, threshold=None,
                                                       standard="metadata"))
    if kind == "random":
        return judge_random(cpu, dev, path)
    if kind == "exact":  # the answer has exactly one right value (a conversion, a selection)
        return judge_exact(cpu, dev, path)
    if not (cpu.is_floating_point() or cpu.is_complex()) or not has_row("cpu", cpu.dtype):
        return judge_exact(cpu, dev, path)
    use_golden = golden_applies(cpu, golden)
    standard = f"golden {dtype_name(cpu.dtype)}" if use_golden else f"cpu {dtype_name(cpu.dtype)}"
    if _bitwise_equal(cpu, dev):
        return Judgement(Status.PASS, None, "", Metric(name="elements_differing_from_cpu",
                                                       value=0.0, threshold=0.0, standard=standard))
    special = judge_special_values(cpu, dev, golden if use_golden else None, path)
    if special is not None:
        return special
    if use_golden:
        return judge_golden(cpu, dev, golden, path, compute_bits)
    return judge_cpu(cpu, dev, path)


def needs_golden(cpu: torch.Tensor, dev: torch.Tensor, kind: str = "values") -> bool:
    """Whether judging this leaf would use a golden: a lower-precision float that differs."""
    return (kind == "values" and cpu.numel() > 0 and cpu.dtype in HIGHER
            and has_row("golden", cpu.dtype) and not _bitwise_equal(cpu, dev))
