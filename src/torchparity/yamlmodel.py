"""Reading a YAML file into a pydantic model, every failure as one line naming the file.

Profiles, category rules, hardware observations and ``--config`` files all go through
:func:`load_yaml_model`, so they fail alike: unreadable, invalid YAML (with its line),
not a mapping, or the first key pydantic rejects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Type, TypeVar, Union

import yaml
from pydantic import BaseModel, ValidationError

from .errors import InputError, TorchparityError, first_problem

M = TypeVar("M", bound=BaseModel)

# libyaml's parser under PyYAML's own safe constructors, where this PyYAML was built with it
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, parsed by libyaml where PyYAML has it: the same
    constructors and resolvers, so the same data, several times faster (a shipped profile
    is ~280 kB, read by every worker and every rank process an emulated case starts). A
    document libyaml rejects is parsed again by PyYAML's own parser, so what it returns or
    raises (the error, its line) is ``yaml.safe_load``'s."""
    if _FAST_LOADER is not None:
        try:
            return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506  (a safe loader)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


def load_yaml_model(path: Union[str, Path], model: Type[M], *, what: str,
                    label: Optional[str] = None, error: Type[TorchparityError] = InputError,
                    empty_ok: bool = False) -> M:
    """``model`` validated from the YAML mapping in ``path``. Errors are ``error`` with
    ``label`` (default: the path) in front and ``what`` the file is (e.g. "category rules");
    ``empty_ok``: an empty file is an empty mapping."""
    path = Path(path)
    label = label or str(path)
    try:
        data = safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{label}: cannot read {what}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{label}: {what} is not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise error(f"{label}: invalid YAML in {what}: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark else ""
        raise error(f"{label}:{where} invalid YAML in {what}: {getattr(exc, 'problem', exc)}") from None
    if data is None and empty_ok:
        data = {}
    if not isinstance(data, dict):
        raise error(f"{label}: {what} must be a mapping, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{label}: bad {what}: {first_problem(exc)}") from None
