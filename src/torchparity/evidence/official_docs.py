"""Official PyTorch docs check, from the docs *sources* (docs/source/*.rst|md).

Statuses:

- ``own_page``: listed in an ``autosummary`` with ``:toctree:`` -> Sphinx generates
  ``<toctree>/<full name>.html`` (e.g. generated/torch.autograd.forward_ad.unpack_dual.html);
- ``anchor``: documented on a page by ``autofunction`` / ``autoclass`` / ``automethod`` /
  ``py:function`` ... -> ``<page>.html#<full name>``; also a member of a module documented
  with ``automodule`` + ``:members:`` (noted as such);
- ``absent``: not in the tree;
- ``unknown``: no tree given; the URL then follows the own-page pattern, unverified.

Understood syntax: reST directives (``.. currentmodule::``, ``.. module::`` /
``.. py:module::``, ``.. autosummary::`` with options and entries), and in Markdown (MyST)
fenced ```` ```{eval-rst} ```` blocks holding reST, and fenced directives
```` ```{autofunction} name ```` / ``:::{autoclass} name`` / ```` ```{autosummary} ````.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import InputError
from ..results.models import OfficialDocs

BASE_URL = "https://pytorch.org/docs"
OWN_PAGE = "own_page"
ANCHOR = "anchor"
ABSENT = "absent"
UNKNOWN = "unknown"

AUTODOC = {"autofunction", "autoclass", "automethod", "autoattribute", "autodata",
           "autoexception", "autoproperty", "function", "class", "method", "attribute",
           "data", "exception", "property", "decorator"}
MODULE_SETTERS = {"currentmodule", "module"}

_RST_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\.\s+(?:py:)?(?P<name>[\w-]+)::\s*(?P<arg>.*?)\s*$")
_FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?:py:)?(?P<name>[\w-]+)\}\s*(?P<arg>.*?)\s*$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")


@dataclass
class DocsEntry:
    name: str  # full dotted name as Sphinx sees it
    status: str  # own_page | anchor
    page: str  # path of the HTML page (relative to the docs root), with #anchor
    source: str  # the source file (relative to docs/source)
    line: int
    directive: str


@dataclass
class _Directive:
    name: str
    arg: str
    options: Dict[str, str]
    content: List[Tuple[int, str]]  # (line, text)
    line: int


def version_path(torch_version: Optional[str]) -> str:
    """"2.12.0" -> "2.12"; None -> "stable"."""
    if not torch_version:
        return "stable"
    m = re.match(r"^(\d+)\.(\d+)", torch_version)
    if not m:
        raise InputError(f"bad torch version '{torch_version}' (expected e.g. 2.12.0)")
    return f"{m.group(1)}.{m.group(2)}"


def page_url(page: str, torch_version: Optional[str]) -> str:
    return f"{BASE_URL}/{version_path(torch_version)}/{page}"


def url_pattern(api: str, torch_version: Optional[str]) -> str:
    """The own-page URL autosummary would give ``api`` (not checked against anything)."""
    return page_url(f"generated/{api}.html", torch_version)


def _parse_rst(lines: Sequence[Tuple[int, str]]) -> Iterator[_Directive]:
    i = 0
    while i < len(lines):
        lineno, text = lines[i]
        m = _RST_DIRECTIVE.match(text)
        if not m:
            i += 1
            continue
        indent = len(m.group("indent").expandtabs())
        options: Dict[str, str] = {}
        content: List[Tuple[int, str]] = []
        j = i + 1
        in_options = True
        while j < len(lines):
            ln, body = lines[j]
            if body.strip() == "":
                in_options = False if content or options else in_options
                j += 1
                continue
            if len(body.expandtabs()) - len(body.expandtabs().lstrip()) <= indent:
                break
            opt = _OPTION.match(body) if in_options else None
            if opt:
                options[opt.group("key")] = opt.group("value")
            else:
                in_options = False
                content.append((ln, body.strip()))
            j += 1
        yield _Directive(m.group("name"), m.group("arg"), options, content, lineno)
        # nested directives (an autosummary inside a container) are still found
        i += 1


def _parse_myst(lines: Sequence[Tuple[int, str]]) -> Iterator[_Directive]:
    i = 0
    while i < len(lines):
        lineno, text = lines[i]
        m = _FENCE_OPEN.match(text)
        if not m:
            i += 1
            continue
        fence = m.group("fence")
        char, size = fence[0], len(fence)
        body: List[Tuple[int, str]] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j][1].strip()
            if stripped and set(stripped) == {char} and len(stripped) >= size:
                break
            body.append(lines[j])
            j += 1
        name = m.group("name")
        if name == "eval-rst":
            yield from _parse_rst(body)
        else:
            options: Dict[str, str] = {}
            content: List[Tuple[int, str]] = []
            for ln, t in body:
                opt = _OPTION.match(t) if not content else None
                if opt:
                    options[opt.group("key")] = opt.group("value")
                elif t.strip():
                    content.append((ln, t.strip()))
            yield _Directive(name, m.group("arg"), options, content, lineno)
            # a fenced block may itself hold fenced directives (nested fences)
            yield from _parse_myst(body)
        i = j + 1


def _full(name: str, current: Optional[str]) -> str:
    name = name.lstrip("~").strip()
    name = re.sub(r"\(.*\)$", "", name).strip()
    if not current:
        return name
    root = current.split(".", 1)[0]
    if name == root or name.startswith(root + "."):
        return name
    return f"{current}.{name}"


def parse_docs_file(path: Path, rel: str) -> List[DocsEntry]:
    """Entries of one source file; ``rel`` is its path relative to docs/source."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read docs source {path}: {e}") from None
    lines = list(enumerate(text.splitlines(), 1))
    directives = _parse_myst(lines) if path.suffix == ".md" else _parse_rst(lines)
    page = re.sub(r"\.(rst|md)$", ".html", rel)
    folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
    current: Optional[str] = None
    out: List[DocsEntry] = []
    for d in directives:
        if d.name in MODULE_SETTERS:
            current = d.arg.strip() or None
            continue
        if d.name == "automodule":
            current = d.arg.strip() or current
            if current and "members" in d.options:
                out.append(DocsEntry(name=f"{current}.*", status=ANCHOR, page=page, source=rel,
                                     line=d.line, directive="automodule :members:"))
            continue
        if d.name == "autosummary":
            toctree = d.options.get("toctree")
            for ln, item in d.content:
                if item.startswith(("..", ":", "#")) or not re.match(r"^~?[\w.]+$", item):
                    continue
                full = _full(item, current)
                if toctree is not None:
                    target = (toctree.strip() or "").strip("/")
                    where = f"{folder}{target}/{full}.html" if target else f"{folder}{full}.html"
                    out.append(DocsEntry(full, OWN_PAGE, where, rel, ln, "autosummary"))
            continue
        if d.name in AUTODOC and d.arg:
            for one in d.arg.split(","):
                one = one.strip()
                if not one or not re.match(r"^~?[\w.]+", one):
                    continue
                full = _full(re.match(r"^~?[\w.]+", one).group(0), current)
                out.append(DocsEntry(full, ANCHOR, f"{page}#{full}", rel, d.line, d.name))
    return out


