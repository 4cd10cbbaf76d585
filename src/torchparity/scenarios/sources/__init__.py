"""Scenario sources: where the scenarios of an API come from.

Every command that runs an API (``check``, ``sweep``, ``predict``, ``gentest``) asks this
layer, so a new source reaches all of them at once. A source is one module in this
package that defines:

``NAME``
    the label results carry as ``scenarios[].source`` (``hand``, ``opinfo``, ``module``,
    ``optim``, ``distribution``, ``member``, ...).
``ORDER``
    an int; sources are asked in increasing order.
``scenarios(api: str, obj) -> List[Scenario]``
    the scenarios of the API named ``api`` (already resolved to ``obj``), or ``[]`` when
    the source does not apply. Deterministic and side-effect free: a worker process calls
    it again with the same arguments and picks the scenario by ``id`` (see :func:`find`).
    Each :class:`~torchparity.scenarios.registry.Scenario` it returns has ``source=NAME``,
    ``api=api``, the dtypes it runs in, and a function ``fn(device, dtype)`` that builds
    its inputs on the CPU (seeded by the runner), moves them to ``device`` and returns the
    outputs to compare with the same function run on the CPU.
``why_not(api: str, obj) -> str`` (optional)
    one line saying why the source does not apply, for the report's "sources tried".

``owns(api: str) -> bool`` (optional)
    whether ``api`` lies in the source's domain (a torch.distributed API, a torch.fx API,
    ...). An API no source gives a scenario is reported with the ``why_not`` of the
    sources that own it first: that is its named reason (``Offer.reason``).

``case(scenario, dtype, *, max_samples=None, grads=True, footprint=False) -> dict`` (optional)
    the worker case of one scenario and dtype, for a source whose cases run through a
    dedicated worker case kind (OpInfo: ``run/opinfo_handler.py``, every sample). Without
    it, a scenario runs through the generic ``source`` case kind
    (``run/source_handler.py``): the worker calls :func:`find` and runs the scenario like a
    hand-written one. :func:`case_for` picks.

A source that needs more than ``(api, obj)`` (``upstream``: the test tree of ``check
--tests``) reads a module-level setting that the command sets around its planning
(``upstream.configured(...)``); unset, it does not apply, and its ``case`` carries all a
worker needs.

A source that raises while asked is recorded in ``Offer.tried`` as failed; the others
still answer.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Dict, List, Optional

from ..registry import Scenario


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


SHARED = ("base", "world")  # shared pieces of the sources, not sources themselves


@functools.lru_cache(maxsize=1)
def _modules() -> tuple:
    return tuple(_load_sources())


def all_sources() -> List[ModuleType]:
    """The source modules of this package, in their ORDER."""
    return list(_modules())


def _load_sources() -> List[ModuleType]:
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in SHARED:
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "scenarios"):
            mods.append(mod)
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 100), m.NAME))


def source(name: str) -> ModuleType:
    for mod in all_sources():
        if mod.NAME == name:
            return mod
    raise KeyError(f"no scenario source {name!r}")


def offer(api: str, obj: Any) -> Offer:
    """Ask every source, in order, for the scenarios of ``api``."""
    out = Offer(api=api)
    for mod in all_sources():
        try:
            if getattr(mod, "owns", None) is not None and mod.owns(api):
                out.owners.append(mod.NAME)
            found = mod.scenarios(api, obj)
        except Exception as exc:  # one broken source must not hide the others
            out.tried[mod.NAME] = f"failed: {type(exc).__name__}: {exc}"[:300]
            continue
        if found:
            out.scenarios.extend(found)
            out.tried[mod.NAME] = f"{len(found)} scenario(s)"
        else:
            why = getattr(mod, "why_not", None)
            out.tried[mod.NAME] = why(api, obj) if why else "does not apply"
    return out


def find(source_name: str, api: str, obj: Any, scenario_id: str) -> Scenario:
    """The scenario ``scenario_id`` of ``api`` made by source ``source_name`` (in a worker)."""
    for sc in source(source_name).scenarios(api, obj):
        if sc.id == scenario_id:
            return sc
    raise KeyError(f"source {source_name}: no scenario {scenario_id!r} for {api}")


def case_for(sc: Scenario, api: str, dtype: str, *, max_samples: Optional[int] = None,
             grads: bool = True, footprint: bool = False) -> Dict[str, Any]:
    """The worker case running scenario ``sc`` of ``api`` in ``dtype``."""
    mod = source(sc.source)
    make = getattr(mod, "case", None)
    if make is not None:
        return make(sc, dtype, max_samples=max_samples, grads=grads, footprint=footprint)
    return {"kind": "source", "source": sc.source, "api": api, "scenario": sc.id,
            "dtype": dtype, "footprint": footprint}
