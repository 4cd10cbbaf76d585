"""`torchparity predict --vendor-docs`: predictions held against the vendor's support docs.

Per (API, dtype), the docs say supported, not supported, or nothing (an entry without a
dtype statement for the argument the dtype stands for); the prediction says the forward
is let through in all, some or none of the samples the CPU runs (``Prediction.forward``,
all variants together). Each pair is one of:

- ``agree``: supported and all, or not supported and none;
- ``trivial``: the docs leave the dtype out and the CPU refuses it too (torch itself has no
  kernel for it): an agreement that says nothing about the device, counted apart;
- a disagreement, with a reason class (``REASONS``) and a reason that names only ops of the
  footprint shown next to it (``footprint``: op × dtype as checked, forward and backward).

A prediction of ``some`` is never counted as agreeing with "supported" (nor with "not
supported"): it is the ``partial`` disagreement.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..devices.profiles import Profile, load_profile
from ..dtypes import DTYPE_NAMES
from ..evidence.vendor_docs import DocsStatement
from .predict import Prediction

DTYPES = DTYPE_NAMES

# reason class -> (verdict, what it means)
REASONS: Dict[str, Tuple[str, str]] = {
    "cpu_refuses": ("suspected docs error",
                    "the docs allow a dtype the API refuses even on the CPU"),
    "profile_refuses": ("suspected docs error",
                        "the docs allow it; an op checked in this dtype is refused by the profile"),
    "auxiliary_refused": ("suspected tool error",
                          "the docs allow it; refused only through an op on a tensor of another dtype"),
    "partial": ("partial",
                "the forward is refused in some samples (an op checked in this dtype) and let "
                "through in others"),
    "partial_auxiliary": ("suspected tool error",
                          "the forward is refused in some samples, only through ops on tensors "
                          "of another dtype"),
    "profile_silent": ("suspected tool error",
                       "the docs leave it out; let through only because ops have no profile rule"),
    "converted": ("suspected docs error",
                  "the docs leave it out; no compute op of the forward sees the dtype (the "
                  "input is converted first), so nothing refuses it"),
    "ops_allowed": ("suspected docs error",
                    "the docs leave it out; every op checked in this dtype has a rule allowing it"),
}

Docs = Mapping[str, Union[Iterable[str], DocsStatement]]


@dataclass
class DocsComparison:
    compared: int  # pairs compared, trivial ones included
    agree: int  # real agreements (trivial ones not included)
    apis: int
    apis_agreeing: int
    disagreements: List[Dict[str, Any]]
    trivial: int = 0  # agreements where the CPU refuses too
    by_reason: Dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> Optional[float]:
        """Agreement over the non-trivial pairs."""
        n = self.compared - self.trivial
        return self.agree / n if n else None

    @property
    def rate_with_trivial(self) -> Optional[float]:
        return (self.agree + self.trivial) / self.compared if self.compared else None


def _statement(value: Union[Iterable[str], DocsStatement]) -> DocsStatement:
    if isinstance(value, DocsStatement):
        return value
    return DocsStatement(tuple(value))


def _order(dtype: str) -> int:
    return DTYPES.index(dtype) if dtype in DTYPES else 99


def predicted_forward(preds: Sequence[Prediction]) -> Optional[str]:
    """all | some | none | cpu (the CPU refuses every sample) over an API's variants.
    Samples with an empty input are not counted where the others are refused
    (``Prediction.forward_with_elements``): the docs speak of inputs with elements."""
    known = [p for p in preds if p.forward is not None]
    if not known:
        return None
    if all(p.cpu_refuses for p in known):
        return "cpu"
    fwd = {p.forward_with_elements for p in known if not p.cpu_refuses}
    if fwd == {"all"}:
        return "all"
    if fwd == {"none"}:
        return "none"
    return "some"


def compare_with_docs(predictions: Sequence[Prediction], docs: Docs,
                      profile: Union[str, Profile]) -> DocsComparison:
    """Footprint predictions against what vendor docs say, per (api, dtype).

    ``docs``: {api: DocsStatement} (``vendor_docs_statements``) or {api: dtypes the docs
    allow} (every other dtype then counts as documented unsupported).
    """
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    by_api: Dict[str, Dict[str, List[Prediction]]] = {}
    for p in predictions:
        if p.status != "unknown":
            by_api.setdefault(p.api, {}).setdefault(p.dtype, []).append(p)
    out = DocsComparison(0, 0, 0, 0, [])
    for api, value in docs.items():
        if api not in by_api:
            continue
        stmt = _statement(value)
        pairs = 0
        api_ok = True
        for dtype, preds in sorted(by_api[api].items(), key=lambda kv: _order(kv[0])):
            documented = stmt.says(dtype)
            fwd = predicted_forward(preds)
            if documented is None or fwd is None:
                continue
            pairs += 1
            out.compared += 1
            if not documented and fwd == "cpu":
                out.trivial += 1
                continue
            if (documented and fwd == "all") or (not documented and fwd == "none"):
                out.agree += 1
                continue
            api_ok = False
            d = _disagreement(api, dtype, documented, fwd, preds, prof)
            out.disagreements.append(d)
            out.by_reason[d["class"]] = out.by_reason.get(d["class"], 0) + 1
        if pairs:
            out.apis += 1
            out.apis_agreeing += api_ok
    return out


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rule(prof: Profile, op: str, dtype: str) -> str:
    entry = prof.op_support(op)
    if entry is None:
        return "no rule"
    if not entry.supported:
        return "refused (no kernel)"
    if entry.dtypes is None:
        return "allowed (every dtype)"
    return "allowed" if dtype in entry.dtypes else "refused"


def footprint_lines(preds: Sequence[Prediction], prof: Profile) -> List[str]:
    """'aten.mm × bfloat16 (backward): refused' for every compute op the device receives."""
    seen: Dict[str, None] = {}
    for p in preds:
        for op, d, phase in p.calls:
            tag = " (backward)" if phase == "backward" else ""
            seen.setdefault(f"{op} × {d}{tag}: {_rule(prof, op, d)}", None)
    return list(seen)


def _disagreement(api: str, dtype: str, documented: bool, fwd: str,
                  preds: Sequence[Prediction], prof: Profile) -> Dict[str, Any]:
    calls = {(op, d, ph) for p in preds for op, d, ph in p.calls}
    fwd_calls = {(op, d) for op, d, ph in calls if ph == "forward"}
    fwd_refused = sorted({(r.op, r.dtype) for p in preds for r in p.refusals if r.phase == "forward"})
    if fwd == "cpu":
        cls = "cpu_refuses"
        reason = f"the docs allow {dtype}, but the API refuses {dtype} even on the CPU"
    elif fwd == "some":
        cls = "partial" if any(d == dtype for _, d in fwd_refused) else "partial_auxiliary"
        n_ref = sum(p.refused_samples for p in preds)
        n = sum(p.forward_ran + p.refused_samples for p in preds)
        ops = ", ".join(f"{op} × {d}" for op, d in fwd_refused)
        side = "allow" if documented else "leave out"
        reason = (f"the docs {side} {dtype}; the forward is refused in {n_ref} of {n} samples "
                  f"({ops}) and let through in the others")
    elif documented:  # fwd == "none"
        same = [(op, d) for op, d in fwd_refused if d == dtype]
        if same:
            cls = "profile_refuses"
            srcs = sorted({_short(prof.op_support(op).source or "profile") for op, _ in same
                           if prof.op_support(op) is not None})
            where = f" (rules from: {', '.join(srcs)})" if srcs else ""
            reason = (f"the docs allow {dtype}, but the profile refuses "
                      f"{', '.join(f'{op} × {d}' for op, d in same)}{where}")
        else:
            cls = "auxiliary_refused"
            reason = (f"the docs allow {dtype}; the profile refuses only "
                      f"{', '.join(f'{op} × {d}' for op, d in fwd_refused)}: ops on tensors of "
                      f"another dtype than the {dtype} input")
    else:  # not documented, fwd == "all"
        in_dtype = sorted({op for op, d in fwd_calls if d == dtype})
        silent = [op for op in in_dtype if prof.op_support(op) is None]
        if not in_dtype:
            cls = "converted"
            seen = sorted({d for _, d in fwd_calls}, key=_order)
            what = (f"every compute op of the forward sees another dtype ({', '.join(seen)}): "
                    "the input is converted first") if seen else "the forward has no compute op"
            reason = f"the docs leave out {dtype}; nothing checks {dtype}: {what}"
        elif silent:
            cls = "profile_silent"
            native = {p.native_op for p in preds if p.native_op}
            whole = [op for op in silent if op in native]
            what = (f"{', '.join(f'{op} × {dtype}' for op in silent)} have no profile rule "
                    f"(default: {prof.default})")
            if whole:
                what += f"; {', '.join(whole)} is the vendor's own kernel for the whole API"
            reason = f"the docs leave out {dtype}; the forward is let through because {what}"
        else:
            cls = "ops_allowed"
            reason = (f"the docs leave out {dtype}, yet the profile has a rule allowing each op "
                      f"the forward checks in {dtype}: "
                      f"{', '.join(f'{op} × {dtype}' for op in in_dtype)}")
    verdict = REASONS[cls][0]
    via = sorted({o for p in preds for o in p.decomposed})
    native = sorted({p.native_op for p in preds if p.native_op})
    return dict(api=api, dtype=dtype, documented=documented, predicted=fwd, verdict=verdict,
                reason=reason, footprint=footprint_lines(preds, prof), decomposed=via,
                native_op=native[0] if native else None, **{"class": cls})


# -- vendor docs as {api: DocsStatement} ------------------------------------------------------

PRIMARY_ARGS = ("input", "self", "tensor")


def primary_args(api: str) -> Tuple[str, ...]:
    """The arguments a prediction's dtype stands for: ``input``/``self``/``tensor`` and the
    API's first parameter (``A`` for torch.linalg)."""
    import inspect

    from ..api.resolve import maybe_resolve

    names = list(PRIMARY_ARGS)
    try:
        resolved = maybe_resolve(api)
        params = list(inspect.signature(resolved.obj).parameters) if resolved is not None else []
    except Exception:  # no signature (a builtin), or touching the object fails (torch.cuda)
        params = []
    if params and params[0] not in names:
        names.append(params[0])
    return tuple(names)


