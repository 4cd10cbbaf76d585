"""One pass of syntax over one test file: every dotted reference, where it sits, and the
test-structure facts around it (classes, decorators, device-generic instantiation).

Pure ``ast``: nothing here imports torch or the test file, so it runs in worker processes.
Which API a reference reaches is decided later (census.py / wrappers.py), once per name
for the whole tree.
"""

from __future__ import annotations

import ast
import builtins
import gc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from .decorators import Decorator, classify

SCAN_VERSION = 1
_BUILTINS = frozenset(dir(builtins))
_NO_NODES = frozenset({"ctx", "type_comment", "kind", "names", "level", "module", "is_async",
                       "conversion", "lineno", "col_offset", "end_lineno", "end_col_offset"})
_FIELDS: Dict[type, Tuple[str, ...]] = {}
INSTANTIATE = "instantiate_device_type_tests"


@dataclass
class Scope:
    """A test, a helper function/method, a class body, or the module's top level."""

    cls: Optional[str]
    name: str
    kind: str  # test | helper | module
    line: int
    skips: List[Tuple[str, str]] = field(default_factory=list)  # (effect, text)
    uses_backend: bool = False  # names the backend device: "npu" strings, .npu(), torch.npu
    local_calls: Dict[str, List[int]] = field(default_factory=dict)  # in-file helper -> lines


@dataclass
class ClassScan:
    name: str
    line: int
    bases: List[str]  # expanded dotted names (or in-file class names)
    skips: List[Tuple[str, str]] = field(default_factory=list)
    methods: Set[str] = field(default_factory=set)


@dataclass
class Instantiation:
    cls: str  # the name passed (local name in that file)
    origin: str  # "local" or the dotted import the name came from
    only_for: Optional[List[str]]
    except_for: Optional[List[str]]
    only_literal: bool
    except_literal: bool
    line: int


@dataclass
class FileScan:
    rel: str  # path relative to the tree root, "/"-separated
    module: str  # dotted module path relative to the tree root
    error: Optional[str] = None
    refs: Dict[str, List[Tuple[int, int]]] = field(default_factory=dict)  # name -> [(line, scope)]
    scopes: List[Scope] = field(default_factory=list)
    classes: Dict[str, ClassScan] = field(default_factory=dict)
    instantiations: List[Instantiation] = field(default_factory=list)
    functions: Set[str] = field(default_factory=set)  # module-level function names


def module_of(rel: str) -> str:
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _dotted(node: ast.AST) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        parts.reverse()
        return parts
    return None


