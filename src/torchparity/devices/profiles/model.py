"""Capability profiles: what an (emulated) device supports, as validated YAML.

A profile names the torch device type it emulates, the chips it stands for, per-aten-op
dtype support, build features, optional numerics and the shape of the real backend's
error messages. Ops that are not listed are allowed (``default: allow``).
"""

from __future__ import annotations

import os
import string
from pathlib import Path
from typing import Dict, List, Optional, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...errors import ProfileError
from ...yamlmodel import load_yaml_model, safe_load

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex32", "complex64", "complex128")

PROFILE_DIR = Path(__file__).resolve().parent
OP_NAMESPACES = ("aten.", "c10d.")  # single ops, and torch.distributed collectives
TEMPLATE_FIELDS = ("op", "kernel", "dtype", "backend")  # what the emulator fills in


# Silence is not support, except for bookkeeping that moves or reinterprets data without
# computing: a generated profile needs no fact for these (schema names) in the dtypes it
# knows; in another dtype (float8) they are unverified too. The emulator (checks.py) and
# predict share this list.
NO_FACT_NEEDED = frozenset({
    "aten::clone", "aten::detach", "aten::alias", "aten::fill_", "aten::zero_", "aten::zeros",
    "aten::ones", "aten::full", "aten::zeros_like", "aten::ones_like", "aten::empty_like",
    "aten::full_like", "aten::new_empty", "aten::new_empty_strided", "aten::new_zeros",
    "aten::new_ones", "aten::new_full", "aten::lift_fresh", "aten::lift_fresh_copy",
    "aten::expand", "aten::permute", "aten::transpose", "aten::t", "aten::slice",
    "aten::select", "aten::squeeze", "aten::unsqueeze", "aten::_unsafe_view",
    "aten::reshape", "aten::contiguous", "aten::split", "aten::split_with_sizes",
    "aten::unbind", "aten::narrow", "aten::diagonal", "aten::is_nonzero", "aten::item",
    "aten::equal", "aten::resize_as_", "aten::record_stream", "aten::_has_compatible_shallow_copy_type",
})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Refusal(_Strict):
    """Dtypes refused before or by the kernel with the vendor's own words: op-plugin's
    ``TORCH_CHECK`` text, or aclnn's check on the output tensor (its format, ``%s`` for the
    dtype and the list), with the line that writes it."""

    dtypes: List[str]
    message: str
    source: str


class OpSupport(_Strict):
    """Support of one aten op (all overloads), or of one collective (``c10d.allreduce_``,
    checked with the dtype of the tensor it carries). No dtypes list: every dtype allowed."""

    supported: bool = True
    dtypes: Optional[List[str]] = None
    source: Optional[str] = None  # where the fact comes from (docs entry, hardware run)
    note: Optional[str] = None
    # of ``dtypes``, those only the vendor's AiCpu fallback takes: supported, but slow
    aicpu_dtypes: Optional[List[str]] = None
    # why some dtypes are refused, in the vendor's words (op-plugin's checks, the output's)
    refusals: Optional[List[Refusal]] = None

    @field_validator("dtypes", "aicpu_dtypes")
    @classmethod
    def _known_dtypes(cls, value):
        if value is not None:
            bad = [d for d in value if d not in DTYPES]
            if bad:
                raise ValueError(f"unknown dtype(s) {bad}; known: {', '.join(DTYPES)}")
        return value


class Features(_Strict):
    itt: bool = True  # torch.profiler.itt available (a build option)
    autocast: bool = True
    autocast_dtypes: List[str] = Field(default_factory=lambda: ["float16", "bfloat16"])
    # features a Python backend cannot provide; listed so a profile can say so explicitly
    generator: bool = False
    pin_memory: bool = False
    sparse: bool = False


class Numerics(_Strict):
    """Optional deviations of the device's arithmetic from the CPU's."""

    # ops computed with reduced precision for these dtypes, e.g. matmul in TF32/HF32
    reduced_precision_ops: Dict[str, List[str]] = Field(default_factory=dict)
    mantissa_bits: int = 10


