"""Option defaults from a YAML config file; command-line flags override them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict, Field

from ..yamlmodel import load_yaml_model

DEFAULTS: Dict[str, Any] = {"device": "auto", "timeout": 120.0, "jobs": 1, "tests": None,
                            "docs": None, "vendor_docs": None, "torch_version": None, "chips": []}


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    device: Optional[str] = None
    tests: Optional[str] = None
    docs: Optional[str] = None
    vendor_docs: Optional[str] = None
    torch_version: Optional[str] = None
    chips: Optional[List[str]] = None
    timeout: Optional[float] = Field(default=None, gt=0)  # as --timeout: positive seconds
    jobs: Optional[int] = Field(default=None, ge=1)  # as --jobs: at least one worker


def load_config(path: Path) -> Config:
    config = load_yaml_model(path, Config, what="options", label=f"--config {path}", empty_ok=True)
    # relative folders are relative to the config file
    for key in ("tests", "docs", "vendor_docs"):
        value = getattr(config, key)
        if value and not Path(value).is_absolute():
            setattr(config, key, str((path.parent / value).resolve()))
    return config


def merge_options(config_path: Optional[Path], **flags: Any) -> Dict[str, Any]:
    """Flags given (not None, not empty) win over the config file, which wins over defaults."""
    config = load_config(config_path).model_dump() if config_path else {}
    merged: Dict[str, Any] = {}
    for key, flag in flags.items():
        if flag is not None and flag != []:
            value = flag
        elif config.get(key) is not None:
            value = config[key]
        else:
            value = DEFAULTS.get(key)
        merged[key] = str(value) if isinstance(value, Path) else value
    return merged
