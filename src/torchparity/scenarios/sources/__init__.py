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

Sources whose cases run through a dedicated worker case kind (OpInfo) expose the same
three names and are planned by the commands that know that kind.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Dict, List

from ..registry import Scenario


@dataclass
class Offer:
    """What every source said about one API."""

    api: str
    scenarios: List[Scenario] = field(default_factory=list)
    tried: Dict[str, str] = field(default_factory=dict)  # source name -> "n scenarios" | why not


def all_sources() -> List[ModuleType]:
    """The source modules of this package, in their ORDER."""
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
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
        found = mod.scenarios(api, obj)
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
