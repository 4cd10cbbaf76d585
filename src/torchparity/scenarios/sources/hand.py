"""Hand-written suites (``scenarios/suites/`` and ``--scenarios FILE``) as a source."""

from __future__ import annotations

from typing import Any, List

from .. import registry
from ..registry import Scenario
from .base import ModuleSource

NAME = "hand"
ORDER = 0


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return registry.scenarios_for_object(obj)


def why_not(api: str, obj: Any) -> str:
    return "no hand-written suite registers it"


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, writes_functions=True)
