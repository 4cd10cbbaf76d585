"""The one shape of a worker's answer to a judged case, whatever the case kind.

Every case kind that judges (``suite``, ``source``, ``opinfo``, ``upstream``) answers an
:class:`Answer`: the row (status, cause, detail, metric) at the top level, and what the
kind adds beside it (the whole :class:`~torchparity.results.models.ScenarioResult` of a
scenario run, OpInfo's sample counts and dtype claims, an upstream test's outcomes per
side). The handlers build it (the model checks the shape where it is made), send it as
JSON (:meth:`Answer.wire`), and the parent reads every event back through
:func:`answer_of` — a crash, a timeout and a harness error are answers too — so ``check``,
``sweep``, the vendor-list run and the generated test files read one shape.

The ``footprint`` kind (``predict --trace emulated``) is not a judged case: it answers the
ops each sample dispatched, not a row.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict

from ..results.models import Cause, FootprintEntry, Metric, ScenarioResult, Status

HARNESS_PREFIX = "torchparity failed on this case: "
DETAIL_LIMIT = 600


class Answer(BaseModel):
    """A worker's answer to one judged case (see the module doc)."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True)

    status: Status
    cause: Optional[Cause] = None
    detail: str = ""
    metric: Optional[Metric] = None
    # the scenario runner's whole result (``suite`` / ``source`` kinds: description,
    # tags, unverified calls, ...); the row fields above repeat its own
    result: Optional[ScenarioResult] = None
    # the ops the case dispatched; None: not recorded (the case did not ask)
    footprint: Optional[List[FootprintEntry]] = None
    device_ops: Optional[Any] = None  # ``profile-build``: the device ops a scenario ran
    # what an OpInfo case adds: sample counts, the dtype claims, OpInfo's note, the
    # output kind (values | random | ...)
    counts: Optional[Dict[str, Any]] = None
    claimed: Optional[bool] = None
    claimed_backward: Optional[bool] = None
    kind: Optional[str] = None
    note: Optional[str] = None
    # what the comparison compared in the CPU's answers (``judge.compare.output_kinds``,
    # over every sample of an OpInfo case); None: not recorded
    outputs: Optional[List[str]] = None
    outcomes: Optional[Any] = None  # an upstream replay: each side's test outcomes
    emulated: Optional[bool] = None
    seconds: Optional[float] = None  # the handler's own clock
    harness_error: Optional[str] = None  # the harness failed on this case (status error)

    def wire(self) -> Dict[str, Any]:
        """The JSON-able form the worker sends (fields left unset are left out)."""
        return self.model_dump(mode="json", exclude_none=True)

    @property
    def recorded(self) -> bool:
        """Whether the case recorded its footprint (an empty one is a recorded "none")."""
        return self.footprint is not None


def from_result(result: ScenarioResult, footprint: Optional[List[FootprintEntry]] = None,
                device_ops: Any = None) -> Answer:
    """The answer of a case that ran one scenario (``run.execute.execute``)."""
    return Answer(status=result.status, cause=result.cause, detail=result.detail,
                  metric=result.metric, result=result, footprint=footprint,
                  device_ops=device_ops)


def harness_error(message: str) -> Answer:
    """The answer of a case the harness failed on (never a verdict on the device)."""
    return Answer(status=Status.ERROR, cause=Cause.HARNESS_ERROR,
                  detail=f"{HARNESS_PREFIX}{message}"[:DETAIL_LIMIT], harness_error=message)


def answer_of(event: Any) -> Answer:
    """The answer one pool event (``run.pool.CaseEvent``) carries: the worker's, or the
    crash / timeout the pool saw, or a harness error the pool reported."""
    if event.kind == "crash":
        return Answer(status=Status.CRASH, cause=Cause.CRASH, detail=event.detail)
    if event.kind == "timeout":
        return Answer(status=Status.TIMEOUT, cause=Cause.TIMEOUT, detail=event.detail)
    payload = event.payload or {}
    if "status" not in payload and "harness_error" in payload:  # the pool's own report
        return harness_error(str(payload["harness_error"]))
    return Answer.model_validate(payload)
