"""Executing one scenario case in this process: CPU reference, device run, judgement."""

from __future__ import annotations

import contextlib
import os
import re
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch.utils._pytree import tree_map

from ..api.footprint import METADATA_OPS, RANKS_RECORDED, UNRECORDED, FootprintRecorder, is_runtime
from ..devices.base import DeviceAdapter
from ..judge.compare import Judgement, compare_outputs, local_aliasing, output_kinds, worst
from ..judge.paths import path_difference
from ..judge.ranks import name_ranks
from ..results.error_rules import classify_exception, classify_exception_chain
from ..results.models import Cause, FootprintEntry, OwnFootprint, ScenarioResult, Status
from ..scenarios.registry import (
    EXACT,
    HarnessFailure,
    NotRunnable,
    Raises,
    ScaffoldingRefused,
    Scenario,
    device_under_test,
    draws_in,
)
from ..scenarios.sources.base import resolve_quiet
from .body_locals import capturing, tensor_locals
from .conditioning import CorrectChip
from .paths import record_path
from .replay import Recording, Replaying
from .takeaway import (
    PERTURBED,
    Takeaway,
    bounded,
    counterpart,
    does_nothing,
    frames_only,
    own_entries,
    steered,
)
from .takeaway import REPLAYED as REPLAYED_STUB
from .takeaway_values import members_takeaway, value_takeaway
from .takeaway_world import WorldTakeaway

SEED = 0
DETAIL_LIMIT = 600
REPLAYED = "seeded-replay"  # the standard named by a row whose draws were replayed


@dataclass
class Outcome:
    value: Any = None
    exc: Optional[BaseException] = None
    seconds: float = 0.0
    # a code-block case's variables that held tensors when its body returned: its inputs,
    # for the aliasing check (``run.body_locals``)
    inputs: Dict[str, Any] = field(default_factory=dict)

    @property
    def raised(self) -> bool:
        return self.exc is not None

    def describe(self) -> str:
        if self.exc is None:
            return "no exception"
        return describe_exception(self.exc)


def describe_exception(exc: BaseException) -> str:
    text = str(exc).strip()
    # the first meaningful line; torch errors often carry a long C++ trace after it
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(lines) > 1 and classify_exception(type(exc).__name__, first) is None:
        # a refusal whose reason is on a later line (torch_npu: "call aclnnX failed, error
        # code is 161002" / "AclNN_Parameter_Error(EZ1001): Tensor self not implemented for ...")
        why = next((ln for ln in lines[1:] if classify_exception(type(exc).__name__, ln) is not None), None)
        if why:
            detail += f" ... {why}"
    return detail[:DETAIL_LIMIT]


def _describe_chain(outer: BaseException, inner: Optional[BaseException]) -> str:
    """The deciding exception, and the one that wraps it when they differ."""
    if inner is None or inner is outer:
        return describe_exception(outer)
    return f"{describe_exception(inner)} (raised within {describe_exception(outer)[:120]})"


def _run(fn, device: str, dtype: torch.dtype, adapter: Optional[DeviceAdapter]) -> Outcome:
    torch.manual_seed(SEED)
    start = time.perf_counter()
    try:
        with capturing(fn) as frames:
            value = fn(device, dtype)
        if adapter is not None:
            adapter.synchronize()
        return Outcome(value=value, seconds=time.perf_counter() - start, inputs=tensor_locals(frames))
    except Exception as exc:  # the scenario's own failure is data, not our crash
        return Outcome(exc=exc, seconds=time.perf_counter() - start)


def run_reference(fn, dtype: torch.dtype, adapter: DeviceAdapter) -> Outcome:
    """The CPU reference, outside every process-wide switch of the device backend (an
    emulated build without ITT must not make the CPU refuse ITT)."""
    with adapter.reference():
        return _run(fn, "cpu", dtype, None)


def _matches(exc: BaseException, raises: Raises) -> bool:
    names = {klass.__name__ for klass in type(exc).__mro__}
    return raises.type in names and re.search(raises.match, str(exc)) is not None


GOLDEN_FOR = (torch.float16, torch.bfloat16, torch.float32)


def golden_of(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter) -> Optional[Callable[[], Any]]:
    """The float64 golden of a scenario that declares one, computed lazily on the CPU
    (None where the scenario has none or ``dtype`` has nothing more precise)."""
    if sc.golden is None or dtype not in GOLDEN_FOR:
        return None

    def compute() -> Any:
        out = run_reference(lambda _device, dt: sc.golden(dt), dtype, adapter)
        if out.raised:
            return None  # no golden: judged against the CPU
        return tree_map(lambda v: v.detach() if isinstance(v, torch.Tensor) else v, out.value)
    return compute


