"""The zh/en vocabulary of enum values (vocab.yaml): what a report shows instead of a raw value."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Dict

import yaml

HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def vocabulary() -> Dict[str, Dict[str, Dict[str, str]]]:
    return yaml.safe_load((HERE / "vocab.yaml").read_text(encoding="utf-8"))


def term(group: str, value: Any, lang: str) -> str:
    """The ``lang`` word for ``value`` of ``group``; an unknown value is shown as it is
    (a test keeps every value the result model can hold in the table)."""
    if value is None:
        return "—"
    entry = vocabulary()[group].get(str(value))
    return entry[lang] if entry else str(value)
