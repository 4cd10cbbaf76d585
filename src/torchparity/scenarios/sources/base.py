"""What the scenario sources share: the :class:`Source` interface and the case helpers.

Not a source itself. Every source imports from here (and from :mod:`.world` for 2-rank
worlds), never from another source.

The one idea here: a generated case is first run once on the CPU, per dtype, when the
scenarios are made (``probe``). A dtype whose CPU run raises ``NotImplementedError`` (the
API itself does not implement it, e.g. ``Gamma.icdf``) becomes a scenario that expects
that same exception on the device; a dtype whose CPU run raises anything else is not a
question about the device (the CPU cannot do it either) and gets no scenario. The probe
runs under ``torch.random.fork_rng`` with the runner's seed, so it changes nothing.
"""

from __future__ import annotations

import ast
import contextlib
import dis
import functools
import importlib
import importlib.util
import inspect
import io
import re
import sys
import textwrap
import types
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import (
    Any,
    Callable,
    ContextManager,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import torch

from ...results.models import Text
from ..registry import Draws, Raises, Scenario

SEED = 0
FLOATS = ("float32", "float64", "float16", "bfloat16")


_NOT_A_READ = ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR", "LOAD_CONST", "LOAD_SMALL_INT")


def _reads(code: Any, name: str) -> bool:
    """Whether compiled module-level ``code`` (a code block run with ``name`` among its
    globals), or a function defined in it, reads that global binding: an attribute of
    that name (``t.dtype``) and a function's own local or parameter ``name`` do not count."""
    for ins in dis.get_instructions(code):
        if ins.opname not in ("LOAD_NAME", "LOAD_GLOBAL"):
            continue
        if ins.argval == name or (isinstance(ins.argval, tuple) and name in ins.argval):
            return True
    return any(_reads(c, name) for c in code.co_consts if hasattr(c, "co_code"))


def widened(dtypes: Sequence[str], fn: Optional[Callable] = None) -> Tuple[str, ...]:
    """The dtypes a case is asked in: a case declared in float32 is asked in every float
    dtype of FLOATS (float32, float64, float16, bfloat16) — the CPU's probe then keeps
    those the API accepts — unless its code never reads ``dtype`` (a code block whose
    answer cannot depend on it: more rows would only repeat it)."""
    ds = list(dtypes)
    if "float32" in ds and getattr(fn, "uses_dtype", True):
        ds += [d for d in FLOATS if d not in ds]
    return tuple(ds)


def probe(fn: Callable[[str, Any], Any], dtypes: Sequence[str]) -> Dict[str, Optional[BaseException]]:
    """Run ``fn("cpu", dtype)`` once per dtype; the exception each raised (None: none).
    What the runs print is dropped: planning runs in the user's process, and a raise there
    is data (an FX module prints its own traceback to stderr before re-raising)."""
    out: Dict[str, Optional[BaseException]] = {}
    sink = io.StringIO()
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(sink), \
            contextlib.redirect_stderr(sink):
        for d in dtypes:
            torch.manual_seed(SEED)
            try:
                fn("cpu", getattr(torch, d))
                out[d] = None
            except Exception as exc:  # the CPU's own answer, recorded as data
                out[d] = exc
    return out


_CPU_KERNEL_LIMIT = re.compile(r"^Could not run|not implemented for '\w+'")


def _first_line(exc: BaseException) -> str:
    return next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")


def probed(base_id: str, api: str, source: str, fn: Callable[[str, Any], Any],
           dtypes: Sequence[str], *, en: str, zh: str, expect_en: str, expect_zh: str,
           code: str = "", compare: str = "values", tags: Sequence[str] = (),
           skipped: Optional[Dict[str, str]] = None,
           expected: Tuple[type, ...] = (NotImplementedError,),
           golden: Optional[Callable[[Any], Any]] = None, widen: bool = True) -> List[Scenario]:
    """The scenarios of one generated case, split by what the CPU answered per dtype.

    ``expected``: the exception types that, raised on the CPU, are the API's own answer
    (the device must raise the same); ``skipped`` (optional) collects
    ``"id[dtype]" -> why`` for dtypes left out; ``golden`` (optional): see
    :attr:`Scenario.golden`; ``widen``: ask the case in every float dtype
    (:func:`widened`), not only those given.
    """
    if widen:
        dtypes = widened(dtypes, fn)
    outcomes = probe(fn, dtypes)
    groups: Dict[Tuple[str, str], List[str]] = {}
    for d in dtypes:
        exc = outcomes[d]
        if exc is None:
            groups.setdefault(("ok", ""), []).append(d)
        elif isinstance(exc, expected) and not _CPU_KERNEL_LIMIT.search(_first_line(exc)):
            # the API's own "not implemented" (a dispatcher's "Could not run ..." or a
            # kernel's "... not implemented for 'Half'" means the CPU has no kernel for
            # it: not a question about the device)
            groups.setdefault(("raises:" + type(exc).__name__, _first_line(exc)), []).append(d)
        elif skipped is not None:
            skipped[f"{base_id}[{d}]"] = f"the CPU raises {type(exc).__name__}: {_first_line(exc)[:160]}"
    out: List[Scenario] = []
    for n, ((kind, msg), ds) in enumerate(sorted(groups.items())):
        sid = base_id if n == 0 else f"{base_id}~{ds[0]}"
        raises = None
        e_en, e_zh = expect_en, expect_zh
        if kind.startswith("raises:"):
            exc_type = kind.split(":", 1)[1]
            # the CPU's first line, anchored (an empty message matches only an empty
            # one): a device's own "Could not run ..." is not the API's NotImplementedError
            raises = Raises(exc_type, r"\A\s*" + re.escape(msg) if msg else r"\A\Z")
            e_en = f"{exc_type} on the device too, as on the CPU"
            e_zh = f"与 CPU 相同，设备上同样抛出 {exc_type}"
        out.append(Scenario(
            id=sid, api=api, fn=fn, description=Text(en=en, zh=zh),
            expected=Text(en=e_en, zh=e_zh), dtypes=tuple(ds), tags=tuple(tags), raises=raises,
            compare=compare, module=fn.__module__, source=source, code=code,
            golden=golden if raises is None else None))
    return out


def block_fn(code: Any, extra: Optional[Dict[str, Any]] = None, name: str = "torchparity_case",
             quiet: bool = False) -> Callable[[str, Any], Any]:
    """``fn(device, dtype)`` of a code-block source: runs the compiled block with ``torch``,
    ``device``, ``dtype`` (and ``extra``) in scope and returns what it left in ``out``.
    ``quiet``: warnings the block raises are not shown (deprecation notices per call)."""
    def fn(device, dtype):
        ns = {"torch": torch, "device": device, "dtype": dtype, "__name__": name, "Draws": Draws}
        if extra:
            ns.update(extra)
        if quiet:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(code, ns)
        else:
            exec(code, ns)
        return ns["out"]
    # the scenario's file is the block's (Scenario.source_file): the footprint recorder
    # tells scenario code from the API's by file, and the block is compiled under its
    # source module's name
    fn.__code__ = fn.__code__.replace(co_filename=code.co_filename)
    fn.uses_dtype = _reads(code, "dtype")  # type: ignore[attr-defined]
    fn.body_code = code  # type: ignore[attr-defined]  # whose namespace holds the inputs
    return fn


def block_snippet(prelude: str, block: str, imports: str = "import torch\n") -> str:
    """The runnable snippet of a code-block case (``{device}`` / ``{dtype}`` filled in by
    :meth:`Scenario.snippet`)."""
    return (imports + "\ndevice, dtype = {device}, {dtype}\n"
            "Draws = lambda t: t  # random draws: torchparity compares their distribution and repeat\n"
            + prelude + block + "\nprint(out)\n")


def reproducer(source: str, api: str, scenario_id: str) -> str:
    """A runnable snippet that re-makes a generated scenario and runs it (for cases whose
    inputs are not short enough to spell out)."""
    return ("import torch\nfrom torchparity.scenarios.sources import find\n\n"
            f"sc = find({source!r}, {api!r}, None, {scenario_id!r})\n"
            "torch.manual_seed(0)\nprint(sc.fn({device}, {dtype}))\n")


def dtype_names_of(dtypes: Any) -> List[str]:
    """The float dtype names (of FLOATS, in that order) in a set of torch dtypes."""
    names = {str(d).replace("torch.", "") for d in dtypes}
    return [d for d in FLOATS if d in names]


def tensor_literal(t: torch.Tensor) -> str:
    """A Python expression that rebuilds the CPU tensor ``t`` exactly."""
    return f"torch.tensor({t.tolist()!r}, dtype={t.dtype})"


def summary(value: Any) -> Any:
    """Shapes and dtypes of every tensor in ``value`` (for outputs whose values are random)."""
    if isinstance(value, torch.Tensor):
        return {"shape": tuple(value.shape), "dtype": str(value.dtype),
                "device_type": value.device.type}
    if isinstance(value, (list, tuple)):
        return [summary(v) for v in value]
    if isinstance(value, dict):
        return {k: summary(v) for k, v in value.items()}
    return value


def move(tree: Any, device: str, dtype: Optional[torch.dtype] = None) -> Any:
    """Every tensor of nested lists / tuples / dicts moved to ``device`` (floats cast to
    ``dtype`` when given)."""
    if isinstance(tree, torch.Tensor):
        if dtype is not None and tree.is_floating_point():
            return tree.to(device=device, dtype=dtype)
        return tree.to(device)
    if isinstance(tree, list):
        return [move(t, device, dtype) for t in tree]
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(move(t, device, dtype) for t in tree)
    if isinstance(tree, dict):
        return {k: move(v, device, dtype) for k, v in tree.items()}
    return tree


def split_member(api: str) -> Tuple[str, str]:
    """``a.b.C.m`` -> (``a.b.C``, ``m``)."""
    owner, _, member = api.rpartition(".")
    return owner, member


def resolve_quiet(name: str) -> Any:
    from ...api.resolve import maybe_resolve

    try:
        r = maybe_resolve(name) if name else None
    except Exception:  # resolving some names touches a backend (torch.backends.cuda.*)
        return None
    return None if r is None else r.obj


# A case may keep what a costly run made (a launcher's workers, ``distsvc.memo``) for the
# dtypes and runs that follow. A run that takes the case's API away (``run.takeaway``) must
# make its own calls: while one is entered (:class:`fresh_runs`), nothing kept is reused.
_FRESH: List[int] = [0]


@contextlib.contextmanager
def fresh_runs():
    """While entered, a case runs its code again instead of reusing a kept result."""
    _FRESH[0] += 1
    try:
        yield
    finally:
        _FRESH[0] -= 1


def reusing() -> bool:
    """Whether a case may hand back a result it kept (no :class:`fresh_runs` entered)."""
    return _FRESH[0] == 0


# --- the source interface ---------------------------------------------------------------

# a scenario dtype meaning "whatever dtypes the case itself runs" (an upstream test): never
# filtered out by ``--dtypes``
ANY_DTYPE = "-"


@dataclass(frozen=True)
class RunSettings:
    """What one run tells every source before it plans (:meth:`Source.prepare`)."""

    tests_dir: Optional[str] = None  # ``--tests``: a test tree whose tests are replayed
    backend: str = "npu"  # the device type name of the device under test
    side_timeout: float = 120.0  # seconds for one side (CPU or device) of one replayed test


class Source(ABC):
    """One scenario source: where the scenarios of a family of APIs come from.

    Required: :attr:`name` (the label results carry as ``scenarios[].source``),
    :attr:`order` (sources are listed in increasing order in ``sources.SOURCES``) and
    :meth:`scenarios`. The rest have defaults. Precedence is declared, and resolved in one
    place (``sources.offer``): a :attr:`fallback` source is asked only when no source
    before it gave a scenario; a source is not asked for an API for which one of
    :attr:`yields_to` gave scenarios. Either way it says :meth:`yielded` instead.
    """

    name: str
    order: int
    fallback: bool = False
    yields_to: Tuple[str, ...] = ()
    case_kind: Optional[str] = None  # its own worker case kind (``case`` makes the cases)
    warm: Tuple[str, ...] = ()  # modules a worker imports before its first case of that kind
    replays: bool = False  # its scenarios are the API's upstream tests replayed
    # its scenario functions are copied into generated test files as they are (hand
    # suites); any other source's scenarios go into a test file as worker cases
    writes_functions: bool = False
    # the sample database its entries come from (OpInfo: op_db); "" for a source without
    # entries (see :meth:`entries`)
    catalogue: str = ""

    @abstractmethod
    def scenarios(self, api: str, obj: Any) -> List[Scenario]:
        """The scenarios of ``api`` (resolved to ``obj``), or ``[]``. Deterministic and
        side-effect free: a worker asks again and picks the scenario by ``id``."""

    def owns(self, api: str) -> bool:
        """Whether ``api`` lies in this source's domain (its ``why_not`` then names the
        reason an API left without a scenario has)."""
        return False

    def why_not(self, api: str, obj: Any) -> str:
        """One line: why this source gives ``api`` no scenario."""
        return "does not apply"

    def yielded(self, api: str, by: str) -> str:
        """What it says when it is not asked because source ``by`` answered for ``api``."""
        return f"the {by} source covers it"

    def covers(self, api: str) -> bool:
        """Whether the scenarios it gave ``api`` are the API's own: a source that
        ``yields_to`` it is then not asked (by default, any scenario it gave is)."""
        return True

    def members(self) -> List[str]:
        """Every API name it has a case for, when it keeps a list (coverage, tests)."""
        return []

    def prepare(self, settings: RunSettings, apis: Iterable[str]) -> ContextManager[Any]:
        """A context the run plans in (it may read ``settings``); what it yields, when not
        None, is the evidence it found for ``apis`` (``{api: TestsEvidence}``)."""
        return contextlib.nullcontext(None)

    def case(self, sc: Scenario, dtype: str, *, max_samples: Optional[int] = None,
             grads: bool = True, footprint: bool = False) -> Optional[Dict[str, Any]]:
        """The worker case of one scenario and dtype for a source with its own case kind;
        None: the generic ``source`` case kind runs it."""
        return None

    def entries(self, api: Optional[str] = None) -> List[Any]:
        """For a source with a :attr:`catalogue`: the entries ``api`` reaches (None: every
        entry), each with ``api``, ``variant`` and ``db`` — what ``sweep`` runs in every
        dtype asked and ``predict`` folds sample by sample. ``[]`` for any other source."""
        return []

    def entry_case(self, entry: Any, dtype: str, *, reference: bool = False, grads: bool = True,
                   max_samples: Optional[int] = None, footprint: bool = False) -> Dict[str, Any]:
        """The worker case of one of its :meth:`entries` in ``dtype`` (``reference``: the
        entry's reference inputs instead of its samples)."""
        raise NotImplementedError(f"source {self.name} has no catalogue")

    def examples(self, api: str) -> List[Tuple[str, Optional[str]]]:
        """The usage examples it reads for ``api``: (text with its prompts, why it cannot
        run or None), for ``scaffold``. ``[]`` for a source that reads none."""
        return []


class ModuleSource(Source):
    """A source whose hooks are functions of its module, each one named explicitly."""

    def __init__(self, name: str, order: int, scenarios: Callable[[str, Any], List[Scenario]], *,
                 why_not: Optional[Callable[[str, Any], str]] = None,
                 owns: Optional[Callable[[str], bool]] = None,
                 members: Optional[Callable[[], List[str]]] = None,
                 yielded: Optional[Callable[[str, str], str]] = None,
                 covers: Optional[Callable[[str], bool]] = None,
                 prepare: Optional[Callable[[RunSettings, Iterable[str]], ContextManager[Any]]] = None,
                 case: Optional[Callable[..., Dict[str, Any]]] = None,
                 case_kind: Optional[str] = None, warm: Sequence[str] = (),
                 fallback: bool = False, yields_to: Sequence[str] = (), replays: bool = False,
                 entries: Optional[Callable[[Optional[str]], List[Any]]] = None,
                 entry_case: Optional[Callable[..., Dict[str, Any]]] = None, catalogue: str = "",
                 examples: Optional[Callable[[str], List[Tuple[str, Optional[str]]]]] = None,
                 writes_functions: bool = False):
        self.name, self.order = name, order
        self._scenarios, self._why_not, self._owns, self._members = scenarios, why_not, owns, members
        self._yielded, self._prepare, self._case = yielded, prepare, case
        self._entries, self._entry_case, self._examples = entries, entry_case, examples
        self._covers = covers
        self.case_kind, self.warm = case_kind, tuple(warm)
        self.fallback, self.yields_to, self.replays = fallback, tuple(yields_to), replays
        self.catalogue, self.writes_functions = catalogue, writes_functions

    def __repr__(self) -> str:
        return f"<source {self.name} (order {self.order})>"

    def scenarios(self, api: str, obj: Any) -> List[Scenario]:
        return self._scenarios(api, obj)

    def owns(self, api: str) -> bool:
        return self._owns(api) if self._owns else False

    def why_not(self, api: str, obj: Any) -> str:
        return self._why_not(api, obj) if self._why_not else super().why_not(api, obj)

    def yielded(self, api: str, by: str) -> str:
        return self._yielded(api, by) if self._yielded else super().yielded(api, by)

    def members(self) -> List[str]:
        return self._members() if self._members else []

    def covers(self, api: str) -> bool:
        return self._covers(api) if self._covers else super().covers(api)

    def prepare(self, settings: RunSettings, apis: Iterable[str]) -> ContextManager[Any]:
        return self._prepare(settings, apis) if self._prepare else super().prepare(settings, apis)

    def case(self, sc: Scenario, dtype: str, *, max_samples: Optional[int] = None,
             grads: bool = True, footprint: bool = False) -> Optional[Dict[str, Any]]:
        if self._case is None:
            return None
        return self._case(sc, dtype, max_samples=max_samples, grads=grads, footprint=footprint)

    def entries(self, api: Optional[str] = None) -> List[Any]:
        return self._entries(api) if self._entries else []

    def entry_case(self, entry: Any, dtype: str, *, reference: bool = False, grads: bool = True,
                   max_samples: Optional[int] = None, footprint: bool = False) -> Dict[str, Any]:
        if self._entry_case is None:
            return super().entry_case(entry, dtype)
        return self._entry_case(entry, dtype, reference=reference, grads=grads,
                                max_samples=max_samples, footprint=footprint)

    def examples(self, api: str) -> List[Tuple[str, Optional[str]]]:
        return self._examples(api) if self._examples else []

# --- cases as data: Case, Excluded, BlockSource ------------------------------------------


def body_call(body: Callable[..., Any], kwargs: Mapping[str, Any],
              quiet: bool = False) -> Callable[[str, Any], Any]:
    """``fn(device, dtype)`` calling a case's ``body(device, dtype, **kwargs)`` (``quiet``:
    the warnings it raises are not shown), named and filed as the body: a generated test
    file's own copy of a body runs through it as the source's does."""
    kw = dict(kwargs)

    def fn(device, dtype):
        if quiet:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return body(device, dtype, **kw)
        return body(device, dtype, **kw)
    # the scenario's file is the body's (Scenario.source_file): the footprint recorder
    # tells scenario code (the body and the helpers of its module) from the API's by file
    fn.__code__ = fn.__code__.replace(co_filename=body.__code__.co_filename)
    fn.__module__ = body.__module__
    fn.__qualname__ = fn.__name__ = body.__name__
    fn.body_code = body.__code__  # type: ignore[attr-defined]  # whose locals are the inputs
    return fn


@dataclass(frozen=True)
class Case:
    """One table row of a code-block source: a real function that uses its API on the device.

    ``body(device, dtype, **params)`` is a module-level function (importable by module and
    qualname) that builds its inputs on the CPU, moves them to ``device``, uses the API and
    returns what the judge compares with the same call on the CPU. ``params`` make one body
    serve several variants (the keyword arguments it is called with); ``aliases`` are the
    other API names the same case answers for (one case, not copies: a body that takes an
    ``api`` parameter is told which name it runs under). ``dtypes``: the dtypes it is asked
    in (widened to every float dtype when it reads ``dtype``, see :func:`widened`);
    ``tags``: scenario tags (``random``: its outputs are draws); ``reference``: what the
    answer is compared with, when not the same body run on the CPU (words for the report);
    ``raises``: an exception every device, the CPU included, must raise; ``id``: the
    scenario id (the source's default when empty).
    """

    api: str
    body: Callable[..., Any]
    dtypes: Tuple[str, ...] = ("float32",)
    tags: Tuple[str, ...] = ()
    reference: str = ""
    raises: Optional[Raises] = None
    aliases: Tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        if not callable(self.body) or getattr(self.body, "__qualname__", "").count("<"):
            raise TypeError(f"case {self.api}: body must be a module-level function")
        object.__setattr__(self, "dtypes", tuple(self.dtypes))
        object.__setattr__(self, "tags", tuple(self.tags))
        object.__setattr__(self, "aliases", tuple(self.aliases))
        object.__setattr__(self, "params", dict(self.params))

    @property
    def apis(self) -> Tuple[str, ...]:
        """Every API name this case answers for: ``api`` first, then ``aliases``."""
        return (self.api,) + self.aliases

    def kwargs(self, api: str) -> Dict[str, Any]:
        """The keyword arguments ``body`` runs with for ``api`` (``api`` itself when the
        body takes it)."""
        kw = dict(self.params)
        if "api" in inspect.signature(self.body).parameters:
            kw["api"] = api
        return kw

    def fn(self, api: str, quiet: bool = False) -> Callable[[str, Any], Any]:
        """``fn(device, dtype)`` of this case for ``api`` (``quiet``: warnings the body
        raises are not shown, e.g. deprecation notices per call)."""
        fn = body_call(self.body, self.kwargs(api), quiet)
        fn.uses_dtype = reads_dtype(self.body)  # type: ignore[attr-defined]
        return fn

    def snippet(self, api: str) -> str:
        """The runnable snippet of this case (``{device}`` / ``{dtype}`` filled in by
        :meth:`Scenario.snippet`): the module's imports and helpers the body uses, the
        body, and the line that runs it."""
        kw = self.kwargs(api)
        args = "".join(f", {k}={v!r}" for k, v in kw.items())
        return standalone_source(self.body) + f"\n\nprint({self.body.__name__}({{device}}, {{dtype}}{args}))\n"


@dataclass(frozen=True)
class Excluded:
    """A listed API a code-block source leaves out on purpose, with the reason."""

    api: str
    reason: str


Row = Union[Case, Excluded]


@dataclass(frozen=True)
class _Part:
    """One top-level statement of a case module: its text, what it binds, what it reads."""

    text: str
    binds: FrozenSet[str]
    reads: FrozenSet[str]
    is_import: bool
    internal: bool  # an import of torchparity itself (not part of a standalone snippet)
    # for an internal ``from X import a as b``: the absolute module X and {b: a}
    origin: str = ""
    names: Tuple[Tuple[str, str], ...] = ()


@functools.lru_cache(maxsize=None)
def _module_parts(module_name: str) -> Tuple[_Part, ...]:
    mod = sys.modules[module_name]
    src = inspect.getsource(mod)
    lines = src.splitlines()
    parts: List[_Part] = []
    for node in ast.parse(src).body:
        if isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant):
            continue  # the module's docstring
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "\n".join(lines[first - 1:node.end_lineno])
        reads = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            binds = frozenset((a.asname or a.name.split(".")[0]) for a in node.names)
            internal = isinstance(node, ast.ImportFrom) and (
                node.level > 0 or (node.module or "").startswith(("torchparity", "__future__")))
            origin, names = "", ()
            if internal and isinstance(node, ast.ImportFrom) and node.module != "__future__":
                origin = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                     mod.__package__ or module_name) \
                    if node.level else (node.module or "")
                names = tuple((a.asname or a.name, a.name) for a in node.names)
            parts.append(_Part(text, binds, frozenset(), True, internal, origin, names))
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds = frozenset([node.name])
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            binds = frozenset(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        else:
            binds = frozenset()
        parts.append(_Part(text, binds, reads, False, False))
    return tuple(parts)


_DRAWS_STUB = "Draws = lambda t: t  # random draws: torchparity compares their distribution and repeat"


def standalone_source(body: Callable[..., Any]) -> str:
    """The source of a module-level function with what it needs of its module: the
    imports it reads, the module-level helpers, classes and constants it reads (and what
    they read, in module order), then the function itself. Runs on its own (torchparity's
    own ``Draws`` marker becomes an identity stub)."""
    imports: List[str] = []
    defs: List[str] = []
    bound: Dict[str, str] = {}  # a name defined in the snippet -> the module it comes from
    stub = _gather(body.__module__, {body.__name__}, imports, defs, bound, own=body.__name__)
    out = ["import torch"] + [t for t in imports if t != "import torch"]
    if stub:
        out.append(_DRAWS_STUB)
    own = defs.pop()
    return "\n".join(out) + "\n\n\n" + "\n\n\n".join(defs + [textwrap.dedent(own)])


def _gather(module_name: str, wanted: set, imports: List[str], defs: List[str],
            bound: Dict[str, str], own: str = "") -> bool:
    """Add to ``imports`` / ``defs`` what ``wanted`` names of ``module_name`` need, in module
    order (``own``: the function itself, added last); a helper a case module imports from
    another torchparity module (a sibling case module, ``sources.world``) is brought in from
    there the same way, under its own name. Whether torchparity's ``Draws`` is read."""
    if module_name not in sys.modules:
        importlib.import_module(module_name)
    parts = _module_parts(module_name)
    need = set(wanted)
    grew = True
    while grew:
        grew = False
        for p in parts:
            if not p.is_import and p.binds & need and not p.reads <= need:
                need |= p.reads
                grew = True
    stub = "Draws" in need
    for p in parts:
        if p.is_import and p.binds & need and not p.internal and p.text not in imports:
            imports.append(p.text)
    for p in parts:  # helpers imported from another torchparity module: their definitions
        if not (p.is_import and p.internal and p.origin):
            continue
        for local, remote in p.names:
            if local not in need or local == "Draws":
                continue
            target = importlib.import_module(p.origin)
            if isinstance(getattr(target, remote, None), types.ModuleType):
                continue  # a module object: not a helper to bring in
            if local != remote:
                raise ValueError(f"{module_name}: {remote} imported as {local}: no standalone snippet")
            if bound.get(local, p.origin) != p.origin:
                raise ValueError(f"{module_name}: two helpers called {local}")
            if local not in bound:
                bound[local] = p.origin
                stub |= _gather(p.origin, {local}, imports, defs, bound)
    mine = [p for p in parts if not p.is_import and p.binds & need and not (own and own in p.binds)]
    for p in mine:
        for name in p.binds:
            if bound.setdefault(name, module_name) != module_name:
                raise ValueError(f"{module_name}: two helpers called {name}")
        if p.text not in defs:
            defs.append(p.text)
    if own:
        defs.append(next(p.text for p in parts if own in p.binds and not p.is_import))
    return stub


def reads_dtype(body: Callable[..., Any]) -> bool:
    """Whether ``body`` reads the dtype it is called with: the binding of its second
    parameter (``body(device, dtype, ...)``), in its own code or in a function nested in
    it that closes over it. By the binding, not by a name: ``y.dtype``, a module-level
    helper that happens to be called ``dtype`` and a helper's own local ``dtype`` are not
    reads (``torch.Tensor``'s legacy-constructor case reads none, and was asked in four
    dtypes that all ran float32). A helper the body hands ``dtype`` to is read by the body
    itself. A body taking ``*args`` is taken to read it (an answer that cannot depend on
    it need not be asked in every float dtype)."""
    code = getattr(body, "__code__", None)
    if code is None:
        return True
    params = code.co_varnames[:code.co_argcount]
    if len(params) < 2:
        return bool(code.co_flags & inspect.CO_VARARGS)
    return _reads_binding(code, params[1], top=True)


def _reads_binding(code: Any, name: str, top: bool) -> bool:
    """Whether ``code`` reads its local ``name`` (``top``) or, nested, the ``name`` it
    closes over (a free variable); a nested function whose own local shadows it does not."""
    if not top and name not in code.co_freevars:
        return False
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_CLOSURE",) or ins.opname in _NOT_A_READ or ins.opname in (
                "LOAD_GLOBAL", "LOAD_NAME"):
            continue
        if not ins.opname.startswith("LOAD_"):
            continue
        if ins.argval == name or (isinstance(ins.argval, tuple) and name in ins.argval):
            return True
    return any(_reads_binding(c, name, top=False) for c in code.co_consts if hasattr(c, "co_code"))