def judge_outcomes(sc: Scenario, cpu: Outcome, dev: Outcome, adapter: DeviceAdapter,
                   golden: Optional[Callable[[], Any]] = None) -> Judgement:
    extra = adapter.error_patterns()
    if isinstance(cpu.exc, NotRunnable):  # nothing to compare: the scenario cannot run at all
        return Judgement(Status.SKIP, Cause.NOT_COMPARABLE, f"not runnable: {cpu.exc}")
    for side, out in (("device", dev), ("CPU", cpu)):  # the scaffolding failed, not the API
        if isinstance(out.exc, HarnessFailure):
            if out.exc.timed_out:
                return Judgement(Status.TIMEOUT, Cause.TIMEOUT, f"{side} run: {out.describe()}")
            return Judgement(Status.ERROR, Cause.HARNESS_ERROR, f"{side} run: {out.describe()}")
    for side in (dev, cpu):  # no scaffolding the device runs in this dtype: not the API's answer
        if isinstance(side.exc, ScaffoldingRefused):
            return Judgement(Status.SKIP, Cause.NOT_COMPARABLE, f"scaffolding refused: {side.exc}")
    if dev.raised:
        # the device's own error under a wrapper (assert_close's "Comparing ... resulted in
        # the unexpected exception above", a stage's re-raise) decides; the whole chain is kept
        unsupported, inner = classify_exception_chain(dev.exc, extra)
    else:
        unsupported, inner = None, None

    if sc.raises is not None:
        if dev.raised and _matches(dev.exc, sc.raises):
            note = "" if cpu.raised and _matches(cpu.exc, sc.raises) else (
                f"; note: the CPU reference gave {cpu.describe()}")
            return Judgement(Status.PASS, None, f"raised as expected: {dev.describe()}{note}")
        if unsupported:
            return Judgement(unsupported[0], unsupported[1], _describe_chain(dev.exc, inner))
        if dev.raised:
            return Judgement(Status.ERROR, Cause.DEVICE_ERROR,
                             f"expected {sc.raises.type} matching {sc.raises.match!r}, got {dev.describe()}")
        return Judgement(Status.FAIL, Cause.EXCEPTION_MISMATCH,
                         f"expected {sc.raises.type} matching {sc.raises.match!r}, but it returned normally")

    if dev.raised:
        if unsupported:  # a refusal the device names (a dtype, a build, a capability)
            note = (f"; the CPU reference raised {cpu.describe()}" if cpu.raised
                    else f"; the CPU reference returned {_short(cpu.value)}")
            return Judgement(unsupported[0], unsupported[1], _describe_chain(dev.exc, inner) + note)
        if cpu.raised:
            # both sides refuse and the case declares no refusal: the API's contract, never
            # an answer on the device (a case that asserts the refusal declares ``raises``)
            return Judgement(Status.SKIP, Cause.NOT_COMPARABLE,
                             f"{BOTH_REFUSED}: the device raised {dev.describe()}; "
                             f"the CPU raised {cpu.describe()}")
        return Judgement(Status.ERROR, Cause.DEVICE_ERROR, dev.describe())
    if cpu.raised:
        return cpu_raised_device_returned(cpu.exc, extra, "")
    if sc.compare == "none":
        return Judgement(Status.PASS, None, f"returned {_short(dev.value)} (not compared)")
    exact = EXACT in sc.tags  # one right answer (a conversion, a copy): bit for bit
    judgement = compare_outputs(cpu.value, dev.value, adapter.type, golden=None if exact else golden,
                                kind="exact" if exact else "values")
    # an output that is (or is not) one of the case's inputs where the CPU's is not (or is)
    aliased = local_aliasing(cpu.inputs, cpu.value, dev.inputs, dev.value)
    if aliased:
        judgement = worst([judgement, *aliased])
    if WORLD_TAG in sc.tags:  # the ranks' parts in the wrong places: the ranks named
        judgement = name_ranks(judgement, cpu.value, dev.value)
    if judgement.passed and not judgement.detail:
        judgement.detail = f"matches the CPU: {_short(dev.value)}"
    return judgement


BOTH_REFUSED = "both sides refused"


def cpu_raised_device_returned(exc: BaseException, extra: Sequence[Any] = (), where: str = "") -> Judgement:
    """The device returned where the CPU reference raised: a difference (the device
    accepted what the CPU refuses: ``fail`` / ``exception_mismatch``), unless the CPU's
    exception is a limit of the CPU itself (a dtype its kernel lacks, a build without the
    feature): then there is no reference to compare with (``not_comparable``)."""
    cls = classify_exception(type(exc).__name__, str(exc), extra)
    said = describe_exception(exc)
    if cls is not None and cls[0] == Status.UNSUPPORTED:
        return Judgement(Status.SKIP, Cause.NOT_COMPARABLE,
                         f"{where}the device returned, the CPU reference refused ({cls[1].value}): {said}")
    return Judgement(Status.FAIL, Cause.EXCEPTION_MISMATCH,
                     f"{where}the device returned where the CPU raises {said}")


