"""Vendor support docs (Ascend format): parse, index, look up through aliases.

The Ascend/pytorch repository publishes, per torch version, one Markdown folder
(``docs/zh/api/native_api/pytorch_2-12-0/*.md``) with one block per API::

    ### torch.autograd.forward_ad.unpack_dual          <- or a class member line:
                                                          > <font size="3">mark_dirty()</font>
    <div style="margin-left: 2em">                        under "### <code><i>class</i></code> X"
    **原生文档**：[name](https://pytorch.org/docs/2.12/generated/<name>.html)
    **支持情况**：
    | 硬件 | 是否支持 |
    | <term>Atlas A2 训练系列产品</term> | ✔ |      <- one row per chip, ✔ or ✘
    **限制与说明**： `input`仅支持fp32               <- optional, may be a "- item" list
    </div>

Public API (also used to build emulator capability profiles)::

    index = load_vendor_docs(root, "2.12.0")
    entry = index.lookup("torch.autograd.gradcheck")    # alias -> ...gradcheck.gradcheck
    for entry in index: entry.name, entry.chips, entry.limits, entry.dtypes, entry.source

The data is treated as data that may contain mistakes: nothing here judges it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import InputError
from ..results.models import VendorDocs

# Short dtype spellings used by the vendor docs -> torch dtype names.
DTYPE_NAMES: Dict[str, str] = {
    "fp16": "float16",
    "float16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp32": "float32",
    "float32": "float32",
    "float": "float32",
    "fp64": "float64",
    "float64": "float64",
    "double": "float64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "bool": "bool",
    "complex32": "complex32",
    "complex64": "complex64",
    "complex128": "complex128",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
}

ONLY = "仅支持"  # "supports only"
EXTRA = "额外支持"  # "additionally supports" (usually for one chip)
NOT = "不支持"  # "does not support"
KINDS = (("only", ONLY), ("extra", EXTRA), ("not", NOT))

_TOKEN = "|".join(sorted((re.escape(k) for k in DTYPE_NAMES), key=len, reverse=True))
_DTYPE_LIST = re.compile(
    rf"(?<![A-Za-z0-9_])(?:{_TOKEN})(?![A-Za-z0-9_])"
    rf"(?:\s*[，,、/和及]\s*(?:{_TOKEN})(?![A-Za-z0-9_]))*",
    re.IGNORECASE,
)
_TERM = re.compile(r"<term>(.*?)</term>")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_HEADING = re.compile(r"^###\s+(?P<cls><code><i>class</i></code>\s*)?(?P<name>.+?)\s*$")
_MEMBER = re.compile(r'^>\s*<font size="3">(?P<name>.+?)</font>\s*$')
_ROW = re.compile(r"^\|\s*(?P<chip>.+?)\s*\|\s*(?P<mark>[^|]*?)\s*\|\s*$")
_YES = {"✔", "✓", "√", "&#10004;", "&#x2714;", "是", "yes"}
_NO = {"✘", "✗", "×", "&#10008;", "&#x2718;", "否", "no"}

NATIVE_DOC = "**原生文档**"
SUPPORT = "**支持情况**"
LIMITS = "**限制与说明**"


@dataclass(frozen=True)
class DtypeClause:
    """One "仅支持 <dtypes>" (kind "only"), "额外支持 <dtypes>" (kind "extra") or
    "不支持 <dtypes>" (kind "not") statement."""

    kind: str  # only | extra | not
    dtypes: Tuple[str, ...]  # torch dtype names, in the order written
    arg: Optional[str] = None  # the argument it is about (`self`, `input`), when named
    chips: Tuple[str, ...] = ()  # the chips it is about; () = every chip
    text: str = ""  # the line it came from
    condition: Optional[str] = None  # "带`dim`场景": holds only then (not read as a limit)


@dataclass(frozen=True)
class DocsStatement:
    """What one docs entry says about the dtypes of one argument on one chip."""

    allowed: Optional[Tuple[str, ...]]  # "仅支持" (+ "额外支持") lists; None: no such list
    refused: Tuple[str, ...] = ()  # "不支持" lists
    other_args: Tuple[str, ...] = ()  # arguments whose clauses were left out
    source: str = ""  # file:line of the entry

    def says(self, dtype: str) -> Optional[bool]:
        """True: documented as supported; False: documented as not; None: not stated."""
        if dtype in self.refused:
            return False
        if self.allowed is None:
            return None
        return dtype in self.allowed

    @property
    def empty(self) -> bool:
        return self.allowed is None and not self.refused


@dataclass
class VendorEntry:
    """One API block of the vendor docs."""

    name: str  # full dotted name (class + member for members; from the link when short)
    heading: str  # the name as the heading / member line writes it
    source: str  # file, relative to the docs root given to load_vendor_docs
    line: int  # 1-based line of the heading or member line
    url: Optional[str] = None  # the "原生文档" link
    link_text: Optional[str] = None
    cls: Optional[str] = None  # the class heading a member sits under
    section: Optional[str] = None  # the "## " heading above it
    chips: Dict[str, bool] = field(default_factory=dict)
    limits: Optional[str] = None  # "限制与说明" text, list items joined with newlines
    dtype_clauses: List[DtypeClause] = field(default_factory=list)

    @property
    def url_name(self) -> Optional[str]:
        """The dotted name the official-docs link points at (generated/<name>.html or #name)."""
        return name_from_url(self.url) if self.url else None

    @property
    def names(self) -> List[str]:
        out = [self.name, self.heading, self.link_text, self.url_name]
        return list(dict.fromkeys(n for n in out if n))

    @property
    def dtypes(self) -> Optional[List[str]]:
        """Union of every "仅支持" dtype list; None when the entry has none (no dtype limit)."""
        only = [c for c in self.dtype_clauses if c.kind == "only"]
        if not only:
            return None
        seen: Dict[str, None] = {}
        for clause in only:
            for d in clause.dtypes:
                seen.setdefault(d, None)
        return list(seen)

    def dtypes_for(self, chip: str, arg: Optional[str] = None) -> Optional[List[str]]:
        """Dtypes allowed on one chip (clauses for every chip or naming it, plus its extras).

        ``arg`` keeps only clauses about that argument (and those naming none).
        None when no "仅支持" clause applies: the docs state no dtype limit.
        """
        def applies(c: DtypeClause) -> bool:
            return (not c.chips or chip in c.chips) and (arg is None or c.arg in (None, arg))

        only = [c for c in self.dtype_clauses if c.kind == "only" and applies(c)]
        if not only:
            return None
        seen: Dict[str, None] = {}
        for c in only + [c for c in self.dtype_clauses if c.kind == "extra" and applies(c)]:
            for d in c.dtypes:
                seen.setdefault(d, None)
        return list(seen)

    def statement_for(self, chip: Optional[str] = None,
                      args: Optional[Sequence[str]] = None) -> DocsStatement:
        """What the entry says on ``chip`` (None: clauses naming no chip only) about the
        arguments ``args`` (a clause naming no argument counts for every one; None: every
        clause). Conditional clauses ("带`dim`场景不支持fp16") are left out; "不支持" lists
        are subtracted from the allowed ones."""
        def applies(c: DtypeClause) -> bool:
            return (c.condition is None and (not c.chips or (chip is not None and chip in c.chips))
                    and (args is None or c.arg is None or c.arg in args))

        used = [c for c in self.dtype_clauses if applies(c)]
        others = tuple(dict.fromkeys(
            c.arg for c in self.dtype_clauses
            if args is not None and c.arg is not None and c.arg not in args))
        refused = tuple(dict.fromkeys(d for c in used if c.kind == "not" for d in c.dtypes))
        allowed: Optional[Tuple[str, ...]] = None
        if any(c.kind == "only" for c in used):
            allowed = tuple(dict.fromkeys(d for c in used if c.kind in ("only", "extra")
                                          for d in c.dtypes if d not in refused))
        return DocsStatement(allowed, refused, others, f"{self.source}:{self.line}")

    def to_dict(self) -> Dict[str, object]:
        """Plain data (JSON/YAML-ready), e.g. for building capability profiles."""
        return {
            "name": self.name, "heading": self.heading, "class": self.cls,
            "section": self.section, "url": self.url, "chips": dict(self.chips),
            "limits": self.limits, "dtypes": self.dtypes,
            "dtype_clauses": [{"kind": c.kind, "dtypes": list(c.dtypes), "arg": c.arg,
                               "chips": list(c.chips), "text": c.text, "condition": c.condition}
                              for c in self.dtype_clauses],
            "source": self.source, "line": self.line,
        }

    def to_model(self, matched_by: Optional[str] = None) -> VendorDocs:
        return VendorDocs(present=True, name=self.name, chips=dict(self.chips),
                          limits=self.limits, dtypes=self.dtypes,
                          source=self.source, line=self.line, url=self.url,
                          matched_by=matched_by)


def name_from_url(url: str) -> Optional[str]:
    """``.../generated/torch.x.y.html`` -> ``torch.x.y``; ``page.html#torch.x.y`` -> ``torch.x.y``."""
    if "#" in url:
        anchor = url.rsplit("#", 1)[1]
        return anchor if "." in anchor else None
    m = re.search(r"/generated/([^/]+?)\.html$", url)
    return m.group(1) if m else None


def parse_dtype_clauses(text: str) -> List[DtypeClause]:
    """Every "仅支持 / 额外支持 / 不支持 <dtype list>" in ``text``, line by line.

    ``- <term>A</term>、<term>B</term>：`self`仅支持fp16，fp32`` gives
    DtypeClause("only", ("float16", "float32"), arg="self", chips=("A", "B")).
    A clause names the chips and the argument written before it on its line; a clause
    that follows another with only a separator between (```input`仅支持fp32，不支持double``)
    continues it, with the same argument and chips. Other words before it make it
    conditional (``带`dim`场景不支持fp16``: ``condition`` set). A keyword not followed by
    dtypes ("仅支持True", "不支持5维以上") gives nothing.
    """
    out: List[DtypeClause] = []
    for line in text.splitlines():
        hits = sorted((pos, kind, word) for kind, word in KINDS
                      for pos in _find_all(line, word))
        prev: Optional[DtypeClause] = None
        prev_end = 0
        for pos, kind, word in hits:
            if pos < prev_end:
                continue
            start = pos + len(word)
            m = _DTYPE_LIST.match(line, start) or _DTYPE_LIST.match(line, _skip_ws(line, start))
            if not m:
                continue
            tokens = re.split(r"\s*[，,、/和及]\s*", m.group(0))
            dtypes = tuple(dict.fromkeys(DTYPE_NAMES[t.lower()] for t in tokens if t))
            before = line[prev_end:pos]
            arg_m = re.search(r"`([^`]+)`\s*$", before)
            chips = tuple(_TERM.findall(before))
            rest = _TERM.sub("", before[:arg_m.start()] if arg_m else before)
            rest = re.sub(r"^\s*(?:\*\*[^*]*\*\*)?", "", rest)
            rest = re.sub(r"针对|[\s，,；;、/：:\-*（）()]", "", rest)
            if prev is not None and not rest and not arg_m and not chips:
                arg, chips, condition = prev.arg, prev.chips, prev.condition
            else:
                arg = arg_m.group(1) if arg_m else None
                chips = chips or (prev.chips if prev is not None else ())
                condition = before.strip(" ，,；;：:-*") if rest else None
            clause = DtypeClause(kind=kind, dtypes=dtypes, arg=arg, chips=chips,
                                 text=line.strip().lstrip("-* ").strip(),
                                 condition=condition if kind == "not" else None)
            out.append(clause)
            prev, prev_end = clause, m.end()
    return out


def _find_all(line: str, word: str) -> List[int]:
    out, start = [], 0
    while True:
        pos = line.find(word, start)
        if pos < 0:
            return out
        out.append(pos)
        start = pos + len(word)


def _skip_ws(line: str, i: int) -> int:
    while i < len(line) and line[i] in " \t:：":
        i += 1
    return i


def _unescape(text: str) -> str:
    return html.unescape(text.replace("\\_", "_")).strip()


def _member_name(raw: str) -> str:
    raw = _unescape(re.sub(r"<[^>]+>", "", raw))
    return raw.split("(", 1)[0].strip()


def _full_name(written: str, cls: Optional[str], link_text: Optional[str],
               url_name: Optional[str]) -> str:
    if cls:
        candidate = f"{cls}.{written}"
    else:
        candidate = written
    if "." in candidate and candidate.split(".", 1)[0] in ("torch", "torch_npu", "torchvision"):
        return candidate
    # a short heading ("profile.total_average"): the link names the full path
    for full in (url_name, link_text):
        if full and (full == candidate or full.endswith("." + candidate)):
            return full
    return candidate


MAX_FILE_BYTES = 8 * 1024 * 1024  # the largest shipped docs file is ~0.2 MiB


def read_docs_file(path: Path, cap: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of one docs file: a regular file (a symlink to one too) of at most
    ``cap`` bytes. A FIFO, a device (``/dev/zero``), a folder or a larger file is one line
    (InputError), never read: it could block forever or fill the memory. Opened
    non-blocking and checked on the open descriptor, so a file swapped after a look is
    caught too."""
    import os
    import stat

    try:
        fd = os.open(str(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise InputError(f"cannot read vendor docs file {path}: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"vendor docs file {path}: not a regular file (a FIFO, a device "
                             "or a folder); remove it from the docs folder")
        if info.st_size > cap:
            raise InputError(f"vendor docs file {path}: {info.st_size} bytes, over the "
                             f"{cap // (1024 * 1024)} MiB a docs file may have")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(cap + 1)
    except OSError as e:
        raise InputError(f"cannot read vendor docs file {path}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(raw) > cap:  # grew after the look
        raise InputError(f"vendor docs file {path}: over the {cap // (1024 * 1024)} MiB a "
                         "docs file may have")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read vendor docs file {path}: {e}") from None


def parse_vendor_file(path: Path, rel: str) -> List[VendorEntry]:
    """Entries of one Markdown file; ``rel`` is how ``source`` names it."""
    text = read_docs_file(path)
    lines = text.splitlines()
    entries: List[VendorEntry] = []
    section: Optional[str] = None
    cls: Optional[str] = None  # current "### class" heading
    pending: Optional[Tuple[str, int, Optional[str]]] = None  # (written name, line, class)
    cur: Optional[VendorEntry] = None
    in_limits = False
    limit_lines: List[str] = []

    def close() -> None:
        nonlocal cur, in_limits, limit_lines
        if cur is not None and limit_lines:
            body = "\n".join(limit_lines).strip()
            cur.limits = body or None
            cur.dtype_clauses = parse_dtype_clauses(body) if body else []
        cur, in_limits, limit_lines = None, False, []

    for i, line in enumerate(lines, 1):
        stripped = line.strip()
        if line.startswith("#"):
            close()
            level = len(line) - len(line.lstrip("#"))
            if level <= 2:
                section = line.lstrip("#").strip() if level == 2 else None
                cls, pending = None, None
                continue
            if level == 3:
                m = _HEADING.match(line)
                name = _unescape(re.sub(r"<[^>]+>", "", m.group("name"))) if m else ""
                cls = name if (m and m.group("cls")) else None
                pending = (name, i, None)
                continue
        m = _MEMBER.match(stripped)
        if m:
            close()
            pending = (_member_name(m.group("name")), i, cls)
            continue
        if stripped.startswith(NATIVE_DOC) and pending is not None:
            close()
            link = _LINK.search(stripped)
            written, at, owner = pending
            link_text = _unescape(link.group(1)) if link else None
            url = link.group(2) if link else None
            cur = VendorEntry(name=written, heading=written, source=rel, line=at, url=url,
                              link_text=link_text, cls=owner, section=section)
            cur.name = _full_name(written, owner, link_text, cur.url_name)
            entries.append(cur)
            pending = None
            continue
        if cur is None:
            continue
        if stripped.startswith(LIMITS):
            in_limits = True
            rest = stripped[len(LIMITS):].lstrip("：:").strip()
            if rest:
                limit_lines.append(rest)
            continue
        if stripped.startswith("</div>") or stripped.startswith("<div"):
            if in_limits:
                close()
            continue
        if in_limits:
            if stripped:
                limit_lines.append(stripped)
            continue
        row = _ROW.match(stripped)
        if row and not set(row.group("mark")) <= set("-: "):
            chip = _TERM.sub(r"\1", row.group("chip")).strip()
            mark = row.group("mark").strip()
            if mark in _YES:
                cur.chips[chip] = True
            elif mark in _NO:
                cur.chips[chip] = False
    close()
    return entries


def resolve_chips(wanted: Sequence[str], known: Sequence[str]) -> List[str]:
    """Chip names as the vendor writes them, from full names or unique parts ("A2").

    Raises InputError for a name that matches no known chip, or several.
    """
    out: List[str] = []
    for w in wanted:
        if w in known:
            out.append(w)
            continue
        low = w.lower()
        hits = [k for k in known if low in k.lower()]
        if len(hits) > 1:  # "A2" must not also match "Atlas A2x": prefer a whole word
            words = [k for k in hits if low in re.split(r"\s+", k.lower())]
            hits = words if len(words) == 1 else hits
        if len(hits) != 1:
            what = "matches several chips" if hits else "matches no chip"
            raise InputError(f"chip '{w}' {what}; known: {', '.join(known)}")
        out.append(hits[0])
    return out


def version_folder(version: str) -> str:
    parts = [p for p in re.split(r"[.\-]", version.split("+", 1)[0]) if p]
    if not all(p.isdigit() for p in parts) or not parts:
        raise InputError(f"bad torch version '{version}' (expected e.g. 2.12.0)")
    while len(parts) < 3:
        parts.append("0")
    return "pytorch_" + "-".join(parts[:3])


def available_versions(root: Union[str, Path]) -> List[str]:
    """Torch versions with a folder under ``root`` ("pytorch_2-12-0" -> "2.12.0")."""
    root = Path(root)
    if not root.is_dir():
        return []
    out = []
    for p in root.iterdir():
        if p.is_dir() and re.fullmatch(r"pytorch_\d+-\d+-\d+", p.name):
            out.append(p.name[len("pytorch_"):].replace("-", "."))
    return sorted(out, key=lambda v: tuple(int(x) for x in v.split(".")))


class VendorDocsIndex:
    """All entries of one torch version; look-up by name, qualified name or alias."""

    def __init__(self, entries: Sequence[VendorEntry], root: Path, version: Optional[str]):
        self.entries = list(entries)
        self.root = root
        self.version = version
        self._by_name: Dict[str, List[VendorEntry]] = {}
        self._by_short: Dict[str, List[VendorEntry]] = {}
        for e in self.entries:
            for n in e.names:
                self._by_name.setdefault(n, []).append(e)
                self._by_short.setdefault(n.rsplit(".", 1)[-1], []).append(e)

    def __iter__(self) -> Iterator[VendorEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def chips(self) -> List[str]:
        """Every chip named in a support table, in first-seen order."""
        seen: Dict[str, None] = {}
        for e in self.entries:
            for c in e.chips:
                seen.setdefault(c, None)
        return list(seen)

    def names(self) -> List[str]:
        return list(dict.fromkeys(e.name for e in self.entries))

    def get(self, name: str) -> Optional[VendorEntry]:
        """Exact look-up by any name the entry carries (no import)."""
        found = self._by_name.get(name)
        return found[0] if found else None

    def match(self, api: str) -> Optional[Tuple[VendorEntry, str]]:
        """The entry for ``api`` and how it was matched: ``exact``, ``qualified`` (the
        name where the object is defined), or ``alias`` (another entry name that resolves
        to the same object, e.g. torch.autograd.gradcheck -> ...gradcheck.gradcheck)."""
        entry = self.get(api)
        if entry is not None:
            return entry, "exact"
        from ..api.resolve import maybe_resolve, unwrap

        resolved = maybe_resolve(api)
        if resolved is None:
            return None
        for name in [resolved.qualified_name, *resolved.aliases]:
            entry = self.get(name)
            if entry is not None:
                return entry, "qualified"
        target = unwrap(resolved.obj)
        shorts = {api.rsplit(".", 1)[-1], resolved.qualified_name.rsplit(".", 1)[-1]}
        for short in shorts:
            for cand in self._by_short.get(short, []):
                for n in cand.names:
                    other = maybe_resolve(n)
                    if other is not None and unwrap(other.obj) is target:
                        return cand, "alias"
        return None

    def lookup(self, api: str) -> Optional[VendorEntry]:
        """The entry for ``api`` (exact name, qualified name or alias), or None."""
        found = self.match(api)
        return found[0] if found else None

    def docs_evidence(self, api: str) -> VendorDocs:
        found = self.match(api)
        if found is None:
            return VendorDocs(present=False,
                              source=str(self.root) if self.version is None
                              else f"pytorch_{self.version.replace('.', '-')}")
        entry, how = found
        return entry.to_model(matched_by=how)


def load_vendor_docs(root: Union[str, Path], torch_version: Optional[str] = None) -> VendorDocsIndex:
    """Parse the vendor docs for one torch version.

    ``root`` is either the folder holding ``pytorch_X-Y-Z/`` folders (then
    ``torch_version`` picks one, e.g. "2.12.0" or "2.12") or one such folder itself.
    Raises InputError (one line) for a missing folder or version.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"vendor docs folder not found: {root}")
    folder = root
    if re.fullmatch(r"pytorch_\d+-\d+-\d+", root.name):
        version = root.name[len("pytorch_"):].replace("-", ".")
    else:
        versions = available_versions(root)
        if not versions:
            if not list(root.glob("*.md")):
                raise InputError(f"no vendor docs under {root} (expected pytorch_X-Y-Z/ folders)")
            version = None
        else:
            if torch_version is None:
                raise InputError(f"{root} holds docs for {', '.join(versions)}: give a torch version")
            wanted = version_folder(torch_version)
            if not (root / wanted).is_dir() and torch_version.count(".") == 1:
                # "2.12" -> newest 2.12.x
                same = [v for v in versions if v.startswith(torch_version + ".")]
                wanted = version_folder(same[-1]) if same else wanted
            folder = root / wanted
            if not folder.is_dir():
                raise InputError(f"no vendor docs for torch {torch_version} under {root} "
                                 f"(available: {', '.join(versions)})")
            version = wanted[len("pytorch_"):].replace("-", ".")
    entries: List[VendorEntry] = []
    for path in sorted(folder.glob("*.md")):
        rel = path.relative_to(folder.parent).as_posix()
        entries.extend(parse_vendor_file(path, rel))
    return VendorDocsIndex(entries, folder, version)
