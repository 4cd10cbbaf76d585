"""Which dtype check of an ``aclnn_*.cpp`` file runs on which NPU architecture.

A list declared in a file is not a rule: the rule is the check that runs. For every check
(``OP_CHECK_DTYPE_NOT_SUPPORT(t, L, ...)``, ``CheckType(t->GetDataType(), L)``) this module
finds the architectures it runs on, by following the code as written:

- the blocks around it: ``if (IsRegbase())`` / ``else`` / ``if (arch == NpuArch::DAV_2201)``,
  a ``switch`` on the architecture (its ``case`` labels), and early returns before it in
  the same block (``if (IsRegbase()) { return ...; }`` then the check: not on RegBase);
- the function it is in: a ``static`` function runs where its callers in the file call it
  (the union of their paths), an exported one (the ``aclnnXxxGetWorkspaceSize`` entry)
  everywhere, an uncalled ``static`` one nowhere;
- the list it checks: a list, a variable or a selection function returning lists under
  branches (``GetDtypeSupportList()`` with one ``return`` per architecture), the library's
  ``GetDtypeSupportListV1/V2/V3(l1, l2)``, or a parameter the callers pass a list to.

Architectures: ``dav_2201`` (Atlas A2/A3), ``dav_3510`` (Ascend 950, "RegBase"), ``other``
(the older chips). A condition that names the architecture in a way not read here makes
the path ``undecided`` (never a guessed side). Conditions on anything else (a dtype, a
shape) do not restrict the architecture: the check may run on every chip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

A2, R950, OLD = "dav_2201", "dav_3510", "other"
ALL: FrozenSet[str] = frozenset({A2, R950, OLD})
NONE: FrozenSet[str] = frozenset()


class Undecided(Exception):
    """An architecture condition this reader cannot evaluate."""


@dataclass(frozen=True)
class Path_:
    archs: FrozenSet[str]
    branch: str = ""  # the nearest architecture branch, as 'line N: if (...)'
    # where a caller takes the check's result as a choice (``bool ok = Check(...)``, then
    # a cast when it fails) instead of refusing: architectures and that caller's line
    selects: FrozenSet[str] = frozenset()
    select_line: int = 0
    # where an early return with an error before it refuses every call (``if (!IsRegbase())
    # { OP_LOGE(...); return ACLNN_ERR_...; }``): architectures and that line
    refuses: FrozenSet[str] = frozenset()
    refuse_line: int = 0


@dataclass
class CheckSite:
    tensor: str  # the tensor (or dtype variable) checked
    line: int
    func: str  # the function the check is in
    lists: Dict[str, List[Path_]]  # list name -> the paths on which it is the checked list
    undecided: Optional[str] = None  # why the architectures could not be read
    selects: FrozenSet[str] = frozenset()  # where a caller takes the result as a choice
    select_line: int = 0
    refuses: FrozenSet[str] = frozenset()  # where an error return before it refuses every call
    refuse_line: int = 0
    # dtypes the failing branch still lets through on some architectures (relu: "if not in
    # the list: error unless bf16 on a chip that has it"): (dtype, line, architectures)
    extra: List[Tuple[str, int, FrozenSet[str]]] = field(default_factory=list)
    # a promotion of the checked dtype variable before the check (``if (promoteType ==
    # DT_BOOL) { promoteType = DT_INT8; }``): (from, to, line, architectures); the input's
    # ``from`` passes where ``to`` is in the list
    promoted: List[Tuple[str, str, int, FrozenSet[str]]] = field(default_factory=list)
    # inside an if / else block whose condition is not about the architecture (a format, an
    # optional tensor): the check runs on some calls only
    conditional: bool = False


_EXEMPT = re.compile(r"\w+(?:->|\.)GetDataType\(\)\s*!=\s*(?:op::)?(?:DataType::)?DT_(\w+)")


def _exemptions(code: str, start: int, fc: FileCode) -> List[Tuple[str, int, FrozenSet[str]]]:
    """In the block of ``if (!CheckType(x, L)) {...}`` at start: an error return guarded by
    ``A || (B && x != DT_Y)`` lets DT_Y through where B can hold and no pure architecture
    term A always holds."""
    k = _paren_end(code, code.index("(", code.rfind("if", 0, start))) + 1
    while k < len(code) and code[k].isspace():
        k += 1
    if k >= len(code) or code[k] != "{" or k not in fc.match:
        return []
    body_end = fc.match[k]
    out = []
    for m in re.finditer(r"\bif\s*\(", code[k:body_end]):
        p0 = k + m.end() - 1
        cond = code[p0 + 1:_paren_end(code, p0)]
        hit = _EXEMPT.search(cond)
        if not hit:
            continue
        blocked: FrozenSet[str] = NONE
        let: FrozenSet[str] = NONE
        try:
            for term in _split_top(_strip_parens(cond), "||"):
                ex = _EXEMPT.search(term)
                if ex:
                    rest = _EXEMPT.sub("true", term)
                    let = let | (arch_set(rest, fc) if _ARCH_WORDS.search(_expand(rest, fc)) else ALL)
                else:
                    blocked = blocked | arch_set(term, fc, must=True)
        except Undecided:
            continue
        fn = _func_at(fc, p0)
        try:
            here = path_in_function(fc, p0, fn).archs if fn else ALL  # a switch case around it
        except Undecided:
            continue
        archs = (let & here) - blocked
        if archs:
            out.append((hit.group(1), fc.line(p0), frozenset(archs)))
    return out


_DT = r"(?:op::)?(?:DataType::)?DT_(\w+)"


def _promotions(code: str, var: str, start: int, fc: FileCode
                ) -> List[Tuple[str, str, int, FrozenSet[str]]]:
    """``if (var == DT_X) { var = DT_Y; }`` in the function before the check at start: the
    dtype variable checked is X promoted to Y (aclnn_gt_tensor.cpp: bool as int8)."""
    fn = _func_at(fc, start)
    if fn is None or not re.fullmatch(r"\w+", var):
        return []
    pat = re.compile(r"\bif\s*\(\s*" + var + r"\s*==\s*" + _DT + r"\s*\)\s*\{?\s*"
                     + var + r"\s*=\s*" + _DT + r"\s*;\s*\}?")
    out = []
    for m in pat.finditer(code, fn.start, start):
        try:
            archs = path_in_function(fc, m.start(), fn).archs
        except Undecided:
            continue  # an architecture condition not read: the promotion is not applied
        out.append((m.group(1), m.group(2), fc.line(m.start()), archs))
    return out


def _refuses(code: str, start: int, end: int, fc: FileCode) -> bool:
    """Is the CheckType at start an error check (OP_CHECK, an if whose block fails, a
    predicate's return) rather than a choice?"""
    before = code[max(code.rfind(";", 0, start), code.rfind("{", 0, start), code.rfind("}", 0, start)) + 1:start]
    if re.search(r"OP_CHECK\s*\(\s*!?\s*$", before) or re.search(r"\breturn\s*!?\s*$", before):
        return True
    if re.search(r"\bif\s*\(", before):
        close = _paren_end(code, code.index("(", code.rfind("if", 0, start)))
        k = close + 1
        while k < len(code) and code[k].isspace():
            k += 1
        body = code[k:fc.match.get(k, code.find(";", k))] if k < len(code) and code[k] == "{" else \
            code[k:code.find(";", k)]
        return bool(re.search(r"OP_LOGE|return\s+(?:false|nullptr|ACLNN_ERR)", body))
    return False


@dataclass
class Func:
    name: str
    params: List[str]
    start: int  # position of the body's "{"
    end: int  # position of its "}"
    static: bool


@dataclass
class FileCode:
    code: str  # comments blanked
    funcs: List[Func] = field(default_factory=list)
    match: Dict[int, int] = field(default_factory=dict)  # "{" position -> "}" position
    lists: Set[str] = field(default_factory=set)
    bools: Dict[str, str] = field(default_factory=dict)  # bool var -> its arch expression

    def line(self, pos: int) -> int:
        return self.code.count("\n", 0, pos) + 1


_ARCH_WORDS = re.compile(r"NpuArch|SocVersion|IsReg[Bb]ase|DAV_\d+|ASCEND\d|GetCurNpuArch|GetSocVersion|Arch3510|Is950")
_FUNC_DEF = re.compile(r"(?:^|\n)([ \t]*(?:static\s+|inline\s+|const\s+|constexpr\s+)*)"
                       r"(?:[\w:<>,*&]+\s+)+?[*&]?\s*(\w+)\s*\(([^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)\s*(?:const\s*)?\{")
_KEYWORDS = {"if", "for", "while", "switch", "return", "else", "do", "sizeof", "catch"}


def _matching(code: str) -> Dict[int, int]:
    stack: List[int] = []
    out: Dict[int, int] = {}
    for i, ch in enumerate(code):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            out[stack.pop()] = i
    return out


def _paren_end(code: str, start: int) -> int:
    """Index of the ')' closing the '(' at start."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(code) - 1


def parse(code: str, list_names: Set[str]) -> FileCode:
    fc = FileCode(code=code, match=_matching(code), lists=set(list_names))
    for m in _FUNC_DEF.finditer(code):
        name = m.group(2)
        if name in _KEYWORDS:
            continue
        brace = m.end() - 1
        end = fc.match.get(brace)
        if end is None:
            continue
        params = [re.findall(r"\w+", p)[-1] for p in m.group(3).split(",") if re.findall(r"\w+", p)]
        fc.funcs.append(Func(name, params, brace, end, "static" in m.group(1)
                             or "inline" in m.group(1)))
    for m in re.finditer(r"\bbool\s+(\w+)\s*=\s*([^;]*);", code):
        if _ARCH_WORDS.search(m.group(2)):
            fc.bools[m.group(1)] = m.group(2)
    return fc


# -- conditions ---------------------------------------------------------------------------

def _split_top(expr: str, op: str) -> List[str]:
    parts, depth, cur, i = [], 0, [], 0
    while i < len(expr):
        ch = expr[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if depth == 0 and expr.startswith(op, i):
            parts.append("".join(cur))
            cur = []
            i += len(op)
            continue
        cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _strip_parens(expr: str) -> str:
    expr = expr.strip()
    while expr.startswith("(") and _paren_end(expr, 0) == len(expr) - 1:
        expr = expr[1:-1].strip()
    return expr


def arch_set(expr: str, fc: FileCode, depth: int = 0, must: bool = False) -> FrozenSet[str]:
    """The architectures on which a condition can be true (ALL when it does not name one);
    with ``must``, those on which it is always true (a condition on a dtype or a shape is
    not: NONE)."""
    expr = _strip_parens(expr)
    ors = _split_top(expr, "||")
    if len(ors) > 1:
        return frozenset().union(*(arch_set(p, fc, depth, must) for p in ors))
    ands = _split_top(expr, "&&")
    nes = [re.fullmatch(r".+?!=\s*(?:op::)?SocVersion::(\w+)", p, re.S) for p in ands]
    if len(ands) > 1 and all(nes):
        # ``soc != 910B && soc != 910_93 && soc != 910_95`` (nan_to_num's gate): one ``soc !=``
        # tells A2 from A3, the chain excludes whole architectures
        return _soc_excluded({m.group(1) for m in nes}, must)
    if len(ands) > 1:
        out = ALL
        for p in ands:
            out = out & arch_set(p, fc, depth, must)
        return out
    if expr.startswith("!") and not expr.startswith("!="):
        inner = expr[1:].strip()
        if not _ARCH_WORDS.search(_expand(inner, fc)):
            return NONE if must else ALL
        if _strip_parens(inner) == inner and not re.fullmatch(r"[\w:]+\s*\([^()]*\)|\w+", inner):
            raise Undecided(f"negation not read: {expr}")
        return ALL - arch_set(inner, fc, depth, not must)
    if must and not _ARCH_WORDS.search(_expand(expr, fc)):
        return NONE
    return _atom(expr, fc, depth)


_ORDER = {"ASCEND910B": 1, "ASCEND910_93": 2, "ASCEND950": 3, "ASCEND910_95": 3, "ASCEND910E": 4}


_STMT = r"(?:(?:(?!\breturn\b|\bif\b)[^{};])*;\s*)*?"  # plain statements (a log line), no return, no if
_BOOL_TAIL = re.compile(r"\s*\{?\s*" + _STMT + r"return\s+(true|false)\s*;\s*\}?\s*(?:else\s*\{?\s*)?"
                        + _STMT + r"return\s+(true|false)\s*;\s*\}?\s*")


def _bool_helper(body: str) -> Optional[Tuple[str, bool]]:
    """A predicate written ``if (C) { return true; } return false;`` (or with the booleans
    swapped, or an ``else``, a log line before a return, or one local set before the ``if``:
    ``auto socVersion = GetSocVersion();``): its condition and whether C makes it true."""
    m = re.match(r"\s*(?:(?:const\s+)?[\w:]+\s+\w+\s*=\s*[^;{}]*;\s*)?if\s*\(", body)
    if not m:
        return None
    close = _paren_end(body, m.end() - 1)
    tail = _BOOL_TAIL.fullmatch(body, close + 1)
    if not tail or tail.group(1) == tail.group(2):
        return None
    return body[m.end():close], tail.group(1) == "true"


def _soc_arch(name: str) -> Optional[FrozenSet[str]]:
    """The architecture of a ``SocVersion`` / ``NpuArch`` name, where it is one of those read."""
    if name in ("ASCEND910B", "ASCEND910_93", "DAV_2201"):
        return frozenset({A2})
    if name.startswith("ASCEND950") or name in ("ASCEND910_95", "DAV_3510"):
        return frozenset({R950})
    if name in ("ASCEND910", "ASCEND310P", "ASCEND310B", "ASCEND610LITE"):
        return frozenset({OLD})
    return None


def _switch_helper(body: str) -> Optional[FrozenSet[str]]:
    """A predicate written as one ``switch`` on the SoC / architecture whose cases return true
    or false (``case SocVersion::ASCEND910B: case SocVersion::ASCEND910_93: return true;
    default: return false;``): the architectures on which it is true. None when the body is
    not that shape, or a case names a chip not read (then the caller says undecided)."""
    m = re.fullmatch(r"\s*(?:auto\s+\w+\s*=\s*[^;]*;\s*)?switch\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*\{(.*)\}\s*",
                     body, re.S)
    if not m or not _ARCH_WORDS.search(m.group(0)):
        return None
    true: Set[str] = set()
    false: Set[str] = set()
    named: Set[str] = set()
    default = None
    for labels, value in re.findall(r"((?:(?:case\s+(?:op::)?(?:SocVersion|NpuArch)::\w+|default)\s*:\s*\{?\s*)+)"
                                    r"(?:[^{};]*;\s*)*?return\s+(true|false)\s*;", m.group(2)):
        for name in re.findall(r"(?:SocVersion|NpuArch)::(\w+)", labels):
            arch = _soc_arch(name)
            if arch is None:
                return None
            named |= arch
            (true if value == "true" else false).update(arch)
        if re.search(r"\bdefault\s*:", labels):
            default = value == "true"
    if default is None or true & false:  # A2 and A3 on two sides: not this reader's to tell
        return None
    return frozenset(true | ((ALL - named) if default else set()))


_SOCS = {A2: {"ASCEND910B", "ASCEND910_93"}, R950: {"ASCEND950", "ASCEND910_95"}}


def _soc_excluded(names: Set[str], must: bool) -> FrozenSet[str]:
    """The architectures on which ``soc`` can be (``must``: always is) none of ``names``: an
    architecture whose SoCs are all named is excluded; the 950 is one SoC under two names
    (ASCEND910_95 on the 8.5.0 branches, ASCEND950 after); other chips always remain."""
    out = set()
    for arch, socs in _SOCS.items():
        named = socs & names
        if arch == R950:
            if not named:
                out.add(arch)
        elif (not must and socs - names) or (must and not named):
            out.add(arch)
    if not must or not (names - _SOCS[A2] - _SOCS[R950]):
        out.add(OLD)
    return frozenset(out)


def _atom(expr: str, fc: FileCode, depth: int) -> FrozenSet[str]:
    word = re.fullmatch(r"(\w+)", expr)
    if word and word.group(1) in fc.bools and depth < 4:
        return arch_set(fc.bools[word.group(1)], fc, depth + 1)
    local = re.fullmatch(r"(?:[\w:]+::)?(\w+)\s*\([^()]*\)", expr)
    fn = next((f for f in fc.funcs if local and f.name == local.group(1)), None)
    if fn is not None and depth < 4:
        body = fc.code[fn.start + 1:fn.end]
        rets = re.findall(r"return\s+([^;]*);", body)
        if len(rets) == 1 and _ARCH_WORDS.search(_expand(rets[0], fc)):
            return arch_set(rets[0], fc, depth + 1)
        shaped = _bool_helper(body)
        if shaped is not None and _ARCH_WORDS.search(_expand(shaped[0], fc)):
            cond, when_true = shaped
            if when_true:
                return arch_set(cond, fc, depth + 1)
            return ALL - arch_set(cond, fc, depth + 1, must=True)
        by_case = _switch_helper(body)
        if by_case is not None:
            return by_case
        if _ARCH_WORDS.search(body):
            raise Undecided(f"{fn.name}() decides on the architecture in a way not read")
        return ALL
    if not _ARCH_WORDS.search(expr):
        return ALL
    if re.fullmatch(r"(?:[\w:]+::)?Is\w*(?:Reg[Bb]ase|3510|950)\w*\s*\([^()]*\)", expr):
        return frozenset({R950})
    if re.fullmatch(r"(?:[\w:]+::)?Is\w*2201\w*\s*\([^()]*\)", expr):
        return frozenset({A2})
    cmp = re.fullmatch(r"(.+?)\s*(==|!=|>=|<=|<|>)\s*(.+)", expr, re.S)
    if cmp:
        left, op, right = cmp.group(1).strip(), cmp.group(2), cmp.group(3).strip()
        if re.search(r"NpuArch::|SocVersion::", left) and not re.search(r"NpuArch::|SocVersion::", right):
            left, right = right, left
            op = {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}.get(op, op)
        arch = re.fullmatch(r"(?:op::)?NpuArch::DAV_(\d+)", right)
        if arch and op in ("==", "!="):
            num = arch.group(1)
            hit = frozenset({A2}) if num == "2201" else frozenset({R950}) if num == "3510" else frozenset({OLD})
            return hit if op == "==" else ALL - hit
        soc = re.fullmatch(r"(?:op::)?SocVersion::(\w+)", right)
        if soc:
            name = soc.group(1)
            if name in ("ASCEND910B", "ASCEND910_93"):
                one = frozenset({A2})
            elif name.startswith("ASCEND950") or name == "ASCEND910_95":  # 910_95: the 950's earlier name
                one = frozenset({R950})
            elif name in ("ASCEND910", "ASCEND310P", "ASCEND310B", "ASCEND610LITE"):
                one = frozenset({OLD})
            else:
                one = None
            if op == "==" and one is not None:
                return one
            if op == "!=" and one is not None and one != frozenset({A2}):
                return ALL - one
            if name in _ORDER and op in (">=", ">", "<=", "<"):
                pos = _ORDER[name] + (0.5 if op == ">" else -0.5 if op == "<" else 0)
                ranges = {A2: (1, 2), R950: (3, 3)}
                if op in (">=", ">"):
                    return frozenset(a for a, (lo, hi) in ranges.items() if hi >= pos)
                return frozenset([a for a, (lo, hi) in ranges.items() if lo <= pos] + [OLD])
    raise Undecided(f"architecture condition not read: {' '.join(expr.split())[:100]}")


# -- the path to a position ----------------------------------------------------------------

def _func_at(fc: FileCode, pos: int) -> Optional[Func]:
    inner = [f for f in fc.funcs if f.start < pos < f.end]
    return min(inner, key=lambda f: f.end - f.start) if inner else None


def _header(code: str, brace: int) -> Tuple[str, int]:
    """The text before a '{' back to the previous statement end, and where it starts."""
    i = brace - 1
    depth = 0
    while i >= 0:
        ch = code[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
        elif depth == 0 and ch in ";{}":
            break
        i -= 1
    return code[i + 1:brace].strip(), i + 1


def _if_cond(header: str) -> Optional[str]:
    m = re.match(r"(?:else\s+)?if\s*\(", header)
    if not m:
        return None
    start = header.index("(", m.start())
    return header[start + 1:_paren_end(header, start)]


def _chain_before(code: str, header_start: int, fc: FileCode) -> List[str]:
    """Conditions of the if / else if blocks an else (if) block follows."""
    conds: List[str] = []
    pos = header_start
    while True:
        j = pos - 1
        while j >= 0 and code[j].isspace():
            j -= 1
        if j < 0 or code[j] != "}":
            return conds
        opening = next((o for o, c in fc.match.items() if c == j), None)
        if opening is None:
            return conds
        head, hstart = _header(code, opening)
        cond = _if_cond(head)
        if cond is None:
            return conds
        conds.append(cond)
        if not head.startswith("else"):
            return conds
        pos = hstart


def _unmacro(block: str) -> str:
    """The block without its check macros (``OP_CHECK(c, log, return ERR);``, ``CHECK_RET``,
    ``OP_CHECK_NULL``): their return is taken only when their check fails."""
    out, i = [], 0
    for m in re.finditer(r"\b[A-Z][A-Z0-9_]*\s*\(", block):
        if m.start() < i:
            continue
        end = _paren_end(block, m.end() - 1)
        if end < 0 or end <= m.start():
            continue
        out.append(block[i:m.start()])
        i = end + 1
        if block[i:i + 1] == ";":
            i += 1
    out.append(block[i:])
    return "".join(out)


def _returns(block: str) -> bool:
    return bool(re.search(r"\breturn\b[^;]*;\s*$", _unmacro(block).strip()))


def path_in_function(fc: FileCode, pos: int, fn: Func) -> Path_:
    """Architectures on which the statement at pos runs, within its function."""
    code = fc.code
    archs, branch = ALL, ""
    refuses: FrozenSet[str] = frozenset()
    refuse_line = 0
    blocks = sorted((o for o, c in fc.match.items() if fn.start <= o < pos < c), reverse=True)
    scopes = blocks  # innermost first; the function body is the last
    for o in scopes:
        head, hstart = _header(code, o)
        cond = _if_cond(head)
        here = ALL
        if cond is not None and not head.startswith("else"):
            here = arch_set(cond, fc)
        elif head.startswith("else"):
            prev = _chain_before(code, hstart, fc)
            for c in prev:
                here = here - arch_set(c, fc, must=True)
            if cond is not None:
                here = here & arch_set(cond, fc)
        elif head.startswith("switch"):
            here = _switch_case(fc, o, pos)
        if here != ALL and not branch:
            branch = f"line {fc.line(o)}: " + " ".join(head.split())[:90]
        archs = archs & here
        # early returns before pos in this block: if (c) { ... return ...; }  /  if (c) return ...;
        i = o + 1
        while True:
            m = re.compile(r"(?<![\w])if\s*\(").search(code, i, pos)
            if not m:
                break
            p0 = code.index("(", m.start())
            p1 = _paren_end(code, p0)
            if _depth(code, o, m.start(), fc) != 0 or p1 >= pos:
                i = p1 + 1
                continue
            cond = code[p0 + 1:p1]
            k = p1 + 1
            while k < len(code) and code[k].isspace():
                k += 1
            if k < len(code) and code[k] == "{":
                close = fc.match.get(k, k)
                if close >= pos:
                    break
                after = code[close + 1:close + 40].lstrip()
                body = code[k + 1:close]
                if not after.startswith("else") and _returns(body) and _ARCH_WORDS.search(_expand(cond, fc)):
                    sub = arch_set(cond, fc, must=True)
                    if sub & archs and re.search(r"OP_LOGE|return\s+(?:false|nullptr|ACLNN_ERR)", body):
                        refuses |= sub & archs
                        refuse_line = refuse_line or fc.line(m.start())
                    archs = archs - sub
                    if sub:
                        branch = branch or " ".join(
                            f"line {fc.line(m.start())}: returns early if ({cond.strip()[:80]})".split())
                i = close + 1
            else:
                semi = code.index(";", k)
                if semi < pos and code[k:].startswith("return") and _ARCH_WORDS.search(_expand(cond, fc)):
                    sub = arch_set(cond, fc, must=True)
                    archs = archs - sub
                    branch = branch or (f"line {fc.line(m.start())}: returns early if ({cond.strip()[:80]})"
                                        if sub else "")
                i = semi + 1
    return Path_(frozenset(archs), branch, refuses=refuses & ALL, refuse_line=refuse_line)


def _expand(cond: str, fc: FileCode) -> str:
    """A condition with file-local arch helpers and bool variables spelled out (to tell
    whether it is about the architecture)."""
    out = cond
    for name, expr in fc.bools.items():
        out = re.sub(rf"\b{name}\b", expr, out)
    for f in fc.funcs:
        if re.search(rf"\b{f.name}\s*\(", out):
            body = fc.code[f.start + 1:f.end]
            if _ARCH_WORDS.search(body) and "return" in body and len(body) < 600:
                out += " " + body
    return out


def _depth(code: str, block_open: int, pos: int, fc: FileCode) -> int:
    """Brace depth of pos relative to the block opened at block_open."""
    return sum(1 for o, c in fc.match.items() if block_open < o < pos < c)


def _switch_case(fc: FileCode, brace: int, pos: int) -> FrozenSet[str]:
    code = fc.code
    head, _ = _header(code, brace)
    if not _ARCH_WORDS.search(_expand(head, fc)):
        return ALL
    segment = code[brace + 1:pos]
    cut = max(segment.rfind("break;"), max((m.end() for m in re.finditer(r"\breturn\b[^;]*;", segment)),
                                           default=-1))
    labels = re.findall(r"case\s+(?:op::)?NpuArch::DAV_(\d+)\s*:|(default)\s*:", segment[cut + 1:] if cut >= 0
                        else segment)
    if not labels:
        raise Undecided(f"switch at line {fc.line(brace)}: no case label read before the check")
    out: Set[str] = set()
    for num, default in labels:
        if default:
            listed = {A2 if n == "2201" else R950 if n == "3510" else OLD
                      for n in re.findall(r"case\s+(?:op::)?NpuArch::DAV_(\d+)", code[brace:fc.match[brace]])}
            out |= ALL - (listed - {OLD})
        else:
            out.add(A2 if num == "2201" else R950 if num == "3510" else OLD)
    return frozenset(out)


def path_to(fc: FileCode, pos: int, depth: int = 0) -> Path_:
    """Architectures on which the statement at pos runs, following the callers of its
    function in the file."""
    fn = _func_at(fc, pos)
    if fn is None:
        return Path_(ALL)
    inner = path_in_function(fc, pos, fn)
    if not fn.static or depth > 4:
        return inner
    callers = [m.start() for m in re.finditer(rf"(?<![\w.>:]){fn.name}\s*\(", fc.code)
               if not (fn.start - 400 < m.start() < fn.start)]
    callers = [c for c in callers if not (fn.start <= c <= fn.end)]
    if not callers:
        return Path_(NONE, f"{fn.name}() is not called in the file")
    archs: Set[str] = set()
    selects: Set[str] = set()
    refuses: Set[str] = set(inner.refuses)
    select_line, refuse_line = 0, inner.refuse_line
    branch = inner.branch
    for c in callers:
        p = path_to(fc, c, depth + 1)
        stmt = fc.code[max(fc.code.rfind(";", 0, c), fc.code.rfind("{", 0, c), fc.code.rfind("}", 0, c)) + 1:c]
        var = re.search(r"\bbool\s+(\w+)\s*=\s*$", stmt)
        rest = fc.code[c:(_func_at(fc, c) or Func("", [], 0, len(fc.code), False)).end]
        if var and not re.search(rf"(?:CHECK_RET|OP_CHECK)\(\s*!?\s*{var.group(1)}\b|"
                                 rf"if\s*\(\s*!\s*{var.group(1)}\s*\)\s*\{{?\s*(?:OP_LOGE|return)", rest):
            selects |= p.archs
            select_line = select_line or fc.line(c)
        else:
            archs |= p.archs
            selects |= p.selects
            select_line = select_line or p.select_line
        branch = branch or p.branch
        if p.refuses:
            refuses |= p.refuses
            refuse_line = refuse_line or p.refuse_line
    return Path_(inner.archs & frozenset(archs), branch, inner.archs & frozenset(selects - archs), select_line,
                 frozenset(refuses), refuse_line)


# -- which lists a name stands for ----------------------------------------------------------

_V = re.compile(r"GetDtypeSupportListV([123])\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")


def _ternary(expr: str) -> Optional[Tuple[str, str, str]]:
    """``cond ? a : b`` split at its top-level ``?`` and the ``:`` that matches it."""
    depth, q, nest = 0, -1, 0
    for i, ch in enumerate(expr):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch == "?":
            if q < 0:
                q = i
            else:
                nest += 1
        elif depth == 0 and ch == ":" and q >= 0 and not (expr[i - 1:i] == ":" or expr[i + 1:i + 2] == ":"):
            if nest:
                nest -= 1
            else:
                return expr[:q].strip(), expr[q + 1:i].strip(), expr[i + 1:].strip()
    return None


def _arch_map(fc: FileCode, key: str) -> List[Tuple[str, FrozenSet[str]]]:
    """A per-architecture map's entry ``m[KEY]`` (quantize's ``socSupportMap``:
    ``{NpuArch::DAV_2201, {{INDEX_FOR_X, LIST}, ...}}``, looked up by the current arch): the
    list each architecture's row gives for KEY; an architecture without a row gets none."""
    out: List[Tuple[str, FrozenSet[str]]] = []
    for m in re.finditer(r"\{\s*(?:op::)?NpuArch::DAV_(\d+)\s*,\s*\{", fc.code):
        end = fc.match.get(m.end() - 1)
        if end is None:
            continue
        row = re.search(rf"\{{\s*{re.escape(key)}\s*,\s*(\w+)\s*\}}", fc.code[m.end():end])
        num = m.group(1)
        arch = A2 if num == "2201" else R950 if num == "3510" else OLD
        if row and row.group(1) in fc.lists:
            out.append((row.group(1), frozenset({arch})))
    return out


