"""Reduced compute precision a correct device uses, reported per op while it runs.

Some chips compute an op in less precision than its dtype by default: torch_npu runs
float32 convolutions in HF32 on Atlas A2/A3 (``torch_npu.npu.conv.allow_hf32`` defaults to
True; the facts, with their sources, are the ``round-inputs`` rules of
``devices/profiles/noise/device.yaml``). A judge holding such a device to float32's bar
fails a correctly working chip, so a backend reports here each (op, dtype) it ran in
reduced precision, with the mantissa bits it kept, and the judge reads the record of the
run it is judging (``take``). The emulated device reports the declared facts of its
profile whether or not ``TORCHPARITY_EMU_NUMERICS=device`` makes it round (the bar is the
chip's, not the emulator's); a real device's adapter reports what its backend does.
"""

from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import torch

# (aten op name, dtype) -> mantissa bits kept, since the last take()/clear()
_SEEN: Dict[Tuple[str, torch.dtype], int] = {}


def note(op_name: str, dtype: torch.dtype, mantissa_bits: int) -> None:
    key = (op_name, dtype)
    if _SEEN.get(key, 99) > mantissa_bits:
        _SEEN[key] = mantissa_bits


def take() -> Dict[Tuple[str, torch.dtype], int]:
    """What was reported since the last take or clear (and forget it)."""
    out = dict(_SEEN)
    _SEEN.clear()
    return out


def clear() -> None:
    _SEEN.clear()


def bits_for(seen: Dict[Tuple[str, torch.dtype], int], dtype: torch.dtype) -> Optional[int]:
    """The fewest mantissa bits any reported op kept in ``dtype`` (None: full precision)."""
    found = [b for (_op, dt), b in seen.items() if dt == dtype]
    return min(found) if found else None


def ops_in(seen: Dict[Tuple[str, torch.dtype], int], dtype: torch.dtype) -> Set[str]:
    return {op for (op, dt) in seen if dt == dtype}
