"""The emulated accelerator: a PrivateUse1 backend in pure Python driven by a profile.

Placeholder until the emulator lands: ``support_problem()`` says it is not built yet.
"""

from __future__ import annotations

from typing import Optional


def support_problem() -> Optional[str]:
    return "emu: the emulated accelerator is not built yet"


def activate(profile) -> None:  # pragma: no cover - replaced by the real emulator
    raise RuntimeError(support_problem())