def lists_at(fc: FileCode, expr: str, pos: int, depth: int = 0) -> List[Tuple[str, FrozenSet[str]]]:
    """(list name, architectures) an expression used at pos can stand for."""
    expr = expr.strip()
    if depth > 5:
        return []
    tern = _ternary(_strip_parens(expr))
    if tern:
        # ``c ? A : B`` (B may be another ternary, the whole in parentheses): A where c can
        # hold, B on the other chips (a condition not about the architecture reads as its
        # first branch, as before)
        cond = arch_set(tern[0], fc)
        return [(n, a & cond) for n, a in lists_at(fc, tern[1], pos, depth + 1) if a & cond] + \
            [(n, a - cond) for n, a in lists_at(fc, tern[2], pos, depth + 1) if a - cond]
    local = re.fullmatch(r"(?:[\w:]+::)?(\w+)\s*\((.*)\)", expr, re.S)
    fn_local = next((f for f in fc.funcs if local and f.name == local.group(1)), None)
    if fn_local is not None:
        # a file-local selection function (it may shadow the library's GetDtypeSupportListV1):
        # its returns, with its parameters standing for the call's arguments
        args = _split_top(local.group(2), ",") if local.group(2).strip() else []
        binding = dict(zip(fn_local.params, args))
        out = []
        for m in re.finditer(r"\breturn\s+([^;]*);", fc.code[fn_local.start:fn_local.end]):
            at = fn_local.start + m.start()
            p = path_in_function(fc, at, fn_local)
            ret = m.group(1).strip()
            ret_expr, ret_pos = (binding[ret], pos) if ret in binding else (ret, at)
            for n, a in lists_at(fc, ret_expr, ret_pos, depth + 1):
                if a & p.archs:
                    out.append((n, a & p.archs))
        return out
    v = _V.search(expr)
    if v:
        first = frozenset({A2}) if v.group(1) == "1" else frozenset({A2, R950})
        return [(n, a) for name, arch in ((v.group(2), first), (v.group(3), ALL - first))
                for n, a in lists_at(fc, name, pos, depth + 1) if a & arch for a in [a & arch]]
    call = re.fullmatch(r"(?:[\w:]+::)?(\w+)\s*\([^()]*\)", expr)
    if call:
        fn = next((f for f in fc.funcs if f.name == call.group(1)), None)
        if fn is None:
            return []
        out = []
        for m in re.finditer(r"\breturn\s+([^;]*);", fc.code[fn.start:fn.end]):
            at = fn.start + m.start()
            p = path_in_function(fc, at, fn)
            for n, a in lists_at(fc, m.group(1), at, depth + 1):
                if a & p.archs:
                    out.append((n, a & p.archs))
        return out
    keyed = re.fullmatch(r"\w+\s*\[\s*(\w+)\s*\]", expr)
    if keyed:
        return _arch_map(fc, keyed.group(1))
    name = re.fullmatch(r"(\w+)", expr)
    if not name:
        return []
    word = name.group(1)
    if word in fc.lists:
        return [(word, ALL)]
    fn = _func_at(fc, pos)
    out: List[Tuple[str, FrozenSet[str]]] = []
    # a variable assigned in the function before pos (its last assignment on each path)
    scope = (fn.start, pos) if fn else (0, pos)
    assigns = list(re.finditer(rf"(?<![\w.]){word}\s*=\s*([^;=][^;]*);", fc.code[scope[0]:scope[1]]))

    def nested(at: int) -> bool:
        return fn is not None and any(fn.start < o < at < c for o, c in fc.match.items())

    default = any(not nested(scope[0] + m.start()) for m in assigns)
    for m in assigns:
        at = scope[0] + m.start()
        p = path_in_function(fc, at, fn) if fn else Path_(ALL)
        if default and p.archs == ALL and nested(at):
            # a default list reassigned inside a block whose condition is not about the
            # architecture (add_rms_norm's mode): which list runs is not the chip's to say
            raise Undecided(f"{word} is reassigned on a condition not about the architecture "
                            f"(line {fc.line(at)})")
        if nested(at) and p.archs != ALL:
            # a reassignment under a condition on the architecture only (cast's
            # ``if (curArch == DAV_2201) { list = ...; } else if (IsRegBase(curArch)) {...}``):
            # on those chips it replaces what the variable held before (its last assignment wins)
            out = [(n, a - p.archs) for n, a in out if a - p.archs]
        for n, a in lists_at(fc, m.group(1), at, depth + 1):
            if a & p.archs:
                out.append((n, a & p.archs))
    if out or fn is None or word not in fn.params:
        return out
    # a parameter: what the callers pass
    idx = fn.params.index(word)
    for m in re.finditer(rf"(?<![\w.>:]){fn.name}\s*\(", fc.code):
        if fn.start - 400 < m.start() <= fn.start:
            continue
        p0 = m.end() - 1
        args = _split_top(fc.code[p0 + 1:_paren_end(fc.code, p0)], ",")
        if idx < len(args):
            cp = path_to(fc, m.start(), 1)
            for n, a in lists_at(fc, args[idx], m.start(), depth + 1):
                if a & cp.archs:
                    out.append((n, a & cp.archs))
    return out