class BlockSource(Source):
    """A source whose scenarios are a table of :class:`Case` rows (and :class:`Excluded`
    ones): it owns the APIs under :attr:`prefixes`, answers each case through
    :func:`probed` (the CPU's own refusals become expected exceptions) and says why not
    for the rest. A subclass gives :meth:`table` and its words (:meth:`describe`), and
    overrides only what is really its own."""

    prefixes: Tuple[str, ...] = ()
    scenario_id: str = "case"  # the id of its scenarios when a case names none
    quiet: bool = False  # the bodies' warnings are not shown
    # the cases are run once on the CPU at planning (:func:`probed`: the CPU's own refusals
    # become expected raises, a case reading ``dtype`` is widened); False: asked as given
    probe: bool = True
    outside: str = "not an API of this source"  # why_not for an API it does not own
    no_case: str = "no case for this API here"  # why_not for an owned API without a case
    cpu_cannot: str = "the CPU itself cannot run this case"  # why_not for a case with no scenario

    @abstractmethod
    def table(self) -> Sequence[Row]:
        """Its cases and exclusions (imported on first use)."""

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        """The scenario's words: ``en``, ``zh``, ``expect_en``, ``expect_zh``."""
        return dict(en=f"{api} used on the device: the same answer as on the CPU",
                    zh=f"{api} 在设备上使用：结果与 CPU 相同",
                    expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致")

    def _rows(self) -> Tuple[Dict[str, Case], Dict[str, str]]:
        rows = self.__dict__.get("_rows_cache")
        if rows is None:
            cases: Dict[str, Case] = {}
            excluded: Dict[str, str] = {}
            for row in self.table():
                if isinstance(row, Excluded):
                    excluded[row.api] = row.reason
                    continue
                for name in row.apis:
                    if name in cases:
                        raise ValueError(f"source {self.name}: two cases for {name}")
                    cases[name] = row
            rows = self.__dict__["_rows_cache"] = (cases, excluded)
        return rows

    def case_of(self, api: str) -> Optional[Case]:
        return self._rows()[0].get(api)

    def excluded(self) -> Dict[str, str]:
        return dict(self._rows()[1])

    def owns(self, api: str) -> bool:
        return api.startswith(self.prefixes) if self.prefixes else api in self._rows()[0]

    def scenarios(self, api: str, obj: Any) -> List[Scenario]:
        cache = self.__dict__.setdefault("_scenarios_cache", {})
        if api not in cache:
            case = self.case_of(api) if self.owns(api) else None
            cache[api] = () if case is None else tuple(self.make(api, case))
        return list(cache[api])

    def make(self, api: str, case: Case) -> List[Scenario]:
        """The scenarios of one case (through :func:`probed`)."""
        fn = case.fn(api, quiet=self.quiet)
        words = self.describe(api, case)
        if case.raises is not None or not self.probe:  # every device must raise it: nothing to probe
            return [Scenario(
                id=case.id or self.scenario_id, api=api, fn=fn,
                description=Text(en=words["en"], zh=words["zh"]),
                expected=Text(en=words["expect_en"], zh=words["expect_zh"]),
                dtypes=case.dtypes, tags=case.tags, raises=case.raises, module=fn.__module__,
                source=self.name, code=case.snippet(api))]
        return probed(case.id or self.scenario_id, api, self.name, fn, case.dtypes,
                      code=case.snippet(api), tags=case.tags, **words)

    def why_not(self, api: str, obj: Any) -> str:
        cases, excluded = self._rows()
        if not self.owns(api):
            return self.outside
        if api in excluded:
            return excluded[api]
        if api in cases:
            return self.cpu_cannot
        return self.no_case

    def members(self) -> List[str]:
        return sorted(self._rows()[0])

    def __repr__(self) -> str:
        return f"<source {self.name} (order {self.order})>"
