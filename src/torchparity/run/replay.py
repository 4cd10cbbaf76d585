"""Draws replayed: what the CPU computes from the device's own random numbers.

A sampler's draws cannot be compared with the CPU's by value on a device whose generator
is its own (an NPU's, a GPU's): the two-sample test of the ``random`` standard only sees
their distribution, and a sampler that is 1 % off (``Laplace.rsample`` on a device whose
``mul`` is wrong) passes it. But most samplers are a deterministic function of a few
primitive random ops (``uniform_``, ``normal_``, ``bernoulli_``...). So the device run is
recorded (:class:`Recording`: the output of every op tagged ``nondeterministic_seeded``,
in order, copied to the host) and the CPU reference is run once more with each of its
random ops handing back the device's draw instead (:class:`Replaying`). Where both runs
issued the same random ops with the same shapes and dtypes, the CPU's answer is what the
device should have computed from its numbers, and the draws are compared by value with
the precision standard of their dtype. Where the random ops differ (another kernel path
on the device) nothing is replayed and the two-sample test stands alone.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map


def is_random(func) -> bool:
    return torch.Tag.nondeterministic_seeded in getattr(func, "tags", ())


def _host(tree: Any) -> Any:
    return tree_map(lambda t: t.detach().cpu().clone() if isinstance(t, torch.Tensor) else t, tree)


def _signature(tree: Any, widen: bool = False) -> Any:
    def sig(t):
        if not isinstance(t, torch.Tensor):
            return None
        return tuple(t.shape), ("floating" if widen and t.is_floating_point() else t.dtype)
    return tree_map(sig, tree)


class Recording(TorchDispatchMode):
    """Notes what each random op returned, as host tensors (``draws``: name, output)."""

    def __init__(self) -> None:
        super().__init__()
        self.draws: List[Tuple[str, Any]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if is_random(func):
            self.draws.append((str(func.overloadpacket), _host(out)))
        return out


def _mutated(func, args, kwargs) -> Optional[torch.Tensor]:
    """The tensor an in-place or ``out=`` random op writes (None for a functional one)."""
    for i, a in enumerate(func._schema.arguments):
        if a.alias_info is not None and a.alias_info.is_write:
            value = args[i] if i < len(args) and not a.kwarg_only else kwargs.get(a.name)
            if isinstance(value, torch.Tensor):
                return value
    return None


class Replaying(TorchDispatchMode):
    """Hands back the recorded draws, in order, for the random ops of a CPU run; ``broken``
    names the first op whose name, shape or dtype differs from the recording (from there
    on the ops run as they are, and the replay is no evidence). ``widen``: for the float64
    golden's run, a floating draw is handed back in the dtype the CPU asked for."""

    def __init__(self, draws: List[Tuple[str, Any]], widen: bool = False) -> None:
        super().__init__()
        self._widen = widen  # the float64 golden's run: floating draws cast to its dtype
        self._draws = list(draws)
        self._next = 0
        self.broken: Optional[str] = None

    @property
    def complete(self) -> bool:
        return self.broken is None and self._next == len(self._draws)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if not is_random(func) or self.broken is not None:
            return out
        if self._next >= len(self._draws):
            self.broken = f"the CPU drew more than the device ({func.overloadpacket})"
            return out
        name, drawn = self._draws[self._next]
        self._next += 1
        if name != str(func.overloadpacket) or \
                _signature(drawn, self._widen) != _signature(out, self._widen):
            self.broken = f"the device drew by {name}, the CPU by {func.overloadpacket}"
            return out
        target = _mutated(func, args, kwargs)
        if target is not None and isinstance(drawn, torch.Tensor):
            with torch.no_grad():
                target.copy_(drawn)
            return out
        return tree_map(lambda t, o: t.to(o.dtype) if isinstance(t, torch.Tensor) else t, drawn, out)
