"""Which aten ops a vendor's backend registers kernels for ("native kernels"), per device type.

A backend without its own kernel for an op that aten implements as a composite receives
the ops of that composite instead (``new_ones`` arrives as ``new_empty`` + ``fill_``); an op
it registers itself arrives as itself, whatever aten would decompose it into on the CPU
(``linalg_cholesky`` is a CompositeImplicitAutograd op in aten, but torch_npu runs its own
kernel). ``app.predict`` asks this to build the footprint a device really receives.

The facts are data, shipped in ``profiles/sources/<vendor>-registered-ops.yaml`` with the
repository and commit they were extracted from; :func:`extract_op_plugin` regenerates the
Ascend file from a snapshot of Ascend/op-plugin::

    git --git-dir=op-plugin.git show HEAD:op_plugin/config/op_plugin_functions.yaml > f.yaml
    python -m torchparity.devices.registered_ops f.yaml --commit SHA --torch-version 2.13 \\
        > src/torchparity/devices/profiles/sources/ascend-registered-ops.yaml
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence

import yaml

from ..errors import InputError
from ..yamlmodel import safe_load

SOURCES = Path(__file__).resolve().parent / "profiles" / "sources"
# device type -> data file (the device type a vendor's torch plug-in registers)
FILES: Dict[str, str] = {"npu": "ascend-registered-ops.yaml"}
# op-plugin sections that hold aten ops ("custom" holds the vendor's own npu_* namespace)
ATEN_SECTIONS = ("official", "autograd", "symint", "quant")


@dataclass(frozen=True)
class RegisteredOps:
    """The aten overloads one vendor backend registers, e.g. ``aten.mm.default``."""

    overloads: FrozenSet[str]
    source: str = ""  # repository, commit and file the list was extracted from

    @property
    def packets(self) -> FrozenSet[str]:
        return frozenset(".".join(o.split(".")[:2]) for o in self.overloads)

    def has(self, op: str) -> bool:
        """``aten.mm.default`` / ``aten.mm.out``: that overload; ``aten.mm``: any overload."""
        if op.count(".") >= 2:
            return op in self.overloads
        return op in self.packets


def registered_ops(device_type: str) -> Optional[RegisteredOps]:
    """The shipped list for ``device_type`` (``npu``: Ascend op-plugin), or None."""
    name = FILES.get(device_type)
    return _load(str(SOURCES / name)) if name else None


@lru_cache(maxsize=None)
def _load(path: str) -> RegisteredOps:
    return load_registered_ops(Path(path))


def load_registered_ops(path: Path) -> RegisteredOps:
    try:
        data = safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read registered-ops file {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("ops"), dict):
        raise InputError(f"{path}: expected a mapping with 'ops: {{aten.name: [overloads]}}'")
    overloads = frozenset(f"{packet}.{ov}" for packet, ovs in data["ops"].items()
                          for ov in (ovs or ["default"]))
    src = data.get("source") or {}
    text = " ".join(str(src.get(k, "")) for k in ("repo", "commit", "path")).strip()
    return RegisteredOps(overloads, text)


# -- extraction from Ascend/op-plugin ------------------------------------------------------------

_VERSION = re.compile(r"v(\d+)\.(\d+)")


def _versions(spec, all_versions: Sequence[str]) -> List[str]:
    """op-plugin's version field: ``all_version``, ``[v2.1, newest]``, ``[v2.1, v2.12]``,
    ``v2.2`` or ``v2.1, v2.2`` (a list of single versions)."""
    if spec is None:
        return []
    if spec == "all_version":
        return list(all_versions)
    if isinstance(spec, list) and len(spec) == 2 and str(spec[1]).strip() in (
            "newest", *all_versions) and str(spec[0]).strip() in all_versions:
        lo = all_versions.index(str(spec[0]).strip())
        hi = (len(all_versions) - 1 if str(spec[1]).strip() == "newest"
              else all_versions.index(str(spec[1]).strip()))
        return list(all_versions[lo:hi + 1])
    items = spec if isinstance(spec, list) else str(spec).split(",")
    return [str(v).strip() for v in items if str(v).strip()]


def extract_op_plugin(text: str, torch_version: str) -> Dict[str, List[str]]:
    """{aten.name: [overloads]} registered (``acl_op`` or ``op_api``) for ``torch_version``
    ("2.13") by an ``op_plugin_functions.yaml``."""
    data = safe_load(text)
    m = _VERSION.search("v" + torch_version.lstrip("v"))
    if not m or not isinstance(data, dict):
        raise InputError(f"bad torch version {torch_version!r} or op-plugin file")
    want = f"v{m.group(1)}.{m.group(2)}"
    all_versions = [str(v) for v in data.get("all_version", [])]
    out: Dict[str, List[str]] = {}
    for section in ATEN_SECTIONS:
        for item in data.get(section) or []:
            func = str(item.get("func", ""))
            name = func.split("(", 1)[0].strip()
            if not name or name.startswith("npu_"):
                continue
            if not any(want in _versions(item.get(k), all_versions) for k in ("acl_op", "op_api")):
                continue
            base, _, overload = name.partition(".")
            out.setdefault(f"aten.{base}", [])
            ov = overload or "default"
            if ov not in out[f"aten.{base}"]:
                out[f"aten.{base}"].append(ov)
    return {k: sorted(v) for k, v in sorted(out.items())}


def render(ops: Dict[str, List[str]], *, commit: str, torch_version: str,
           repo: str = "Ascend/op-plugin",
           path: str = "op_plugin/config/op_plugin_functions.yaml") -> str:
    head = (
        "# Aten ops the Ascend torch plug-in (torch_npu) registers its own NPU kernels for:\n"
        "# every `func:` of op-plugin's function list with an `acl_op` or `op_api` version\n"
        f"# range that includes torch {torch_version} (sections {', '.join(ATEN_SECTIONS)};\n"
        "# the vendor's own npu_* ops left out). Data, extracted by\n"
        "# `python -m torchparity.devices.registered_ops` (see devices/registered_ops.py).\n")
    body = {"source": {"repo": repo, "commit": commit, "path": path},
            "torch_version": torch_version, "device_type": "npu", "ops": ops}
    return head + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100)


def main(argv: Optional[Iterable[str]] = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="op_plugin_functions.yaml -> registered-ops YAML")
    ap.add_argument("file")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--torch-version", default="2.13")
    opts = ap.parse_args(list(argv) if argv is not None else None)
    text = Path(opts.file).read_text(encoding="utf-8")
    sys.stdout.write(render(extract_op_plugin(text, opts.torch_version), commit=opts.commit,
                            torch_version=opts.torch_version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
