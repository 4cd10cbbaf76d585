"""What Ascend/op-plugin does before it calls an aclnn API: its own dtype checks and the dtype
it gives the output tensor.

Read from the C++ of ``op_plugin/ops/opapi/*.cpp`` and the ``gen_opapi`` entries of
``op_plugin_functions.yaml`` (data with their file and line; no code is copied):

- a ``TORCH_CHECK(cond, "message", ...)`` at the top level of the op's function (not inside
  an ``if``) whose condition is only about the main tensor's dtype: ``t.scalar_type() != X``
  joined by ``&&`` refuses those dtypes; ``t.scalar_type() == X`` joined by ``||`` takes only
  those. The message is kept as op-plugin writes it (string pieces joined, other arguments
  as ``{expr}``).
- the output's dtype: ``gen_opapi: out: dtype:`` in the yaml, or the ``apply_tensor...``
  allocation of the tensor passed to the aclnn call: the input's (``self``,
  ``self.options()``, ``result_type(self, other)``), a fixed one (``at::kBool``), or
  ``isIntegralType(self.scalar_type(), true) ? at::kFloat : self.scalar_type()``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

# c10 ScalarType spellings -> torch dtype names
SCALAR_TYPES = {"Double": "float64", "Float": "float32", "Half": "float16", "BFloat16": "bfloat16",
                "Int": "int32", "Long": "int64", "Short": "int16", "Char": "int8", "Byte": "uint8",
                "Bool": "bool", "ComplexFloat": "complex64", "ComplexDouble": "complex128"}
_INTEGRAL = ("bool", "uint8", "int8", "int16", "int32", "int64")
_ST = r"(?:at::|c10::)?(?:ScalarType::)?k?(" + "|".join(sorted(SCALAR_TYPES, key=len, reverse=True)) + r")\b"
_CMP = re.compile(r"^\(?\s*(\w+)\s*\.\s*(?:scalar_type|dtype)\(\)\s*(==|!=)\s*" + _ST + r"\s*\)?$")


@dataclass
class PluginCheck:
    """A TORCH_CHECK of op-plugin on the main tensor's dtype, before the aclnn call."""

    tensor: str
    refuses: List[str]  # the dtypes it refuses (of those torch names)
    message: str  # the refusal text as op-plugin writes it
    line: int
    condition: str


@dataclass
class OutDtype:
    """The dtype op-plugin gives the output tensor, as a rule on the input's dtype."""

    expr: str  # as op-plugin writes it
    line: int
    fixed: Optional[str] = None  # one dtype whatever the input
    integral_to: Optional[str] = None  # integral (and bool) inputs get this one, others their own

    def of(self, dtype: str) -> str:
        if self.fixed:
            return self.fixed
        if self.integral_to and dtype in _INTEGRAL:
            return self.integral_to
        return dtype


def _line(code: str, pos: int) -> int:
    return code.count("\n", 0, pos) + 1


def _paren_end(code: str, start: int) -> int:
    depth = 0
    in_str = False
    i = start
    while i < len(code):
        ch = code[i]
        if in_str:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(code) - 1


def _split_args(text: str) -> List[str]:
    out, depth, cur, in_str, i = [], 0, [], False, 0
    while i < len(text):
        ch = text[i]
        if in_str:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _message(args: List[str]) -> str:
    """TORCH_CHECK's message arguments as one text: string pieces as written, other arguments
    as ``{expr}``; op-plugin's error-code suffix (``OPS_ERROR(...)``) only where it is all."""
    if all(re.match(r"^(?:OPS|PTA)_ERROR\(", a) for a in args):
        return "".join("{" + " ".join(a.split()) + "}" for a in args)
    parts = []
    for a in args:
        if re.match(r"^OPS_ERROR\(|^PTA_ERROR\(", a):
            continue
        lits = re.findall(r'"((?:[^"\\]|\\.)*)"', a)
        if lits and re.fullmatch(r'\s*(?:"(?:[^"\\]|\\.)*"\s*)+', a):
            parts.append("".join(lits))
        else:
            parts.append("{" + " ".join(a.split()) + "}")
    return "".join(parts)


