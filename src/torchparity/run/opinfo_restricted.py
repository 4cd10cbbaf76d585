"""The restricted standards of the "opinfo" case kind (``judge.restricted``), per sample.

Called by ``opinfo_handler._Case`` where OpInfo marks an op's values not comparable or
the op is random / uninitialised; ``case`` is that ``_Case`` (its device, OpInfo mark,
restricted standard and the sample's input, other operand and keyword arguments), and
the standards it used are added to ``case.standards_used`` so that the row can name them.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import torch
from torch.utils._pytree import tree_map

from ..judge import restricted as R
from ..judge.compare import compare_outputs
from ..judge.judgement import Judgement, worst
from ..results.models import Cause, Status
from .opinfo_samples import seed_device


def _to_cpu(tree: Any) -> Any:
    return tree_map(lambda t: t.detach().cpu() if isinstance(t, torch.Tensor) else t, tree)


def _meta(case, cpu: Any, dev: Any, path: str) -> Judgement:
    """dtype, shape and device type of every output (no values)."""
    return compare_outputs(cpu, dev, case.device_type, path, kind="uninitialised")


def judge_uninitialised(case, cpu: Any, dev: Any, path: str) -> Judgement:
    j = _meta(case, cpu, dev, path)
    if j.status == Status.PASS:
        j = R.stride_difference(cpu, dev, path) or j
    case.standards_used.add(R.UNINITIALISED)
    return R.relabel(j, R.UNINITIALISED)


def judge_seeded(case, cpu: Any, dev: Any, path: str, again: Optional[Callable[[], Any]]) -> Judgement:
    """``again()`` runs the device once more with the same inputs and seed (a ``_Run``):
    a seeded random op must repeat its draws on the device (a fail otherwise)."""
    meta = _meta(case, cpu, dev, path)
    if meta.status != Status.PASS:
        return meta
    if getattr(case, "layout", False):  # rand_like's contract fixes its layout as empty_like's does
        strides = R.stride_difference(cpu, dev, path)
        if strides is not None:
            return strides
    rep: Optional[Judgement] = None
    if again is not None:
        second = again()
        if second.exc is None:
            case.standards_used.add(R.SEEDED_REPEAT)
            rep = compare_outputs(_to_cpu(dev), _to_cpu(second.value), "cpu", path, kind="values")
            if rep.status == Status.FAIL:
                rep = Judgement(Status.FAIL, Cause.MISMATCH,
                                f"two device runs under one seed and generator drew different values: "
                                f"{rep.detail}", rep.metric)
            rep = R.relabel(rep, R.SEEDED_REPEAT)
    if rng_mirrors_cpu(case.device, case.device_type):
        case.standards_used.add(R.SEEDED_CPU)
        j = compare_outputs(cpu, dev, case.device_type, path, kind="values")
        if j.status == Status.FAIL:
            # the device's generator mirrors the CPU's, yet this op drew otherwise: its
            # draws are then judged by their distribution
            dist = compare_outputs(cpu, dev, case.device_type, path, kind="random")
            j = dist if dist.status != Status.PASS else Judgement(
                Status.PASS, None, f"under the CPU's seed the device drew other values: {j.detail}; "
                "their distribution matches the CPU's", j.metric, warn=True)
        j = R.relabel(j, R.SEEDED_CPU)
        return j if rep is None else worst([j, rep])  # a pass names the seeded-cpu standard
    j = compare_outputs(cpu, dev, case.device_type, path, kind="random")
    return j if rep is None else worst([rep, j])


def judge_restricted(case, cpu: Any, dev: Any, path: str) -> Judgement:
    """in-range (casts, shifts) or order-free (unique), after the metadata."""
    meta = _meta(case, cpu, dev, path)
    if meta.status != Status.PASS:
        return meta
    why = f"values not compared: {case.mark}"
    if case.standard == "order-free":
        c, d = R.unique_canonical(cpu, case.kwargs), R.unique_canonical(dev, case.kwargs)
        if c is None or d is None:
            return Judgement(Status.SKIP, Cause.UPSTREAM_SKIP, f"{why} (no order to restore)")
        case.standards_used.add(R.ORDER_FREE)
        return R.relabel(compare_outputs(c, d, "cpu", path, kind="values"), R.ORDER_FREE)
    if not (isinstance(cpu, torch.Tensor) and isinstance(dev, torch.Tensor)):
        return Judgement(Status.SKIP, Cause.UPSTREAM_SKIP, f"{why} (not one tensor)")
    if case.standard == "in-range-cast":
        mask = R.cast_defined(case.inp, cpu.dtype) if isinstance(case.inp, torch.Tensor) else None
        if mask is not None and mask.shape != cpu.shape:
            mask = None
    else:
        mask = R.shift_defined(case.other, cpu.dtype, cpu.shape)
    if mask is None:
        return Judgement(Status.SKIP, Cause.UPSTREAM_SKIP, f"{why} (no element-wise domain)")
    case.standards_used.add(R.IN_RANGE)
    c, d = R.masked(cpu, dev, mask)
    n, total = int(mask.sum()), mask.numel()
    return R.relabel(compare_outputs(c, d, "cpu", path, kind="values"), R.IN_RANGE,
                     "" if n == total else f"{n} of {total} elements in the defined range compared")


_MIRRORS: Dict[str, bool] = {}


def rng_mirrors_cpu(device: Any, device_type: str) -> bool:
    """Whether the device's generator, seeded like the CPU's, draws the CPU's numbers (the
    emulated device's does; a CUDA or NPU generator does not). Probed once per process."""
    key = str(device)
    if key not in _MIRRORS:
        try:
            with torch.random.fork_rng(devices=[]):
                seed_device(1234, device_type)
                a = torch.rand(64)
                seed_device(1234, device_type)
                b = torch.rand(64, device=device).cpu()
            _MIRRORS[key] = bool(torch.equal(a, b))
        except Exception:
            _MIRRORS[key] = False
    return _MIRRORS[key]
