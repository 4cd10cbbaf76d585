"""Resolve a dotted API name to the object it names, with aliases and close matches."""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any, List, Optional

from ..errors import UnknownApiError, shown


@dataclass
class ResolvedApi:
    name: str  # as the user wrote it
    qualified_name: str  # where the object is defined: module + qualname
    obj: Any
    parent: Any  # the module or class the last name was looked up in
    aliases: List[str] = field(default_factory=list)  # other spellings that reach obj

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


def _public_names(obj: Any) -> List[str]:
    try:
        return [n for n in dir(obj) if not n.startswith("__")]
    except Exception:
        return []


def _suggest(prefix: str, parent: Any, wrong: str, limit: int = 5) -> List[str]:
    if len(wrong) > 100:  # no API name is that long; difflib on it takes seconds
        return []
    names = _public_names(parent)
    if not wrong.startswith("_"):  # a public name asked: private ones are no suggestion
        names = [n for n in names if not n.startswith("_")]
    close = difflib.get_close_matches(wrong, names, n=limit, cutoff=0.6)
    if not close:
        public = [n for n in names if not n.startswith("_")]
        close = difflib.get_close_matches(wrong, public, n=limit, cutoff=0.3)
    return [f"{prefix}.{n}" for n in close]


def _attr(obj: Any, name: str) -> Any:
    """``getattr(obj, name, None)`` that also survives a ``__getattr__`` raising something
    other than AttributeError (``torch.backends.cuda.cufft_plan_cache`` asserts CUDA)."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def qualified_name_of(obj: Any, fallback: str) -> str:
    """The defining location of obj: ``torch.autograd.gradcheck.gradcheck`` for gradcheck."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    # torch.ops.aten.<op> packets and overloads
    op_name = _attr(obj, "_qualified_op_name") or _attr(obj, "_name")
    if type(obj).__name__ in ("OpOverloadPacket", "OpOverload") and op_name:
        return "torch.ops." + str(op_name).replace("::", ".")
    module = _attr(obj, "__module__")
    qualname = _attr(obj, "__qualname__")
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        # torch builtins report __module__ 'torch._C._VariableFunctions'; the public
        # spelling the user gave is more useful than that implementation detail.
        if module.startswith("torch._C") or "_VariableFunctions" in qualname or (
                inspect.isbuiltin(obj) and "." not in qualname and module == "torch"):
            return fallback
        return f"{module}.{qualname}"
    return fallback


# The top-level packages a name may start with: torch, and the backends that extend it
# (torch_npu registers torch.npu and names its own APIs under torch_npu). Any other
# installed package is never imported for a name: its import-time code would run
# (``this.s`` prints the Zen of Python). TORCHPARITY_NAMESPACES adds more, comma-separated.
NAMESPACES = ("torch", "torch_npu")
NAMESPACES_ENV = "TORCHPARITY_NAMESPACES"


def namespaces() -> List[str]:
    extra = [n.strip() for n in os.environ.get(NAMESPACES_ENV, "").split(",") if n.strip()]
    return list(NAMESPACES) + [n for n in extra if n not in NAMESPACES]


def allow_namespaces(modules) -> None:
    """The modules a user names with ``--scenarios`` (dotted names, not ``.py`` files): their
    top-level packages become namespaces too, in this process and the workers it starts (the
    user asked for that module to be imported; it may check its own APIs)."""
    roots = [m.split(".", 1)[0] for m in modules if m and not m.endswith(".py")]
    new = [r for r in dict.fromkeys(roots) if r.isidentifier() and r not in namespaces()]
    if new:
        current = os.environ.get(NAMESPACES_ENV, "")
        os.environ[NAMESPACES_ENV] = ",".join([p for p in current.split(",") if p.strip()] + new)


def check_dotted(name: str) -> str:
    """``name`` stripped, or :class:`UnknownApiError` when it is not a dotted Python name
    (``!!!!``, ``../../etc/passwd``, ``__import__('os')``) or lies outside torch's
    namespaces (:func:`namespaces`). Imports nothing."""
    name = name.strip()
    if not name or any(not p.isidentifier() for p in name.split(".")):
        raise UnknownApiError(f"'{shown(name)}' is not a dotted Python name (e.g. torch.autograd.gradcheck)")
    allowed = namespaces()
    if name.split(".", 1)[0] not in allowed:
        raise UnknownApiError(
            f"'{shown(name)}' is not a torch API: a name starts with "
            f"{' or '.join(a + '.' for a in allowed)} (another package is never imported; "
            f"{NAMESPACES_ENV}=PKG adds a backend's namespace)")
    return name