def _short(value: Any, limit: int = 120) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor(shape={tuple(value.shape)}, dtype={str(value.dtype)[6:]}, device={value.device.type})"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_short(v, 60) for v in value)
        text = f"({inner})"
    elif isinstance(value, dict):  # never repr a device tensor: printing runs ops on it
        inner = ", ".join(f"{k!r}: {_short(v, 60)}" for k, v in value.items())
        text = f"{{{inner}}}"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def record_footprint(sc: Scenario, api_obj: Any, api_codes: Sequence[Any], dtype: torch.dtype,
                     adapter: DeviceAdapter) -> List[FootprintEntry]:
    """Run the scenario once more on the device under the footprint recorder."""
    return _recorded_run(sc, api_obj, api_codes, dtype, adapter, runtime=True)[0].entries()


def _recorded_run(sc: Scenario, api_obj: Any, api_codes: Sequence[Any], dtype: torch.dtype,
                  adapter: DeviceAdapter, runtime: bool = False,
                  around: Optional[Any] = None) -> Tuple[FootprintRecorder, Outcome]:
    """The scenario run once more on the device, seeded, under a footprint recorder; a
    failure ends the run (the judged run already reported it: ops up to it are recorded,
    ``recorder.failed`` names the op that raised). The run's outcome comes too: the
    footprint run of a case is also its repeat (see :func:`repeat_draws`)."""
    recorder = FootprintRecorder(adapter.type, api_objects=[api_obj] if api_obj is not None else [],
                                 api_codes=api_codes, user_files=[sc.source_file], runtime=runtime)
    torch.manual_seed(SEED)
    start = time.perf_counter()
    try:
        with recorder, (around if around is not None else contextlib.nullcontext()):
            value = sc.fn(adapter.torch_device, dtype)
            adapter.synchronize()
        outcome = Outcome(value=value, seconds=time.perf_counter() - start)
    except Exception as exc:
        outcome = Outcome(exc=exc, seconds=time.perf_counter() - start)
    return recorder, outcome


def repeat_draws(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, dev: Outcome,
                 judgement: Judgement, again: Optional[Outcome] = None) -> None:
    """A scenario returning :class:`~torchparity.scenarios.registry.Draws`: the device run
    repeated under the same seed (and the default generator) must draw bit-identical
    values; otherwise the row fails, whatever the distributions say. ``again``: a repeat
    already made (the case's footprint run: same seed, same device), else one is run."""
    first = draws_in(dev.value) if not dev.raised else []
    if not first or judgement.status not in (Status.PASS, Status.FAIL):
        return
    if again is None:
        again = _run(sc.fn, adapter.torch_device, dtype, adapter)
    second = draws_in(again.value) if not again.raised else []
    if len(second) != len(first):
        return  # the repeat itself failed: the judged run already said what it could
    for i, (a, b) in enumerate(zip(first, second)):
        a, b = a.detach().cpu(), b.detach().cpu()
        same = a.shape == b.shape and a.dtype == b.dtype and bool(
            torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                                  and torch.equal(a.nan_to_num(), b.nan_to_num())))
        if not same:
            judgement.status, judgement.cause, judgement.warn = Status.FAIL, Cause.MISMATCH, False
            judgement.detail = (f"draws[{i}]: two device runs under the same seed and generator drew "
                                f"different values (a seeded API must repeat its draws); {judgement.detail}")
            return


def ill_conditioned(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, cpu: Outcome,
                    judgement: Judgement, golden: Optional[Callable[[], Any]]) -> None:
    """A failed row whose comparison a correct chip's rounding breaks on the CPU itself
    (``run.conditioning``) is no verdict: ``not_comparable``, "ill-conditioned"."""
    if judgement.status != Status.FAIL or judgement.cause not in (Cause.MISMATCH, Cause.METADATA) \
            or cpu.raised:
        return
    with adapter.reference(), CorrectChip():
        rounded = _run(sc.fn, "cpu", dtype, None)
    if rounded.raised:
        return
    j = compare_outputs(cpu.value, rounded.value, "cpu", golden=golden)
    if j.status != Status.FAIL:
        return
    judgement.status, judgement.cause, judgement.warn = Status.SKIP, Cause.NOT_COMPARABLE, False
    judgement.detail = (f"ill-conditioned: the CPU itself, rounding as a correct chip does "
                        f"(run.conditioning), differs from the CPU as the device does: {j.detail}; "
                        f"the device: {judgement.detail}")


