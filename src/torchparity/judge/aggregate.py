"""Folding per-sample judgements into one result for (API, dtype): dtype discovery.

Each sample has a forward part and, where gradients are compared, a backward part, each
in one category:

- ``pass`` / ``warn`` / ``fail``: ran on both, judged by a precision standard;
- ``not_comparable``: ran, but the values cannot be compared (random output, or the CPU
  reference raised);
- ``unsupported``: the device refused with a recognised message (dtype, kernel, build);
- ``same_error``: the device and the CPU raise alike (the op itself refuses the sample): a
  case where every sample does is ``skip`` / ``not_comparable`` "both sides refused";
- ``error``: the device raised where the CPU did not, unrecognised;
- ``harness``: torchparity could not judge the sample.

The case status, worst first: error > fail > unsupported / partial > warn > pass > skip.
``partial`` means some samples ran and some were refused (or the forward ran and the
backward was refused): the dtype is supported for part of the API's surface.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..results.models import Cause, Metric, Status
from .judgement import Judgement

# which difference a case names first when its samples differ in several ways
_PRECEDENCE = {Cause.METADATA.value: 3, Cause.STATE.value: 2, Cause.MISMATCH.value: 1}

CATEGORIES = ("pass", "warn", "fail", "not_comparable", "unsupported", "same_error", "error",
              "harness")
RAN = ("pass", "warn", "fail", "not_comparable")


@dataclass
class Part:
    category: str
    judgement: Judgement
    cpu_raised: bool = False

    def __post_init__(self):
        if self.category not in CATEGORIES:
            raise ValueError(f"unknown sample category {self.category!r}")


@dataclass
class SampleOutcome:
    forward: Part
    backward: Optional[Part] = None


@dataclass
class CaseResult:
    status: str
    cause: Optional[str] = None
    detail: str = ""
    metric: Optional[Dict[str, Any]] = None
    counts: Dict[str, Any] = field(default_factory=dict)


def _metric(m: Optional[Metric]) -> Optional[Dict[str, Any]]:
    return m.model_dump(mode="json") if m is not None else None


def _severity(m: Optional[Metric]) -> float:
    if m is None or m.value is None or m.threshold is None:
        return -1.0
    if m.threshold <= 0:
        return float(m.value > m.threshold)
    return m.value / m.threshold


def _first(parts: List[tuple], limit: int = 400) -> str:
    i, label, p = parts[0]
    text = p.judgement.detail or p.category
    return f"sample {i} {label}: {text}"[:limit]


def _cause(p: Part) -> Optional[str]:
    c = p.judgement.cause
    return Cause(c).value if c is not None else None


def aggregate(outcomes: List[SampleOutcome]) -> CaseResult:
    n = len(outcomes)
    fwd = [(i, "forward", o.forward) for i, o in enumerate(outcomes)]
    bwd = [(i, "backward", o.backward) for i, o in enumerate(outcomes) if o.backward is not None]
    counts = {
        "samples": n,
        "forward": dict(Counter(p.category for _, _, p in fwd)),
        "backward": dict(Counter(p.category for _, _, p in bwd)),
    }

    def pick(parts, *cats):
        return [x for x in parts if x[2].category in cats]

    everything = fwd + bwd
    device_errors = pick(everything, "error")
    harness = pick(everything, "harness")
    fails = pick(everything, "fail")
    ran = pick(fwd, *RAN)
    # what the emulator itself cannot do is no answer about the chip: those samples are
    # left out (named in the detail), never a refusal of the device
    emu = [x for x in everything if x[2].category == "unsupported"
           and x[2].judgement.cause == Cause.EMULATOR_LIMIT]
    refused = [x for x in pick(fwd, "unsupported") if x not in emu]
    same = pick(fwd, "same_error")
    bwd_ran = pick(bwd, *RAN)
    bwd_refused = [x for x in pick(bwd, "unsupported") if x not in emu]  # raising like the CPU is the op's own limit
    same_note = f" ({len(same)} of {n} samples raise on the CPU too)" if same and ran else ""
    if emu and (ran or refused or same):
        same_note += (f" ({len({i for i, _, _ in emu})} of {n} samples left out: "
                      f"emulator limit, {_first(emu, 160)})")

    def result(status: Status, cause, detail: str, metric) -> CaseResult:
        return CaseResult(status=status.value, cause=cause, detail=detail[:600],
                          metric=_metric(metric) if isinstance(metric, Metric) else metric,
                          counts=counts)

    for group in (device_errors, harness):
        if group:
            k = len({i for i, _, _ in group})
            return result(Status.ERROR, _cause(group[0][2]),
                          f"{_first(group)} [{k} of {n} samples]",
                          Metric(name="samples_with_errors", value=float(k), threshold=0.0,
                                 standard="support"))
    if fails:
        k = len({i for i, _, _ in fails})
        # the first real difference (metadata before values), then the worst metric
        worst_fail = max(fails, key=lambda x: (_PRECEDENCE.get(_cause(x[2]), 0),
                                               _severity(x[2].judgement.metric)))
        return result(Status.FAIL, _cause(worst_fail[2]),
                      f"{_first([worst_fail])} [{k} of {n} samples differ]",
                      worst_fail[2].judgement.metric)
    if not ran:
        if refused:
            return result(Status.UNSUPPORTED, _cause(refused[0][2]),
                          f"{_first(refused)} [{len(refused)} of {n} samples refused]",
                          Metric(name="refused_samples", value=float(len(refused)),
                                 threshold=float(n), standard="support"))
        if same:  # refused on both sides: the op's contract, no answer about the device
            # (neither a limit of it nor its support; issue 48)
            return result(Status.SKIP, Cause.NOT_COMPARABLE.value,
                          f"both sides refused: {_first(same)} [all {n} samples raise on the CPU too]",
                          None)
        if emu:
            return result(Status.SKIP, Cause.EMULATOR_LIMIT,
                          f"{_first(emu)} [{len(emu)} of {n} samples: the emulator cannot run "
                          "them; needs hardware to decide]", None)
        return result(Status.SKIP, None, "no sample could be judged", None)
    if refused:
        return result(Status.PARTIAL, _cause(refused[0][2]),
                      f"{len(ran)} of {n} samples ran, {len(refused)} refused; {_first(refused)}"
                      + same_note,
                      Metric(name="refused_samples", value=float(len(refused)), threshold=float(n),
                             standard="support"))
    if bwd_refused:
        cause = _cause(bwd_refused[0][2]) or Cause.DTYPE_LIMIT.value
        return result(Status.PARTIAL, cause,
                      f"forward ran in {len(ran)} of {n} samples; backward refused in "
                      f"{len(bwd_refused)} of {len(bwd)}; {_first(bwd_refused)}",
                      Metric(name="refused_backward_samples", value=float(len(bwd_refused)),
                             threshold=float(len(bwd)), standard="support"))
    judged = pick(ran + bwd_ran, "pass", "warn")
    if not judged:
        first = ran[0][2].judgement
        return result(Status.SKIP, _cause(ran[0][2]) or Cause.NOT_COMPARABLE.value,
                      f"ran on the device in {len(ran)} of {n} samples; values not compared: "
                      f"{first.detail}" + same_note, first.metric)
    warns = pick(judged, "warn")
    if warns:
        w = max(warns, key=lambda x: _severity(x[2].judgement.metric))
        return result(Status.PASS, None, f"warn: {_first([w])}" + same_note, w[2].judgement.metric)
    best = max(judged, key=lambda x: _severity(x[2].judgement.metric))
    fwd_ok = len(pick(ran, "pass", "warn"))
    bwd_ok = len(pick(bwd_ran, "pass", "warn"))
    not_comp = pick(ran + bwd_ran, "not_comparable")
    extra = (f"; {len(not_comp)} part(s) not comparable ({not_comp[0][2].judgement.detail})"
             if not_comp else "")
    grads = f", gradients in {bwd_ok}" if bwd_ok else ""
    return result(Status.PASS, None,
                  f"{fwd_ok} of {n} samples match the CPU{grads}{extra}{same_note}",
                  best[2].judgement.metric)
