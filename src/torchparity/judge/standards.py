"""Precision standards: how close is close enough, per dtype.

``THRESHOLDS`` is the single table the code reads; every row is used (a test checks it).
Version 1: torch.testing.assert_close semantics (its default rtol/atol per dtype), exact
for integer and bool, NaN positions must match.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

from ..results.models import Cause, Metric, Status

# dtype name -> (rtol, atol); the defaults of torch.testing.assert_close
THRESHOLDS: Dict[str, Tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}

SCALAR_RTOL = 1.3e-6
SCALAR_ATOL = 1e-5

STANDARD = "assert_close"


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def tolerance(dtype: torch.dtype) -> Optional[Tuple[float, float]]:
    return THRESHOLDS.get(dtype_name(dtype))


def judge_values(cpu: torch.Tensor, dev: torch.Tensor, path: str):
    """Judge two CPU tensors of equal dtype and shape; returns a compare.Judgement."""
    from .compare import Judgement  # local: compare imports this module

    tol = tolerance(cpu.dtype)
    if tol is None:  # integer, bool, quantised: exact
        equal = torch.equal(cpu, dev)
        if equal:
            return Judgement(Status.PASS)
        n = int((cpu != dev).sum())
        return Judgement(Status.FAIL, Cause.MISMATCH,
                         f"{path}: {n} of {cpu.numel()} elements differ (exact match required)",
                         Metric(name="mismatched_elements", value=float(n), threshold=0.0,
                                standard="exact"))
    rtol, atol = tol
    try:
        torch.testing.assert_close(dev, cpu, rtol=rtol, atol=atol, equal_nan=True,
                                   check_device=False, check_dtype=True, check_layout=False)
    except AssertionError as exc:
        diff = (dev.to(torch.complex128 if cpu.is_complex() else torch.float64)
                - cpu.to(torch.complex128 if cpu.is_complex() else torch.float64)).abs()
        finite = diff[torch.isfinite(diff)]
        max_abs = float(finite.max()) if finite.numel() else float("nan")
        first = str(exc).strip().splitlines()
        summary = "; ".join(line.strip() for line in first[:3] if line.strip())
        return Judgement(Status.FAIL, Cause.MISMATCH, f"{path}: {summary}",
                         Metric(name="max_abs_diff", value=max_abs, threshold=atol,
                                standard=f"{STANDARD} rtol={rtol} atol={atol}"))
    return Judgement(Status.PASS)
