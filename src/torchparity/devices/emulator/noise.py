"""Device noise (``TORCHPARITY_EMU_NUMERICS=device``): a correct device's rounding.

The rules are data, in ``devices/profiles/noise/device.yaml`` (each with its source), for
the profiles that file names; this module only knows the rule *kinds*:

- ``round-inputs``: floating inputs of a listed dtype rounded to ``mantissa_bits`` before
  the kernel runs (HF32 / TF32 units), as ``numerics.round_mantissa`` does;
- ``reorder``: a reduction over its elements in reversed order (the reduced dims flipped);
- ``upcast``: inputs of a listed dtype computed in float32, the result rounded once;
- ``ulp``: each floating result element moved by up to ``ulp[dtype]`` units in the last
  place, by a hash of its bits (deterministic: the user's RNG is not touched, and two runs
  under one seed agree, as on a correct device).

``wrap(op, call)`` is called once per op plan (``faults.install``), never per call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import torch

from ...yamlmodel import safe_load
from .numerics import round_mantissa

RULES_FILE = Path(__file__).resolve().parent.parent / "profiles" / "noise" / "device.yaml"
KINDS = ("round-inputs", "reorder", "upcast", "ulp")
_CACHE: Dict[str, Any] = {}
_INT = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
        torch.float64: torch.int64}


def rules(path: Optional[Path] = None) -> Dict[str, Any]:
    """The noise rules file, checked: every rule has a known kind, ops and a source."""
    path = Path(path or RULES_FILE)
    key = str(path)
    if key in _CACHE:
        return _CACHE[key]
    data = safe_load(path.read_text(encoding="utf-8")) or {}
    for rule in data.get("rules", []):
        for field in ("name", "kind", "ops", "source"):
            if not rule.get(field):
                raise ValueError(f"{path.name}: rule {rule.get('name', '?')!r} lacks '{field}'")
        if rule["kind"] not in KINDS:
            raise ValueError(f"{path.name}: rule {rule['name']!r} has unknown kind {rule['kind']!r}")
    _CACHE[key] = data
    return data


def rules_for(profile_name: Optional[str]) -> List[Dict[str, Any]]:
    data = rules()
    if profile_name is not None and profile_name not in data.get("profiles", []):
        return []
    return list(data.get("rules", []))


def _matches(rule, op) -> bool:
    base = op._schema.name.split("::", 1)[-1]
    plain = base[:-1] if base.endswith("_") and not base.endswith("__") else base
    for name in rule["ops"]:
        if name.startswith("tag:"):
            if getattr(torch.Tag, name[4:], None) in op.tags:
                return True
        elif name.split(".", 1)[-1] == plain:
            return True
    return False


def declared_precision(op, profile_name: Optional[str]) -> Optional[Dict[torch.dtype, int]]:
    """dtype -> mantissa bits for an op the chip computes in reduced precision by default
    (the ``round-inputs`` rules of the profile: a fact of the chip, whatever the numerics
    mode); None when it computes in its dtype's precision."""
    out: Dict[torch.dtype, int] = {}
    for rule in rules_for(profile_name):
        if rule["kind"] == "round-inputs" and _matches(rule, op):
            for d in rule.get("dtypes", []):
                out[getattr(torch, d)] = int(rule.get("mantissa_bits", 10))
    return out or None


def _mutates(op) -> bool:
    return any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)


def wrap(op, call: Callable, profile_name: Optional[str] = None, kinds=KINDS) -> Callable:
    """``call`` with every matching rule of the active profile applied (of ``kinds``)."""
    for rule in rules_for(profile_name):
        if not _matches(rule, op) or rule["kind"] not in kinds:
            continue
        kind = rule["kind"]
        dtypes = frozenset(getattr(torch, d) for d in rule.get("dtypes", []) or rule.get("ulp", {}))
        if kind == "round-inputs":
            call = _round_inputs(call, dtypes, int(rule.get("mantissa_bits", 10)))
        elif kind == "reorder":
            call = _reorder(call, op, dtypes)
        elif kind == "upcast" and not _mutates(op):
            call = _upcast(call, dtypes)
        elif kind == "ulp":
            steps = {getattr(torch, d): int(n) for d, n in rule["ulp"].items()}
            call = _ulp(call, steps, _mutates(op))
    return call


def _round_inputs(call, dtypes, bits: int):
    def run(*a, **k):
        a = tuple(round_mantissa(x, bits) if isinstance(x, torch.Tensor) and x.dtype in dtypes
                  else x for x in a)
        return call(*a, **k)
    return run


def _reorder(call, op, dtypes):
    dim_at = next((i for i, arg in enumerate(op._schema.arguments) if arg.name == "dim"), None)

    def run(*a, **k):
        if not a or not isinstance(a[0], torch.Tensor) or a[0].dtype not in dtypes or a[0].dim() == 0:
            return call(*a, **k)
        x = a[0]
        dim = a[dim_at] if dim_at is not None and dim_at < len(a) else k.get("dim")
        if dim is None or (isinstance(dim, (list, tuple)) and not dim):
            dims = list(range(x.dim()))
        elif isinstance(dim, (list, tuple)):
            dims = [d % x.dim() for d in dim]
        else:
            dims = [dim % x.dim()]
        return call(torch.flip(x, dims), *a[1:], **k)
    return run


def _upcast(call, dtypes):
    def run(*a, **k):
        low = None
        for x in a:
            if isinstance(x, torch.Tensor) and x.dtype in dtypes:
                low = x.dtype
                break
        if low is None:
            return call(*a, **k)
        a = tuple(x.float() if isinstance(x, torch.Tensor) and x.dtype == low else x for x in a)
        out = call(*a, **k)
        if isinstance(out, torch.Tensor) and out.dtype == torch.float32:
            return out.to(low)
        return out
    return run


def nudge(t: torch.Tensor, steps: int) -> None:
    """Move each finite, non-zero element of ``t`` (in place) by up to ``steps`` ulps, by a
    hash of its own bits: the same value is always moved the same way, as a correct
    device's kernel (a fixed reduction order, its own rounding) gives the same result for
    the same inputs every run; a seeded API repeats its draws under the noise."""
    itype = _INT.get(t.dtype)
    if itype is None or not t.numel() or steps <= 0:
        return
    bits = t.view(itype) if t.is_contiguous() else t.contiguous().view(itype)
    h = bits.to(torch.int64) * 2654435761 + 40503
    h = h ^ (h >> 13)
    delta = (h.remainder(2 * steps + 1) - steps).to(itype)
    big = torch.finfo(t.dtype).max
    ok = torch.isfinite(t) & (t != 0) & (t.abs() < big) & (t.abs() >= torch.finfo(t.dtype).tiny)
    moved = torch.where(ok, bits + delta, bits).view(t.dtype)
    t.copy_(moved)


def _ulp(call, steps: Dict[torch.dtype, int], mutates: bool):
    def run(*a, **k):
        out = call(*a, **k)
        inputs = set() if mutates else {x.untyped_storage().data_ptr() for x in a
                                        if isinstance(x, torch.Tensor)}
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, torch.Tensor) and t.dtype in steps and t.untyped_storage().data_ptr() not in inputs:
                nudge(t, steps[t.dtype])
        return out
    return run
