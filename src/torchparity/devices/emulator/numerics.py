"""Optional arithmetic deviations from ``profile.numerics``.

``reduced_precision_ops`` lists ops (``aten.mm``, ``aten.addmm.default``...) and the dtypes
for which the device computes with fewer mantissa bits, the way TF32/HF32 matrix units
do. The emulation is deliberately simple: before the CPU kernel runs, every floating input
tensor of a listed dtype is rounded (to nearest, ties to even) to ``mantissa_bits`` bits of
mantissa; the kernel itself then accumulates in full precision. Outputs are not rounded.
That reproduces the input-rounding error that dominates on such units, not the exact
accumulation order of any chip.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

# float dtype -> (integer dtype of the same width, mantissa bits)
_LAYOUT = {
    torch.float64: (torch.int64, 52),
    torch.float32: (torch.int32, 23),
    torch.float16: (torch.int16, 10),
    torch.bfloat16: (torch.int16, 7),
}


def round_mantissa(t: torch.Tensor, bits: int) -> torch.Tensor:
    """A copy of ``t`` with its mantissa rounded to ``bits`` bits (non-finite values kept)."""
    layout = _LAYOUT.get(t.dtype)
    if layout is None:
        return t
    itype, full = layout
    drop = full - bits
    if drop <= 0:
        return t
    i = t.contiguous().view(itype)
    half = (1 << (drop - 1)) - 1
    rounded = (i + (((i >> drop) & 1) + half)) & ~((1 << drop) - 1)
    out = rounded.view(t.dtype)
    return torch.where(torch.isfinite(t), out, t)


def reduce_inputs_rule(profile, op) -> Optional[Callable]:
    """For a listed op: a function (dtype, cargs, ckwargs) rounding its float inputs."""
    if profile is None or not profile.numerics.reduced_precision_ops:
        return None
    ops = profile.numerics.reduced_precision_ops
    base = op._schema.name.replace("::", ".")
    dtype_names = ops.get(f"{base}.{op._overloadname}") or ops.get(base)
    if not dtype_names:
        return None
    dtypes = frozenset(getattr(torch, name) for name in dtype_names)
    bits = profile.numerics.mantissa_bits
    positions = [i for i, a in enumerate(op._schema.arguments)
                 if isinstance(a.type, torch._C.TensorType) and not a.kwarg_only
                 and not (a.alias_info is not None and a.alias_info.is_write)]

    def reduce(dtype, cargs, ckwargs):
        if dtype not in dtypes:
            return
        for i in positions:
            if i < len(cargs):
                a = cargs[i]
                if isinstance(a, torch.Tensor) and a.dtype in dtypes:
                    cargs[i] = round_mantissa(a, bits)

    return reduce