class ErrorTemplates(_Strict):
    """Message shapes of the real backend; in dtype and no_kernel {op}, {kernel}, {dtype} and
    {backend} are filled in (itt is used as written)."""

    dtype: str = "\"{kernel}\" not implemented for '{dtype}'"
    no_kernel: str = ("Could not run '{op}' with arguments from the '{backend}' backend. "
                      "This could be because the operator doesn't exist for this backend")
    itt: str = "Can't use ITT profiler - PyTorch was compiled without ITT"

    @field_validator("dtype", "no_kernel")  # itt is raised as written
    @classmethod
    def _known_fields(cls, value):
        """Checked at load: a template the emulator cannot fill would turn every refusal
        into a KeyError in the middle of a run."""
        known = ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
        try:
            names = [name for _, name, _, _ in string.Formatter().parse(value) if name is not None]
            unknown = [name for name in names if name not in TEMPLATE_FIELDS]
            if not unknown:
                value.format(**{name: "x" for name in TEMPLATE_FIELDS})
        except (IndexError, ValueError, KeyError) as exc:
            raise ValueError(f"not a valid message template ({exc}); fields: {known}, "
                             "literal braces as {{ and }}") from None
        if unknown:
            raise ValueError(f"unknown field {{{unknown[0]}}}; known: {known} "
                             "(literal braces as {{ and }})")
        return value


class ChipIdentity(_Strict):
    """How the chip a profile stands for answers torch_npu's device API (``chips/identity.yaml``)."""

    device_name: str  # torch.npu.get_device_name(), e.g. "Ascend910B3"
    soc_version: int = -1  # torch_npu._C._npu_get_soc_version() (c10_npu::SocVersion)
    cann: Optional[str] = None  # the CANN release the profile's facts are for, when known
    cube_core_num: int = 0  # 0: not recorded
    vector_core_num: int = 0
    l2_cache_size: int = 0
    note: Optional[str] = None


IDENTITY_FILE = PROFILE_DIR / "chips" / "identity.yaml"
MESSAGES_FILE = PROFILE_DIR / "chips" / "messages.yaml"


class Profile(_Strict):
    name: str
    description: str = ""
    device_type: str = "npu"
    vendor: Optional[str] = None
    chips: List[str] = Field(default_factory=list)
    device_name: Optional[str] = None
    # the chip identity (an entry of chips/identity.yaml) the device API answers with; default:
    # the entry named like the profile, if any
    identity: Optional[str] = None
    generated: Optional[Dict[str, str]] = None  # how it was built: command, sources, torch version
    default: str = "allow"  # "allow" | "deny": ops not listed
    ops: Dict[str, OpSupport] = Field(default_factory=dict)
    features: Features = Field(default_factory=Features)
    numerics: Numerics = Field(default_factory=Numerics)
    errors: ErrorTemplates = Field(default_factory=ErrorTemplates)
    path: Optional[str] = Field(default=None, exclude=True)

    @field_validator("default")
    @classmethod
    def _default(cls, value):
        if value not in ("allow", "deny"):
            raise ValueError("must be 'allow' or 'deny'")
        return value

    @field_validator("device_type")
    @classmethod
    def _device_type(cls, value):
        if not value.isidentifier() or value in ("cpu", "cuda", "meta", "mps", "xpu"):
            raise ValueError(f"{value!r} cannot be an emulated device type name")
        return value

    @field_validator("ops")
    @classmethod
    def _op_names(cls, value):
        for key in value:
            if not key.startswith(OP_NAMESPACES):
                raise ValueError(f"op {key!r} must be an aten op name like 'aten.dot' (or a "
                                 "collective's c10d op like 'c10d.allreduce_')")
        return value

    def op_support(self, op: str) -> Optional[OpSupport]:
        """Support entry for 'aten.dot' or 'aten.dot.default' (overloads share it)."""
        entry = self.ops.get(op)
        if entry is None and op.count(".") >= 2:
            entry = self.ops.get(".".join(op.split(".")[:2]))
        return entry

    def allows(self, op: str, dtype: str) -> bool:
        entry = self.op_support(op)
        if entry is None:
            return self.default == "allow"
        if not entry.supported:
            return False
        return entry.dtypes is None or dtype in entry.dtypes


class Wording(_Strict):
    """A message template and the lines it comes from."""

    text: str
    sources: List[str] = Field(default_factory=list)