def _split_top(expr: str, op: str) -> List[str]:
    parts, depth, cur, i = [], 0, [], 0
    while i < len(expr):
        ch = expr[i]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and expr.startswith(op, i):
            parts.append("".join(cur).strip())
            cur = []
            i += len(op)
            continue
        cur.append(ch)
        i += 1
    parts.append("".join(cur).strip())
    return parts


def _strip(expr: str) -> str:
    expr = " ".join(expr.split())
    while expr.startswith("(") and _paren_end(expr, 0) == len(expr) - 1:
        expr = expr[1:-1].strip()
    return expr


_FLOATS = ("float16", "bfloat16", "float32", "float64")
_COMPLEX = ("complex32", "complex64", "complex128")
# c10's dtype predicates on one tensor: isFloatingType(t.scalar_type()), t.is_floating_point(), ...
_PRED = re.compile(r"^(!?)\s*(?:(?:at::|c10::)?(isFloatingType|isComplexType|isIntegralType)\(\s*(\w+)\.scalar_type\(\)"
                   r"\s*(?:,\s*(?:/\*\w+=\*/)?\s*(true|false)\s*)?\)|(\w+)\.(is_floating_point|is_complex)\(\))$")


def _term(term: str, all_dtypes) -> Optional[Tuple[str, set]]:
    """(tensor, dtypes for which the term holds) of one comparison or predicate."""
    term = _strip(term)
    cmp = _CMP.match(term)
    if cmp:
        named = {SCALAR_TYPES[cmp.group(3)]}
        return cmp.group(1), named if cmp.group(2) == "==" else set(all_dtypes) - named
    pred = _PRED.match(term)
    if pred:
        kind = pred.group(2) or pred.group(6)
        tensor = pred.group(3) or pred.group(5)
        if kind in ("isFloatingType", "is_floating_point"):
            held = set(_FLOATS)
        elif kind in ("isComplexType", "is_complex"):
            held = set(_COMPLEX)
        else:
            held = set(_INTEGRAL) if pred.group(4) == "true" else set(_INTEGRAL) - {"bool"}
        return tensor, (set(all_dtypes) - held) if pred.group(1) else held & set(all_dtypes)
    return None


def dtype_condition(cond: str, all_dtypes) -> Optional[Tuple[str, List[str]]]:
    """(tensor, dtypes refused) of a TORCH_CHECK condition only about one tensor's dtype: its
    comparisons (``t.scalar_type() != X``) and c10 predicates (``isFloatingType``,
    ``!isIntegralType(t.scalar_type(), true)``, ``t.is_complex()``) joined by one of ``&&``/``||``."""
    cond = _strip(cond)
    for joint in ("&&", "||"):
        parts = _split_top(cond, joint)
        if len(parts) == 1 and joint == "&&":
            continue
        terms = [_term(t, all_dtypes) for t in parts]
        if not all(terms) or len({t[0] for t in terms}) != 1:
            continue
        held = set(all_dtypes) if joint == "&&" else set()
        for _, part in terms:
            held = held & part if joint == "&&" else held | part
        return terms[0][0], [d for d in all_dtypes if d not in held]
    return None


@dataclass
class Func:
    name: str
    params: List[Tuple[str, str]]  # (type, name)
    start: int
    end: int


_FUNC = re.compile(r"^(?!namespace|using|return|if|else|#)[A-Za-z_][\w:<>,\s&*]*?[\s&*](\w+)\s*\(", re.M)


