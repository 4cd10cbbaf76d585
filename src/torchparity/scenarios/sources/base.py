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

import contextlib
import dis
import re
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Dict, Iterable, List, Optional, Sequence, Tuple

import torch

from ...results.models import Text
from ..registry import Draws, Raises, Scenario

SEED = 0
FLOATS = ("float32", "float64", "float16", "bfloat16")


_NOT_A_READ = ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR", "LOAD_CONST", "LOAD_SMALL_INT")


def _reads(code: Any, name: str) -> bool:
    """Whether compiled ``code`` (or a function defined in it) reads the variable ``name``
    (an attribute of that name, ``t.dtype``, does not count)."""
    for ins in dis.get_instructions(code):
        if not ins.opname.startswith("LOAD_") or ins.opname in _NOT_A_READ:
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
    """Run ``fn("cpu", dtype)`` once per dtype; the exception each raised (None: none)."""
    out: Dict[str, Optional[BaseException]] = {}
    with torch.random.fork_rng(devices=[]):
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
