"""The ``>>>`` examples of an API's docstring, as a scenario source: the long tail.

Applies only to an API that no earlier source (hand suites, the test databases: OpInfo,
ModuleInfo, OptimizerInfo, distributions, members) gives a scenario: those run the API
far more thoroughly, and running its docstring too would only cost time.

Each example block (``>>>`` lines not interrupted by prose; :func:`blocks`) is one
scenario, ``example1``, ``example2``, ...: it runs on the CPU and with the device under
test as the default device, seeded, and the values of its expression statements and the
tensors it binds are compared by the judge (``execute`` says how). A block that reads a
name bound by an earlier block of the same docstring runs the earlier blocks first, as
doctest would.

A block that cannot run is still a scenario, one that raises
:class:`~torchparity.scenarios.registry.NotRunnable` with the reason, so the report shows
it as ``skip`` (``not_comparable``, "not runnable: ...") and never as a pass: it needs
names it does not define, files, the network, a process group or torch.compile (checked
in its text), it fails on the CPU itself, or two runs of it on the CPU give different
values (checked when it runs: the CPU reference run runs the block twice, reseeded). It runs once, labelled
float32 (the default dtype it runs under; the example picks its own dtypes).
"""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import inspect
import re
from typing import Any, Dict, List, Optional, Tuple

import torch

from ....results.models import Text
from ...registry import NotRunnable, Scenario
from ..base import ModuleSource, resolve_quiet
from . import execute as X

NAME = "docstring"
ORDER = 90
TIMEOUT_S = 60.0

# what a block's text says it needs (checked before it runs); the first match names it
_NEEDS: Tuple[Tuple[str, re.Pattern], ...] = (
    ("the network", re.compile(r"https?://|\burlopen\b|\brequests\.|\bdownload|torch\.hub\b|tcp://|\bsocket\b")),
    ("files", re.compile(r"\bopen\(|\btorch\.(?:load|save)\(\s*(?:['\"f]|PATH|path)|['\"][^'\"\n]*\."
                         r"(?:pt|pth|pkl|csv|txt|json|onnx|png|jpe?g|bin|safetensors|tar|zip)['\"]"
                         r"|\bos\.(?:path|remove|mkdir|makedirs|listdir)\b|\bPath\(|\btempfile\b|\bshutil\b")),
    ("a process group or RPC (torch.distributed)", re.compile(
        r"\b(?:init_process_group|init_device_mesh|init_rpc|new_group|rpc_sync|rpc_async|DeviceMesh)\b"
        r"|\bdist\.(?!is_available)\w+")),
    ("other processes", re.compile(r"\bnum_workers\s*=\s*[1-9]|\bmultiprocessing\b|\bmp\.\w+|\bspawn\(|\bsubprocess\b|\bProcess\(")),
    ("a build (setuptools, cpp_extension)", re.compile(
        r"\bsetup\(|\bload_inline\(|cpp_extension\.load\(|\bBuildExtension\b")),
    ("torch.compile (minutes of compiling on the CPU; not run by this source)",
     re.compile(r"\btorch\.compile\b|@compile\b|\btorch\._dynamo\b|\bexport\(")),
    ("waiting (sleep, input, an endless loop)", re.compile(r"\btime\.sleep\b|\binput\(|\bwhile True\b")),
    # renaming / registering the PrivateUse1 backend lasts for the process: the worker's
    # later cases would run against a device that is not there (torch.manual_seed asks
    # every registered device module)
    ("a process of its own (it renames or registers a device backend for good)", re.compile(
        r"\brename_privateuse1_backend\(|\bgenerate_methods_for_privateuse1_backend\(|"
        r"\b_register_device_module\(|\b_setup_privateuseone_for_python_backend\(")),
)


def blocks(doc: str) -> List[List[doctest.Example]]:
    """The example blocks of a docstring: runs of examples that no prose interrupts, with
    a statement spelled over several ``>>>`` lines (a ``def`` whose body lines also start
    with ``>>>``, as many torch docstrings write them) joined into one example."""
    out: List[List[doctest.Example]] = []
    current: List[doctest.Example] = []
    for part in doctest.DocTestParser().parse(doc):
        if isinstance(part, doctest.Example):
            current.append(part)
        elif part.strip() and current:
            out.append(_joined(current))
            current = []
    if current:
        out.append(_joined(current))
    return out


def _parses(source: str) -> bool:
    try:
        ast.parse(X.rewrite(source))
        return True
    except SyntaxError:
        return False


