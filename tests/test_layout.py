"""The package's shape, read from its source (AST, nothing imported): no import circles,
no private name imported across modules, sources that import no other source, and
nothing but sources and their shared pieces in ``scenarios/sources/``.

Every import counts, a function-local one too: an import moved into a function to dodge a
circle still makes the circle. Only imports under ``if TYPE_CHECKING:`` (annotations,
never run) do not.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

PKG = Path(__file__).resolve().parents[1] / "src" / "torchparity"
SOURCES = "torchparity.scenarios.sources"
SHARED = {f"{SOURCES}.base", f"{SOURCES}.world"}


def _modules() -> Dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str) -> Iterator[Tuple[str, str, int]]:
    """(module imported, name taken from it or "", line) for every import of ``name``."""
    tree = ast.parse(MODULES[name].read_text(), str(MODULES[name]))
    here = name if _is_package(name) else name.rpartition(".")[0]
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(block.test) for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only:  # never runs: annotations only
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                yield mod, alias.name, node.lineno


def _edges() -> Dict[str, Set[str]]:
    """Module -> the torchparity modules it imports (``from pkg import mod``: the module)."""
    out: Dict[str, Set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for mod, taken, _ in _imports(m):
            if not mod.startswith("torchparity"):
                continue
            sub = f"{mod}.{taken}"
            target = sub if taken and sub in MODULES else mod
            if target in MODULES and target != m:
                out[m].add(target)
    return out


def _circles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _source_of(module: str) -> str:
    """The source a module belongs to (``...sources.fx.table`` -> ``fx``), or ""."""
    if not module.startswith(SOURCES + ".") or module in SHARED:
        return ""
    return module[len(SOURCES) + 1:].split(".")[0]


def test_no_import_circle():
    circles = _circles(_edges())
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def _folders(edges: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    """The same edges between the package's top-level folders (``torchparity.app`` ...)."""
    def top(m: str) -> str:
        return ".".join(m.split(".")[:2])
    out: Dict[str, Set[str]] = {}
    for m, targets in edges.items():
        out.setdefault(top(m), set()).update(top(t) for t in targets if top(t) != top(m))
    for targets in list(out.values()):
        for t in targets:
            out.setdefault(t, set())
    return out


def test_no_circle_between_folders():
    """Folders stack: two folders that import each other (a function-local import on one
    side is enough) are one concern split in two, or a name living in the wrong one."""
    edges = _edges()
    edges.pop("torchparity", None)  # the package's face re-exports from everything below it
    circles = _circles(_folders(edges))
    assert not circles, "folder circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_no_private_name_imported_from_another_module():
    found = []
    for m in MODULES:
        for mod, taken, line in _imports(m):
            if (mod.startswith("torchparity") and taken.startswith("_")
                    and not taken.startswith("__") and mod != m):
                found.append(f"{MODULES[m].relative_to(PKG.parent)}:{line}: {taken} from {mod}")
    assert not found, "\n".join(found)


def test_a_source_imports_no_other_source():
    found = []
    for m, targets in _edges().items():
        mine = _source_of(m)
        if not mine:
            continue
        for t in targets:
            theirs = _source_of(t)
            if t == SOURCES or (theirs and theirs != mine):
                found.append(f"{m} imports {t}")
    assert not found, "\n".join(found)


def test_only_sources_and_their_shared_pieces_lie_in_the_sources_folder():
    folder = PKG / "scenarios" / "sources"
    stray = sorted(p.name for p in folder.iterdir()
                   if p.suffix == ".py" and p.name.startswith("_") and p.name != "__init__.py")
    assert not stray, stray
    import re

    listed = re.search(r"SOURCES: Tuple\[str, \.\.\.\] = \((.*?)\)", (folder / "__init__.py").read_text(),
                       re.S).group(1)
    names = re.findall(r'"(\w+)"', listed)
    here = sorted(p.stem if p.is_file() else p.name for p in folder.iterdir()
                  if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file())
    assert sorted(names + ["base", "world"]) == here  # every file is a listed source or shared


def test_the_checks_see_a_circle_and_a_private_import():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(edges) == [["a", "b", "c"]]
    assert _circles(_folders({"t.x.m": {"t.y.n"}, "t.y.n": set(), "t.y.k": {"t.x.m"}})) == [["t.x", "t.y"]]
    assert _source_of(f"{SOURCES}.fx.table") == "fx" and _source_of(f"{SOURCES}.base") == ""