def find_source_dir(docs_dir: Union[str, Path]) -> Path:
    """The docs/source folder from a repo root, a docs/ folder, or docs/source itself."""
    root = Path(docs_dir)
    if not root.is_dir():
        raise InputError(f"docs folder not found: {root}")
    for cand in (root / "docs" / "source", root / "source", root):
        if cand.is_dir() and (any(cand.glob("*.rst")) or any(cand.glob("*.md"))):
            return cand
    raise InputError(f"no .rst or .md docs sources under {root}")


class OfficialDocsIndex:
    """Where each API is documented in one PyTorch docs source tree."""

    def __init__(self, entries: Sequence[DocsEntry], root: Path):
        self.root = root
        self.entries = list(entries)
        self._by_name: Dict[str, DocsEntry] = {}
        self._by_short: Dict[str, List[DocsEntry]] = {}
        self._members_of: Dict[str, DocsEntry] = {}
        for e in self.entries:
            if e.name.endswith(".*"):
                self._members_of.setdefault(e.name[:-2], e)
                continue
            prev = self._by_name.get(e.name)
            if prev is None or (prev.status == ANCHOR and e.status == OWN_PAGE):
                self._by_name[e.name] = e
            self._by_short.setdefault(e.name.rsplit(".", 1)[-1], []).append(e)

    def __len__(self) -> int:
        return len(self._by_name)

    def match(self, api: str) -> Optional[Tuple[DocsEntry, str]]:
        """(entry, how): how is exact | qualified | alias | module_members."""
        e = self._by_name.get(api)
        if e is not None:
            return e, "exact"
        from ..api.resolve import maybe_resolve, unwrap

        resolved = maybe_resolve(api)
        if resolved is None:
            return None
        for name in [resolved.qualified_name, *resolved.aliases]:
            e = self._by_name.get(name)
            if e is not None:
                return e, "qualified"
        target = unwrap(resolved.obj)
        best: Optional[DocsEntry] = None
        for short in {api.rsplit(".", 1)[-1], resolved.qualified_name.rsplit(".", 1)[-1]}:
            for cand in self._by_short.get(short, []):
                other = maybe_resolve(cand.name)
                if other is not None and unwrap(other.obj) is target:
                    if best is None or (best.status == ANCHOR and cand.status == OWN_PAGE):
                        best = cand
        if best is not None:
            return best, "alias"
        for name in (api, resolved.qualified_name):
            module = name.rsplit(".", 1)[0] if "." in name else ""
            e = self._members_of.get(module)
            if e is not None:
                full = name
                return DocsEntry(full, ANCHOR, f"{e.page.split('#')[0]}#{full}", e.source,
                                 e.line, e.directive), "module_members"
        return None

    def evidence(self, api: str, torch_version: Optional[str]) -> OfficialDocs:
        found = self.match(api)
        if found is None:
            return OfficialDocs(status=ABSENT, url=None, source=None,
                                note=f"not listed in any autosummary or autodoc directive "
                                     f"under {self.root}")
        entry, how = found
        note = None
        if how == "module_members":
            note = (f"documented through '{entry.directive}' of its module "
                    f"(members without a docstring are left out by Sphinx)")
        elif how != "exact":
            note = f"documented as {entry.name}"
        return OfficialDocs(status=entry.status, url=page_url(entry.page, torch_version),
                            source=entry.source, note=note, name=entry.name, line=entry.line)


def load_official_docs(docs_dir: Union[str, Path]) -> OfficialDocsIndex:
    """Index every .rst/.md under the docs source folder (see find_source_dir)."""
    src = find_source_dir(docs_dir)
    entries: List[DocsEntry] = []
    for path in sorted([*src.rglob("*.rst"), *src.rglob("*.md")]):
        rel = path.relative_to(src).as_posix()
        if rel.startswith(("_templates/", "_static/", "generated/")):
            continue
        entries.extend(parse_docs_file(path, rel))
    return OfficialDocsIndex(entries, src)


def unknown(api: str, torch_version: Optional[str], hint: Optional[str] = None) -> OfficialDocs:
    """The answer without a docs tree: status unknown, the URL pattern, and why."""
    note = ("no PyTorch docs source tree given (docs_dir): the URL follows the autosummary "
            "pattern generated/<name>.html and was not checked")
    if hint:
        note += f"; {hint}"
    return OfficialDocs(status=UNKNOWN, url=url_pattern(api, torch_version), note=note)