def functions(code: str) -> List[Func]:
    out = []
    for m in _FUNC.finditer(code):
        p0 = m.end() - 1
        p1 = _paren_end(code, p0)
        k = p1 + 1
        while k < len(code) and code[k] in " \t\r\nconst":
            if code.startswith("const", k):
                k += 5
                continue
            k += 1
        if k >= len(code) or code[k] != "{":
            continue
        depth, j = 0, k
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        params = []
        for p in _split_args(code[p0 + 1:p1]):
            words = re.findall(r"[\w:<>]+", p.split("=")[0])
            if words:
                params.append((" ".join(words[:-1]), words[-1]))
        out.append(Func(m.group(1), params, k, j))
    return out


def _top_level(code: str, fn: Func, pos: int) -> bool:
    """Is pos directly in fn's body (no enclosing if/for/while block)?"""
    depth = 0
    for ch in code[fn.start + 1:pos]:
        depth += ch == "{"
        depth -= ch == "}"
    return depth == 0


def main_tensors(code: str, fn: Func) -> List[str]:
    """The op's main tensor as the function names it: its first tensor parameter, and a local
    copied from it (``at::Tensor self = self_ex;``)."""
    first = next((n for t, n in fn.params if "Tensor" in t and "TensorList" not in t), None)
    if first is None:
        return []
    names = [first]
    body = code[fn.start:fn.end]
    for m in re.finditer(r"\bat::Tensor\s+(\w+)\s*=\s*" + re.escape(first) + r"\s*;", body):
        names.append(m.group(1))
    return names


def checks_in(code: str, fn: Func, all_dtypes, before: Optional[int] = None) -> List[PluginCheck]:
    """The function's top-level TORCH_CHECKs on its main tensor's dtype (before ``before``)."""
    mains = main_tensors(code, fn)
    out = []
    for m in re.finditer(r"\bTORCH_CHECK\s*\(", code[fn.start:before or fn.end]):
        at = fn.start + m.start()
        if not _top_level(code, fn, at):
            continue
        p0 = fn.start + m.end() - 1
        args = _split_args(code[p0 + 1:_paren_end(code, p0)])
        if not args:
            continue
        read = dtype_condition(args[0], all_dtypes)
        # only the op's input (self / input / x, or a local copied from it): a check on another
        # tensor argument (repeat_interleave's ``repeats``) says nothing about the op's dtype
        if read is None or read[0] not in mains or not read[1] or not (
                set(mains) & {"self", "input", "x"}):
            continue
        out.append(PluginCheck(read[0], read[1], _message(args[1:]), _line(code, at), _strip(args[0])))
    return out


def out_dtype(expr: str, mains: List[str], line: int) -> Optional[OutDtype]:
    """The output's dtype rule from op-plugin's expression for it, or None when not read."""
    e = _strip(str(expr))
    main = "|".join(re.escape(n) for n in mains) or r"self|input"
    fixed = re.fullmatch(_ST, e)
    if fixed:
        return OutDtype(e, line, fixed=SCALAR_TYPES[fixed.group(1)])
    same = rf"(?:{main})(?:\.scalar_type\(\)|\.dtype\(\)|\.options\(\))?|(?:at::native::|at::)?result_type\([^()]*\)" \
           rf"|c10::typeMetaToScalarType\((?:{main})\.dtype\(\)\)"
    if re.fullmatch(same, e):
        return OutDtype(e, line)
    tern = re.fullmatch(r"\(?\s*(?:c10::|at::)?isIntegralType\(\s*(.+?)\s*,\s*true\s*\)\s*\)?\s*\?\s*" + _ST
                        + r"\s*:\s*(.+)", e)
    if tern and re.fullmatch(same, _strip(tern.group(3))) and re.fullmatch(
            rf"(?:{main})\.scalar_type\(\)|(?:at::native::|at::)?result_type\([^()]*\)", _strip(tern.group(1))):
        return OutDtype(e, line, integral_to=SCALAR_TYPES[tern.group(2)])
    return None


_ALLOC = re.compile(r"(\w+)\s*=\s*(?:npu_preparation|at_npu::native::OpPreparation|OpPreparation)::"
                    r"apply_tensor\w*\s*\(")