# Classes the PyTorch docs (and the vendor lists copied from them) name under a package
# that does not export them: the docs' autograd page lists ``torch.autograd.Node.name``
# and ``torch.autograd.FunctionCtx.mark_dirty``; the classes live in these modules.
DOC_LOCATIONS = {
    "torch.autograd.Node": "torch.autograd.graph.Node",
    "torch.autograd.FunctionCtx": "torch.autograd.function.FunctionCtx",
}


def _declared_attribute(cls: Any, name: str) -> Any:
    """For a class that declares ``name`` only as an annotation (an instance attribute set
    in ``__init__``: ``TypedStorage.dtype``, ``Multinomial.total_count``), a read-only
    ``property`` standing for it (its doc names the annotation); else None."""
    if not isinstance(cls, type):
        return None
    for klass in cls.__mro__:
        annotations = klass.__dict__.get("__annotations__") or {}
        if name in annotations:
            kind = annotations[name]
            kind = kind if isinstance(kind, str) else getattr(kind, "__name__", repr(kind))
            return property(doc=f"{klass.__name__}.{name}: {kind} (an instance attribute)")
    return None


def resolve(name: str) -> ResolvedApi:
    """Resolve ``name`` or raise :class:`UnknownApiError` with close matches."""
    try:
        return _resolve(name)
    except UnknownApiError:
        for doc, real in DOC_LOCATIONS.items():
            if name == doc or name.startswith(doc + "."):
                found = _resolve(real + name[len(doc):])
                return ResolvedApi(name=name, qualified_name=found.qualified_name, obj=found.obj,
                                   parent=found.parent, aliases=sorted({found.name} - {name}))
        raise


def _resolve(name: str) -> ResolvedApi:
    name = check_dotted(name)
    parts = name.split(".")
    try:
        obj: Any = importlib.import_module(parts[0])
    except Exception:
        raise UnknownApiError(f"unknown API '{shown(name)}': module '{parts[0]}' cannot be imported") from None
    parent: Any = None
    for i in range(1, len(parts)):
        parent = obj
        failure: Optional[BaseException] = None
        # attributes first: torch.autograd.gradcheck is the function, not the module
        try:
            obj = getattr(obj, parts[i])
            continue
        except AttributeError:
            pass
        except Exception as exc:  # a __getattr__ that needs a backend (CUDA) this torch lacks
            failure = exc
        # a submodule not yet imported, or one shadowed by a same-named attribute
        # (torch.autograd.gradcheck.gradcheck: the module behind the function)
        try:
            module = importlib.import_module(".".join(parts[:i]))
            obj = getattr(module, parts[i])
            parent = module
            continue
        except Exception:
            pass
        try:
            obj = importlib.import_module(".".join(parts[: i + 1]))
            continue
        except Exception:
            pass
        declared = _declared_attribute(obj, parts[i]) if failure is None else None
        if declared is not None:  # an instance attribute the class only annotates
            parent, obj = obj, declared
            continue
        prefix = ".".join(parts[:i])
        if failure is not None:
            first = next((ln.strip() for ln in str(failure).splitlines() if ln.strip()), "")
            raise UnknownApiError(f"API '{shown(name)}' cannot be reached here: reading '{parts[i]}' of "
                                  f"'{prefix}' raised {type(failure).__name__}: {first}"[:300]) from None
        hints = _suggest(prefix, parent, parts[i])
        hint = f"; did you mean: {', '.join(hints)}?" if hints else ""
        raise UnknownApiError(f"unknown API '{shown(name)}': '{shown(prefix)}' has no attribute "
                              f"'{shown(parts[i])}'{hint}")
    if parent is None:
        parent = sys.modules.get(name.rsplit(".", 1)[0]) if "." in name else None
    qualified = qualified_name_of(obj, name)
    aliases = [a for a in {name, qualified} if a != qualified]
    return ResolvedApi(name=name, qualified_name=qualified, obj=obj, parent=parent,
                       aliases=sorted(aliases))


def unwrap(obj: Any) -> Any:
    try:
        return inspect.unwrap(obj)
    except Exception:
        return obj


def same_api(a: str, b: str) -> bool:
    """True when two dotted names reach the same object (e.g. an alias and its definition)."""
    if a == b:
        return True
    try:
        return resolve(a).obj is resolve(b).obj
    except UnknownApiError:
        return False


def maybe_resolve(name: str) -> Optional[ResolvedApi]:
    try:
        return resolve(name)
    except UnknownApiError:
        return None