# the tensor checked: a name, a member chain (``x->GetDataType()``) or an element of a tensor
# list (``(*self)[0]``, ``(*x)[i]``: the foreach kernels check the list's first tensor)
_TENSOR = r"(\(\s*\*\s*\w+\s*\)\s*\[\s*\w+\s*\](?:->GetDataType\(\))?|[\w.\->()]+?)"
_CHECK = re.compile(r"OP_CHECK_DTYPE_NOT_SUPPORT\(\s*" + _TENSOR + r"\s*,\s*"
                    r"|(?<![\w:])(?:op::)?CheckType\(\s*" + _TENSOR + r"\s*,\s*")
_LIST_ITEM = re.compile(r"\(\s*\*\s*(\w+)\s*\)\s*\[\s*\w+\s*\]")


def tensor_name(expr: str) -> str:
    """The tensor a check names: ``x->GetDataType()`` -> x; a tensor list's element
    ``(*self)[0]`` / ``(*x)[i]`` -> the list (self, x), whose dtype the check decides."""
    expr = re.sub(r"->GetDataType\(\)|\.GetDataType\(\)", "", expr.strip())
    return _LIST_ITEM.sub(lambda m: m.group(1), expr)


# the library's two-tensor check (hicann common/inc/common/level2_base.h
# ``CheckDtypeValid1In1Out(self, out, inList, outList)``: OP_CHECK_DTYPE_NOT_SUPPORT of each)
_LIB_CHECK = re.compile(r"(?<![\w:])(?:op::)?CheckDtypeValid1In1Out\s*\(")


