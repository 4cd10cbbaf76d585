"""Test files generated from the scenarios (``torchparity gentest``).

One file per API. Each registered scenario becomes one test that runs the scenario
function on the CPU and on the device under test and compares the two, as ``check`` does;
device, dtypes and shapes are parameters of the file, never hard-coded in a test.

Two styles:

- ``device-generic``: upstream PyTorch's ``instantiate_device_type_tests`` with ``@dtypes``.
- ``npu``: Ascend's test/npu conventions (``torch_npu.testing.testcase.TestCase``,
  ``run_tests``, ``SupportedDevices``), falling back to upstream's ``TestCase`` where
  torch_npu is absent so the same file also runs on the CPU or an emulated device.

Safety: the only code copied into a file is the scenario functions' own source (code by
construction, parsed with ``ast`` before use). Every text — descriptions, API names,
error messages of known limits — is written as a ``repr()`` literal, and every name that
becomes a Python identifier is validated or rebuilt from safe characters, so no name,
docstring or error message can inject code.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import keyword
import os
import re
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import jinja2

from ..errors import InputError
from ..results.models import Report
from ..scenarios.registry import Scenario
from .artifacts import GENERATED_MARKER, is_generated  # noqa: F401  (gentest's names too)
from .templating import make_environment

HERE = Path(__file__).resolve().parent
# npu: files for Ascend's test tree, without torchparity (deliver.gentest_npu); npu-judged:
# Ascend's conventions, every case judged by torchparity's runner (needs torchparity)
STYLES = ("device-generic", "npu", "npu-judged")
DEFAULT_DEVICE = {"device-generic": "cpu", "npu": "npu", "npu-judged": "npu"}
# the templates of a style (npu-judged is what the npu style was before issue 46)
TEMPLATE_STYLE = {"device-generic": "device_generic", "npu": "npu", "npu-judged": "npu"}
# SupportedDevices names (torch_npu.npu.get_device_name prefixes): A2, A3, A5 (950)
DEFAULT_SUPPORTED_DEVICES = ("Ascend910B", "Ascend910_93", "Ascend950")
# statuses of a report that mean "the device refuses this case" (a recorded limit)
LIMIT_STATUS = "unsupported"

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_SAFE_CHIP = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass
class GeneratedFile:
    api: str
    style: str
    name: str  # file name, e.g. test_autograd_gradcheck.py
    text: str
    tests: int  # test methods (one per scenario)
    outcome: str = ""  # once written: WRITTEN, REPLACED, KEPT or OVERWRITTEN


MARKER_LINE = (f"{GENERATED_MARKER}; the next gentest or check --out rewrites it "
               "(delete this line to keep your edits)\n")
WRITTEN, REPLACED, KEPT, OVERWRITTEN = "written", "replaced", "kept (not ours)", "overwritten (--force)"


def marked(text: str) -> str:
    return text if text.startswith(GENERATED_MARKER) else MARKER_LINE + text


def write_generated(path: Path, text: str, force: bool = False) -> str:
    """Write a generated file unless a file of the user's is there: returns what happened
    (WRITTEN, REPLACED an earlier generated file, KEPT the user's, OVERWRITTEN with force)."""
    from ..results.store import write_text_atomic

    path = Path(path)
    if not os.path.lexists(path):
        outcome = WRITTEN
    elif is_generated(path):
        outcome = REPLACED
    elif force and path.is_file():
        outcome = OVERWRITTEN
    else:
        return KEPT
    write_text_atomic(path, marked(text))
    return outcome


# ----------------------------------------------------------------------------- names


def check_api_name(name: str) -> str:
    """A dotted name of plain identifiers, or InputError: it is written into the file."""
    if not _DOTTED.match(name or "") or any(keyword.iskeyword(p) for p in name.split(".")):
        raise InputError(f"{name!r} is not a dotted Python name; refusing to write it into a test file")
    return name


def safe_identifier(text: str, prefix: str = "x") -> str:
    """A valid, non-keyword Python identifier derived from ``text`` (ASCII letters, digits, _)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", text or "")
    ident = re.sub(r"_+", "_", ident).strip("_")
    if ident != (text or "") and text:
        # keep distinct texts distinct after the clean-up
        ident = f"{ident}_{hashlib.sha1(text.encode('utf-8')).hexdigest()[:6]}".strip("_")
    if not ident or not ident[0].isalpha():
        ident = f"{prefix}_{ident}" if ident else prefix
    if keyword.iskeyword(ident):
        ident += "_"
    return ident


def file_name(api: str) -> str:
    parts = check_api_name(api).split(".")
    if parts[0] == "torch" and len(parts) > 1:
        parts = parts[1:]
    return "test_" + "_".join(parts) + ".py"


def class_name(api: str) -> str:
    last = check_api_name(api).split(".")[-1]
    return "Test" + "".join(p[:1].upper() + p[1:] for p in last.split("_") if p)


# ----------------------------------------------------------------------------- sources


def function_source(sc: Scenario) -> Tuple[str, str]:
    """(function name, its source without the registering decorator), checked with ast."""
    try:
        src = textwrap.dedent(inspect.getsource(sc.fn))
    except (OSError, TypeError):
        raise InputError(f"scenario {sc.api}:{sc.id}: its source is not available") from None
    lines = src.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("def ")), None)
    if start is None:
        raise InputError(f"scenario {sc.api}:{sc.id}: not a plain `def` function")
    body = "\n".join(lines[start:]).rstrip() + "\n"
    try:
        tree = ast.parse(body)
    except SyntaxError as exc:
        raise InputError(f"scenario {sc.api}:{sc.id}: source does not parse: {exc.msg}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise InputError(f"scenario {sc.api}:{sc.id}: expected exactly one function definition")
    fn = tree.body[0]
    params = [a.arg for a in fn.args.args]
    if params[:2] != ["device", "dtype"]:
        raise InputError(f"scenario {sc.api}:{sc.id}: function must take (device, dtype), "
                         f"not ({', '.join(params)})")
    return fn.name, body


def _rename(body: str, old: str, new: str) -> str:
    return body.replace(f"def {old}(", f"def {new}(", 1)


# ----------------------------------------------------------------------------- limits


def limits_from_report(report: Optional[Report], api: str, qualified: str) -> Tuple[Optional[str], Dict[Tuple[str, str], str]]:
    """(device type, {(scenario id, dtype): reason}) for the cases the report found refused."""
    if report is None:
        return None, {}
    dev = report.device
    where = f"{dev.spec or dev.type}{' (emulated)' if dev.emulated else ''}, torch {report.environment.torch}"
    out: Dict[Tuple[str, str], str] = {}
    for a in report.apis:
        if a.name not in (api, qualified) and a.qualified_name != qualified:
            continue
        for s in a.scenarios:
            if s.status == LIMIT_STATUS:
                out[(s.id, s.dtype or "")] = f"{s.cause}: {s.detail} [recorded by torchparity check on {where}]"
    return dev.type, out


# ----------------------------------------------------------------------------- render


def py_literal(value: Any) -> str:
    """A Python literal for a plain value (str, int, tuple, list, dict, None, bool)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(py_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a literal: {type(value).__name__}")


def identifier(value: str) -> str:
    """``value`` itself, refused unless it is a Python identifier and no keyword."""
    if not isinstance(value, str) or not value.isidentifier() or keyword.iskeyword(value):
        raise ValueError(f"not an identifier: {value!r}")
    return value


@lru_cache(maxsize=None)
def source_environment() -> jinja2.Environment:
    """The templates' environment for generated Python source."""
    # Python source: every value goes through `py` or `ident`
    return make_environment(autoescape=False, filters={"py": py_literal, "ident": identifier})


def _check_inputs(api: str, qualified: str, style: str, supported_devices: Sequence[str]) -> None:
    """What every generated file takes from its caller, checked before anything is written:
    a known style, API names that are identifiers, SupportedDevices names that are safe."""
    if style not in STYLES:
        raise InputError(f"unknown test style {style!r}; use one of: {', '.join(STYLES)}")
    check_api_name(api)
    check_api_name(qualified)
    for chip in supported_devices:
        if not _SAFE_CHIP.match(chip):
            raise InputError(f"bad SupportedDevices name {chip!r}")


def generate(api: str, qualified: str, scenarios: Sequence[Scenario], style: str, *,
             tool_version: str, report: Optional[Report] = None,
             supported_devices: Sequence[str] = DEFAULT_SUPPORTED_DEVICES) -> GeneratedFile:
    """The test file of one API in ``style`` (see module docstring)."""
    _check_inputs(api, qualified, style, supported_devices)
    if not scenarios:
        raise InputError(f"{api}: no scenarios are registered, so there is nothing to generate")
    limit_type, limits = limits_from_report(report, api, qualified)

    functions: List[str] = []
    cases: List[Dict[str, Any]] = []
    used_fn: Dict[str, int] = {}
    used_test: Dict[str, int] = {}
    for sc in scenarios:
        fn_name, body = function_source(sc)
        if fn_name in used_fn:
            used_fn[fn_name] += 1
            new = f"{fn_name}_{used_fn[fn_name]}"
            body, fn_name = _rename(body, fn_name, new), new
        else:
            used_fn[fn_name] = 1
        functions.append(body)
        test = "test_" + safe_identifier(sc.id, "case")
        if test in used_test:
            used_test[test] += 1
            test = f"{test}_{used_test[test]}"
        else:
            used_test[test] = 1
        case_limits = {d: limits[(sc.id, d)] for d in sc.dtypes if (sc.id, d) in limits}
        cases.append({
            "id": sc.id,
            "test": test,
            "fn": fn_name,
            "dtypes": list(sc.dtypes),
            "shapes": [tuple(s) for s in sc.shapes] or [None],
            "compare": sc.compare,
            "raises": (sc.raises.type, sc.raises.match) if sc.raises else None,
            "doc": sc.description.en,
            "expected": sc.expected.en,
            "limits": case_limits,
        })
    name = file_name(api)
    template = source_environment().get_template(f"gentest_{TEMPLATE_STYLE[style]}.py.j2")
    text = template.render(
        api=api, qualified=qualified, cls=class_name(api), cases=cases, functions=functions,
        style=style, file=name, tool_version=tool_version,
        default_device=DEFAULT_DEVICE[style], limit_type=limit_type,
        supported_devices=list(supported_devices),
    )
    ast.parse(text)  # a generated file that does not parse is our bug: fail here, not later
    return GeneratedFile(api=api, style=style, name=name, text=marked(text), tests=len(cases))


# ----------------------------------------------------------------------------- generated sources


@dataclass
class ReplayCase:
    """One scenario of a generated source as data for its test file: its worker case
    (``scenarios.sources.case_for``, dtype left out), the (dtype, OpInfo sample) pairs to
    test, and the snippet that shows it by hand. A code-block case also gives its code
    (``code``: the body's standalone source, defining ``body``), which the file holds as
    code and runs with ``kwargs`` (``quiet``: its warnings not shown)."""

    id: str
    source: str
    case: Dict[str, Any]
    runs: List[Tuple[str, Optional[int]]]
    doc: str
    snippet: str = ""
    code: str = ""
    body: str = ""
    kwargs: Dict[str, Any] = field(default_factory=dict)
    quiet: bool = False


# names the replay templates bind at module level: a case's code may not rebind them
_TEMPLATE_NAMES = frozenset({
    "importlib", "standalone", "TORCHPARITY_DEVICE", "DEVICE_TYPE", "USES_TORCH_NPU",
    "SUPPORTED_DEVICES", "instantiate_device_type_tests", "instantiate_parametrized_tests",
    "parametrize", "TestCase", "run_tests", "SupportedDevices", "LIMITS_DEVICE", "CASES",
    "_name", "_device_type", "_common_utils"})


class CaseCode:
    """The code-block cases' code one file holds: their top-level statements in order, each
    once. A case whose code would rebind a name to something else (two bodies or helpers
    of one name from different modules, a name of the template) stays data only."""

    def __init__(self, reserved: Sequence[str] = ()) -> None:
        self._imports: List[str] = []
        self._stmts: List[str] = []
        self._bound: Dict[str, str] = {}
        self._reserved = _TEMPLATE_NAMES | set(reserved)

    def add(self, code: str, kwargs: Dict[str, Any]) -> bool:
        try:
            if ast.literal_eval(repr(kwargs)) != kwargs:
                return False
            tree = ast.parse(code)
        except (ValueError, SyntaxError):
            return False
        stmts = [(ast.get_source_segment(code, n) or "", n) for n in tree.body]
        binds: Dict[str, str] = {}
        for text, node in stmts:
            for name, what in _bindings(node, text):
                if name in self._reserved or self._bound.get(name, what) != what \
                        or binds.get(name, what) != what:
                    return False
                binds[name] = what
        self._bound.update(binds)
        for text, node in stmts:
            into = self._imports if isinstance(node, (ast.Import, ast.ImportFrom)) else self._stmts
            if text not in into:
                into.append(text)
        return True

    def text(self) -> str:
        if not self._imports and not self._stmts:
            return ""
        return "\n".join(self._imports) + "\n\n\n" + "\n\n\n".join(self._stmts)


def _bindings(node: ast.stmt, text: str) -> List[Tuple[str, str]]:
    """(name, what it is bound to) for each module-level name one top-level statement
    binds: an import by what it imports (``import torch`` and ``import torch.fx`` both bind
    ``torch`` to the module torch), anything else by its text."""
    if isinstance(node, ast.Import):
        return [(a.asname, "import " + a.name) if a.asname else
                (a.name.split(".")[0], "import " + a.name.split(".")[0]) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [(a.asname or a.name, f"from {'.' * node.level}{node.module or ''} import {a.name}")
                for a in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(node.name, text)]
    return [(t.id, text) for t in ast.walk(node) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)]


def _comment_lines(text: str, limit: int = 60) -> List[str]:
    """Lines safe inside a ``#`` comment: no line breaks, printable characters only."""
    lines = []
    for ln in (text or "").splitlines()[:limit]:
        lines.append((" " + "".join(ch if ch.isprintable() else "?" for ch in ln)).rstrip())
    return lines


def limits_by_source(report: Optional[Report], api: str, qualified: str) -> Tuple[Optional[str], Dict[Tuple[str, str, str], Dict[str, str]]]:
    """(device spec, {(source, scenario id, dtype): {status, cause}}) of the cases the
    report found refused (``unsupported``, ``partial``)."""
    if report is None:
        return None, {}
    out: Dict[Tuple[str, str, str], Dict[str, str]] = {}
    for a in report.apis:
        if a.name not in (api, qualified) and a.qualified_name != qualified:
            continue
        for s in a.scenarios:
            if s.status in ("unsupported", "partial"):
                out[(s.source or "hand", s.id, s.dtype or "")] = {
                    "status": s.status, "cause": s.cause or ""}
    return report.device.spec or report.device.type, out


def generate_replay(api: str, qualified: str, cases: Sequence[ReplayCase], style: str, *,
                    tool_version: str, report: Optional[Report] = None,
                    supported_devices: Sequence[str] = DEFAULT_SUPPORTED_DEVICES,
                    name: Optional[str] = None) -> GeneratedFile:
    """The test file of one API's generated-source scenarios (see run.standalone)."""
    _check_inputs(api, qualified, style, supported_devices)
    if not cases:
        raise InputError(f"{api}: no scenarios, so there is nothing to generate")
    limits_device, limits = limits_by_source(report, api, qualified)
    rendered: List[Dict[str, Any]] = []
    used_test: Dict[str, int] = {}
    code = CaseCode(reserved=[class_name(api)])
    for c in cases:
        test = "test_" + safe_identifier(f"{c.source}_{c.id}", "case")
        if test in used_test:
            used_test[test] += 1
            test = f"{test}_{used_test[test]}"
        else:
            used_test[test] = 1
        dtypes = dict.fromkeys(d for d, _ in c.runs)
        rendered.append({
            "id": f"{c.source}:{c.id}", "source": c.source, "case": c.case,
            "runs": [tuple(r) for r in c.runs], "test": test, "doc": c.doc,
            "limits": {d: limits[(c.source, c.id, d)] for d in dtypes if (c.source, c.id, d) in limits},
            "snippet": _comment_lines(c.snippet),
            "body": c.body if c.code and code.add(c.code, c.kwargs) else "",
            "kwargs": c.kwargs, "quiet": c.quiet,
        })
    if len({c["id"] for c in rendered}) != len(rendered):
        raise InputError(f"{api}: two scenarios share one source and id")
    name = name or file_name(api)
    template = source_environment().get_template(f"gentest_replay_{TEMPLATE_STYLE[style]}.py.j2")
    text = template.render(
        api=api, qualified=qualified, cls=class_name(api), cases=rendered, style=style, file=name,
        tool_version=tool_version, limits_device=limits_device if limits else None,
        supported_devices=list(supported_devices),
        sources=sorted({c.source for c in cases}), code=code.text(),
    )
    ast.parse(text)  # a generated file that does not parse is our bug: fail here, not later
    return GeneratedFile(api=api, style=style, name=name, text=marked(text),
                         tests=sum(len(c.runs) for c in cases))


def expand_styles(styles: Sequence[str]) -> List[str]:
    """``all`` means every style, ``none`` none; unknown names are refused before anything runs."""
    out: List[str] = []
    if "none" in styles:
        return []
    for style in styles:
        for name in (STYLES if style == "all" else [style]):
            if name not in STYLES:
                raise InputError(f"--gentest {name}: unknown style; use one of: {', '.join(STYLES)}, all")
            if name not in out:
                out.append(name)
    return out
