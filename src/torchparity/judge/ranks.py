"""A world's result in the wrong rank order, named (issue 45).

A world case answers rank by rank (``sources.world.run_world``: a list, one entry per
rank). A collective that puts the ranks' contributions in the wrong places (a gather whose
list is rotated, an all-gather concatenated in another order, a scatter that sends rank
1's chunk to rank 0) leaves every value right and only its place wrong: judged as values
it read ``mismatch`` on tensors and ``state`` on the strings of object collectives (no
compute op of the API's own). :func:`rank_order` finds the permutation, exactly equal
parts only, and :func:`name_ranks` turns such a failure into a ``mismatch`` that names
the ranks.
"""

from __future__ import annotations

import ast
from typing import Any, List, Optional, Sequence

import torch

from ..results.models import Cause, Metric, Status
from .judgement import Judgement

__all__ = ["rank_order", "name_ranks"]


def _seq(x: Any) -> bool:
    return isinstance(x, (list, tuple))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(torch.equal(a.detach().cpu(), b.detach().cpu()))
    if _seq(a) or _seq(b):
        return _seq(a) and _seq(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(_same(a[k], b[k]) for k in a))
    try:
        return bool(a == b)
    except Exception:
        return False


def _parts(x: Any, world: int) -> Optional[List[Any]]:
    """``x`` as ``world`` parts, one per rank: a list of that length, a tensor whose first
    dimension splits evenly, a string that spells such a list (an object collective's
    ``repr``); None otherwise."""
    if isinstance(x, str):
        try:
            x = ast.literal_eval(x)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if _seq(x) and len(x) == world:
        return list(x)
    if isinstance(x, torch.Tensor) and x.dim() >= 1 and x.size(0) >= world and x.size(0) % world == 0:
        return list(x.detach().cpu().chunk(world))
    return None


def _permutation(cpu: Sequence[Any], dev: Sequence[Any]) -> Optional[List[int]]:
    """p with dev[i] == cpu[p[i]] for every i, p not the identity; None if there is none."""
    used: set = set()
    p: List[int] = []
    for d in dev:
        j = next((j for j in range(len(cpu)) if j not in used and _same(cpu[j], d)), None)
        if j is None:
            return None
        used.add(j)
        p.append(j)
    return p if p != list(range(len(p))) else None


def rank_order(cpu: Any, dev: Any) -> Optional[str]:
    """How the device's world result puts the ranks' parts in the wrong places, in words;
    None where it differs otherwise (or not at all)."""
    if not (_seq(cpu) and _seq(dev)) or len(cpu) != len(dev) or len(cpu) < 2:
        return None
    world = len(cpu)
    notes: List[str] = []
    for r in range(world):
        if _same(cpu[r], dev[r]):
            continue
        cp, dp = _parts(cpu[r], world), _parts(dev[r], world)
        p = _permutation(cp, dp) if cp is not None and dp is not None and len(cp) == len(dp) else None
        if p is not None:
            moved = ", ".join(f"place {i} holds rank {j}'s part" for i, j in enumerate(p) if i != j)
            notes.append(f"rank {r}'s result: {moved} (on the CPU each rank's part is at its own place)")
            continue
        other = next((q for q in range(world) if q != r and _same(cpu[q], dev[r])), None)
        if other is not None:
            notes.append(f"rank {r} got what rank {other} gets on the CPU")
            continue
        return None  # a difference that is no rank order
    return "; ".join(notes) or None


def name_ranks(judgement: Judgement, cpu: Any, dev: Any) -> Judgement:
    """A failed world judgement whose difference is the ranks' order: a ``mismatch`` that
    names the ranks (not ``state``, not a bare value difference); others unchanged."""
    if judgement.status != Status.FAIL:
        return judgement
    said = rank_order(cpu, dev)
    if said is None:
        return judgement
    return Judgement(Status.FAIL, Cause.MISMATCH, f"wrong rank order: {said}; {judgement.detail}",
                     Metric(name="rank_order", value=1.0, threshold=0.0, standard="exact"))