def _library_checks(fc: FileCode) -> List[Tuple[int, str, str]]:
    """(position, tensor, list expression) of each check a library helper call makes."""
    out = []
    for m in _LIB_CHECK.finditer(fc.code):
        p0 = m.end() - 1
        args = _split_top(fc.code[p0 + 1:_paren_end(fc.code, p0)], ",")
        if len(args) == 4 and fn_defined(fc, "CheckDtypeValid1In1Out") is None:
            out += [(m.start(), tensor_name(args[0]), args[2].strip()),
                    (m.start(), tensor_name(args[1]), args[3].strip())]
    return out


def fn_defined(fc: FileCode, name: str) -> Optional[Func]:
    return next((f for f in fc.funcs if f.name == name), None)


def _conditional(fc: FileCode, pos: int, fn: Optional[Func]) -> bool:
    """Whether pos is inside an ``if`` / ``else`` block (of its function) whose condition is
    not about the architecture (transpose_batch_mat_mul's ``if (x2 is FRACTAL_NZ) {...}``)."""
    if fn is None:
        return False
    for o, c in fc.match.items():
        if not (fn.start < o < pos < c):
            continue
        head, hstart = _header(fc.code, o)
        conds = []
        cond = _if_cond(head)
        if cond is not None:
            conds.append(cond)
        elif re.fullmatch(r"else", head):
            conds = _chain_before(fc.code, hstart, fc)
            if not conds:
                return True
        try:
            if any(not _ARCH_WORDS.search(_expand(cd, fc)) for cd in conds):
                return True
        except Exception:  # noqa: BLE001 - a condition that cannot be expanded is not an arch one
            return True
    return False