def _shape(ex: doctest.Example) -> str:
    """indented (a body line), neutral (blank or a comment) or top."""
    text = ex.source.rstrip("\n")
    if not text.strip() or text.lstrip().startswith("#"):
        return "neutral"
    return "indented" if text[:1] in " \t" else "top"


def _joined(examples: List[doctest.Example]) -> List[doctest.Example]:
    """Each example followed by its body lines (indented examples, with the blank and
    comment lines between them) joined into one: ``>>> def f(x):`` ``>>>     return x``;
    one that still does not parse, with the fewest examples after it that make it parse."""
    shapes = [_shape(ex) for ex in examples]

    def no_want(a: int, b: int) -> bool:
        return not any(ex.want.strip() for ex in examples[a:b])

    def parses(a: int, b: int) -> bool:
        return _parses("".join(ex.source for ex in examples[a:b + 1]))

    def body_end(j: int) -> int:  # the last indented example after j (blank / comment lines between)
        while no_want(j, j + 1):
            k = j + 1
            while k < len(examples) and shapes[k] == "neutral" and no_want(k, k + 1):
                k += 1
            if k < len(examples) and shapes[k] == "indented":
                j = k
            else:
                break
        return j

    out: List[doctest.Example] = []
    i = 0
    while i < len(examples):
        j = i
        while True:
            nxt = body_end(j)
            if not parses(i, nxt):
                # a decorator line, or a closing bracket after its own ">>>": the fewest
                # examples after it that make it parse, if any
                nxt = next((k for k in range(nxt + 1, min(len(examples), nxt + 40))
                            if no_want(i, k) and parses(i, k)), nxt)
            if nxt == j:
                break
            j = nxt
        last = examples[j]
        source = "".join(ex.source for ex in examples[i:j + 1])
        out.append(doctest.Example(source, last.want, last.exc_msg, lineno=examples[i].lineno))
        i = j + 1
    return out


def _module_of(api: str) -> Tuple[Optional[Any], str]:
    """The longest prefix of ``api`` that is a module, and the rest of the name."""
    parts = api.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            return importlib.import_module(".".join(parts[:i])), ".".join(parts[i:])
        except Exception:
            continue
    return None, api