def replay_draws(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, dev: Outcome,
                 judgement: Judgement, recording: Optional[Recording] = None,
                 again: Optional[Outcome] = None) -> None:
    """A passing scenario returning :class:`~torchparity.scenarios.registry.Draws`: its
    draws compared by value with what the CPU computes from the device's own random
    numbers (``run.replay``), which the two-sample test cannot do. Nothing changes where
    the device drew by other random ops than the CPU (the replay is then no evidence).
    ``recording`` and ``again``: the case's footprint run, recorded (no run of its own)."""
    if judgement.status != Status.PASS or dev.raised or not draws_in(dev.value):
        return
    if recording is None or again is None:  # no recorded run to share: one of its own
        recording = Recording()
        with recording:
            again = _run(sc.fn, adapter.torch_device, dtype, adapter)
    drawn = draws_in(again.value) if not again.raised else []
    if not drawn or not recording.draws:
        return
    replaying = Replaying(recording.draws)
    with adapter.reference(), replaying:
        cpu = _run(sc.fn, "cpu", dtype, None)
    expected = draws_in(cpu.value) if not cpu.raised else []
    if not replaying.complete or len(expected) != len(drawn):
        return

    def golden() -> Any:  # the same draws, computed from in float64 (None: no golden)
        if dtype not in GOLDEN_FOR:
            return None
        widened = Replaying(recording.draws, widen=True)
        with adapter.reference(), widened:
            out = _run(sc.fn, "cpu", torch.float64, None)
        values = draws_in(out.value) if not out.raised and widened.complete else []
        return [v.detach() for v in values] if len(values) == len(drawn) else None
    j = compare_outputs(expected, drawn, adapter.type, "draws", golden=golden)
    if j.status == Status.FAIL:
        judgement.status, judgement.cause, judgement.warn = Status.FAIL, j.cause, False
        judgement.metric = j.metric
        judgement.detail = (f"the device's draws differ from what the CPU computes from the device's "
                            f"own random numbers ({REPLAYED}): {j.detail}; {judgement.detail}")
    elif j.status == Status.PASS:
        judgement.detail = f"{judgement.detail}; draws equal the CPU's from the device's random numbers ({REPLAYED})"


SCAFFOLD_SOURCES = ("scenario", "callable")


def explain_scaffolding(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, judgement: Judgement,
                        api_obj: Any, api_codes: Sequence[Any],
                        recorder: Optional[FootprintRecorder] = None) -> None:
    """A device refusal raised by an op the scenario runs around the API (its loss, an
    input transform, a callable it hands the API) is not the API's answer: the device run
    is repeated under the footprint recorder (``recorder``: the case's footprint run, when
    it has one) and, where the refused op's issuer is the scenario, the row becomes
    ``skip`` / ``not_comparable`` ("scaffolding refused")."""
    if judgement.status != Status.UNSUPPORTED or (api_obj is None and not api_codes):
        return
    if recorder is None:
        recorder = _recorded_run(sc, api_obj, api_codes, dtype, adapter)[0]
    if recorder.failed is not None and recorder.failed[1] in SCAFFOLD_SOURCES:
        op, source, dts = recorder.failed
        judgement.status, judgement.cause = Status.SKIP, Cause.NOT_COMPARABLE
        judgement.detail = (f"scaffolding refused: {op} ({dts}) is issued by the {source}, not the API; "
                            f"{judgement.detail}")


def explain_by_path(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, judgement: Judgement) -> None:
    """A differing result whose device run dispatched other ops or dtypes than the CPU
    run: the API itself computes otherwise on the device (cause ``device_path``).

    The cause names the first real difference: an output dtype, shape or kind that differs
    stays ``metadata`` (another path is then a consequence, noted in the detail), a
    counter stays ``state``; only values that differ while the outputs' metadata agree
    and the footprint differs are ``device_path``."""
    if judgement.cause not in (Cause.MISMATCH, Cause.METADATA):
        return
    why = path_difference(record_path(lambda: run_reference(sc.fn, dtype, adapter)),
                          record_path(lambda: _run(sc.fn, adapter.torch_device, dtype, adapter)),
                          adapter.type)
    if why is None:
        return
    with adapter.clean() as clean:  # injected faults: is the path difference theirs?
        if clean and path_difference(record_path(lambda: run_reference(sc.fn, dtype, adapter)),
                                     record_path(lambda: _run(sc.fn, adapter.torch_device, dtype, adapter)),
                                     adapter.type) == why:
            # the clean device takes the same other path: not what makes this difference
            judgement.detail = f"{judgement.detail}; note: {why} (as on the clean device)"
            return
    if judgement.cause == Cause.MISMATCH:
        judgement.cause = Cause.DEVICE_PATH
        judgement.detail = f"{why}; {judgement.detail}"
    else:
        judgement.detail = f"{judgement.detail}; note: {why}"


# the metric of a non-tensor leaf compared exactly (a number, a flag, a string)
_SCALAR_METRICS = ("equal", "abs_diff")


def explain_by_state(judgement: Judgement, entries: Sequence[FootprintEntry]) -> None:
    """A differing number or flag where the API computed nothing on the device itself (no
    compute op of its own in the footprint) is a counter or runtime state it reports:
    cause ``state`` (memory counters, stream and device indices, flags)."""
    if judgement.cause != Cause.MISMATCH or judgement.metric is None:
        return
    if judgement.metric.name not in _SCALAR_METRICS or judgement.metric.standard != "exact":
        return
    if any(e.source in ("api", "callable") and not is_runtime(e)
           and e.op.split(".", 1)[-1] not in METADATA_OPS for e in entries):
        return
    judgement.cause = Cause.STATE


def taking_away() -> bool:
    """Whether recorded cases take their API away (``TORCHPARITY_TAKEAWAY=0``: the frames'
    attribution alone, as before; ``benchmarks/own_footprint.py`` compares the two)."""
    return os.environ.get("TORCHPARITY_TAKEAWAY", "1") != "0"


