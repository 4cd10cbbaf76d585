"""The judge's answer for one comparison: a status, why, and the metric that decided it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..results.models import Cause, Metric, Status


@dataclass
class Judgement:
    status: Status
    cause: Optional[Cause] = None
    detail: str = ""
    metric: Optional[Metric] = None
    # a pass that came close: a precision metric above its warn threshold. Warn is a
    # level of the judge (error > fail > warn > pass); results record it as a pass whose
    # detail and metric say what warned.
    warn: bool = False

    @property
    def passed(self) -> bool:
        return self.status == Status.PASS


# "not comparable" (skip) ranks below pass: it adds no evidence either way.
_RANK = {Status.SKIP: 0, Status.PASS: 1, Status.UNSUPPORTED: 3, Status.PARTIAL: 3,
         Status.FAIL: 4, Status.ERROR: 5, Status.CRASH: 6, Status.TIMEOUT: 6}


def rank(j: Judgement) -> int:
    if j.status == Status.PASS and j.warn:
        return 2
    return _RANK[Status(j.status)]


def worst(judgements: Sequence[Judgement]) -> Judgement:
    """The worst wins: error > fail > unsupported > warn > pass > skip (not comparable)."""
    if not judgements:
        return Judgement(Status.PASS)
    # among equally bad ones, the first real difference: metadata (dtype, shape) explains
    # a values difference, not the other way round
    return max(judgements, key=lambda j: (rank(j), _PRECEDENCE.get(j.cause, 0)))


_PRECEDENCE = {Cause.METADATA: 3, Cause.STATE: 2, Cause.MISMATCH: 1,
               Cause.METADATA.value: 3, Cause.STATE.value: 2, Cause.MISMATCH.value: 1}