def _chain_root(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


_STMT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_nodes(stmts: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """Import statements at any depth, visiting statements only (not expressions)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Import or t is ast.ImportFrom:
            yield node
            continue
        for name in _STMT_LISTS:
            children = getattr(node, name, None)
            if children:
                stack.extend(children)


def collect_imports(tree: ast.Module, module: str) -> Tuple[Dict[str, str], List[str]]:
    """local name -> dotted name it stands for; and the modules of ``import *``."""
    aliases: Dict[str, str] = {}
    stars: List[str] = []
    package = module.rsplit(".", 1)[0] if "." in module else ""
    for node in _import_nodes(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    root = a.name.split(".", 1)[0]
                    aliases.setdefault(root, root)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".") if package else []
                up = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                base = ".".join([*up, base] if base else up)
            for a in node.names:
                if a.name == "*":
                    stars.append(base)
                    continue
                aliases[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return aliases, stars


def _literal_list(node: Optional[ast.AST]) -> Tuple[Optional[List[str]], bool]:
    if node is None:
        return None, True
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return [f"<{ast.unparse(node)}>"], False
    if value is None:
        return None, True
    if isinstance(value, str):
        return [value], True
    if isinstance(value, (list, tuple, set)) and all(isinstance(v, str) for v in value):
        return list(value), True
    return [f"<{ast.unparse(node)}>"], False


class _FileScanner:
    def __init__(self, rel: str, tree: ast.Module, roots: Sequence[str], backend: str):
        self.out = FileScan(rel=rel, module=module_of(rel))
        self.aliases, self.stars = collect_imports(tree, self.out.module)
        self.stars = [s for s in self.stars if s.split(".", 1)[0] in roots]
        self.roots = frozenset(roots)
        self.backend = backend
        self.backend_module = f"torch_{backend}"
        self.tree = tree
        self.self_refs: List[Tuple[str, str, int, int]] = []  # (class, attr, line, scope)
        self.local_names: Set[str] = set()
        self.class_body_scope: Dict[str, int] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.out.functions.add(node.name)
                self.local_names.add(node.name)
            elif isinstance(node, ast.ClassDef):
                self.local_names.add(node.name)
        for name in self.local_names:
            self.aliases.pop(name, None)
        # "dual_level = fwAD.dual_level" at top level: a plain rebinding is an alias too
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                parts = _dotted(node.value)
                name = node.targets[0].id
                if parts and parts[0] in self.aliases and name not in self.local_names:
                    self.aliases[name] = ".".join([self.aliases[parts[0]], *parts[1:]])

    # -- references -------------------------------------------------------------------
    def _expand(self, parts: List[str]) -> List[str]:
        root = parts[0]
        target = self.aliases.get(root)
        if target is not None:
            return [target + ("." + ".".join(parts[1:]) if len(parts) > 1 else "")]
        if self.stars and root not in _BUILTINS and root not in self.local_names:
            return [f"{s}.{'.'.join(parts)}" for s in self.stars]
        return []

    def record(self, parts: List[str], line: int, scope: int, cls: Optional[str]) -> None:
        root = parts[0]
        sc = self.out.scopes[scope]
        if not sc.uses_backend and (self.backend in parts[1:] or root == self.backend_module
                                    or self.aliases.get(root, "").startswith(self.backend_module)):
            sc.uses_backend = True
        if root in ("self", "cls") and cls is not None and len(parts) > 1:
            self.self_refs.append((cls, parts[1], line, scope))
            return
        if root in self.out.functions and root not in self.aliases:
            sc.local_calls.setdefault(root, []).append(line)
            return
        for dotted in self._expand(parts):
            if dotted.split(".", 1)[0] in self.roots:
                self.out.refs.setdefault(dotted, []).append((line, scope))

    # -- decorators -------------------------------------------------------------------
    def decorator(self, node: ast.expr) -> Optional[Tuple[str, str]]:
        call = node if isinstance(node, ast.Call) else None
        parts = _dotted(call.func if call else node)
        if not parts:
            return None
        dotted = (self._expand(parts) or [".".join(parts)])[0]
        args: Tuple[str, ...] = ()
        literal: Tuple[object, ...] = ()
        kwargs: Tuple[Tuple[str, str], ...] = ()
        if call is not None:
            args = tuple(ast.unparse(a) for a in call.args)
            lits = []
            for a in call.args:
                try:
                    lits.append(ast.literal_eval(a))
                except (ValueError, SyntaxError, TypeError):
                    lits.append(None)
            literal = tuple(lits)
            kwargs = tuple((k.arg or "**", ast.unparse(k.value)) for k in call.keywords)
        return classify(Decorator(parts[-1], dotted, args, kwargs, literal), self.backend)

    def _skips(self, decorators: Sequence[ast.expr]) -> List[Tuple[str, str]]:
        out = []
        for d in decorators:
            info = self.decorator(d)
            if info:
                out.append(info)
        return out

    # -- walk -------------------------------------------------------------------------
    def new_scope(self, cls: Optional[str], name: str, kind: str, line: int) -> int:
        self.out.scopes.append(Scope(cls=cls, name=name, kind=kind, line=line))
        return len(self.out.scopes) - 1

    def run(self) -> FileScan:
        self.new_scope(None, "<module>", "module", 1)
        self.walk_stmts(self.tree.body, 0, None, in_func=False)
        self._resolve_self_refs()
        return self.out

    def walk_stmts(self, stmts: Sequence[ast.AST], scope: int, cls: Optional[str],
                   in_func: bool) -> None:
        for node in stmts:
            if isinstance(node, ast.ClassDef) and not in_func:
                self.visit_class(node, cls)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not in_func:
                self.visit_function(node, cls)
            elif isinstance(node, (ast.If, ast.Try, ast.With)) and not in_func and cls is None:
                # "if not IS_WINDOWS: class TestX(...)": definitions inside stay definitions
                for header in (getattr(node, "test", None), *getattr(node, "items", ())):
                    if header is not None:
                        self.walk_expr(header, scope, cls)
                for name in _STMT_LISTS:
                    children = getattr(node, name, None) or []
                    if name == "handlers":
                        children = [s for h in children for s in h.body]
                    self.walk_stmts(children, scope, cls, in_func)
            else:
                self.walk_expr(node, scope, cls)

    def visit_class(self, node: ast.ClassDef, outer: Optional[str]) -> None:
        name = node.name if outer is None else f"{outer}.{node.name}"
        bases = []
        for b in node.bases:
            parts = _dotted(b)
            if parts:
                expanded = self._expand(parts)
                bases.append(expanded[0] if expanded and parts[0] not in self.local_names
                             else ".".join(parts))
        info = ClassScan(name=name, line=node.lineno, bases=bases,
                         skips=self._skips(node.decorator_list))
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.methods.add(stmt.name)
        self.out.classes[name] = info
        body_scope = None
        if node.bases or node.keywords:  # class MyFn(torch.autograd.Function): a use too
            body_scope = self.new_scope(name, "<class body>", "helper", node.lineno)
            for expr in [*node.bases, *(k.value for k in node.keywords)]:
                self.walk_expr(expr, body_scope, name)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.visit_function(stmt, name)
            elif isinstance(stmt, ast.ClassDef):
                self.visit_class(stmt, name)
            else:
                if body_scope is None:
                    body_scope = self.new_scope(name, "<class body>", "helper", node.lineno)
                self.walk_expr(stmt, body_scope, name)

    def visit_function(self, node: ast.AST, cls: Optional[str]) -> None:
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        is_test = node.name.startswith("test")
        kind = "test" if is_test else "helper"
        scope = self.new_scope(cls, node.name, kind, node.lineno)
        self.out.scopes[scope].skips = self._skips(node.decorator_list)
        for default in [*node.args.defaults, *[d for d in node.args.kw_defaults if d]]:
            self.walk_expr(default, scope, cls)
        for stmt in node.body:
            self.walk_expr(stmt, scope, cls)

    def walk_expr(self, root: ast.AST, scope: int, cls: Optional[str]) -> None:
        stack = [root]
        pop, push, extend = stack.pop, stack.append, stack.extend
        backend = self.backend
        sc = self.out.scopes[scope]
        fields_of = _FIELDS
        Attribute, Name, Constant, Call = ast.Attribute, ast.Name, ast.Constant, ast.Call
        Load, AST = ast.Load, ast.AST
        while stack:
            node = pop()
            t = type(node)
            if t is Attribute or t is Name:
                parts = _dotted(node)
                if parts is not None:
                    if type(node.ctx) is Load:  # type: ignore[attr-defined]
                        self.record(parts, node.lineno, scope, cls)  # type: ignore[attr-defined]
                    continue
                # a chain on a call result: x.cpu().npu() still names the device
                cur = node
                while type(cur) is Attribute:
                    if cur.attr == backend:  # type: ignore[attr-defined]
                        sc.uses_backend = True
                    cur = cur.value  # type: ignore[attr-defined]
                push(cur)
                continue
            if t is Constant:
                v = node.value  # type: ignore[attr-defined]
                if (not sc.uses_backend and type(v) is str and len(v) < 24
                        and (v == backend or v.startswith(backend + ":") or v == "privateuse1")):
                    sc.uses_backend = True
                continue
            if t is Call:
                func = node.func  # type: ignore[attr-defined]
                if (type(func) is Name and func.id == INSTANTIATE) or (
                        type(func) is Attribute and func.attr == INSTANTIATE):
                    self.instantiation(node)  # type: ignore[arg-type]
            names = fields_of.get(t)
            if names is None:
                names = fields_of[t] = tuple(f for f in getattr(t, "_fields", ())
                                             if f not in _NO_NODES)
            for f in names:
                v = getattr(node, f, None)
                if type(v) is list:
                    extend(v)
                elif isinstance(v, AST):
                    push(v)
            # (imports and nested defs fall through: their children are walked in place;
            # an import's aliases hold no references)

    # -- device-generic classes -------------------------------------------------------
    def instantiation(self, node: ast.Call) -> None:
        if not node.args:
            return
        cls_parts = _dotted(node.args[0])
        if not cls_parts:
            return
        local = ".".join(cls_parts)
        if cls_parts[0] in self.local_names:
            origin = "local"
        else:
            origin = self.aliases.get(cls_parts[0], local)
            if len(cls_parts) > 1:
                origin = origin + "." + ".".join(cls_parts[1:])
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        except_node = kw.get("except_for", node.args[2] if len(node.args) > 2 else None)
        only_node = kw.get("only_for", node.args[3] if len(node.args) > 3 else None)
        only, only_lit = _literal_list(self._constant(only_node))
        exc, exc_lit = _literal_list(self._constant(except_node))
        self.out.instantiations.append(Instantiation(
            cls=local, origin=origin, only_for=only, except_for=exc,
            only_literal=only_lit, except_literal=exc_lit, line=node.lineno))

    def _constant(self, node: Optional[ast.AST]) -> Optional[ast.AST]:
        """A name bound once at module level to a literal stands for that literal."""
        if not isinstance(node, ast.Name):
            return node
        found = None
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == node.id for t in stmt.targets):
                if found is not None:
                    return node  # bound more than once: not a constant
                found = stmt.value
        return found if found is not None else node

    # -- self.x references --------------------------------------------------------------
    def _in_file_mro(self, cls: str) -> List[ClassScan]:
        out, todo, seen = [], [cls], set()
        while todo:
            name = todo.pop(0)
            if name in seen or name not in self.out.classes:
                continue
            seen.add(name)
            info = self.out.classes[name]
            out.append(info)
            todo.extend(info.bases)
        return out

    def _resolve_self_refs(self) -> None:
        mro_cache: Dict[str, List[ClassScan]] = {}
        for cls, attr, line, scope in self.self_refs:
            mro = mro_cache.get(cls)
            if mro is None:
                mro = mro_cache[cls] = self._in_file_mro(cls)
            owner = next((c for c in mro if attr in c.methods), None)
            if owner is not None:
                key = f"{owner.name}.{attr}"
                self.out.scopes[scope].local_calls.setdefault(key, []).append(line)
                continue
            # inherited from a class outside the file (TestCase ...): TestCase.attr
            for c in mro:
                for base in c.bases:
                    if base in self.out.classes:
                        continue
                    if base.split(".", 1)[0] in self.roots:
                        self.out.refs.setdefault(f"{base}.{attr}", []).append((line, scope))


def scan_source(source: bytes, rel: str, roots: Sequence[str] = ("torch",),
                backend: str = "npu") -> FileScan:
    enabled = gc.isenabled()
    gc.disable()  # an AST has no cycles; collecting while building one only costs time
    try:
        try:
            tree = ast.parse(source, filename=rel)
        except (SyntaxError, ValueError) as e:
            return FileScan(rel=rel, module=module_of(rel), error=f"{type(e).__name__}: {e}")
        return _FileScanner(rel, tree, roots, backend).run()
    finally:
        if enabled:
            gc.enable()


def scan_file(args: Tuple[str, str, Tuple[str, ...], str]) -> FileScan:
    """Worker entry: (absolute path, path relative to the tree, roots, backend)."""
    path, rel, roots, backend = args
    try:
        source = Path(path).read_bytes()
    except OSError as e:
        return FileScan(rel=rel, module=module_of(rel), error=f"unreadable: {e}")
    return scan_source(source, rel, roots, backend)