HOLLOW = "hollow"  # the tag of a row whose case does not observe its API
WORLD_TAG = "distributed"  # the tag of a world case: its value is a list, rank by rank


def _same_outcome(sc: Scenario, first: Outcome, second: Outcome, adapter: DeviceAdapter,
                  where: Optional[str] = None) -> bool:
    """Whether a judge would see no difference between two runs of one case (made on
    ``where``, the device under test unless said)."""
    if first.raised or second.raised:
        return (first.raised and second.raised and type(first.exc) is type(second.exc)
                and str(first.exc) == str(second.exc))
    if sc.compare == "none":
        return True  # only whether it ran is judged
    try:  # judged as the row is: the first run in the CPU's place (its tensors on the CPU)
        reference = tree_map(lambda v: v.detach().cpu() if isinstance(v, torch.Tensor) else v, first.value)
        return compare_outputs(reference, second.value, where or adapter.type).status == Status.PASS
    except Exception:
        return False


def take_away(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, api_obj: Any,
              api_codes: Sequence[Any], take: Optional[Union[Takeaway, WorldTakeaway]],
              entries: List[FootprintEntry],
              recorded: Optional[Outcome]) -> Tuple[List[FootprintEntry], OwnFootprint]:
    """:func:`decide_takeaway`, its reason naming the implementations of an abstract API
    that were taken away with it (``run.takeaway.implementations``)."""
    out, own = decide_takeaway(sc, dtype, adapter, api_obj, api_codes, take, entries, recorded)
    followed = list(getattr(take, "followed", None) or [])
    if followed and own.how is not None:
        own.reason += (f"; the API is abstract: its implementations in torch were taken away with it "
                       f"({', '.join(followed[:4])}{', ...' if len(followed) > 4 else ''})")
    return out, own


