"""Static analysis of one API: what it is, where it lives, which C++ entry points it calls."""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import re
import textwrap
import types
from typing import Any, Dict, Iterable, List, Optional

from ..results.models import Analysis
from .resolve import ResolvedApi, unwrap


def _kind(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if type(obj).__name__ in ("OpOverloadPacket", "OpOverload"):
        return "op"
    if inspect.isclass(obj):
        return "class"
    if inspect.isbuiltin(obj) or type(obj).__name__ in ("method_descriptor", "wrapper_descriptor",
                                                         "builtin_function_or_method",
                                                         "getset_descriptor"):
        return "builtin"
    if inspect.ismethod(obj) or inspect.ismethoddescriptor(obj):
        return "method"
    if inspect.isfunction(unwrap(obj)):
        return "function"
    return type(obj).__name__


def aten_op_for(name: str) -> Optional[str]:
    """``aten.<name>`` when an aten operator of that name exists (torch.mm -> aten.mm)."""
    import torch

    short = name.rsplit(".", 1)[-1]
    try:
        packet = getattr(torch.ops.aten, short)
    except (AttributeError, RuntimeError):
        return None
    if not isinstance(packet, torch._ops.OpOverloadPacket):  # the namespace's own attributes
        return None
    return f"aten.{packet._qualified_op_name.split('::', 1)[1]}"


def _implementation(kind: str, resolved: ResolvedApi) -> str:
    if kind == "module":
        return "module"
    if kind == "op":
        return "aten_operator"
    if kind == "class":
        return "python_class" if _has_python_source(resolved.obj) else "cpp_builtin"
    if kind in ("builtin", "method"):
        target = unwrap(resolved.obj)
        if inspect.isfunction(target):
            return "python_function"
        return "aten_operator" if aten_op_for(resolved.name) else "cpp_builtin"
    return "python_function"


def _has_python_source(obj: Any) -> bool:
    try:
        inspect.getsourcefile(obj)
        return True
    except (TypeError, OSError):
        return False


def _signature(obj: Any) -> Optional[str]:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        doc = inspect.getdoc(obj) or ""
        first = doc.strip().splitlines()[0] if doc.strip() else ""
        return first if "(" in first else None


def _summary(obj: Any) -> Optional[str]:
    doc = inspect.getdoc(obj)
    if not doc:
        return None
    paragraphs = [p.strip() for p in doc.strip().split("\n\n") if p.strip()]
    if not paragraphs:
        return None
    first = paragraphs[0]
    # builtins start with their signature line ("mm(input, mat2, *, out=None) -> Tensor")
    if len(paragraphs) > 1 and "\n" not in first and re.match(r"^[\w.]+\(.*\)( -> .*)?$", first):
        first = paragraphs[1]
    text = " ".join(line.strip() for line in first.splitlines())
    # reST roles and literals read better as plain code spans
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def _built_by(obj: Any, depth: int = 2) -> List[Any]:
    """What a factory object builds: the function or class of a ``functools.partial``, and
    of the partials an object holds in its attributes or fields (torch.ao's ``with_args``
    wrappers hold one; a ``QConfig`` holds such wrappers): an observer a qconfig makes is
    the qconfig's own answer, not code around it."""
    if isinstance(obj, functools.partial):
        return [obj.func]
    if depth <= 0 or inspect.isclass(obj) or inspect.isroutine(obj) or isinstance(obj, types.ModuleType):
        return []
    held = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    if isinstance(obj, tuple):
        held += list(obj)
    out: List[Any] = []
    for value in held:
        if isinstance(value, functools.partial) or (callable(value) and not inspect.isclass(value)
                                                    and not inspect.isroutine(value)):
            out.extend(_built_by(value, depth - 1))
    return out


def _functions_of(obj: Any) -> List[types.FunctionType]:
    """The Python functions whose bodies are this API's own code (for a factory object,
    a partial or what holds one: those of what it builds, ``_built_by``)."""
    target = unwrap(obj)
    if inspect.isfunction(target):
        return [target]
    built = _built_by(target)
    if built:
        return [f for b in built for f in _functions_of(b)]
    if inspect.isclass(target):
        return [f for fs in class_functions(target).values() for f in fs]
    return []


def _generic_bases() -> tuple:
    """Framework bases whose methods are machinery every subclass shares, not what a
    subclass is: a module's ``_call_impl``, an optimizer's hook plumbing."""
    import torch

    names = ("torch.nn.Module", "torch.optim.Optimizer", "torch.optim.lr_scheduler.LRScheduler",
             "torch.distributions.Distribution", "torch.autograd.Function")
    found = []
    for dotted in names:
        obj = torch
        for part in dotted.split(".")[1:]:
            obj = getattr(obj, part, None)
        if inspect.isclass(obj):
            found.append(obj)
    return tuple(found)


def class_functions(cls: type) -> Dict[str, List[types.FunctionType]]:
    """The functions a class API owns, by attribute name: those it defines and those it
    inherits from its own family of bases (``LazyLinear``'s ``forward`` is ``Linear``'s),
    but not the framework's generic bases (``torch.nn.Module``, ``Optimizer``, ...), nor
    ``object``'s: ``Module._call_impl`` is no module class's own code, so the ops of every
    other module a case runs are not credited to the class asked (issue 48 item 3). A
    property gives its getter, setter and deleter; torch's ``classproperty`` its getter
    (``torch.QUInt2x4Storage.dtype``: a legacy storage class is read, not constructed)."""
    generic = _generic_bases()
    owned: Dict[str, List[types.FunctionType]] = {}
    for klass in cls.__mro__:
        if klass is object or klass in generic or klass.__module__ in ("builtins", "abc", "typing"):
            break
        for name, value in vars(klass).items():
            if name in owned:
                continue  # overridden below in the MRO
            if isinstance(value, property):
                parts = [value.fget, value.fset, value.fdel]
            elif type(value).__name__ == "_ClassPropertyDescriptor":  # torch's classproperty: its getter
                parts = [getattr(value, "fget", None)]
            else:
                parts = [value]
            fns = [unwrap(getattr(p, "__func__", p)) for p in parts if p is not None]
            fns = [f for f in fns if inspect.isfunction(f)]
            if fns:
                owned[name] = fns
    return owned


def code_objects(obj: Any) -> List[types.CodeType]:
    """Code objects of the API's own body (all methods for a class)."""
    return [f.__code__ for f in _functions_of(obj)]


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _lookup(dotted: str, namespace: Dict[str, Any]) -> Any:
    head, *rest = dotted.split(".")
    if head in namespace:
        obj = namespace[head]
    elif hasattr(builtins, head):
        return None
    else:
        return None
    for part in rest:
        try:
            obj = getattr(obj, part, None)
        except Exception:  # a lazy attribute importing an optional package (torch.onnx: onnx)
            return None
        if obj is None:
            return None
    return obj


def _is_cpp_entry(obj: Any) -> Optional[str]:
    if obj is None or inspect.isclass(obj):
        return None
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or ""
    if type(obj).__name__ in ("OpOverloadPacket", "OpOverload"):
        return f"torch.ops.{getattr(obj, '_qualified_op_name', name).replace('::', '.')}"
    if inspect.isbuiltin(obj) and (module.startswith("torch") or not module):
        short = getattr(obj, "__name__", name)
        if "torch_function" in short:  # __torch_function__ plumbing, not the API's work
            return None
        if not short.startswith("_") and not module.startswith("torch._C"):
            return None  # a public tensor function (torch.zeros): ordinary Python use of torch
        owner = getattr(obj, "__self__", None)
        if module == "" and owner is not None:
            module = getattr(owner, "__module__", "") or getattr(owner, "__name__", "")
        return f"{module}.{short}" if module else short
    return None


def cpp_bindings(obj: Any, depth: int = 1) -> List[str]:
    """C++ entry points (torch._C builtins, torch.ops) the API's own code calls.

    Follows calls into other Python functions of torch for ``depth`` level(s), so a thin
    wrapper (unpack_dual -> torch._functorch.predispatch._unpack_dual -> torch._VF) is seen.
    """
    found: List[str] = []
    seen: set = set()

    def visit(fn: types.FunctionType, level: int) -> None:
        if fn in seen:
            return
        seen.add(fn)
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            return
        namespace = dict(fn.__globals__)
        # local "from x import y" inside the body
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    try:
                        mod = __import__(node.module, fromlist=[alias.name])
                        namespace[alias.asname or alias.name] = getattr(mod, alias.name, None)
                    except Exception:
                        pass
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            dotted = _dotted(node.func)
            if not dotted:
                continue
            target = _lookup(dotted, namespace)
            entry = _is_cpp_entry(target)
            if entry and entry not in found:
                found.append(entry)
            elif level > 0 and inspect.isfunction(target) and (
                getattr(target, "__module__", "") or ""
            ).startswith("torch"):
                visit(target, level - 1)

    for fn in _functions_of(obj):
        visit(fn, depth)
    return found


def calls_user_callable(entries: Iterable[Any]) -> bool:
    """Whether the API called back user code it was given, as the footprint recorder saw
    it: device operators attributed ``callable`` (gradcheck's function). Never from a
    parameter's name: ``fully_shard(module)`` and ``torch.export.save(ep, f)`` take no
    callable they run (issue 48 item 3)."""
    return any(getattr(e, "source", None) == "callable" for e in entries)


def is_context_manager(obj: Any) -> bool:
    return inspect.isclass(obj) and hasattr(obj, "__enter__") and hasattr(obj, "__exit__")


def analyse(resolved: ResolvedApi) -> Analysis:
    obj = resolved.obj
    kind = _kind(obj)
    source_file = source_line = None
    try:
        source_file = inspect.getsourcefile(unwrap(obj))
        source_line = inspect.getsourcelines(unwrap(obj))[1]
    except (TypeError, OSError):
        pass
    return Analysis(
        qualified_name=resolved.qualified_name,
        kind=kind,
        implementation=_implementation(kind, resolved),
        signature=_signature(obj),
        summary=_summary(obj),
        source_file=source_file,
        source_line=source_line,
        aliases=resolved.aliases,
        bindings=cpp_bindings(obj) if kind in ("function", "class", "method") else [],
    )
