"""PyTorch's operator database (``op_db``) as a scenario source.

An API reaches an OpInfo entry in two ways:

- **by name or object** (``scenarios.opinfo.opinfo_for``): ``torch.X``, ``torch.Tensor.X``,
  in-place ``X_``, aliases, ``torch.nn.functional.X``, ``linalg`` / ``fft`` / ``special``;
- **by footprint**: an API with no entry of its own whose one CPU call on an entry's first
  sample dispatches exactly one compute op, the same one that entry's own callable
  dispatches, runs that entry's samples through itself (``torch.relu`` gets
  ``nn.functional.relu``'s samples). Candidates are the entries whose name or ``aten_name``
  ends like the API; the check costs one sample call per candidate.

One scenario per entry; its dtypes are the ones OpInfo claims on the CPU. Its cases run
through the dedicated ``opinfo`` worker case kind (``run/opinfo_handler.py``, the one
``sweep`` uses: every sample, gradients, the same judge and causes): :func:`case` builds
the case of one scenario and dtype. The scenario's own ``fn`` runs the first sample only
(for ``predict`` and snippets).
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional

from ...dtypes import DTYPE_NAMES
from ...results.models import Text
from .. import opinfo as oi
from ..registry import Scenario
from .base import ModuleSource

NAME = "opinfo"
ORDER = 10
CASE_KIND = "opinfo"
# the namespaces whose callables may reach an entry by footprint (their one CPU call on a
# sample runs in the asking process: only op namespaces, no I/O or process-wide state)
REACH_NAMESPACES = frozenset({"torch", "torch.Tensor", "torch.nn.functional", "torch.special",
                              "torch.linalg", "torch.fft", "torch._C._nn", "torch._C._special",
                              "torch._C._linalg", "torch._C._fft"})


# -- which entries ---------------------------------------------------------------------

def entries_for(api: str) -> List[oi.OpEntry]:
    """The OpInfo entries ``api`` runs: its own (as ``sweep`` picks them), else the one its
    footprint reaches."""
    return list(_entries_for(api))


@functools.lru_cache(maxsize=4096)
def _entries_for(api: str) -> tuple:
    if not api.startswith("torch"):
        return ()
    try:
        found = oi.opinfo_for(api, include_refs=False) or oi.opinfo_for(api)
    except Exception:
        return ()
    if found:
        return tuple(found)
    return tuple(reach_by_footprint(api))


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


@functools.lru_cache(maxsize=1)
def _by_short() -> Dict[str, List[Any]]:
    out: Dict[str, List[Any]] = {}
    for op in oi._index().dbs["op_db"]:
        for n in {_short(op.name), getattr(op, "aten_name", None) or ""}:
            if n:
                out.setdefault(n, []).append(op)
    return out


def _packets(fn, sample) -> Optional[List[str]]:
    """The compute-op packets (``aten.relu``) one CPU call dispatches, or None if it raised."""
    import torch

    from ...api.footprint import FootprintRecorder, compute_ops

    inp, args, kwargs = oi.sample_parts(sample)
    inp = oi.map_tensors(inp, lambda t: t.detach().clone())
    recorder = FootprintRecorder("cpu", api_objects=[fn])
    torch.manual_seed(oi.SEED)
    try:
        with recorder:
            fn(inp, *args, **kwargs)
    except Exception:
        return None
    return sorted({e.op.rsplit(".", 1)[0] for e in compute_ops(recorder.entries())})


def reach_by_footprint(api: str) -> List[oi.OpEntry]:
    """Entries whose single compute op is the API's own single compute op (see module doc)."""
    from ...api.resolve import maybe_resolve

    if api.rsplit(".", 1)[0] not in REACH_NAMESPACES:
        return []
    resolved = maybe_resolve(api)
    if resolved is None:
        return []
    obj = resolved.obj
    if isinstance(obj, type) or not callable(obj):
        return []
    short = _short(api)
    names = [short, short[:-1]] if short.endswith("_") and not short.endswith("__") else [short]
    for prefix in ("special_", "linalg_", "fft_"):
        names += [n[len(prefix):] for n in names if n.startswith(prefix)]
    out: List[oi.OpEntry] = []
    for n in names:
        for op in _by_short().get(n, []):
            dt = oi.first_sample_dtype(op, ("float32", "int64", "bool"))
            if dt is None:
                continue
            try:
                sample = oi.make_samples(op, dt)[0]
            except Exception:
                continue
            theirs = _packets(op.op, sample)
            if not theirs or len(theirs) != 1:
                continue
            ours = _packets(obj, sample)
            if ours is None or len(ours) != 1:
                continue
            if ours[0].rstrip("_") != theirs[0].rstrip("_"):
                continue
            e = oi.OpEntry(api=api, key=oi._key(op), db="op_db", call=f"api:{api}")
            if e not in out:
                out.append(e)
        if out:
            break
    return out


# -- scenarios --------------------------------------------------------------------------

def _dtypes(op) -> tuple:
    """The dtypes OpInfo claims on the CPU, and those it claims for an accelerator only
    (:func:`_accelerator_only`)."""
    claimed = [d for d in oi.claimed_dtypes(op, "cpu") if d in DTYPE_NAMES]
    if not claimed:  # OpInfo claims nothing on the CPU: every dtype is asked
        return tuple(DTYPE_NAMES)
    claimed += _accelerator_only(op, claimed)
    return tuple(d for d in DTYPE_NAMES if d in claimed)