def decide_takeaway(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, api_obj: Any,
                    api_codes: Sequence[Any], take: Optional[Union[Takeaway, WorldTakeaway]],
                    entries: List[FootprintEntry],
                    recorded: Optional[Outcome]) -> Tuple[List[FootprintEntry], OwnFootprint]:
    """The case's footprint attributed by taking the API away (``run.takeaway``), and
    whether the case observes the API: the recorded run (``entries``, ``recorded``) beside
    a run whose API calls are answered by perturbed stand-ins and, where that run cannot
    go on, by the recorded results replayed. A world case's API is taken away in its ranks
    (``run.takeaway_world``) and decided here by the same rule."""
    # a case whose API ran here (a launcher: an elastic agent, start_processes) and that no
    # world took the API away for is decided here, whatever ranks or workers it started:
    # those are the API's own processes (a world case's harness may call the API here too:
    # a world that takes the request decides first)
    ran_here = take is not None and not getattr(take, "in_ranks", False) and (take.calls or 0) > 0
    in_world = any(e.op == RANKS_RECORDED for e in entries) or (
        "distributed" in sc.tags and take is not None and take.how is not None and not take.calls)
    if in_world and take is not None and not getattr(take, "in_ranks", False):
        # the API runs in the world's ranks: taken away there (``run.takeaway_world``), and
        # decided below by the same rule, from that world's recorded run
        world = WorldTakeaway(sc.api)
        recorder, outcome = _recorded_run(sc, api_obj, api_codes, dtype, adapter, runtime=True,
                                          around=world.recording())
        if world.infos and hasattr(take, "followed"):  # what the ranks followed, where it ran
            take.followed = world.followed
        if world.served and not world.inconclusive:
            out, own = decide_takeaway(sc, dtype, adapter, api_obj, api_codes, world, recorder.entries(), outcome)
            if world.ended:  # the same rule as a run without the API that raises in-process
                own.reason += f"; {world.ended}: its outcome, as a run that raises in-process"
            return out, own
        if world.served or not ran_here:
            own = frames_only(f"takeaway inconclusive: {world.inconclusive}; the frames' attribution is kept"
                              if world.served else "a world's ranks run the API in processes of their "
                              "own, where it is not taken away")
            own.steers = False  # the world's own collectives and device work are its body's
            return entries, own
    if take is None or take.how is None or recorded is None:
        own = frames_only(take.why if take is not None else "no API to take away")
        return entries, _host_object(sc, api_obj, own)
    if any(e.op == UNRECORDED for e in entries):
        return entries, frames_only("part of the case ran where no recorder reached", take.how)
    if take.calls == 0 and recorded.raised:
        own = frames_only(f"the recorded run ended before it called the API "
                          f"({recorded.describe()})", take.how, 0)
        return entries, _observed_on_cpu(sc, dtype, adapter, take, own)
    if take.calls == 0 and isinstance(api_obj, type) and (take.init is None or take.constructed):
        return entries, frames_only("none of the class's own methods ran: constructing it is "
                                    "not taken away", take.how, 0)
    if recorded.raised:  # a partial footprint: the frames' attribution stays, the outcome is compared
        calls = take.calls
        _, outcome = _recorded_run(sc, api_obj, api_codes, dtype, adapter, runtime=True,
                                   around=take.stubbing(PERTURBED))
        observes = not _same_outcome(sc, recorded, outcome, adapter)
        own = OwnFootprint(
            method="frames", how=take.how, stub=PERTURBED, calls=calls, observes=observes,
            reason=(f"the recorded run raised ({recorded.describe()[:160]}): its footprint is "
                    f"partial, the frames' attribution is kept; the outcome "
                    f"{'changes' if observes else 'is the same'} without the API"))
        return entries, own if observes else _observed_on_cpu(sc, dtype, adapter, take, own)
    unreached = getattr(take, "unreached", "")
    if take.calls == 0 and unreached:  # its calls may all have gone where it does not reach
        return entries, frames_only(f"no call of the API was reached: {unreached}", take.how, 0)
    if take.calls == 0:
        own, moved = own_entries(entries, entries)
        return own, OwnFootprint(method="takeaway", how=take.how, calls=0, observes=False,
                                 reason="the case never calls the API", moved=moved)
    observes: Optional[bool] = None
    for kind in (PERTURBED, REPLAYED_STUB):
        recorder, outcome = _recorded_run(sc, api_obj, api_codes, dtype, adapter, runtime=True,
                                          around=take.stubbing(kind))
        if kind == PERTURBED:
            observes = not _same_outcome(sc, recorded, outcome, adapter)
        if outcome.raised and not recorded.raised:
            continue  # the run ended early: the ops after its end were never reached
        # a value that is an object the case works through (a QConfig's observers): what it
        # still did with its stand-in keeps the frames' attribution (run.takeaway_values)
        lower = ((kind == REPLAYED_STUB and not take.replays_data) or getattr(take, "works", False)
                 or bool(unreached))  # what stayed may be calls it did not reach
        without = recorder.entries()
        own, moved = own_entries(entries, without, lower_bound=lower, api_names=take.names,
                                 during=take.during)
        steers = steered(entries, without)
        # a method called on an object of the device under test (a device generator's
        # manual_seed) sets the state that object holds, which the device work reads
        held = adapter.type in getattr(take, "holder_devices", ())
        steers = steers or held
        reason = ("the judged outcome changes without the API" if observes
                  else "the judged outcome is the same without the API")
        if unreached and not observes:  # the same, maybe through the calls it did not reach
            observes = None
            reason += f", but not decided: {unreached}"
        elif unreached:
            reason += f"; what stayed keeps the frames' attribution: {unreached}"
        if held:
            reason += (f"; its calls were on {adapter.type} objects, whose state (a generator's "
                       f"seed) the device work reads")
        if kind == REPLAYED_STUB:
            reason += ("; the API's recorded results were replayed to reach the rest of the case"
                       + ("" if not lower else ": what its returned objects still did keeps "
                          "the frames' attribution"))
        elif lower:
            reason += ("; the value is an object the case works through: what its stand-in still "
                       "did keeps the frames' attribution")
        return own, OwnFootprint(method="takeaway", how=take.how, stub=kind, calls=take.calls,
                                 observes=observes, reason=reason, moved=moved, steers=steers)
    # whether the scenario's device work depends on what the API set up (a forward-AD level)
    # or only its host code fails without it (a tracer's proxies) is not told by the run's
    # end (neither raises in a device op): left undecided, the frames' rule
    return entries, _host_object(sc, api_obj, OwnFootprint(
        method="frames", how=take.how, calls=take.calls, observes=observes,
        reason="the case cannot run without the API's results, even replayed: the frames' "
               "attribution is kept"))


# how long the CPU run of a case without its API is waited for: the recorded run's time
# times WAIT_FACTOR, at least WAIT_WITHOUT_S (a run that waits on the API never ends)
WAIT_WITHOUT_S = 10.0
WAIT_FACTOR = 20.0


def _observed_on_cpu(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, take: Takeaway,
                     own: OwnFootprint) -> OwnFootprint:
    """:func:`_asked_of_cpu`; a takeaway that does not reach every call of the API
    (``Takeaway.unreached``) decides nothing from an outcome that stays the same."""
    own = _asked_of_cpu(sc, dtype, adapter, take, own)
    if own.observes is False and getattr(take, "unreached", ""):
        own.observes = None
        own.reason += f", but not decided: {take.unreached}"
    return own


