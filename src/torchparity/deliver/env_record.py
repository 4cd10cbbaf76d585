"""The one environment record of a run: chip, SoC, CANN and versions from one place.

Every deliverable (report.zh.md, report.en.md, report.html, the issues and review) writes the
environment from here, so one device is never called three names: on the emulator the chip
and CANN release come from the capability profile (``Environment.extra``: ``chip``,
``chips``, ``profile_cann``), on hardware from the backend (``device_name``, ``cann``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from ..results.models import DeviceInfo, Environment

W = {
    "emulated": {"zh": "{name}（模拟设备，能力描述 `{profile}`；非硬件）",
                 "en": "{name} (emulated, profile `{profile}`; not hardware)"},
    "cann_profile": {"zh": "{v}（能力描述 `{profile}` 依据的 CANN 版本；模拟设备，未安装 CANN）",
                     "en": "{v} (the CANN release profile `{profile}` is built from; emulated, no CANN installed)"},
    "cann_none_emu": {"zh": "不适用（模拟设备，能力描述 `{profile}` 未声明 CANN 版本）",
                      "en": "n/a (emulated; profile `{profile}` declares no CANN release)"},
    "cann_missing": {"zh": "未检测到", "en": "not detected"},
    "cann_na": {"zh": "不适用（非昇腾设备）", "en": "n/a (not an Ascend device)"},
}


@dataclass(frozen=True)
class EnvRecord:
    """One device of a run, as every deliverable writes it (in one language)."""

    os: str
    python: str
    torch: str
    soc: Optional[str]  # Ascend910B3, from the profile (emulated) or the backend
    products: List[str]  # the vendor docs' product names of its chip families
    name: str  # "Atlas A2 训练系列产品 / Ascend910B3": products and SoC, no qualifier
    hardware: str  # name, with the emulated qualifier where it is one
    cann: str
    cann_version: Optional[str]  # the bare release, None where none is known
    versions: str  # "torch 2.13.0+cpu / torchparity-emulator 0.1.0"
    emulated: bool
    profile: Optional[str]


def _soc(env: Environment, dev: DeviceInfo) -> Optional[str]:
    chip = env.extra.get("chip")
    if chip:
        return str(chip)
    name = env.device_name or dev.name
    if not name:
        return None
    return name.replace(" (emulated)", "").strip() or None


def record(env: Environment, dev: DeviceInfo, lang: str) -> EnvRecord:
    from .matrix import chips_for

    families = chips_for(env, dev)
    products = [c.name(lang) for c in families]
    soc = _soc(env, dev)
    parts = list(products)
    if soc and soc not in parts:
        parts.append(soc)
    name = " / ".join(parts) if parts else dev.type
    hardware = W["emulated"][lang].format(name=name, profile=dev.profile) if dev.emulated else name
    if dev.emulated:
        version = env.extra.get("profile_cann") or env.cann
        cann = (W["cann_profile"][lang].format(v=version, profile=dev.profile) if version
                else W["cann_none_emu"][lang].format(profile=dev.profile))
    else:
        version = env.cann
        cann = version or W["cann_missing" if families or dev.type == "npu" else "cann_na"][lang]
    versions = " / ".join([f"torch {env.torch}"] + [f"{k} {v}" for k, v in env.backend.items()])
    return EnvRecord(os=env.os, python=env.python, torch=env.torch, soc=soc, products=products, name=name,
                     hardware=hardware, cann=cann, cann_version=str(version) if version else None,
                     versions=versions, emulated=dev.emulated, profile=dev.profile)
