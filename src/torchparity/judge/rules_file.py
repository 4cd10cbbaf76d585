"""The category rules file (judge/rules/categories.yaml or --category-rules): its model and
loader. Imports no torch, so ``check`` refuses a bad rules file before any heavy import."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..yamlmodel import load_yaml_model

RULES_FILE = Path(__file__).resolve().parent / "rules" / "categories.yaml"
FACT_NAMES = ("involvement", "implementation", "harness", "evidence")


class CategoryRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    name: str
    when: Dict[str, Any] = Field(default_factory=dict)
    en: str
    zh: str

    def matches(self, facts: Dict[str, Any]) -> bool:
        for key, want in self.when.items():
            have = facts.get(key)
            if isinstance(want, list):
                if have not in want:
                    return False
            elif have != want:
                return False
        return True


class CategoryRules(BaseModel):
    model_config = ConfigDict(extra="forbid")
    vocabulary: str
    rules: List[CategoryRule]


def load_rules(path: Optional[Union[str, Path]] = None) -> CategoryRules:
    path = Path(path) if path else RULES_FILE
    rules = load_yaml_model(path, CategoryRules, what="category rules")
    for rule in rules.rules:
        unknown = set(rule.when) - set(FACT_NAMES)
        if unknown:
            raise InputError(f"{path}: rule {rule.id!r} uses unknown fact(s) {sorted(unknown)}; "
                             f"known: {', '.join(FACT_NAMES)}")
    return rules