def _asked_of_cpu(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter, take: Takeaway,
                  own: OwnFootprint) -> OwnFootprint:
    """Where the device run raised (the emulated device refuses the case's sparse or
    quantized setup, before or in the API), whether the case observes its API is still a
    question about the case, not the device: the CPU reference runs recorded and with the
    API taken away (perturbed), and its judged outcomes are compared. The footprint stays
    the frames'; ``observes`` is the CPU's answer, said so. A CPU run that raises, or never
    calls the API either, leaves ``own`` as it was; so does a world case (its API is taken
    away in its ranks, whose world on the CPU would be another world to start)."""
    if getattr(take, "in_ranks", False):
        return own
    with take.recording():
        first = run_reference(sc.fn, dtype, adapter)
    if first.raised or take.calls == 0:
        return own
    calls = take.calls

    def without_api() -> Outcome:
        with take.stubbing(PERTURBED):
            return _run(sc.fn, "cpu", dtype, None)

    limit = max(WAIT_WITHOUT_S, WAIT_FACTOR * first.seconds)
    with adapter.reference():  # entered and left here: the run's thread may never end
        done, second = bounded(without_api, limit)
    if not done:
        take.abandon()
    own.observes = not done or not _same_outcome(sc, first, second, adapter, where="cpu")
    own.stub, own.calls = PERTURBED, calls
    outcome = ("does not finish within {:.0f} s without the API (it waits for what the API "
               "does)".format(limit) if not done
               else f"judged outcome {'changes' if own.observes else 'is the same'} without the API")
    own.reason += f"; decided on the CPU (the device run raised): the CPU's {outcome}"
    return own


def _host_object(sc: Scenario, api_obj: Any, own: OwnFootprint) -> OwnFootprint:
    """With the frames kept: a host object's property or constructor sets up no device
    state (:func:`host_attribute`), so the scenario's device work is the scenario's."""
    if host_attribute(sc.api, api_obj):
        own.steers = False
        own.reason += "; a host object's property or constructor: the scenario's device work is its own"
    return own


# classes whose attributes describe device data or device state: reading one of them is
# device state (a tensor's device, a stream's priority), never a host object's
_DEVICE_HOLDERS = ("torch.Tensor", "torch.UntypedStorage", "torch.TypedStorage", "torch.nn.Module",
                   "torch.Generator", "torch.Stream", "torch.Event")


def host_attribute(api: str, api_obj: Any) -> bool:
    """``api`` is a property or data descriptor (a pybind property such as
    ``torch.distributed.TCPStore.host``), or the constructor, of a class that holds no
    device data: reading or making it sets up nothing the scenario's device work could
    depend on."""
    descriptor = isinstance(api_obj, (property, types.GetSetDescriptorType, types.MemberDescriptorType))
    constructor = api.endswith(".__init__") and callable(api_obj)
    if not (descriptor or constructor):
        return False
    owner = resolve_quiet(api.rsplit(".", 1)[0]) if "." in api else None
    if not isinstance(owner, type):
        return False
    holders = [h for h in (resolve_quiet(n) for n in _DEVICE_HOLDERS) if isinstance(h, type)]
    if any(issubclass(owner, h) for h in holders):
        return False
    return not owner.__module__.startswith(("torch.cuda", "torch.npu", "torch_npu", "torch.xpu", "torch.mps"))


def _holds_device_data(cls: type) -> bool:
    """``cls`` is one of the device-data holders (a tensor, storage, module, generator,
    stream or event class): its objects' members are device state (:func:`host_attribute`)."""
    holders = [h for h in (resolve_quiet(n) for n in _DEVICE_HOLDERS) if isinstance(h, type)]
    return any(issubclass(cls, h) for h in holders)


def takes_value(api: str, api_obj: Any) -> bool:
    """Whether ``api`` is a value ``run.takeaway_values`` rebinds: not a callable, and not
    an attribute of a device-data holder's objects (``torch.Tensor.grad``, a stream's
    priority), whose reading is device state by the rule of :func:`host_attribute` (the
    frames keep it). A holder's class-level value (``torch.FloatStorage.dtype``,
    ``torch.UntypedStorage.is_sparse_csr``) is rebound."""
    if callable(api_obj):
        return False
    descriptor = isinstance(api_obj, (property, types.GetSetDescriptorType, types.MemberDescriptorType))
    owner = resolve_quiet(api.rsplit(".", 1)[0]) if descriptor and "." in api else None
    if not isinstance(owner, type):
        return True
    holders = [h for h in (resolve_quiet(n) for n in _DEVICE_HOLDERS) if isinstance(h, type)]
    return not any(issubclass(owner, h) for h in holders)


def hollow(judgement: Judgement, own: Optional[OwnFootprint]) -> bool:
    """A passing row whose case does not observe its API is no answer: ``not_comparable``,
    "hollow" (a device that got the API wrong would not turn it red). Observation is
    decided on a device run that agrees with the CPU: on a row that differs, the device
    may already be wrong in the API (a counter stuck at 0 stays wrong with the API taken
    away), so it is left undecided there and the row keeps its verdict."""
    if own is None or own.observes is not False:
        return False
    if judgement.status != Status.PASS:
        own.observes = None
        own.reason += "; not decided: the device run differs from the CPU's"
        return False
    judgement.status, judgement.cause, judgement.warn = Status.SKIP, Cause.NOT_COMPARABLE, False
    judgement.detail = f"hollow: {own.reason}, so this row cannot tell a wrong API; {judgement.detail}"
    return True