def _local_dtype(code: str, fn: Func, word: str, mains: List[str], line: int) -> Optional[OutDtype]:
    """A dtype kept in a local before the allocation: ``auto output_dtype = self.dtype();`` then
    ``if (isIntegralType(self.scalar_type(), true)) { output_dtype = at::kFloat; }`` (the
    integral inputs get float32), or ``at::ScalarType t = at::native::result_type(self, other);``.
    Any other reassignment: not read."""
    body = code[fn.start:fn.end]
    decl = list(re.finditer(r"(?:auto|at::ScalarType|c10::ScalarType|caffe2::TypeMeta)\s+" + re.escape(word)
                            + r"\s*=\s*([^;]+);", body))
    if len(decl) != 1:
        return None
    base = out_dtype(decl[0].group(1), mains, line)
    if base is None or base.fixed or base.integral_to:
        return base if base is not None and not re.search(r"(?<![\w.])" + re.escape(word) + r"\s*=[^=]",
                                                           body[decl[0].end():]) else None
    later = body[decl[0].end():]
    sets = list(re.finditer(r"(?<![\w.])" + re.escape(word) + r"\s*=\s*([^;=][^;]*);", later))
    if not sets:
        return base
    main = "|".join(re.escape(n) for n in mains)
    guard = re.search(r"if\s*\(\s*(?:c10::|at::)?isIntegralType\(\s*(?:" + main + r")\.scalar_type\(\)\s*,\s*true\s*\)"
                      r"\s*\)\s*\{?\s*" + re.escape(word) + r"\s*=\s*" + _ST + r"\s*;", later)
    if len(sets) == 1 and guard:
        return OutDtype(f"{decl[0].group(1).strip()}, {' '.join(guard.group(0).split())}", line,
                        integral_to=SCALAR_TYPES[guard.group(1)])
    return None


def allocated_out(code: str, fn: Func, exec_args: List[str]) -> Optional[OutDtype]:
    """The dtype of the tensor the function allocates and passes to the aclnn call (or, where
    the call is in a helper, the one tensor it allocates and returns)."""
    mains = main_tensors(code, fn)
    found: Dict[str, Optional[OutDtype]] = {}
    allocs = list(_ALLOC.finditer(code, fn.start, fn.end))
    returned = set(re.findall(r"\breturn\s+(\w+)\s*;", code[fn.start:fn.end]))
    for m in allocs:
        var = m.group(1)
        if var not in exec_args and not (len(allocs) == 1 and var in returned):
            continue
        p0 = m.end() - 1
        args = _split_args(code[p0 + 1:_paren_end(code, p0)])
        line = _line(code, m.start())
        text = " ".join(args)
        dt = re.search(r"\.dtype\(\s*([^()]+?)\s*\)", text)
        expr = dt.group(1) if dt else (args[-1] if args else "")
        rule = out_dtype(expr, mains, line)
        if rule is None and re.fullmatch(r"\w+", expr.strip()):
            rule = _local_dtype(code, fn, expr.strip(), mains, line)
        found[var] = rule
    rules = list(found.values())
    if len(rules) == 1:
        return rules[0]
    return None


@dataclass
class PluginOp:
    """op-plugin's view of one aten op: its checks and its output's dtype."""

    checks: List[PluginCheck] = field(default_factory=list)
    path: str = ""
    out: Optional[OutDtype] = None
    out_path: str = ""


def exec_args(code: str, fn: Func, api: str) -> List[str]:
    out: List[str] = []
    for m in re.finditer(r"EXEC_NPU\w*CMD\w*\s*\(\s*" + re.escape(api) + r"\b", code[fn.start:fn.end]):
        p0 = fn.start + m.end() - len(api) - 1
        p0 = code.rindex("(", fn.start, p0 + 1)
        out += [a.strip() for a in _split_args(code[p0 + 1:_paren_end(code, p0)])[1:]]
    return out
