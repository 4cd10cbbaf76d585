"""`torchparity predict`: which dtypes of an API a capability profile will refuse, and why.

No device runs. The API's operator footprint is recorded on the CPU — every aten overload
its OpInfo samples (or its hand scenarios) dispatch, forward and backward, with the dtype
a backend's dtype check sees (``api.footprint.checked_dtype``) — and each (op, dtype) is
looked up in the profile. A sample is refused when any of its ops is; the per-dtype
prediction folds samples the way the sweep folds them (pass / partial / unsupported), so
that a sweep on the profile's emulated device can confirm or refute every prediction
(:func:`against_sweep`).

Footprint source (``trace``): ``"cpu"`` (default) records with a TorchDispatchMode on the
CPU, which sees an op before its kernel runs. With the vendor's registered-op list for the
profile's device type (``devices.registered_ops``; ``registered=False`` turns it off) the
recorder (``api.device_footprint``) makes it the footprint that device receives: a
CompositeExplicitAutograd op the vendor has no kernel for (``new_ones``, ``_trilinear``)
is recorded as the ops of its kernel, an API the vendor runs as one kernel although aten
decomposes it (``torch.linalg.cholesky``, ``torch.isclose``) as that one op, checked by its
own rule. Bookkeeping ops (``_linalg_check_errors``) are listed apart, never as compute.
``"emulated"`` records instead the (op, dtype) pairs that reach an emulated device with
the permissive ``allow-all`` profile (nothing refused while recording), after
decomposition, in worker processes (the "footprint" case kind of ``run/``; a process can
host one emulator profile, and only before its first backward). Still no real device.

``Prediction.forward`` says in how many samples the forward is let through (all / some /
none); ``app.predict_docs`` holds predictions against the vendor docs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ..devices.profiles import Profile, load_profile
from ..devices.profiles.model import NO_FACT_NEEDED
from ..dtypes import DTYPE_NAMES
from ..errors import InputError
from .predict_sweep import Confirmation, against_rows, against_sweep  # noqa: F401 (re-exported)
from .predict_trace import TRACE_DEVICE, TRACE_TIMEOUT, emulated_footprints  # noqa: F401 (re-exported)
from .predict_trace import SampleFootprint as _SampleFootprint

DTYPES = DTYPE_NAMES

# With ``default: deny`` a profile still lets these reach the device: allocation, copies,
# views and storage plumbing that every backend has (the profile semantics of
# ``devices/profiles``; mirrored here so a prediction treats them alike).
PLUMBING = frozenset({
    "aten.empty", "aten.empty_strided", "aten._to_copy", "aten._copy_from",
    "aten._copy_from_and_resize", "aten.copy_", "aten.set_", "aten.resize_", "aten.view",
    "aten.as_strided", "aten._reshape_alias", "aten._local_scalar_dense", "aten.unfold",
    "aten.view_as_real", "aten.view_as_complex",
})


def _packet(op: str) -> str:
    parts = op.split(".")
    return ".".join(parts[:2]) if len(parts) >= 3 else op


def _silent(unlisted: Sequence[str]) -> List[str]:
    """Of the ops a profile has no entry for, those that need a capability fact."""
    return [p for p in unlisted if p not in PLUMBING
            and p.replace(".", "::", 1) not in NO_FACT_NEEDED]


def refuses(profile: Profile, op: str, dtype: Optional[str]) -> bool:
    """Whether ``profile`` refuses the overload ``op`` (e.g. 'aten.dot.default') for ``dtype``."""
    entry = profile.op_support(op)
    if entry is None:
        return profile.default == "deny" and _packet(op) not in PLUMBING
    if not entry.supported:
        return True
    return dtype is not None and entry.dtypes is not None and dtype not in entry.dtypes


@dataclass(frozen=True)
class Refusal:
    op: str  # packet name, e.g. "aten.dot"
    dtype: str
    phase: str  # forward | backward

    def text(self) -> str:
        return f"{self.op} × {self.dtype}" + (" (backward)" if self.phase == "backward" else "")


@dataclass
class Prediction:
    api: str
    variant: str
    dtype: str
    status: str  # pass | partial | unsupported | unknown
    reason: str
    refusals: List[Refusal] = field(default_factory=list)
    ops: List[str] = field(default_factory=list)  # compute ops of the footprint (packets)
    unlisted_ops: List[str] = field(default_factory=list)  # ops the profile has no entry for
    samples: int = 0
    refused_samples: int = 0
    cpu_refuses: bool = False  # the op itself refuses the dtype (CPU raises)
    source: str = ""  # the catalogue source's name (opinfo) | scenario | none
    forward_ran: int = 0  # samples whose forward the profile lets through (CPU runs them)
    cpu_error_samples: int = 0  # samples the CPU itself refuses
    # (op packet, dtype checked, phase) of every compute op the device receives
    calls: List[Tuple[str, str, str]] = field(default_factory=list)
    decomposed: List[str] = field(default_factory=list)  # composites the device lacks
    bookkeeping: List[str] = field(default_factory=list)  # checks left out
    native_op: Optional[str] = None  # the vendor's own kernel for the whole API
    # samples let through whose input has no elements (no kernel computes anything)
    empty_ran: int = 0

    @property
    def supported(self) -> Optional[bool]:
        if self.status == "unknown":
            return None
        return self.status in ("pass", "partial")

    @property
    def forward(self) -> Optional[str]:
        """all | some | none: in how many of the samples the CPU runs, the forward is
        let through ("supported" means all of them); None: unknown."""
        if self.status == "unknown" or not self.samples:
            return None
        if self.forward_ran == 0:
            return "none"
        return "all" if self.refused_samples == 0 else "some"

    @property
    def forward_with_elements(self) -> Optional[str]:
        """``forward`` over the samples whose input has elements, where the others are
        refused: a sample with an empty input reaches no compute kernel (bilinear's
        ``(0, 3)`` input never calls ``bmm``), so it says nothing about a dtype list."""
        if self.forward == "some" and self.forward_ran == self.empty_ran:
            return "none"
        return self.forward


# -- footprints on the CPU -------------------------------------------------------------------

Native = Optional[Callable[[str], bool]]


def _record_opinfo_sample(fn, sample, grads: bool, native: Native = None,
                          native_op: Optional[str] = None) -> _SampleFootprint:
    """Forward and backward ops of one sample as the device receives them (``native``:
    the vendor's registered ops, see ``api.device_footprint``); ``native_op``: the API is
    that vendor kernel as a whole, so its forward is that one op."""
    import torch
    from torch.utils._pytree import tree_leaves

    from ..api.device_footprint import DeviceDispatchRecorder
    from ..api.footprint import checked_dtype

    fwd = DeviceDispatchRecorder(native)
    inp, args, kwargs = sample.input, tuple(sample.args), dict(sample.kwargs)

    first = next((t for t in tree_leaves(inp) if isinstance(t, torch.Tensor)), None)
    empty = first is not None and first.numel() == 0

    def done(backward, error=None, bwd=None) -> _SampleFootprint:
        forward = fwd.calls
        if native_op is not None:
            forward = [(native_op, checked_dtype((inp, *args), kwargs))]
        extra = bwd.decomposed if bwd else []
        return _SampleFootprint(forward, backward, error,
                                list(dict.fromkeys(fwd.decomposed + extra)),
                                list(dict.fromkeys(fwd.bookkeeping + (bwd.bookkeeping if bwd else []))),
                                native_op, empty)

    try:
        with fwd:
            out = sample.output_process_fn_grad(fn(inp, *args, **kwargs))
    except Exception as exc:
        return done([], f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    bwd = DeviceDispatchRecorder(native)
    if grads:
        outs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        ins = [t for t in tree_leaves((inp, args, kwargs))
               if isinstance(t, torch.Tensor) and t.requires_grad]
        if outs and ins:
            try:
                with bwd:
                    torch.autograd.grad(outs, ins, [torch.ones_like(o) for o in outs],
                                        allow_unused=True)
            except Exception:
                # the CPU backward fails too: the sweep counts that as the op's own limit,
                # whatever the device would refuse on the way
                return done([])
    return done(bwd.calls, bwd=bwd)


def _opinfo_footprints(entry, dtype: str, grads: bool, max_samples: Optional[int],
                       device_type: str, native: Native = None
                       ) -> Optional[List[_SampleFootprint]]:
    import torch

    from ..run.opinfo_handler import wants_grads
    from ..scenarios import opinfo as oi

    op = entry.opinfo
    dt = getattr(torch, dtype)
    with_grads = grads and oi.compare_skip(op, device_type, dt, entry.call) is None \
        and wants_grads(op, dt, entry.call, device_type)
    try:
        samples = oi.make_samples(op, dt, requires_grad=with_grads)
    except Exception:
        return None
    samples = oi.capped(samples, max_samples)  # the samples check would run
    from ..api.device_footprint import native_implicit_op

    fn = entry.callable()
    native_op = native_implicit_op(entry.api, native) if not entry.call.startswith("inplace") else None
    out = []
    for i, s in enumerate(samples):
        torch.default_generator.manual_seed(oi.SEED + i)
        out.append(_record_opinfo_sample(fn, s, with_grads, native, native_op))
    return out


def _scenario_footprints(api: str, dtype: str) -> Optional[List[_SampleFootprint]]:
    import torch

    from ..api.classify import code_objects
    from ..api.footprint import FootprintRecorder
    from ..api.resolve import maybe_resolve
    from ..scenarios import registry, sources

    resolved = maybe_resolve(api)
    if resolved is None:
        return None
    registry.load_suites()
    # every source but the catalogue sources (whose entries predict() folds sample by sample)
    swept = {src.name for src in sources.sweeping()}
    scenarios = [sc for sc in sources.offer(api, resolved.obj).scenarios
                 if sc.source not in swept and dtype in sc.dtypes]
    if not scenarios:
        return None
    out = []
    for sc in scenarios:
        rec = FootprintRecorder("cpu", api_objects=[resolved.obj],
                                api_codes=code_objects(resolved.obj), user_files=[sc.source_file])
        torch.manual_seed(0)
        error = None
        try:
            with rec:
                sc.fn("cpu", getattr(torch, dtype))
        except Exception as exc:
            if sc.raises is None:
                error = f"{type(exc).__name__}: {exc}"
        out.append(_SampleFootprint(rec.checked_calls(), [], error))
    return out


# -- predictions -------------------------------------------------------------------------------

def _fold(api: str, variant: str, dtype: str, feet: List[_SampleFootprint], profile: Profile,
          source: str) -> Prediction:
    from ..api.device_footprint import INPLACE_VIEWS
    from ..api.footprint import METADATA_OPS

    metadata = METADATA_OPS | INPLACE_VIEWS
    refusals: List[Refusal] = []
    ops: List[str] = []
    unlisted: List[str] = []
    calls: List[Tuple[str, str, str]] = []
    decomposed: List[str] = []
    bookkeeping: List[str] = []
    refused = same = ran = bwd_refused = empty_ran = 0
    for f in feet:
        fwd_ref = [(op, d) for op, d in f.forward if refuses(profile, op, d)]
        bwd_ref = [(op, d) for op, d in f.backward if refuses(profile, op, d)]
        for phase, found in (("forward", f.forward), ("backward", f.backward)):
            for op, d in found:
                p = _packet(op)
                if p.split(".", 1)[-1] in metadata:
                    continue
                if p not in ops:
                    ops.append(p)
                if profile.op_support(op) is None and p not in unlisted:
                    unlisted.append(p)
                c = (p, d or "?", phase)
                if c not in calls:
                    calls.append(c)
        decomposed += [o for o in f.decomposed if o not in decomposed]
        bookkeeping += [o for o in f.bookkeeping if o not in bookkeeping]
        for phase, found in (("forward", fwd_ref), ("backward", bwd_ref)):
            for op, d in found:
                r = Refusal(_packet(op), d or "?", phase)
                if r not in refusals:
                    refusals.append(r)
        if f.cpu_error:
            same += 1  # the CPU raises too: the sweep counts it as the op's own refusal
        elif fwd_ref:
            refused += 1
        else:
            ran += 1
            empty_ran += f.empty
            if bwd_ref:
                bwd_refused += 1
    n = len(feet)
    why = "; ".join(r.text() for r in refusals) or "-"
    if not feet:
        status, reason = "unknown", "no samples"
    elif not ran:
        if refused:
            status, reason = "unsupported", f"the profile refuses {why}"
        else:
            status, reason = "unsupported", "the op itself refuses this dtype (the CPU raises)"
    elif refused:
        status, reason = "partial", f"{refused} of {n} samples refused: {why}"
    elif bwd_refused:
        status, reason = "partial", f"forward runs; backward refused in {bwd_refused} of {ran} samples: {why}"
    elif profile.generated is not None and _silent(unlisted):
        # silence is not support: a generated profile without a fact for an op says nothing
        silent = _silent(unlisted)
        status, reason = "unknown", (f"no capability fact for {', '.join(silent[:4])}"
                                     + (f" and {len(silent) - 4} more" if len(silent) > 4 else "")
                                     + ": the profile is silent (an emulated pass is unverified)")
    else:
        status, reason = "pass", "every op of its footprint is allowed"
    native_op = next((f.native_op for f in feet if f.native_op), None)
    return Prediction(api=api, variant=variant, dtype=dtype, status=status, reason=reason,
                      refusals=refusals, ops=ops, unlisted_ops=unlisted, samples=n,
                      refused_samples=refused, cpu_refuses=not ran and not refused and bool(same),
                      source=source, forward_ran=ran, cpu_error_samples=same, calls=calls,
                      decomposed=[_packet(o) for o in decomposed],
                      bookkeeping=[_packet(o) for o in bookkeeping],
                      native_op=_packet(native_op) if native_op else None, empty_ran=empty_ran)


# -- footprints on the emulated device: app/predict_trace.py ------------------------------------



TRACES = ("cpu", "emulated")


def native_ops_for(profile: Profile, registered: Union[None, bool, Any] = None) -> Native:
    """``op -> bool``: does the profile's device type have its own kernel for ``op``.

    ``registered``: None or True, the shipped list for the device type
    (``devices.registered_ops``; None when there is none); False: no list (every op as
    the CPU dispatch mode sees it, the footprint before this existed); or a
    ``RegisteredOps``."""
    from ..devices.registered_ops import RegisteredOps, registered_ops

    if registered is False:
        return None
    if isinstance(registered, RegisteredOps):
        return registered.has
    found = registered_ops(profile.device_type)
    return found.has if found is not None else None


def predict(apis: Sequence[str], profile: str | Profile, *, dtypes: Sequence[str] = DTYPES,
            grads: bool = True, max_samples: Optional[int] = None, trace: str = "cpu",
            jobs: Optional[int] = None, progress: Any = None,
            registered: Union[None, bool, Any] = None) -> List[Prediction]:
    """Predictions for every API x OpInfo variant (or hand scenarios) x dtype.

    ``trace``: where OpInfo footprints come from. ``"cpu"``: a dispatch mode on the CPU
    (composite ops as themselves). ``"emulated"``: the ops that reach ``emu:allow-all``
    after decomposition, recorded in ``jobs`` worker processes (default: one per core;
    ``progress``: start(total, description) / advance() / stop(), as the CLI's bar);
    the (op, dtype) pairs are then looked up in ``profile`` exactly as with ``"cpu"``.
    APIs without OpInfo entries (hand scenarios) always use the CPU footprint.

    With ``trace="cpu"``, ``registered`` (see :func:`native_ops_for`) makes the footprint
    the one the profile's device receives: a composite op the vendor registers no kernel
    for is recorded as the ops of its composite kernel, an API that the vendor runs as one
    kernel (``torch.linalg.cholesky``) as that op; bookkeeping ops are left out.
    """
    from ..api.resolve import resolve
    from ..scenarios import opinfo as oi

    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    native = native_ops_for(prof, registered)
    bad = [d for d in dtypes if d not in DTYPES]
    if bad:
        raise InputError(f"--dtypes: unknown {', '.join(bad)}; known: {', '.join(DTYPES)}")
    if trace not in TRACES:
        raise InputError(f"--trace: unknown {trace!r}; known: {', '.join(TRACES)}")
    for name in apis:  # an unknown name fails before anything runs
        if not oi.opinfo_for(name, include_refs=False):  # op_db names need not resolve
            resolve(name)
    traced: Dict[Tuple[str, str, str], Any] = {}
    if trace == "emulated":
        cases = [(e, d) for name in apis for e in _opinfo_entries(name) for d in dtypes]
        traced = emulated_footprints(cases, grads, max_samples, prof.device_type, jobs, progress)
    out: List[Prediction] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in apis:
            found = _opinfo_entries(name)
            label = _catalogue_source(name)
            if found:
                for e in found:
                    for d in dtypes:
                        if trace == "emulated":
                            feet = traced.get((e.db, e.variant, d), "not traced")
                            if isinstance(feet, str):
                                out.append(Prediction(name, e.variant, d, "unknown", feet, source=label))
                            else:
                                out.append(_fold(name, e.variant, d, feet, prof, label))
                            continue
                        feet = _opinfo_footprints(e, d, grads, max_samples, prof.device_type, native)
                        if feet is None:
                            out.append(Prediction(name, e.variant, d, "unknown",
                                                  "OpInfo cannot make samples for this dtype",
                                                  source=label))
                        else:
                            out.append(_fold(name, e.variant, d, feet, prof, label))
                continue
            any_scenario = False
            for d in dtypes:
                feet = _scenario_footprints(name, d)
                if feet:
                    any_scenario = True
                    out.append(_fold(name, "scenarios", d, feet, prof, "scenario"))
            if not any_scenario:
                out.append(Prediction(name, "", "*", "unknown",
                                      "no scenario source applies (no OpInfo entry, no other "
                                      "source's scenario)", source="none"))
    return out


def _catalogue_source(name: str) -> str:
    """The name of the catalogue source whose entries ``name`` has ("" when none)."""
    from ..scenarios import sources

    src, _ = sources.entries_of(name)
    return src.name if src is not None else ""


def _opinfo_entries(name: str) -> list:
    """The op_db entries of ``name`` as its catalogue source finds them (its own, or the
    one its footprint reaches: torch.relu -> nn.functional.relu)."""
    from ..scenarios import sources

    _, found = sources.entries_of(name)
    return [e for e in found if e.db == "op_db"]