def _accelerator_only(op, cpu_claimed) -> List[str]:
    """Dtypes OpInfo claims for an accelerator (its CUDA list) and not for the CPU, where
    the CPU computes the entry's first sample all the same: the CPU reference exists, and
    an accelerator's dtype is one that matters (round.decimals_3 and polygamma_n_k claim
    float16 on CUDA only; the CPU rounds float16 to 3 decimals). One CPU call per such
    dtype, as the footprint reach costs; a dtype the CPU refuses stays out (no reference).
    Their rows say "not-claimed-by-opinfo" (the CPU claim is the one OpInfo states)."""
    extra = [d for d in oi.claimed_dtypes(op, "cuda") if d in DTYPE_NAMES and d not in cpu_claimed]
    if not extra:
        return []
    import torch

    out = []
    for d in extra:
        try:
            sample = oi.make_samples(op, getattr(torch, d))[0]
            inp, args, kwargs = oi.sample_parts(sample)
            with torch.no_grad():
                op.op(inp, *args, **kwargs)
        except Exception:  # noqa: BLE001 - the CPU has no reference in this dtype
            continue
        out.append(d)
    return out


def _first_sample_fn(e: oi.OpEntry):
    def run_first_sample(device, dtype):
        sample = oi.make_samples(e.opinfo, dtype)[0]
        inp, args, kwargs = oi.map_tensors(oi.sample_parts(sample),
                                           lambda t: t.detach().to(device))
        return e.callable()(inp, *args, **kwargs)

    return run_first_sample


def _how(e: oi.OpEntry) -> str:
    kind, _, name = e.call.partition(":")
    if kind == "op":
        return "op.op"
    if kind == "method":
        return "op.method_variant"
    if kind == "inplace":
        return "op.inplace_variant"
    if kind == "api":
        return name
    attr = {"alias": "op", "alias_method": "method_variant", "alias_inplace": "inplace_variant"}[kind]
    return f"next(a for a in op.aliases if a.name == {name!r}).{attr}"


def _code(e: oi.OpEntry) -> str:
    op = e.opinfo
    db = "python_ref_db" if e.db == "python_ref_db" else "op_db"
    fn = _how(e)
    imports = "import torch\n"
    return (
        f"{imports}from torch.testing._internal.common_methods_invocations import {db}\n\n"
        f"op = next(o for o in {db} if (o.name, o.variant_test_name) == "
        f"({op.name!r}, {op.variant_test_name!r}))\n"
        f"fn = {fn}\n"
        "for s in op.sample_inputs(\"cpu\", {dtype}):\n"
        "    s = s.transform(lambda t: t.to({device}) if isinstance(t, torch.Tensor) else t)\n"
        "    print(fn(s.input, *s.args, **s.kwargs))\n")


def _scenario(api: str, e: oi.OpEntry) -> Scenario:
    op = e.opinfo
    via = ""
    if e.call.startswith("api:"):
        via_en = f", reached through its footprint (one aten op, as {oi._key(op)}'s)"
        via_zh = f"，经算子足迹（与 {oi._key(op)} 相同的单个 aten 算子）关联"
    else:
        via_en = via_zh = via
    return Scenario(
        id=e.variant, api=api, fn=_first_sample_fn(e), source=NAME, code=_code(e),
        description=Text(en=f"OpInfo '{oi._key(op)}' samples ({e.call}){via_en}",
                         zh=f"OpInfo '{oi._key(op)}' 的样例输入（{e.call}）{via_zh}"),
        expected=Text(en="every sample (and its gradients) matches the CPU",
                      zh="每个样例（及其梯度）的结果与 CPU 一致"),
        dtypes=_dtypes(op), module=__name__,
        # a NaN-propagating op is also run on a sample with a NaN (run.opinfo_handler)
        tags=("opinfo", "nan-input") if oi.propagates_nan(op) else ("opinfo",),
    )


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return [_scenario(api, e) for e in entries_for(api)]


def why_not(api: str, obj: Any) -> str:
    return ("no OpInfo entry by name, alias or object, and no entry shares its single "
            "aten op (footprint)")


def case(sc: Scenario, dtype: str, *, max_samples: Optional[int] = None,
         grads: bool = True, footprint: bool = False) -> Dict[str, Any]:
    """The ``opinfo`` worker case of one scenario and dtype."""
    e = next(x for x in entries_for(sc.api) if x.variant == sc.id)
    return entry_case(e, dtype, grads=grads, max_samples=max_samples, footprint=footprint)


def entry_case(e: oi.OpEntry, dtype: str, *, reference: bool = False, grads: bool = True,
               max_samples: Optional[int] = None, footprint: bool = False) -> Dict[str, Any]:
    """The ``opinfo`` worker case of one entry and dtype (every sample; ``reference``:
    OpInfo's reference inputs)."""
    return {"kind": CASE_KIND, "api": e.api, "key": e.key, "db": e.db, "call": e.call,
            "dtype": dtype, "reference": reference, "grads": grads, "max_samples": max_samples,
            "footprint": footprint}


def entries(api: Optional[str] = None) -> List[oi.OpEntry]:
    """The entries ``api`` runs (:func:`entries_for`); None: every entry of the database."""
    return list(oi.entries()) if api is None else entries_for(api)


def covers(api: str) -> bool:
    """Whether ``api`` has an entry of its own (by name, alias or object): a source that
    yields to OpInfo still answers for an API OpInfo reaches only by footprint."""
    return any(not e.call.startswith("api:") for e in entries_for(api))


# imported by each worker before its first case, off the case clock (op_db takes seconds)
WARM = ("torchparity.scenarios.opinfo:entries",)

SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, case=case, case_kind=CASE_KIND,
                      warm=WARM, entries=entries, entry_case=entry_case, catalogue="op_db",
                      covers=covers)
