"""Is a comparison evidence at all? The CPU run again as a correct chip rounds.

Some answers are chaotic in their inputs' last bits: an optimizer whose line search and
history depend on a loss's ninth digit (``LBFGS``: which history slots are filled, how
many iterations ran) turns a correct chip's rounding into a different answer. Where a
device row fails, the CPU reference runs once more under :class:`CorrectChip` (every op
through the rules of ``devices/profiles/noise/device.yaml`` that hold for every correct
chip: reductions in another order, float32-accumulated low-precision matmuls, 1-ulp
transcendentals, each documented for real hardware; not HF32, a reduced-precision mode
the device reports and the judge forgives by itself) and is judged against the clean CPU run by the same judge.
If the CPU itself fails that way, the comparison cannot tell a broken device from a
correct one: the row is ``not_comparable`` ("ill-conditioned"), never a verdict.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from torch.utils._python_dispatch import TorchDispatchMode

from ..devices.emulator import noise

# the profile whose rules stand for "a correct chip" (the rules hold for every profile),
# and the kinds of rule applied: a reduced-precision mode (round-inputs) is reported by
# the device and forgiven by the judge, so a CPU run in it would fail where no chip does
PROFILE = "allow-all"
KINDS = ("reorder", "upcast", "ulp")


class CorrectChip(TorchDispatchMode):
    """Ops run as a correct chip rounds them (the device-noise rules), on any device."""

    def __init__(self, profile: str = PROFILE) -> None:
        super().__init__()
        self._profile = profile
        self._calls: Dict[Any, Callable] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        call = self._calls.get(func)
        if call is None:
            call = self._calls[func] = noise.wrap(func, func, self._profile, KINDS)
        return call(*args, **(kwargs or {}))