def vendor_docs_statements(root: str, apis: Optional[Iterable[str]] = None, *,
                           chip: Optional[str] = None,
                           torch_version: Optional[str] = None) -> Dict[str, DocsStatement]:
    """{api: what its vendor docs entry says on ``chip`` about the argument its dtype
    stands for}, from the evidence parser.

    A clause about another argument (``weight``, ``target``) is left out (named in
    ``other_args``); "不支持" clauses and chip-specific lines are read; an entry marked
    unsupported (✘) on the chip refuses every dtype. Entries that state nothing are left
    out. ``apis``: look these up (aliases and qualified names match); default: every entry.
    """
    from ..evidence.vendor_docs import load_vendor_docs, resolve_chips

    if torch_version is None:
        import torch

        torch_version = torch.__version__.split("+", 1)[0]
    index = load_vendor_docs(root, torch_version)
    chip_name = resolve_chips([chip], index.chips)[0] if chip else None
    if apis is None:
        pairs = [(e.name, e) for e in index]
    else:
        pairs = []
        for api in apis:
            found = index.match(api)
            if found is not None:
                pairs.append((api, found[0]))
    out: Dict[str, DocsStatement] = {}
    for api, entry in pairs:
        if chip_name is not None and entry.chips.get(chip_name) is False:
            out[api] = DocsStatement((), (), (), f"{entry.source}:{entry.line}")
            continue
        named = {c.arg for c in entry.dtype_clauses if c.arg is not None}
        args = PRIMARY_ARGS if named <= set(PRIMARY_ARGS) else primary_args(api)
        stmt = entry.statement_for(chip_name, args)
        if not stmt.empty:
            allowed = tuple(d for d in stmt.allowed if d in DTYPES) if stmt.allowed is not None else None
            out[api] = DocsStatement(allowed, tuple(d for d in stmt.refused if d in DTYPES),
                                     stmt.other_args, stmt.source)
    return out


def vendor_docs_dtypes(root: str, apis: Optional[Iterable[str]] = None, *,
                       chip: Optional[str] = None,
                       torch_version: Optional[str] = None) -> Dict[str, List[str]]:
    """{api: dtypes its docs allow} for entries with an allowed list (see
    :func:`vendor_docs_statements`, which also carries the "不支持" lists)."""
    found = vendor_docs_statements(root, apis, chip=chip, torch_version=torch_version)
    return {api: list(s.allowed) for api, s in found.items() if s.allowed is not None}


def composite_apis(names: Iterable[str]) -> List[str]:
    """The names whose OpInfo footprint has two or more compute ops (composites)."""
    from ..scenarios.opinfo import api_compute_ops, opinfo_for

    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            if not name.startswith("torch.") or not opinfo_for(name, include_refs=False):
                continue
            try:
                ops = api_compute_ops(name)
            except Exception:
                ops = None
            if ops and len(ops) >= 2:
                out.append(name)
    return out
