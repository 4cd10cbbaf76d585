"""The float64 golden of any scenario: the same code, its inputs made in the dtype under
test, every computation after that done in float64 (complex128).

A scenario source that knows its inputs builds its own golden (``Scenario.golden``: module,
optim, nnutil). For the others, :func:`float64_golden` runs the scenario's function on the
CPU under a dispatch mode that leaves the ops which *make* values alone (factories and
seeded random ops run in the requested dtype, so the draws are the CPU run's own) and hands
every other op its floating inputs upcast to float64 (complex128). In-place and ``out=``
ops write into their own (low-precision) tensors, as the CPU run does. What comes back is
upcast too, so each floating output has a golden at least as precise as the CPU's; where
the golden cannot be computed (an op that refuses mixed dtypes) the call raises and the
judge compares with the CPU in the same dtype, as it does without a golden.

PRECISION.md: "Golden = CPU computation in float64 (complex128) where the API allows; the
device's error against the golden is judged relative to the CPU's own error in the same
dtype."
"""

from __future__ import annotations

from typing import Any, Callable


def _mode():
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    low_real = (torch.float16, torch.bfloat16, torch.float32)
    low_complex = (torch.complex32, torch.complex64)
    seeded = torch.Tag.nondeterministic_seeded

    def up(x):
        if isinstance(x, torch.Tensor):
            if x.dtype in low_real:
                return x.to(torch.float64)
            if x.dtype in low_complex:
                return x.to(torch.complex128)
        return x

    def has_tensor(tree) -> bool:
        found = []
        tree_map(lambda v: found.append(1) if isinstance(v, torch.Tensor) else None, tree)
        return bool(found)

    class Float64(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            schema = func._schema
            mutates = any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)
            if mutates or seeded in func.tags or not has_tensor((args, kwargs)):
                return func(*args, **kwargs)
            return func(*tree_map(up, args), **tree_map(up, kwargs))

    return Float64, up


def float64_golden(fn: Callable[[str, Any], Any]) -> Callable[[Any], Any]:
    """``golden(dtype)`` of a scenario function ``fn(device, dtype)``: ``fn("cpu", dtype)``
    with every computation in float64 (module docstring); floating outputs upcast."""
    def golden(dtype):
        import torch
        from torch.utils._pytree import tree_map

        mode, up = _mode()
        with mode():
            out = fn("cpu", dtype)
        return tree_map(lambda v: up(v.detach()) if isinstance(v, torch.Tensor) else v, out)

    golden.__name__ = f"float64_golden_{getattr(fn, '__name__', 'fn')}"
    return golden