class KernelForm(_Strict):
    """op-plugin's own check words the op's refusal as c10's dispatch macros do."""

    kernel: str  # "round_npu"
    source: str


class ArgCheck(_Strict):
    """A kernel's argument check that answers where torch's CPU check would (op-plugin
    registers the op itself, so the CPU kernel's meta checks never run on the device)."""

    check: str  # the predicate's name in devices/emulator/argchecks.py
    func: str  # the op-plugin function that calls the kernel
    aclnn: str
    text: str  # the kernel's words; {fields} the predicate gives
    replaces: Optional[str] = None  # the CPU check it stands for
    sources: List[str] = Field(default_factory=list)


class VendorMessages(_Strict):
    """How a vendor's device words what it refuses (``chips/messages.yaml``)."""

    aclnn_failure: Optional[Wording] = None
    aclnn_dtype_check: Optional[Wording] = None
    kernel_form: Dict[str, KernelForm] = Field(default_factory=dict)
    arg_checks: Dict[str, List[ArgCheck]] = Field(default_factory=dict)


_MESSAGES: Dict[str, VendorMessages] = {}


def vendor_messages(vendor: Optional[str]) -> Optional[VendorMessages]:
    """The wordings of ``vendor``'s device (a profile's ``vendor``), or None."""
    if not vendor:
        return None
    if not _MESSAGES:
        raw = safe_load(MESSAGES_FILE.read_text(encoding="utf-8")) or {}
        try:
            _MESSAGES.update({k: VendorMessages.model_validate(v) for k, v in raw.items()})
        except ValueError as exc:
            raise ProfileError(f"{MESSAGES_FILE.name}: {exc}") from None
    return _MESSAGES.get(vendor)


def chip_identity(profile: "Profile") -> ChipIdentity:
    """The identity the emulated device answers with: the profile's ``identity`` entry (or
    the one named like the profile) of ``identity.yaml``; without one, the profile's
    ``device_name`` (or "<name> (emulated)") and an unknown SoC version."""
    table = _identities()
    key = profile.identity or profile.name
    if profile.identity is not None and key not in table:
        raise ProfileError(f"profile '{profile.name}' names identity '{key}', which "
                           f"{IDENTITY_FILE.name} lacks (known: {', '.join(table)})")
    if key in table:
        return table[key]
    return ChipIdentity(device_name=profile.device_name or f"{profile.name} (emulated)")


_IDENTITIES: Dict[str, ChipIdentity] = {}


def _identities() -> Dict[str, ChipIdentity]:
    if not _IDENTITIES:
        raw = safe_load(IDENTITY_FILE.read_text(encoding="utf-8")) or {}
        try:
            _IDENTITIES.update({k: ChipIdentity.model_validate(v) for k, v in raw.items()})
        except ValueError as exc:
            raise ProfileError(f"{IDENTITY_FILE.name}: {exc}") from None
    return _IDENTITIES


def builtin_profiles() -> Dict[str, Path]:
    return {p.stem: p for p in sorted(PROFILE_DIR.glob("*.yaml"))}


def load_profile(name_or_path: Union[str, os.PathLike]) -> Profile:
    """Load a shipped profile by name (``ascend-a2``) or any YAML file by path."""
    text_name = str(name_or_path)
    shipped = builtin_profiles()
    if text_name in shipped:
        path = shipped[text_name]
    else:
        path = Path(text_name)
        if not path.is_file():
            known = ", ".join(shipped) or "none"
            raise ProfileError(f"unknown profile '{text_name}': not a shipped profile ({known}) "
                               "and no such file")
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = None
    if key in _LOADED:
        return _LOADED[key].model_copy(deep=True)
    profile = load_yaml_model(path, Profile, what="profile", error=ProfileError)
    profile.path = str(path)
    if key is not None:
        _LOADED[key] = profile.model_copy(deep=True)
    return profile


# the profiles read in this process, by file and version (a changed file is read again);
# callers get copies, so none sees another's changes
_LOADED: Dict[tuple, Profile] = {}


def dump_profile(profile: Profile) -> str:
    data = profile.model_dump(mode="json", exclude_none=True)
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
