"""Which target API a dotted name reaches: directly (it *is* the API) or through wrappers.

Wrappers are found by reading their source in the installed torch, not from a list:
``torch.testing._internal.common_utils.gradcheck`` reaches ``torch.autograd.gradcheck``
because its body calls it; ``torch.autograd.forward_ad.dual_level`` reaches
``enter_dual_level`` because its ``__enter__`` does; ``gradgradcheck`` reaches
``gradcheck``. A name inside a body is looked up in the function's own module globals,
so aliases in torch's source are followed the way Python follows them.

Depth 1 = the wrapper's own body; depth 2 = one more level of Python functions.
Everything is cached per object, so a whole test tree costs one analysis per name.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
import textwrap
import types
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

_MISSING = object()
# Methods that run when a class is used the way tests use classes: built, or entered.
IMPLICIT_METHODS = ("__new__", "__init__", "__post_init__", "__enter__", "__exit__",
                    "__aenter__", "__aexit__")


def _attr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:  # torch._classes and friends raise on unknown attributes
        return None


def qualname(obj: Any) -> str:
    module = _attr(obj, "__module__")
    name = _attr(obj, "__qualname__") or _attr(obj, "__name__")
    if not isinstance(module, str):
        module = "?"
    if not isinstance(name, str):
        name = type(obj).__name__
    return f"{module}.{name}"


def _unwrap(obj: Any) -> Any:
    try:
        return _unwrap_inner(obj)
    except Exception:
        return obj


def _unwrap_inner(obj: Any) -> Any:
    if isinstance(obj, functools.partial):
        obj = obj.func
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if inspect.ismethod(obj):
        obj = obj.__func__
    try:
        return inspect.unwrap(obj)
    except Exception:
        return obj


class Resolver:
    """Dotted name -> object, importing modules under the allowed roots on the way."""

    def __init__(self, roots: Sequence[str] = ("torch",)):
        self.roots = tuple(roots)
        self._cache: Dict[str, Any] = {}
        self.import_errors: Dict[str, str] = {}
        self.not_modules: Set[str] = set()

    def _import(self, name: str) -> Any:
        if name in self.import_errors or name in self.not_modules:
            return _MISSING
        module = sys.modules.get(name)
        if module is not None:
            return module
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return importlib.import_module(name)
        except BaseException as e:  # noqa: B036 - a module may sys.exit or raise anything
            if isinstance(e, KeyboardInterrupt):
                raise
            if isinstance(e, ModuleNotFoundError) and e.name and (
                    name == e.name or name.startswith(e.name + ".")):
                self.not_modules.add(name)  # simply not a module: nothing to report
            else:
                first = str(e).splitlines()[0] if str(e) else ""
                self.import_errors[name] = f"{type(e).__name__}: {first}"
            return _MISSING

    def lookup(self, dotted: str) -> Any:
        """The object, or ``_MISSING``. Attributes win over submodules, as in Python."""
        hit = self._cache.get(dotted, None)
        if hit is not None or dotted in self._cache:
            return hit
        parts = dotted.split(".")
        if parts[0] not in self.roots:
            self._cache[dotted] = _MISSING
            return _MISSING
        if len(parts) == 1:
            obj = self._import(parts[0])
        else:
            parent = self.lookup(".".join(parts[:-1]))
            if parent is _MISSING:
                obj = _MISSING
            else:
                try:
                    obj = getattr(parent, parts[-1])
                except Exception:
                    obj = _MISSING
                if (obj is _MISSING and isinstance(parent, types.ModuleType)
                        and _attr(parent, "__path__") is not None):  # only a package has submodules
                    obj = self._import(dotted)
        self._cache[dotted] = obj
        return obj


def is_missing(obj: Any) -> bool:
    return obj is _MISSING


class WrapperAnalyzer:
    """Does calling/using ``obj`` reach one of the targets, and through which wrappers?"""

    def __init__(self, targets: Dict[str, Any], roots: Sequence[str] = ("torch",),
                 depth: int = 2):
        self.targets = {name: _unwrap(obj) for name, obj in targets.items()}
        self._by_id: Dict[int, List[str]] = {}
        for name, obj in self.targets.items():
            self._by_id.setdefault(id(obj), []).append(name)
        self.roots = tuple(roots)
        self.depth = depth
        self._refs_cache: Dict[types.CodeType, List[Any]] = {}
        self._reach_cache: Dict[Tuple[int, int], Dict[str, List[str]]] = {}
        self._keep: List[Any] = []  # keep analysed objects alive so ids stay unique
        self._level1: Optional[Set[str]] = None
        self._names_cache: Dict[types.CodeType, Set[str]] = {}
        # names under which a target can appear in a body: a cheap first filter
        self.needles: Set[str] = set()
        for name, obj in self.targets.items():
            self.needles.add(name.rsplit(".", 1)[-1])
            n = getattr(obj, "__name__", None)
            if isinstance(n, str):
                self.needles.add(n)

    # -- what a name is ---------------------------------------------------------------
    def targets_of(self, obj: Any) -> List[str]:
        """Target names that ``obj`` itself is (after unwrapping)."""
        if obj is _MISSING:
            return []
        return self._by_id.get(id(_unwrap(obj)), [])

    def _in_roots(self, obj: Any) -> bool:
        module = _attr(obj, "__module__")
        return isinstance(module, str) and module.split(".", 1)[0] in self.roots

    def functions_of(self, obj: Any) -> List[types.FunctionType]:
        """Python functions that run when a test uses ``obj`` (calls it, builds it, enters it)."""
        obj = _unwrap(obj)
        if inspect.isfunction(obj):
            return [obj] if self._in_roots(obj) else []
        if inspect.isclass(obj) and self._in_roots(obj):
            out: List[types.FunctionType] = []
            for name in IMPLICIT_METHODS:
                for klass in obj.__mro__:
                    if name in vars(klass):
                        fn = _unwrap(vars(klass)[name])
                        if inspect.isfunction(fn) and self._in_roots(fn):
                            out.append(fn)
                        break
            return out
        return []

    # -- what a function body references ------------------------------------------------
    def _code_names(self, code: types.CodeType) -> Set[str]:
        """Global, attribute and free-variable names a code object (and nested ones) uses."""
        names = self._names_cache.get(code)
        if names is None:
            names = set(code.co_names)
            names.update(code.co_freevars)
            for const in code.co_consts:
                if type(const) is types.CodeType:
                    names |= self._code_names(const)
            self._names_cache[code] = names
        return names

    def references(self, fn: types.FunctionType) -> List[Any]:
        """Objects the body names (dotted chains looked up in the function's globals)."""
        code = fn.__code__
        cached = self._refs_cache.get(code)
        if cached is not None:
            return cached
        out: List[Any] = []
        try:
            source = textwrap.dedent(inspect.getsource(fn))
            tree = ast.parse(source)
        except (OSError, TypeError, SyntaxError, IndentationError):
            self._refs_cache[code] = out
            return out
        namespace: Dict[str, Any] = dict(fn.__globals__)
        if fn.__closure__:
            for var, cell in zip(code.co_freevars, fn.__closure__):
                try:
                    namespace[var] = cell.cell_contents
                except ValueError:
                    pass
        # "from x import y" inside the body (lazy imports are common in torch)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    mod = sys.modules.get(node.module)
                    if mod is not None and a.name != "*":
                        namespace.setdefault(a.asname or a.name, getattr(mod, a.name, None))
        seen: Set[int] = set()
        inner: Set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                inner.add(id(node.value))
        body = tree.body[0] if tree.body else tree
        if isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef)):
            walk_nodes: Iterable[ast.AST] = (n for stmt in body.body for n in ast.walk(stmt))
        else:
            walk_nodes = ast.walk(tree)
        for node in walk_nodes:
            if not isinstance(node, (ast.Attribute, ast.Name)) or id(node) in inner:
                continue
            if not isinstance(node.ctx, ast.Load):
                continue
            parts = []
            cur: ast.AST = node
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if not isinstance(cur, ast.Name):
                continue
            parts.append(cur.id)
            parts.reverse()
            obj = namespace.get(parts[0], _MISSING)
            for p in parts[1:]:
                if obj is _MISSING:
                    break
                try:
                    obj = getattr(obj, p)
                except Exception:
                    obj = _MISSING
            if obj is _MISSING or obj is None or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append(obj)
        self._refs_cache[code] = out
        return out

    def level1_names(self) -> Set[str]:
        """Names bound, in loaded modules under the roots, to functions or classes whose
        own code names a target: the only names through which depth 2 can reach one.
        Built once; call after the modules the test tree needs are imported."""
        if self._level1 is not None:
            return self._level1
        modules = []
        for mod_name, module in list(sys.modules.items()):
            if module is None or mod_name.split(".", 1)[0] not in self.roots:
                continue
            try:
                modules.append(list(vars(module).items()))
            except TypeError:
                continue
        # names a target is bound to anywhere ("from .core import target as renamed")
        target_ids = set(self._by_id)
        for items in modules:
            for key, value in items:
                if id(value) in target_ids or id(_unwrap(value)) in target_ids:
                    self.needles.add(key)
        out: Set[str] = set()
        for items in modules:
            for key, value in items:
                try:
                    if inspect.isfunction(value):
                        codes = [value.__code__]
                    elif inspect.isclass(value):
                        codes = [fn.__code__ for fn in self.functions_of(value)]
                    else:
                        continue
                except Exception:
                    continue
                for code in codes:
                    if self._code_names(code) & self.needles:
                        out.add(key)
                        name = _attr(value, "__name__")
                        if isinstance(name, str):
                            out.add(name)
                        break
        self._level1 = out
        return out

    def _may_reach(self, fn: types.FunctionType, depth: int) -> bool:
        level1 = self.level1_names()  # first call also completes the needles
        names = self._code_names(fn.__code__)
        if names & self.needles:
            return True
        return depth > 1 and bool(names & level1)

    # -- reaching the targets -----------------------------------------------------------
    def reach(self, obj: Any, depth: Optional[int] = None) -> Dict[str, List[str]]:
        """target name -> the chain of wrappers (qualified names) from ``obj`` to it."""
        depth = self.depth if depth is None else depth
        if depth <= 0 or obj is _MISSING:
            return {}
        key = (id(obj), depth)
        cached = self._reach_cache.get(key)
        if cached is not None:
            return cached
        self._reach_cache[key] = {}  # cycle guard
        self._keep.append(obj)
        found: Dict[str, List[str]] = {}
        functions = self.functions_of(obj)
        if not functions:
            self._reach_cache[key] = {}
            return {}
        own = set(self.targets_of(obj))
        here = qualname(_unwrap(obj))
        for fn in functions:
            if not self._may_reach(fn, depth):
                continue  # names neither a target nor a wrapper of one: skip the parse
            for ref in self.references(fn):
                for t in self.targets_of(ref):
                    if t not in own and t not in found:
                        found[t] = [here]
                if depth > 1 and ref is not obj and (inspect.isfunction(_unwrap(ref))
                                                     or inspect.isclass(ref)):
                    for t, chain in self.reach(ref, depth - 1).items():
                        if t not in own and (t not in found or len(found[t]) > len(chain) + 1):
                            found[t] = [here, *chain]
        self._reach_cache[key] = found
        return found
