"""What a result row is evidence of, derived from its footprint (never a hand label).

Every row of report.json, of the sweep store and of the matrix carries ``evidence``:

- ``device-compute``: device ops attributed to the API itself (or to a user callable it
  ran) did real work, and the row compared their outputs;
- ``device-state``: the API issued only metadata / view / allocation ops on device tensors
  (strides, dtype, aliasing), or it issued none itself but the scenario's device tensors
  went through the state it set up (forward-AD levels, flags read by device kernels), and
  that state was compared;
- ``host-only``: no device op attributed to the API ran, and the scenario did nothing on
  the device beyond moving its inputs there and reading results back: what was compared
  is host behaviour;
- ``none``: the row is not an answer (a timeout, the harness's own failure, a world
  killed from outside, something the emulator cannot do, not comparable), or no
  footprint was recorded for it (a crash; a world whose ranks sent none back): nothing
  about the device was compared, or nothing says what was, and the row is never counted.

A world's ranks record their own footprint (``sources.world.recorded_call``) and the
worker's recorder attributes it to the API by the same rules (``FootprintRecorder.absorb``),
so world rows have the evidence of what ran in the ranks.

An API whose answering rows are all ``host-only`` is **device-independent** (verdict and
community category 1.2①, seed 000's reasoning: pure Python, no device operator, no new
test needed).
"""

from __future__ import annotations

from typing import Iterable, List, Optional

from ..api.footprint import METADATA_OPS, UNRECORDED, is_runtime
from ..results.models import FootprintEntry, OwnFootprint, RowEvidence, ScenarioResult, Status
from .causes import NOT_ANSWER_CAUSES as _NOT_ANSWER

DEVICE_COMPUTE = RowEvidence.DEVICE_COMPUTE.value
DEVICE_STATE = RowEvidence.DEVICE_STATE.value
HOST_ONLY = RowEvidence.HOST_ONLY.value
NONE = RowEvidence.NONE.value
EVIDENCE_VALUES = (DEVICE_COMPUTE, DEVICE_STATE, HOST_ONLY, NONE)
_RANK = {NONE: 0, HOST_ONLY: 1, DEVICE_STATE: 2, DEVICE_COMPUTE: 3}

# rows that are not an answer about the device, whatever else they say
NOT_ANSWER_CAUSES = frozenset(c.value for c in _NOT_ANSWER)
NOT_ANSWER_STATUSES = frozenset({Status.SKIP.value, Status.TIMEOUT.value})

# what a scenario does around an API that is no device work: moving inputs onto the
# device, allocating them, reading results back (``.tolist()``, ``.item()``)
TRANSFER_OPS = frozenset({
    "_to_copy", "copy_", "_copy_from", "_copy_from_and_resize", "empty", "empty_strided",
    "lift_fresh", "lift_fresh_copy", "detach", "_local_scalar_dense",
    "_has_compatible_shallow_copy_type",  # Module.to(device) asks it of each parameter: a query
})


TAKEAWAY = "takeaway"  # OwnFootprint.method of entries attributed by taking the API away


def _name(entry: FootprintEntry) -> str:
    return entry.op.split(".", 1)[-1]


def is_answer(status: Optional[str], cause: Optional[str]) -> bool:
    """Whether a row answers anything about the device (see the module docstring)."""
    return status not in NOT_ANSWER_STATUSES and cause not in NOT_ANSWER_CAUSES


def from_footprint(entries: Iterable[FootprintEntry], own: Optional[OwnFootprint] = None) -> str:
    """device-compute | device-state | host-only from one case's footprint (every
    source: api, callable and scenario entries).

    ``own``: how the entries were attributed (``run.takeaway``). Taken away, an entry is
    the API's only if it disappeared without the API, so the scenario's device work is
    the API's indirect effect only where the run without the API dispatched other device
    ops or could not run (``own.steers``: a level, a flag, a mode the device work reads);
    otherwise it is the scenario's own, and an API with no entry of its own is host-only.
    A world's body (``own.steers`` False) is the scenario's too. Where nothing decided it
    (no ``own``, or the frames kept with ``own.steers`` None), any device work beyond
    moving inputs and reading results back counts as indirect, as before."""
    entries = list(entries)
    mine = [e for e in entries if e.source in ("api", "callable")]
    if any(not is_runtime(e) and _name(e) not in METADATA_OPS for e in mine):
        return DEVICE_COMPUTE
    if mine:  # views, strides, allocation, or device-module calls (counters, streams)
        return DEVICE_STATE
    if own is not None and (own.method == TAKEAWAY or own.steers is not None):
        return DEVICE_STATE if own.steers else HOST_ONLY
    if any(not is_runtime(e) and _name(e) not in TRANSFER_OPS for e in entries):
        return DEVICE_STATE  # device work under the state the API set up (indirect)
    return HOST_ONLY


def row_evidence(status: Optional[str], cause: Optional[str],
                 entries: Iterable[FootprintEntry], recorded: bool = True,
                 own: Optional[OwnFootprint] = None) -> str:
    """The ``evidence`` of one row; ``recorded``: whether a footprint was recorded for
    it at all (a crashed or timed-out case has none: nothing to derive, ``none``);
    ``own``: how its entries were attributed (:func:`from_footprint`)."""
    entries = list(entries)
    if not is_answer(status, cause) or not recorded or any(e.op == UNRECORDED for e in entries):
        return NONE  # nothing to derive, or part of the case ran where no recorder reached
    return from_footprint(entries, own)


def api_evidence(results: Iterable[ScenarioResult]) -> str:
    """The strongest evidence of an API's answering rows (``none`` if none answers)."""
    best = NONE
    for r in results:
        ev = r.evidence if is_answer(r.status, r.cause) else NONE
        if ev is not None and _RANK.get(ev, 0) > _RANK[best]:
            best = ev
    return best


def strongest(values: Iterable[Optional[str]]) -> str:
    best = NONE
    for v in values:
        if v in _RANK and _RANK[v] > _RANK[best]:
            best = v
    return best


def device_independent(results: List[ScenarioResult]) -> bool:
    """Every answering row is host-only (and at least one answers)."""
    answers = [r for r in results if is_answer(r.status, r.cause)]
    return bool(answers) and all(r.evidence == HOST_ONLY for r in answers)