def namespace(api: str, obj: Any) -> Dict[str, Any]:
    """The globals an example runs with: the module it is documented in (as doctest
    gives), the module defining ``obj``, the usual ``torch`` / ``nn`` / ``F`` / ``np``."""
    import math

    ns: Dict[str, Any] = {}
    mod, rest = _module_of(api)
    for m in (inspect.getmodule(obj) if obj is not None else None, mod):
        if m is not None and m.__name__.startswith("torch"):
            # not the names that shadow builtins (torch's own ``int``, ``float``, ``bool`` dtypes)
            ns.update({k: v for k, v in vars(m).items() if k not in X.BUILTINS})
    ns.update({"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "math": math})
    try:
        import numpy

        ns["np"] = numpy
    except ImportError:
        pass
    head = rest.split(".")[0]
    if mod is not None and hasattr(mod, head):
        ns[head] = getattr(mod, head)  # the class of a member, or the API itself
    if obj is not None:
        ns[api.rsplit(".", 1)[-1]] = obj
    ns["__name__"] = "__torchparity_docstring__"
    return ns


def _parse_all(examples: List[doctest.Example]) -> Tuple[Optional[str], set, set]:
    bound, used = set(), set()
    for n, ex in enumerate(examples, 1):
        try:
            tree = ast.parse(X.rewrite(ex.source))
        except SyntaxError as exc:
            return f"not valid Python at example line {n}: {exc.msg}", bound, used
        b, u = X.bound_and_used(tree)
        bound |= b
        used |= u
    return None, bound, used


def _screen(text: str) -> Optional[str]:
    for what, pattern in _NEEDS:
        if pattern.search(text):
            return f"needs {what}"
    return None


def _dotted_of(node: ast.AST) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        if inspect.isbuiltin(a) and inspect.isbuiltin(b):  # torch.flip is made anew on each read
            return a == b
        return inspect.unwrap(a) is inspect.unwrap(b)
    except Exception:
        return False


def calls_api(api: str, obj: Any, text: str) -> bool:
    """Whether example code ``text`` reaches the API: a name or dotted name it reads that
    is the API's object in the example's namespace (what it imports included), or, for a
    member of a class (``torch.Tensor.add_``, ``Module.to``), an attribute of that name.
    An example that builds the float ``nn.GRUCell`` never reaches
    ``torch.ao.nn.quantized.dynamic.GRUCell``: it says nothing of it (issue 48 item 5)."""
    if obj is None:
        return True  # nothing to tell it by: the runs decide
    try:
        tree = ast.parse(X.rewrite(text))
    except SyntaxError:
        return True
    ns = dict(namespace(api, obj))
    for node in ast.walk(tree):  # what the example imports, as it would bind it
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            try:
                mod = importlib.import_module(node.module)
            except Exception:
                continue
            for alias in node.names:
                ns[alias.asname or alias.name] = getattr(mod, alias.name, None)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                try:
                    importlib.import_module(alias.name)
                except Exception:
                    continue
                head = alias.name.split(".")[0]
                ns[alias.asname or head] = importlib.import_module(alias.asname and alias.name or head)
    dead = _never_run(tree)
    owner_api, _, member = api.rpartition(".")
    owner = resolve_quiet(owner_api) if owner_api else None
    # a member of a class is reached as an attribute of that name; so is a torch function
    # written in C through its Tensor method (``x.nanmean()`` for torch.nanmean: one op)
    is_member = inspect.isclass(owner) or (inspect.isbuiltin(obj) and hasattr(torch.Tensor, member))
    for node in ast.walk(tree):
        if id(node) in dead:
            continue
        if is_member and isinstance(node, ast.Attribute) and node.attr == member:
            return True
        parts = _dotted_of(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if not parts or parts[0] not in ns:
            continue
        value = ns[parts[0]]
        for part in parts[1:] + [None]:
            if _same(value, obj):
                return True
            if part is None:
                break
            try:
                value = getattr(value, part)
            except Exception:
                break
    return False


def _never_run(tree: ast.AST) -> set:
    """The ids of the nodes in the bodies of the functions and classes an example defines
    and never uses (no name or attribute of theirs read outside their body): what they call
    never runs. A method lives and dies with its class (``forward`` runs by ``module(x)``);
    decorators and defaults run where the definition is. ``pipe_split``'s example only
    defines a ``forward`` that calls it: it says nothing of it (issue 48 item 5)."""
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    in_class = {id(m) for d in defs if isinstance(d, ast.ClassDef) for m in d.body}
    body_of = {id(d): {id(n) for stmt in d.body for n in ast.walk(stmt)} for d in defs}
    dead: set = set()
    for d in defs:
        if id(d) in in_class and not isinstance(d, ast.ClassDef):
            continue
        body = body_of[id(d)]
        used = any(id(n) not in body and ((isinstance(n, ast.Name) and n.id == d.name)
                                          or (isinstance(n, ast.Attribute) and n.attr == d.name))
                   for n in ast.walk(tree))
        if not used:
            dead |= body
    return dead


def _plan(api: str, obj: Any, all_blocks: List[List[doctest.Example]]) -> List[Tuple[List[str], Optional[str]]]:
    """Per block: the earlier blocks' sources it needs run first, and why it cannot run
    (None: it may)."""
    known = set(namespace(api, obj)) | X.BUILTINS | {X.DEVICE_VAR, X.MODULE_VAR}
    out = []
    earlier_bound: set = set()
    earlier_src: List[str] = []
    for blk in all_blocks:
        text = "".join(ex.source for ex in blk)
        why, bound, used = _parse_all(blk)
        setup: List[str] = []
        if why is None:
            missing = used - bound - known
            if missing & earlier_bound:
                setup = list(earlier_src)
                missing -= earlier_bound
            why = (f"needs names it does not define: {', '.join(sorted(missing)[:6])}" if missing
                   else _screen(text if not setup else "".join(setup) + text))
            if why is None and not calls_api(api, obj, "".join(setup) + text):
                why = f"the example never calls {api} (it uses other APIs): it says nothing of it"
        out.append((setup, why))
        earlier_bound |= bound
        earlier_src += [ex.source for ex in blk]
    return out


def _make_fn(api: str, examples: List[Tuple[str, Optional[str]]], setup: List[str], why: Optional[str]):
    def fn(device, dtype):
        if why is not None:
            raise NotRunnable(why)
        obj = resolve_quiet(api)

        def once():
            # compiled under this file's name: the footprint recorder counts the example's own
            # code as the scenario's, as for hand suites
            return X.run_examples(examples, setup, namespace(api, obj), device, filename=__file__)

        on_cpu = torch.device(device).type == "cpu"
        try:
            value = once()
            if on_cpu:  # twice, reseeded: values that differ from run to run compare nothing
                # (out of sight of any recorder: the judged run is the first one)
                from torch.utils._python_dispatch import _disable_current_modes

                with _disable_current_modes():
                    torch.manual_seed(X.SEED)
                    where = X.differs(value, once())
                if where:
                    raise NotRunnable(f"not deterministic: two CPU runs differ at {where}")
            return value
        except NotRunnable:
            raise
        except Exception as exc:
            if on_cpu:  # the CPU cannot run it: no question about the device
                raise NotRunnable(f"fails on the CPU: {exc}"[:400]) from exc
            if isinstance(exc, X.ExampleError) and exc.__cause__ is not None:
                raise exc.__cause__ from None  # the device's own exception, for the judge to classify
            raise
    return fn


def _snippet(api: str, setup: List[str], examples: List[Tuple[str, Optional[str]]]) -> str:
    mod, rest = _module_of(api)
    head = rest.split(".")[0]
    imports = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"
    if mod is not None and mod.__name__ != "torch":
        imports += f"from {mod.__name__} import {head}\n"
    body = "".join(X.rewrite(s) for s in setup) + "".join(X.rewrite(s) for s, _ in examples)
    body = "".join(f"    {ln}\n" for ln in body.splitlines())
    return (f"{imports}\n{X.DEVICE_VAR} = {{device}}\n"
            f"{X.MODULE_VAR} = torch.get_device_module(torch.device({X.DEVICE_VAR}).type)\n"
            f"torch.manual_seed(0)\nwith torch.device({X.DEVICE_VAR}):\n{body}")


def _doc_blocks(obj: Any) -> Tuple[List[List[doctest.Example]], str]:
    doc = inspect.getdoc(obj) if obj is not None else None
    if not doc or ">>>" not in doc:
        return [], "its docstring has no >>> example"
    try:
        return blocks(doc), ""
    except ValueError as exc:  # doctest's own parse errors (indentation, missing blank)
        return [], f"its docstring examples do not parse: {str(exc).splitlines()[0][:160]}"


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    obj = resolve_quiet(api)
    all_blocks, _ = _doc_blocks(obj)
    out = []
    for n, (blk, (setup, why)) in enumerate(zip(all_blocks, _plan(api, obj, all_blocks)), 1):
        examples = [(ex.source, ex.exc_msg) for ex in blk]
        out.append(Scenario(
            id=f"example{n}", api=api, fn=_make_fn(api, examples, setup, why),
            description=Text(en=f"docstring example {n} of {api}: the same values on the device as on the CPU",
                             zh=f"{api} 文档字符串示例 {n}：设备上的结果与 CPU 相同"),
            expected=Text(en="the same values as the CPU", zh="与 CPU 结果一致"),
            dtypes=("float32",), tags=("docstring",), timeout_s=TIMEOUT_S, module=__name__,
            source=NAME, code=_snippet(api, setup, examples)))
    return tuple(out)


def scenarios(api: str, obj: Any) -> List[Scenario]:
    """Every example block of ``api`` as a scenario (``offer`` asks only when no source
    before this one gave a scenario: ``fallback``)."""
    return list(_cached(api))


def yielded(api: str, by: str) -> str:
    return f"the {by} source covers it (docstring examples only run for the long tail)"


def why_not(api: str, obj: Any) -> str:
    obj = resolve_quiet(api) if obj is None else obj
    _, why = _doc_blocks(obj)
    return why or "no example block"


def example_scenarios(api: str) -> List[Scenario]:
    """Every example block of ``api`` as a scenario, whether or not an earlier source
    covers it (for ``scaffold``)."""
    return list(_cached(api))


def examples_of(api: str) -> List[Tuple[str, Optional[str]]]:
    """(block text with its ``>>>`` / ``...`` prompts, why it cannot run) per example block
    of ``api`` (for ``scaffold``)."""
    obj = resolve_quiet(api)
    all_blocks, _ = _doc_blocks(obj)
    return [("".join(_prompted(ex.source) for ex in blk), why)
            for blk, (_, why) in zip(all_blocks, _plan(api, obj, all_blocks))]


def _prompted(source: str) -> str:
    lines = source.splitlines()
    return "".join(f"{'>>> ' if i == 0 else '... '}{ln}\n" for i, ln in enumerate(lines))


# the long tail: asked only when no source before it gave a scenario
SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, yielded=yielded, fallback=True,
                      examples=examples_of)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "blocks", "namespace", "examples_of",
           "example_scenarios"]
