"""Restricted standards: what can still be compared when OpInfo says the values cannot.

OpInfo's own ``test_compare_cpu`` skips some ops because part of their output is not
defined to match across devices. Instead of comparing nothing, the judge compares the
part that is defined, and says which standard it used (``Metric.standard``):

``uninitialised``
    ``empty`` and friends: memory is not initialised, so only metadata is compared —
    dtype, shape, device type (``compare.py``) and the strides of every dimension longer
    than one.
``seeded-cpu``
    random ops on a device whose generator, seeded like the CPU's, draws the CPU's
    numbers (probed per case: the emulated device does, a CUDA or NPU generator does
    not): values compared with the CPU's under the usual precision standards; where they
    differ, their distribution is judged as ``random`` (a difference alone warns).
``seeded-repeat``
    every random op: the device run repeated with the same seed and generator must give
    the same values (a difference fails: a seeded API that does not repeat its draws is
    wrong); where the generator does not mirror the CPU's, the distribution against the
    CPU's draws is judged as ``random`` (``standards.judge_random``: a two-sample test).
``in-range``
    integer casts (``Tensor.byte``, ``char``, ``short``, ``int``, ``long``: "overflow when
    downcasting is undefined") compared exactly on the elements whose input value
    (truncated) fits the target type; shifts (``bitwise_left_shift``,
    ``bitwise_right_shift``: "some inputs produce undefined outputs") on the elements
    whose shift amount lies in ``[0, bits)``.
``order-free``
    ``unique`` ("output order is undefined when sorted=False"): both outputs put in sorted
    order first (values; inverse indices mapped into that order; counts permuted alike).

Each function takes CPU copies and returns the trees to judge (or None where the
restriction cannot be formed: the sample stays not comparable).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import torch
from torch.utils._pytree import tree_leaves

from ..results.models import Cause, Metric, Status
from .judgement import Judgement

UNINITIALISED, SEEDED_CPU, SEEDED_REPEAT, IN_RANGE, ORDER_FREE = (
    "uninitialised", "seeded-cpu", "seeded-repeat", "in-range", "order-free")
STANDARDS = (UNINITIALISED, SEEDED_CPU, SEEDED_REPEAT, IN_RANGE, ORDER_FREE)


def _tensors(tree: Any) -> list:
    """The tensors of nested lists / tuples / dicts, in order."""
    return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]


def stride_difference(cpu: Any, dev: Any, path: str = "output") -> Optional[Judgement]:
    """A fail where a device tensor's strides differ from the CPU's on a dimension longer
    than one (the only strides that address memory); None where all agree."""
    for i, (c, d) in enumerate(zip(_tensors(cpu), _tensors(dev))):
        if c.layout != torch.strided or d.layout != torch.strided or c.numel() == 0 \
                or c.shape != d.shape:
            continue
        cs = [s for s, n in zip(c.stride(), c.shape) if n > 1]
        ds = [s for s, n in zip(d.stride(), d.shape) if n > 1]
        if cs != ds:
            return Judgement(Status.FAIL, Cause.METADATA,
                             f"{path}[{i}]: strides {tuple(d.stride())}, CPU gave {tuple(c.stride())}",
                             Metric(name="output_strides", value=None, threshold=None,
                                    standard=UNINITIALISED))
    return None


def relabel(j: Judgement, standard: str, note: str = "") -> Judgement:
    """The same judgement, its metric marked with the restricted standard used."""
    m = j.metric
    base = m.standard if m is not None and m.standard else ""
    label = f"{standard} ({base})" if base and base != standard else standard
    j.metric = (Metric(name=m.name, value=m.value, threshold=m.threshold, standard=label)
                if m is not None else Metric(name="outputs", standard=label))
    if note:
        j.detail = f"{j.detail}; {note}" if j.detail else note
    return j


# -- in-range -------------------------------------------------------------------------

def cast_defined(inp: torch.Tensor, target: torch.dtype) -> torch.Tensor:
    """Where casting ``inp`` to the integer dtype ``target`` is defined (bool mask)."""
    x = inp.detach().cpu()
    if x.is_complex():
        x = x.real
    if target == torch.bool or target.is_floating_point or target.is_complex or x.dtype == torch.bool:
        return torch.ones(x.shape, dtype=torch.bool)
    info = torch.iinfo(target)
    if x.is_floating_point():
        xf = x.double()
        ok = torch.isfinite(xf)
        t = torch.trunc(torch.where(ok, xf, torch.zeros_like(xf)))
        # max + 1 is a power of two, exact in float64: t < 2**63 excludes 2**63 itself
        return ok & (t >= float(info.min)) & (t < float(info.max) + 1.0)
    return (x >= info.min) & (x <= info.max)


def shift_defined(other: Any, result_dtype: torch.dtype, shape: torch.Size) -> Optional[torch.Tensor]:
    """Where a shift by ``other`` is defined for ``result_dtype`` (0 <= amount < bits),
    broadcast to ``shape``; None if it cannot be formed."""
    bits = torch.empty(0, dtype=result_dtype).element_size() * 8
    if isinstance(other, torch.Tensor):
        o = other.detach().cpu()
    elif isinstance(other, (int, float, bool)):
        o = torch.tensor(other)
    else:
        return None
    ok = (o >= 0) & (o < bits)
    try:
        return torch.broadcast_to(ok, shape)
    except RuntimeError:
        return None


def masked(cpu: torch.Tensor, dev: torch.Tensor, mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    return cpu.detach().cpu()[mask], dev.detach().cpu()[mask]


# -- order-free -----------------------------------------------------------------------

def unique_canonical(out: Any, kwargs: dict) -> Optional[list]:
    """``unique``'s output in sorted order: [values, inverse?, counts?] (see module doc)."""
    parts = list(out) if isinstance(out, (tuple, list)) else [out]
    if not parts or not all(isinstance(p, torch.Tensor) for p in parts):
        return None
    values = parts[0].detach().cpu()
    i, inverse, counts = 1, None, None
    if kwargs.get("return_inverse"):
        if len(parts) <= i:
            return None
        inverse, i = parts[i].detach().cpu(), i + 1
    if kwargs.get("return_counts"):
        if len(parts) <= i:
            return None
        counts = parts[i].detach().cpu()
    dim = kwargs.get("dim")
    try:
        if dim is None:
            ordered, pos = torch.unique(values, sorted=True, return_inverse=True)
            n = values.numel()
        else:
            ordered, pos = torch.unique(values, dim=dim, sorted=True, return_inverse=True)
            n = values.shape[dim] if values.dim() else 1
    except RuntimeError:
        return None
    if (ordered.shape[dim] if dim is not None and ordered.dim() else ordered.numel()) != n:
        return None  # not distinct (NaN): no order to restore
    canon = [ordered]
    if inverse is not None:
        canon.append(pos.reshape(-1)[inverse.reshape(-1)].reshape(inverse.shape))
    if counts is not None:
        c = torch.empty_like(counts)
        c[pos.reshape(-1)] = counts.reshape(-1)
        canon.append(c)
    return canon