def _site(fc: FileCode, pos: int, tensor: str, arg: str,
          extra: List[Tuple[str, int, FrozenSet[str]]]) -> Optional[CheckSite]:
    fn_at = _func_at(fc, pos)
    site = CheckSite(tensor=tensor, line=fc.line(pos), func=fn_at.name if fn_at else "",
                     lists={}, extra=extra, promoted=_promotions(fc.code, tensor, pos, fc),
                     conditional=_conditional(fc, pos, fn_at))
    try:
        where = path_to(fc, pos)
        for name, archs in lists_at(fc, arg, pos):
            a = archs & where.archs
            if a:
                site.lists.setdefault(name, []).append(Path_(a, where.branch))
        site.selects, site.select_line = where.selects, where.select_line
        site.refuses, site.refuse_line = where.refuses, where.refuse_line
    except Undecided as e:
        site.undecided = str(e)
    return site if site.lists or site.undecided or site.selects else None


def check_sites(fc: FileCode) -> List[CheckSite]:
    """Every dtype check of the file, with the lists it checks and where it runs."""
    out = []
    code = fc.code
    for pos, tensor, arg in _library_checks(fc):
        site = _site(fc, pos, tensor, arg, [])
        if site is not None:
            out.append(site)
    for m in _CHECK.finditer(code):
        start = m.end()
        # the list argument: up to the next top-level ',' or ')'
        depth, i = 0, start
        while i < len(code):
            ch = code[i]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    break
                depth -= 1
            elif ch == "," and depth == 0:
                break
            i += 1
        arg = code[start:i].strip()
        extra: List[Tuple[str, int, FrozenSet[str]]] = []
        if m.group(2):
            if not _refuses(code, m.start(), i, fc):
                continue  # a CheckType that chooses (a cast, an allocation), not a check
            if re.search(r"\bif\s*\(\s*!\s*(?:op::)?$", code[code.rfind("\n", 0, m.start()):m.start()]):
                extra = _exemptions(code, m.start(), fc)
        site = _site(fc, m.start(), tensor_name(m.group(1) or m.group(2)), arg, extra)
        if site is not None:
            out.append(site)
    return sorted(out, key=lambda st: st.line)


def reachable(fc: FileCode, entry: str) -> Optional[Set[str]]:
    """The file's functions an entry point (``aclnnXxxGetWorkspaceSize``) calls, directly or
    through others; None when the entry is not defined in the file."""
    names = {f.name for f in fc.funcs}
    if entry not in names:
        return None
    calls: Dict[str, Set[str]] = {}
    for f in fc.funcs:
        body = fc.code[f.start:f.end]
        calls.setdefault(f.name, set()).update(n for n in re.findall(r"(\w+)\s*\(", body) if n in names)
    seen, todo = {entry}, [entry]
    while todo:
        for n in calls.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen
