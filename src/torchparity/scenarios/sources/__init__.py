"""Scenario sources: where the scenarios of an API come from.

Every command that runs an API (``check``, ``sweep``, ``predict``, ``gentest``) asks this
layer, so a new source reaches all of them at once. A source is one module or one package
in this folder (its helpers inside its package) that declares ``SOURCE``, a
:class:`~torchparity.scenarios.sources.base.Source` (usually a ``ModuleSource`` naming its
functions), and is listed in :data:`SOURCES`, the one ordered list of sources. Beside the
sources lie only the shared pieces: ``base`` (the interface, ``probed``, moving inputs)
and ``world`` (2-rank worlds). A source imports the scenario model, ``base``, ``world``,
``api`` and ``results``, never another source.

The interface (see ``Source``):

``name``, ``order``
    the label results carry as ``scenarios[].source``; sources are asked in the order of
    :data:`SOURCES` (increasing ``order``).
``scenarios(api, obj) -> List[Scenario]``
    the scenarios of the API named ``api`` (already resolved to ``obj``), or ``[]``.
    Deterministic and side-effect free: a worker process calls it again with the same
    arguments and picks the scenario by ``id`` (see :func:`find`). Each scenario has
    ``source=name``, ``api=api``, the dtypes it runs in, and ``fn(device, dtype)`` that
    builds its inputs on the CPU (seeded by the runner), moves them to ``device`` and
    returns the outputs to compare with the same function run on the CPU.
``why_not(api, obj)``, ``owns(api)``, ``members()``
    one line saying why the source does not apply (the report's "sources tried"); whether
    ``api`` lies in its domain (an API no source gives a scenario is reported with the
    ``why_not`` of its owners first: ``Offer.reason``); the API names it has cases for.
``fallback``, ``yields_to``, ``yielded(api, by)``
    declared precedence, resolved in :func:`offer` only: ``docstring`` is a fallback,
    asked only when no source before it gave a scenario; ``member`` yields to ``opinfo``
    where OpInfo has the API's own entry (``covers``; one reached by footprint only does not).
``prepare(settings, apis)``
    a context the run plans in, given the run's :class:`~.base.RunSettings` (``upstream``
    reads the test tree of ``check --tests`` there); see :func:`prepared`.
``case(...)``, ``case_kind``, ``warm``
    for a source whose cases run through a dedicated worker case kind (OpInfo:
    ``run/opinfo_handler.py``, every sample; ``upstream``): the worker case, and the
    modules a worker imports before its first such case. Without it, a scenario runs
    through the generic ``source`` case kind (``run/source_handler.py``): the worker calls
    :func:`find` and runs it like a hand-written one. :func:`case_for` picks.

A source that raises while asked is recorded in ``Offer.tried`` as failed; the others
still answer.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..registry import Scenario

if TYPE_CHECKING:
    from .base import RunSettings, Source

__all__ = ["ANY_DTYPE", "ModuleSource", "Offer", "Prepared", "RunSettings", "SOURCES", "Source", "all_sources",
           "case_for", "entries_of", "fallback", "find", "first_answer", "offer", "prepared",
           "replaying", "source", "sweeping", "warm_all", "warm_for"]


def __getattr__(name: str) -> Any:
    """The interface names of ``base``, loaded on first use: ``base`` imports torch, and
    importing this package must not (the CLI refuses bad input before torch loads)."""
    if name in ("ANY_DTYPE", "ModuleSource", "RunSettings", "Source"):
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class Offer:
    """What every source said about one API."""

    api: str
    scenarios: List[Scenario] = field(default_factory=list)
    tried: Dict[str, str] = field(default_factory=dict)  # source name -> "n scenarios" | why not
    owners: List[str] = field(default_factory=list)  # sources whose domain the API lies in

    @property
    def reason(self) -> str:
        """Why no scenario: the owning sources' own words, or that no source owns the API
        ("" when some source gave scenarios)."""
        if self.scenarios:
            return ""
        said = [f"{name}: {self.tried[name]}" for name in self.owners if name in self.tried]
        return "; ".join(said) if said else "no scenario source covers this API"


# the sources, in the order they are asked (their ``order``, increasing)
SOURCES: Tuple[str, ...] = (
    "hand", "opinfo", "module", "optim", "distribution", "member", "distributed", "fx",
    "distsvc", "distpar", "runtime", "devmod", "quant", "tooling", "nnutil", "docstring",
    "upstream",
)


@functools.lru_cache(maxsize=1)
def all_sources() -> Tuple[Source, ...]:
    """Every source, in the order of :data:`SOURCES` (imported on first use)."""
    return tuple(importlib.import_module(f"{__name__}.{name}").SOURCE for name in SOURCES)


def source(name: str) -> Source:
    for src in all_sources():
        if src.name == name:
            return src
    raise KeyError(f"no scenario source {name!r}")


def _answered(src: Source, gave: List[str], api: str) -> str:
    """The source that answered for ``src`` (its declared precedence), or "": a fallback
    yields to any source that gave scenarios, a ``yields_to`` source only to one whose
    scenarios are the API's own (:meth:`~.base.Source.covers`)."""
    if src.fallback and gave:
        return gave[0]
    return next((name for name in src.yields_to if name in gave and source(name).covers(api)), "")


def offer(api: str, obj: Any) -> Offer:
    """Ask every source, in order, for the scenarios of ``api``."""
    out = Offer(api=api)
    gave: List[str] = []  # the sources that gave scenarios, in order
    for src in all_sources():
        try:
            if src.owns(api):
                out.owners.append(src.name)
            by = _answered(src, gave, api)
            if by:
                out.tried[src.name] = src.yielded(api, by)
                continue
            found = src.scenarios(api, obj)
        except Exception as exc:  # one broken source must not hide the others
            out.tried[src.name] = f"failed: {type(exc).__name__}: {exc}"[:300]
            continue
        if found:
            gave.append(src.name)
            out.scenarios.extend(found)
            out.tried[src.name] = f"{len(found)} scenario(s)"
        else:
            out.tried[src.name] = src.why_not(api, obj)
    return out


def first_answer(api: str, obj: Any, before: str) -> str:
    """The first source listed before ``before`` that gives ``api`` a scenario, or ""."""
    for src in all_sources():
        if src.name == before:
            break
        try:
            if src.scenarios(api, obj):
                return src.name
        except Exception:  # a broken source is the offer's to report, not a cover
            continue
    return ""


@dataclass
class Prepared:
    """What the sources found while a run was prepared."""

    tests_evidence: Optional[Dict[str, Any]] = None  # api -> TestsEvidence (``--tests``)


@contextlib.contextmanager
def prepared(settings: RunSettings, apis: Iterable[str]) -> Iterator[Prepared]:
    """Every source's :meth:`~.base.Source.prepare` for one run: plan inside this block.
    ``apis`` may be lazy: a source that needs it reads it once."""
    names = _Once(apis)
    with contextlib.ExitStack() as stack:
        out = Prepared()
        for src in all_sources():
            found = stack.enter_context(src.prepare(settings, names))
            if found is not None:
                out.tests_evidence = {**(out.tests_evidence or {}), **found}
        yield out


class _Once:
    """An iterable read at most once, then remembered (a lazy list of API names)."""

    def __init__(self, items: Iterable[str]):
        self._items, self._list = items, None

    def __iter__(self):
        if self._list is None:
            self._list = list(self._items)
        return iter(self._list)


def warm_for(cases: Sequence[Dict[str, Any]]) -> List[str]:
    """The modules a worker imports before its first case, for the case kinds in ``cases``."""
    kinds = {c.get("kind") for c in cases}
    return [m for src in all_sources() if src.case_kind in kinds for m in src.warm]


def warm_all() -> List[str]:
    """Every source's warm-up modules: for a worker started before its cases are known."""
    return list(dict.fromkeys(m for src in all_sources() for m in src.warm))


def replaying() -> Tuple[str, ...]:
    """The names of the sources whose scenarios replay the API's upstream tests."""
    return tuple(src.name for src in all_sources() if src.replays)


def sweeping() -> Tuple[Source, ...]:
    """The sources with a catalogue of entries (:meth:`~.base.Source.entries`: OpInfo),
    which ``sweep`` runs in every dtype asked and ``predict`` folds sample by sample."""
    return tuple(src for src in all_sources() if src.catalogue)


def entries_of(api: str) -> Tuple[Optional[Source], List[Any]]:
    """The first catalogue source with entries for ``api``, and those entries
    ((None, []) when none has)."""
    for src in sweeping():
        found = src.entries(api)
        if found:
            return src, found
    return None, []


def fallback() -> Optional[Source]:
    """The source asked only when no source before it gave a scenario (docstring
    examples), or None."""
    return next((src for src in all_sources() if src.fallback), None)


def find(source_name: str, api: str, obj: Any, scenario_id: str) -> Scenario:
    """The scenario ``scenario_id`` of ``api`` made by source ``source_name`` (in a worker)."""
    for sc in source(source_name).scenarios(api, obj):
        if sc.id == scenario_id:
            return sc
    raise KeyError(f"source {source_name}: no scenario {scenario_id!r} for {api}")


def case_for(sc: Scenario, api: str, dtype: str, *, max_samples: Optional[int] = None,
             grads: bool = True, footprint: bool = False) -> Dict[str, Any]:
    """The worker case running scenario ``sc`` of ``api`` in ``dtype``."""
    made = source(sc.source).case(sc, dtype, max_samples=max_samples, grads=grads,
                                  footprint=footprint)
    if made is not None:
        return made
    return {"kind": "source", "source": sc.source, "api": api, "scenario": sc.id,
            "dtype": dtype, "footprint": footprint}