def trace_device_ops(sc: Scenario, dtype: torch.dtype, adapter: DeviceAdapter) -> Optional[List[List[str]]]:
    """The (op, dtype) pairs that reached the device itself in one more device run, or
    None where the backend cannot trace them."""
    torch.manual_seed(SEED)
    with adapter.trace_ops() as seen:
        if seen is None:
            return None
        try:
            sc.fn(adapter.torch_device, dtype)
            adapter.synchronize()
        except Exception:
            pass  # ops up to a failure are recorded
    return sorted([op, dt] for op, dt in seen)


UNVERIFIED_NOTE = "no capability fact: the emulated pass is unverified"


def unverified_calls(silent) -> List[str]:
    """'aten.op[dtype]' for the calls that ran without a capability fact, sorted."""
    return sorted(f"{op}[{dt}]" for op, dt in (silent or ()))


def unverified_note(calls: Sequence[str], limit: int = 4) -> str:
    more = f", ... {len(calls) - limit} more" if len(calls) > limit else ""
    return f"{UNVERIFIED_NOTE} ({', '.join(calls[:limit])}{more})"


def execute(sc: Scenario, dtype_name: str, adapter: DeviceAdapter, *, footprint: bool = False,
            api_obj: Any = None, api_codes: Sequence[Any] = ()) -> Tuple[ScenarioResult, List[FootprintEntry]]:
    dtype = getattr(torch, dtype_name)
    with device_under_test(adapter.torch_device):
        cpu = run_reference(sc.fn, dtype, adapter)
        with adapter.unverified_ops() as silent:
            dev = _run(sc.fn, adapter.torch_device, dtype, adapter)
        golden = golden_of(sc, dtype, adapter)
        judgement = judge_outcomes(sc, cpu, dev, adapter, golden)
        ill_conditioned(sc, dtype, adapter, cpu, judgement, golden)
        # one recorded device run serves the footprint, the scaffolding check and the
        # draws' repeat (each ran the scenario once more on the device before)
        # ... and the draws' replay: what its random ops drew is recorded too
        recording = Recording() if footprint and not dev.raised and draws_in(dev.value) else None
        take = (Takeaway(counterpart(api_obj, adapter.type), also_named=[getattr(api_obj, "__name__", "")],
                         stands_for=api_obj)
                if footprint and api_obj is not None and taking_away() else None)
        if take is not None and take.how is None and not callable(api_obj):  # a value: rebound, not called
            by_value, why = (value_takeaway(sc.api, api_obj) if takes_value(sc.api, api_obj) else
                             (None, "an attribute of a device-data holder's objects: reading it is "
                                    "device state, which the frames keep"))
            if by_value is not None:
                take = by_value
            else:
                take.why = why or take.why
        elif (take is not None and take.how is None and isinstance(api_obj, type)
              and not _holds_device_data(api_obj)):  # a C class: the properties it defines
            by_members, _ = members_takeaway(sc.api, api_obj)
            take = by_members if by_members is not None else take
        with recording if recording is not None else contextlib.nullcontext():
            recorder, again = (_recorded_run(sc, api_obj, api_codes, dtype, adapter, runtime=True,
                                             around=take.recording() if take is not None else None)
                               if footprint else (None, None))
        explain_scaffolding(sc, dtype, adapter, judgement, api_obj, api_codes, recorder)
        entries = recorder.entries() if recorder is not None else []
        own = None
        if take is not None:  # who did what: the API taken away
            entries, own = take_away(sc, dtype, adapter, api_obj, api_codes, take, entries, again)
        # the API's own code, not a device counterpart taken away in its place (the device's
        # synchronize for torch.cpu.synchronize is the device's code, empty or not)
        if own is not None and own.observes is False and getattr(take, "api_obj", api_obj) is api_obj:
            nothing = does_nothing(api_obj)
            if nothing:  # no case could observe it: the same outcome is no hollow case
                own.observes, own.empty = None, True
                own.reason = (f"{nothing}; the judged outcome is the same without it, as for "
                              "any case")
        is_hollow = hollow(judgement, own)
        if footprint:  # a counter that differs is `state`, whatever path the device took
            explain_by_state(judgement, entries)
        explain_by_path(sc, dtype, adapter, judgement)
        repeat_draws(sc, dtype, adapter, dev, judgement, again)
        replay_draws(sc, dtype, adapter, dev, judgement, recording, again)
    tags = list(sc.tags) + (["warn"] if judgement.warn else []) + ([HOLLOW] if is_hollow else [])
    detail = f"warn: {judgement.detail}" if judgement.warn else judgement.detail
    unverified = unverified_calls(silent) if judgement.status == Status.PASS else None
    if unverified:
        detail = "; ".join(x for x in (detail, unverified_note(unverified)) if x)
    result = ScenarioResult(
        id=sc.id, dtype=dtype_name, status=judgement.status, cause=judgement.cause,
        detail=detail[:DETAIL_LIMIT], duration_s=round(dev.seconds, 6),
        description=sc.description, expected=sc.expected, tags=tags,
        metric=judgement.metric, emulated=adapter.emulated, unverified=unverified or None,
        outputs=None if cpu.raised else output_kinds(cpu.value), own=own,
    )
    return result, entries
