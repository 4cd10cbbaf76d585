"""Scenario registry: scenarios are data plus a small function.

A scenario function takes ``(device, dtype)`` — a device string such as ``"npu:0"`` and a
``torch.dtype`` — and returns the outputs to compare with the same function run on the
CPU, or raises the exception the scenario declares in ``raises``. It must make its inputs
on the CPU and move them (``.to(device)``) so both runs see the same values, and import
what it needs in its own body: its source is shown in reports as the verification snippet.

A scenario that builds its inputs from a shape declares ``shapes=[...]`` and takes a
``shape`` parameter whose default is the first of them: ``check`` runs that default, and
the test files ``torchparity gentest`` writes run every declared shape (device, dtypes and
shapes are parameters there, never hard-coded).

Adding an API is adding one module under ``scenarios/suites/`` (or any module given with
``--scenarios``) that calls :func:`scenario` for each case.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import pkgutil
import sys
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..dtypes import DTYPE_FREE, DTYPE_NAMES
from ..errors import InputError
from ..results.models import Text
from .golden import float64_golden

# the tag of a case whose answer has exactly one right value (a dtype conversion, a copy):
# judged bit for bit, no precision's tolerance (a device that truncates where it must round
# to nearest even differs by one ulp, within every low-precision row's bar)
EXACT = "exact"


class NotRunnable(Exception):
    """Raised by a scenario function that cannot run here at all (a docstring example that
    needs names it does not define, files or the network; a scaffold's unwritten body).
    Raised on the CPU reference run, the case is recorded as ``skip`` with the reason:
    never a pass, never the device's fault."""


class HarnessFailure(Exception):
    """Raised by a scenario whose scaffolding failed, not the API: a world whose rank was
    killed from outside twice, one that hung past its time limit (``timed_out``). On
    either run, the case is ``error`` / ``harness_error`` (``timeout`` / ``timeout`` when
    timed out): never the device's answer."""

    timed_out = False


class ScaffoldingRefused(Exception):
    """Raised by a scenario whose scaffolding (the ops it runs around the API: a model's
    loss, an input transform) the device under test refuses in the dtype under test, every
    candidate of :func:`scaffold` included. The row is ``skip`` / ``not_comparable``
    ("scaffolding refused"): never a verdict on the API."""


# the device under test, set by the runner around both runs of a case (the CPU reference
# and the device run), so that both pick the same scaffolding (see :func:`scaffold`)
_UNDER_TEST: List[str] = []
_SCAFFOLD_CACHE: Dict[Tuple[str, str, str], bool] = {}


@contextmanager
def device_under_test(device: str) -> Iterator[None]:
    """Scenario runs inside pick their scaffolding for ``device`` (the CPU run too)."""
    _UNDER_TEST.append(device)
    try:
        yield
    finally:
        _UNDER_TEST.pop()


def under_test(device: str) -> str:
    """The device of the enclosing :func:`device_under_test`, else ``device``: what a CPU
    reference run must take its paths for (scaffolding, an API's device-dependent defaults)."""
    return _UNDER_TEST[-1] if _UNDER_TEST else device


def _runs_on(name: str, op: Callable, device: str, dtype: Any) -> bool:
    key = (name, device, str(dtype))
    if key not in _SCAFFOLD_CACHE:
        import torch

        try:
            x = torch.linspace(-1.0, 1.0, 4, dtype=torch.float64).to(dtype).to(device).requires_grad_()
            op(x).sum().backward()
            _SCAFFOLD_CACHE[key] = True
        except Exception:  # the device refuses this op (or its backward) in this dtype
            _SCAFFOLD_CACHE[key] = False
    return _SCAFFOLD_CACHE[key]


def scaffold(device: str, dtype: Any, candidates: Sequence[Tuple[str, Callable]]) -> Callable:
    """The first of ``candidates`` (``(name, elementwise fn)``) that the device under test
    runs forward and backward in ``dtype`` — the device of the enclosing
    :func:`device_under_test`, else ``device`` — so the CPU reference and the device run
    use the same scaffolding. None runs: :class:`ScaffoldingRefused`."""
    target = under_test(device)
    for name, op in candidates:
        if _runs_on(name, op, target, dtype):
            return op
    names = ", ".join(n for n, _ in candidates)
    raise ScaffoldingRefused(f"the device refuses every scaffolding candidate ({names}) in {dtype}")


class Draws:
    """A scenario output holding random draws (``Draws(tensor)``): judged against the
    CPU's draws by the two-sample test of the ``random`` standard, and a second device run
    under the same seed and generator must draw exactly the same values (a fail
    otherwise, see ``run.execute``)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any):
        self.tensor = tensor

    def __repr__(self) -> str:  # never the values: printing a device tensor runs ops on it
        t = self.tensor
        shape = tuple(getattr(t, "shape", ()))
        return f"Draws(shape={shape}, dtype={str(getattr(t, 'dtype', '?')).replace('torch.', '')})"


def draws_in(tree: Any) -> List[Any]:
    """The tensors of every :class:`Draws` in nested lists / tuples / dicts, in order."""
    if isinstance(tree, Draws):
        return [tree.tensor]
    if isinstance(tree, dict):
        return [t for v in tree.values() for t in draws_in(v)]
    if isinstance(tree, (list, tuple)):
        return [t for v in tree for t in draws_in(v)]
    return []


@dataclass(frozen=True)
class Raises:
    """The exception a scenario expects on every device (CPU included)."""

    type: str  # exception class name, e.g. "RuntimeError"
    match: str = ""  # regex searched in the message


@dataclass
class Scenario:
    id: str
    api: str  # the dotted name the suite registered it under
    fn: Callable[[str, Any], Any]
    description: Text
    expected: Text
    dtypes: Tuple[str, ...] = ("float32",)
    tags: Tuple[str, ...] = ()
    raises: Optional[Raises] = None
    timeout_s: Optional[float] = None
    # "values": compare outputs with the CPU run; "none": only that it ran (or raised)
    compare: str = "values"
    module: str = ""  # where the scenario is defined (the worker imports it)
    # input shapes for generated tests; the first is the default of fn's ``shape`` parameter
    shapes: Tuple[Tuple[int, ...], ...] = ()
    # which scenario source made it: hand | opinfo | module | optim | distribution | member | ...
    source: str = "hand"
    # the runnable snippet shown in reports, for generated scenarios whose function source
    # is not a readable example on its own (hand suites leave it empty: fn's source is used)
    code: str = ""
    # ``golden(dtype)``: the same case run on the CPU with its inputs made in ``dtype`` and
    # then computed in float64 (complex128). Given, a float16/bfloat16/float32 device result
    # is judged against the CPU's own error vs that golden, as OpInfo samples are. A
    # scenario that compares values and gives none gets ``golden.float64_golden(fn)``: its
    # own code with every computation after the inputs in float64.
    golden: Optional[Callable[[Any], Any]] = field(default=None, compare=False)

    def __post_init__(self):
        # a code-block case's function says whether its code reads ``dtype`` at all
        # (``uses_dtype``, set by sources.base for Case.fn and block_fn): one that never
        # does is tagged, so its rows say "any dtype" rather than the dtype they ran under
        if getattr(self.fn, "uses_dtype", True) is False and DTYPE_FREE not in self.tags:
            self.tags = tuple(self.tags) + (DTYPE_FREE,)
        if self.golden is None and self.compare == "values" and self.raises is None:
            self.golden = float64_golden(self.fn)

    @property
    def source_file(self) -> str:
        return inspect.getsourcefile(self.fn) or ""

    def snippet(self, device_expr: str = '"npu"', dtype: Optional[str] = None) -> str:
        """The scenario function's source plus the line that runs it: a runnable snippet."""
        if self.code:
            return self.code.replace("{device}", device_expr).replace(
                "{dtype}", f"torch.{dtype or self.dtypes[0]}")
        try:
            src = textwrap.dedent(inspect.getsource(self.fn))
        except (OSError, TypeError):
            return ""
        lines = src.splitlines()
        start = next((i for i, ln in enumerate(lines) if ln.startswith("def ")), 0)
        body = "\n".join(lines[start:])  # the decorator (registration) is not part of it
        dt = dtype or self.dtypes[0]
        call = f"print({self.fn.__name__}({device_expr}, torch.{dt}))"
        return f"import torch\n\n{body}\n\n{call}\n"


_REGISTRY: Dict[str, List[Scenario]] = {}
_LOADED_MODULES: List[str] = []

SUITES_PACKAGE = __name__.rsplit(".", 1)[0] + ".suites"


def scenario(api: str, id: str, *, en: str, zh: str, expect_en: str, expect_zh: str,
             dtypes: Sequence[str] = ("float32",), tags: Sequence[str] = (),
             raises: Optional[Raises] = None, timeout_s: Optional[float] = None,
             compare: str = "values", shapes: Sequence[Sequence[int]] = ()) -> Callable:
    """Decorator registering ``fn(device, dtype)`` as a scenario of ``api``.

    ``shapes``: input shapes for generated tests; ``fn`` must then take ``shape`` with the
    first of them as its default.
    """
    for d in dtypes:
        if d not in DTYPE_NAMES:
            raise ValueError(f"scenario {api}:{id}: unknown dtype {d!r}")
    if compare not in ("values", "none"):
        raise ValueError(f"scenario {api}:{id}: compare must be 'values' or 'none'")

    shape_tuple = tuple(tuple(int(n) for n in sh) for sh in shapes)

    def register(fn: Callable) -> Callable:
        if shape_tuple:
            param = inspect.signature(fn).parameters.get("shape")
            if param is None or tuple(param.default or ()) != shape_tuple[0]:
                raise ValueError(f"scenario {api}:{id}: declares shapes, so {fn.__name__} must "
                                 f"take shape={shape_tuple[0]!r} (the first shape) as a default")
        sc = Scenario(id=id, api=api, fn=fn, description=Text(en=en, zh=zh),
                      expected=Text(en=expect_en, zh=expect_zh), dtypes=tuple(dtypes),
                      tags=tuple(tags), raises=raises, timeout_s=timeout_s, compare=compare,
                      module=fn.__module__, shapes=shape_tuple)
        existing = _REGISTRY.setdefault(api, [])
        if any(s.id == id for s in existing):
            raise ValueError(f"scenario {api}:{id} registered twice")
        existing.append(sc)
        return fn

    return register


def load_suites(extra_modules: Iterable[str] = ()) -> None:
    """Import the built-in suites and any extra modules (dotted names or .py paths); a
    named module's package becomes an API namespace (``api.resolve.allow_namespaces``)."""
    from ..api.resolve import allow_namespaces

    allow_namespaces(list(extra_modules))
    pkg = importlib.import_module(SUITES_PACKAGE)
    names = [f"{SUITES_PACKAGE}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)]
    for name in list(names) + list(extra_modules):
        if name in _LOADED_MODULES:
            continue
        _import_module(name)
        _LOADED_MODULES.append(name)


def _import_module(name: str) -> None:
    if name.endswith(".py"):
        if not os.path.isfile(name):
            raise InputError(f"scenario file not found: {name}")
        modname = "torchparity_user_" + os.path.splitext(os.path.basename(name))[0]
        spec = importlib.util.spec_from_file_location(modname, name)
        module = importlib.util.module_from_spec(spec)

        sys.modules[modname] = module
        try:
            spec.loader.exec_module(module)  # type: ignore[union-attr]
        except BaseException as exc:
            sys.modules.pop(modname, None)
            _import_failed(f"scenario file {name}", exc)
        return
    try:
        importlib.import_module(name)
    except BaseException as exc:
        _import_failed(f"scenario module {name}", exc)


def _import_failed(what: str, exc: BaseException) -> None:
    """A scenario module that fails at import, whatever it raises, is one line (exit 2);
    sys.exit() in it must not end the run silently. Ctrl-C stays Ctrl-C."""
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    if isinstance(exc, SyntaxError):
        raise InputError(f"{what}: syntax error at line {exc.lineno}: {exc.msg}") from None
    if isinstance(exc, SystemExit):
        raise InputError(f"{what}: called sys.exit({exc.code!r}) while being imported") from None
    if isinstance(exc, InputError):
        raise exc
    where = _innermost_line(exc)
    raise InputError(f"cannot import {what}: {type(exc).__name__}: {exc}{where}") from None


def _innermost_line(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f" ({os.path.basename(tb.tb_frame.f_code.co_filename)}, line {tb.tb_lineno})"


def registered_apis() -> List[str]:
    return sorted(_REGISTRY)


def scenarios_for(api_names: Iterable[str]) -> List[Scenario]:
    """Scenarios registered under any of the names (an API and its aliases)."""
    out: List[Scenario] = []
    for name in api_names:
        for sc in _REGISTRY.get(name, []):
            if sc not in out:
                out.append(sc)
    return out


def find(api: str, scenario_id: str) -> Scenario:
    for sc in _REGISTRY.get(api, []):
        if sc.id == scenario_id:
            return sc
    raise KeyError(f"no scenario {scenario_id!r} for {api}")


def scenarios_for_object(obj: Any) -> List[Scenario]:
    """Scenarios registered under any name that resolves to ``obj`` (aliases included)."""
    from ..api.resolve import maybe_resolve

    out: List[Scenario] = []
    for name, items in _REGISTRY.items():
        resolved = maybe_resolve(name)
        if resolved is not None and resolved.obj is obj:
            out.extend(items)
    return out
