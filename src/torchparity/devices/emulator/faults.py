"""Injected device bugs and device noise: the instrument that measures the judge.

Three environment variables, read once per process at import (worker processes and the
rank processes of a 2-rank world inherit the environment, so every process that hosts the
emulated device sees the same setting):

- ``TORCHPARITY_EMU_FAULT=NAME[,NAME...]``: realistic device *bugs*, by name, from the
  fault modules loaded. A name may be targeted at one aten op, ``NAME@aten.add.Tensor``:
  the fault then acts on that op overload only (the oracle's per-op mutants). They change
  device results only: the CPU reference never reaches the emulator's kernels, so it stays
  untouched. A run under a fault must turn red; a row that stays green is a survivor,
  i.e. a scenario too weak to see that bug.
- ``TORCHPARITY_EMU_FAULT_MODULE=MODULE[,MODULE...]``: fault modules beside the built-in
  ones (``catalogue``: the project's catalogue; ``mutants``: generic per-op mutants), each
  an importable module name or a path to a ``.py`` file. The interface (``docs/faults.md``):
  ``FAULTS`` (name -> one line), ``wrap(fault, op, call)`` (a wrapper over an op's CPU call,
  or None where the fault leaves ``op`` alone), and optionally ``touches(fault, op_name)``
  (which ops it can change; the oracle's applicability), ``collective(fault, name,
  outputs, inputs, rank, size)`` (after a collective finished, may change what it wrote)
  and ``device(fault, name, value)`` (what a device-module query such as
  ``memory_allocated`` answers).
- ``TORCHPARITY_EMU_NUMERICS=device``: a *correct* device's noise (``noise.py``, rules in
  ``profiles/noise/device.yaml``): HF32 convolutions, reductions in another order, f16/bf16
  computed through f32, transcendental functions within their ULP bound. A run under the
  noise must stay green; a red row is a false fail of the judge.

Both act where device results are produced: an op's :class:`~.dispatch.Plan` is built once
per op and, only when one of the variables is set, its CPU call is wrapped here
(:func:`install`). Unset, nothing is wrapped and the per-op path does not change.

``TORCHPARITY_EMU_FAULT_LOG=FILE`` (the oracle's probe): a wrapper that accepts a ``fire``
keyword gets a callable that appends the fault's active name (``NAME@op`` when targeted)
to FILE whenever the wrapper actually changed a result (a mutant that changes nothing is no
mutant of that run).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from . import catalogue, mutants

ENV = "TORCHPARITY_EMU_FAULT"
MODULE_ENV = "TORCHPARITY_EMU_FAULT_MODULE"
LOG_ENV = "TORCHPARITY_EMU_FAULT_LOG"
API_ENV = "TORCHPARITY_EMU_FAULT_API"  # the API whose case runs (run.handlers sets it under LOG_ENV)
NUMERICS_ENV = "TORCHPARITY_EMU_NUMERICS"
NUMERICS_MODES = ("device",)
BUILTIN: Tuple[ModuleType, ...] = (catalogue, mutants)

_BASE: Dict[Any, Callable] = {}  # op -> its CPU call before any wrapping here
_LOADED: Dict[str, ModuleType] = {}  # a MODULE_ENV entry -> its module


def load_module(ref: str) -> ModuleType:
    """The fault module named by ``ref``: a ``.py`` path or an importable name. Raises
    ValueError (one line) when it cannot be loaded or lacks ``FAULTS`` / ``wrap``."""
    ref = ref.strip()
    if ref in _LOADED:
        return _LOADED[ref]
    try:
        if ref.endswith(".py") or os.sep in ref:
            path = os.path.abspath(ref)
            name = "torchparity_fault_module_" + "".join(c if c.isalnum() else "_" for c in path)
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"no module at {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(ref)
    except Exception as e:  # noqa: BLE001 - any failure of a user's module is one line
        raise ValueError(f"{MODULE_ENV}: cannot load fault module {ref!r}: {type(e).__name__}: {e}") from None
    if not isinstance(getattr(module, "FAULTS", None), dict) or not callable(getattr(module, "wrap", None)):
        raise ValueError(f"{MODULE_ENV}: {ref!r} is no fault module (it needs a FAULTS dict and a wrap function)")
    _LOADED[ref] = module
    return module


def module_refs(environ=None) -> List[str]:
    environ = os.environ if environ is None else environ
    return [p.strip() for p in (environ.get(MODULE_ENV) or "").split(",") if p.strip()]


def modules(environ=None) -> Tuple[ModuleType, ...]:
    """The fault modules of ``environ``: the built-in ones, then those it names (a later
    module's fault of the same name wins)."""
    return BUILTIN + tuple(load_module(r) for r in module_refs(environ))


def catalogue_of(mods: Sequence[ModuleType]) -> Dict[str, Tuple[str, ModuleType]]:
    """fault name -> (its line, its module)."""
    out: Dict[str, Tuple[str, ModuleType]] = {}
    for m in mods:
        for name, line in m.FAULTS.items():
            out[name] = (str(line), m)
    return out


def split(name: str) -> Tuple[str, Optional[str]]:
    """``(fault, target op)`` of ``fault@aten.op.overload`` (target None when untargeted)."""
    fault, _, target = name.partition("@")
    return fault.strip(), (_op_key(target) if target.strip() else None)


def _op_key(op_name: str) -> str:
    """``aten.add.Tensor`` for ``aten::add.Tensor`` / ``aten.add.Tensor``; the default
    overload spelled ``aten.neg.default`` as ``aten.neg``."""
    name = op_name.strip().replace("::", ".")
    return name[:-len(".default")] if name.endswith(".default") else name


def op_name_of(op) -> str:
    schema = op._schema
    return _op_key(schema.name + (f".{schema.overload_name}" if schema.overload_name else ""))


def parse(text: Optional[str], known: Optional[Dict[str, Any]] = None) -> Tuple[Tuple[str, ...], List[str]]:
    """(known fault names in the order given, unknown names) of a ``TORCHPARITY_EMU_FAULT``
    value; a name targeted at an op (``NAME@aten.op``) is known when its fault is."""
    known = FAULTS if known is None else known
    names: List[str] = []
    unknown: List[str] = []
    for part in (text or "").split(","):
        name = part.strip()
        if not name:
            continue
        (names if split(name)[0] in known else unknown).append(name)
    return tuple(dict.fromkeys(names)), unknown


def problem(environ=None) -> Optional[str]:
    """One line when the environment names a fault module that cannot be loaded, an
    unknown fault or an unknown numerics mode, else None."""
    environ = os.environ if environ is None else environ
    try:
        known = catalogue_of(modules(environ))
    except ValueError as e:
        return str(e)
    _, unknown = parse(environ.get(ENV), known)
    if unknown:
        return (f"{ENV}: unknown fault {', '.join(repr(u) for u in unknown)} "
                f"(known: {', '.join(known)})")
    mode = (environ.get(NUMERICS_ENV) or "").strip()
    if mode and mode not in NUMERICS_MODES:
        return f"{NUMERICS_ENV}: unknown mode {mode!r} (known: {', '.join(NUMERICS_MODES)})"
    return None


def _start() -> Dict[str, Tuple[str, ModuleType]]:
    try:
        return catalogue_of(modules())
    except ValueError:  # the adapter reports it (problem()); this process runs no fault
        return catalogue_of(BUILTIN)


_CATALOGUE: Dict[str, Tuple[str, ModuleType]] = _start()
# name -> what the bug is (one line, shown in the docs and by the oracle)
FAULTS: Dict[str, str] = {name: line for name, (line, _) in _CATALOGUE.items()}
ACTIVE: FrozenSet[str] = frozenset(parse(os.environ.get(ENV))[0])
NOISE: bool = (os.environ.get(NUMERICS_ENV) or "").strip() == "device"
# the built-in fault read where collectives are made, as a plain module flag
COLLECTIVE_NOOP = "collective-noop" in ACTIVE


def labels(environ=None) -> List[str]:
    """What is injected, as shown in the environment and on every row:
    ``fault:<name>`` per fault, ``numerics:device`` for the noise."""
    environ = os.environ if environ is None else environ
    try:
        known: Dict[str, Any] = catalogue_of(modules(environ))
    except ValueError:
        known = FAULTS
    names, _ = parse(environ.get(ENV), known)
    out = [f"fault:{n}" for n in names]
    if (environ.get(NUMERICS_ENV) or "").strip() == "device":
        out.append("numerics:device")
    return out


def plug(*refs: str) -> None:
    """Know the faults of the modules ``refs`` in this process (none becomes active): what
    a process that plans fault runs without hosting them needs (the oracle's parent)."""
    global _CATALOGUE, FAULTS
    _CATALOGUE = catalogue_of(tuple(m for _, m in _CATALOGUE.values()) + tuple(load_module(r) for r in refs))
    FAULTS = {name: line for name, (line, _) in _CATALOGUE.items()}


def module_of(fault: str) -> ModuleType:
    return _CATALOGUE[split(fault)[0]][1]


def touches(fault: str, op_name: str) -> bool:
    """Whether ``fault`` (a name, optionally ``@``-targeted) can change what op ``op_name``
    (``aten.add``, ``aten::add.Tensor``, ``c10d.allreduce_``) returns on the device: the
    oracle's applicability test, answered by the fault's module (``touches``; a module
    without one: wherever its ``wrap`` wraps the op)."""
    base, target = split(fault)
    if base not in _CATALOGUE:
        return False
    if target is not None and not _same_op(target, op_name):
        return False
    module = _CATALOGUE[base][1]
    asks = getattr(module, "touches", None)
    if asks is not None:
        return bool(asks(base, op_name))
    op = catalogue.resolve_op(op_name)
    if op is None:
        return False
    try:
        return module.wrap(base, op, lambda *a, **k: None) is not None
    except Exception:  # noqa: BLE001
        return False


def _same_op(target: str, op_name: str) -> bool:
    name = _op_key(op_name)
    if name == target or _packet(name) == target:
        return True
    op = catalogue.resolve_op(op_name)
    return op is not None and hits(target, op)


def _packet(name: str) -> str:
    return ".".join(name.split(".")[:2])


def hits(target: str, op) -> bool:
    """Whether a fault targeted at ``target`` acts on OpOverload ``op``: ``aten.sort`` (a
    footprint's name, without overload) names every overload of the op, ``aten.sort.stable``
    that overload only."""
    name = op_name_of(op)
    return name == target or (target.count(".") == 1 and _packet(name) == target)


@contextmanager
def injecting(names=(), noise: bool = False, modules: Sequence[Any] = ()) -> Iterator[None]:
    """Tests (and the emulated adapter's ``clean()``): ``names`` (and the noise) active in this process while open, with the
    fault ``modules`` (module objects or refs) plugged in beside the built-in ones; every
    op plan built so far rebuilt on entry and on exit (a real run sets the variables
    before the process starts and never changes them)."""
    global ACTIVE, NOISE, COLLECTIVE_NOOP, _CATALOGUE, FAULTS
    saved = ACTIVE, NOISE, _CATALOGUE, FAULTS
    plugged = tuple(load_module(m) if isinstance(m, str) else m for m in modules)
    catalogue_now = catalogue_of(tuple(m for _, m in _CATALOGUE.values()) + plugged) if plugged else _CATALOGUE
    unknown = [n for n in names if split(n)[0] not in catalogue_now]
    if unknown:
        raise ValueError(f"unknown fault(s) {unknown}")
    _CATALOGUE = catalogue_now
    FAULTS = {name: line for name, (line, _) in _CATALOGUE.items()}
    ACTIVE, NOISE = frozenset(names), bool(noise)
    COLLECTIVE_NOOP = "collective-noop" in ACTIVE
    _rebuild()
    try:
        yield
    finally:
        ACTIVE, NOISE, _CATALOGUE, FAULTS = saved
        COLLECTIVE_NOOP = "collective-noop" in ACTIVE
        _rebuild()


# what rebuilds the op plans built so far (the dispatcher registers itself at import, so
# this module never imports it)
_REBUILDERS: List[Callable[[], None]] = []


def on_change(rebuild: Callable[[], None]) -> None:
    """``rebuild`` is called whenever :func:`injecting` changes what is active."""
    _REBUILDERS.append(rebuild)


def base_call(op) -> Optional[Callable]:
    """The op's call before any fault or noise wrapped it (None if never wrapped)."""
    return _BASE.get(op)


def _rebuild() -> None:
    for rebuild in _REBUILDERS:
        rebuild()


def _firing(fault: str) -> Optional[Callable[[], None]]:
    path = os.environ.get(LOG_ENV)
    if not path:
        return None

    def fire() -> None:
        # the API whose case is running (set by the worker, inherited by a world's ranks):
        # the oracle credits a fire to the API it happened in, not to its whole round
        api = os.environ.get(API_ENV)
        with open(path, "a") as fh:
            fh.write(f"{fault}\t{api}\n" if api else fault + "\n")
    return fire


def _wrapper_of(module: ModuleType, fault: str, op, call: Callable, plan, tensor_kind,
                label: Optional[str] = None) -> Optional[Callable]:
    wrap = module.wrap
    try:
        params = inspect.signature(wrap).parameters
    except (TypeError, ValueError):
        params = {}
    kw: Dict[str, Any] = {}
    if "plan" in params:
        kw["plan"] = plan
    if "tensor_kind" in params:
        kw["tensor_kind"] = tensor_kind
    if "fire" in params:
        kw["fire"] = _firing(label or fault)  # the active name, target included
    return wrap(fault, op, call, **kw)


# -- wrapping a plan --------------------------------------------------------------------
def install(plan, tensor_kind: Any, profile_name: Optional[str]) -> None:
    """Wrap ``plan.call`` with the active faults (each by its module's ``wrap``; a targeted
    name only on its op) and the device noise of profile ``profile_name``. Called once per
    op plan, only when something is active; ``tensor_kind`` is the plan's return kind of a
    new tensor (the catalogue's ``inplace-copy`` changes the plan's return spec)."""
    op = plan.op
    if getattr(plan, "meta_view", False):  # a pure view: its Meta result is what faults may wrap
        meta = plan.meta_call
        for fault in sorted(ACTIVE):
            base, target = split(fault)
            if target is not None and not hits(target, op):
                continue
            wrapped = _wrapper_of(_CATALOGUE[base][1], base, op, meta, plan, tensor_kind, fault)
            if wrapped is not None:
                meta = wrapped
        plan.meta_call = meta
    call = _BASE.setdefault(op, plan.call)
    if NOISE:
        from .noise import wrap as noise_wrap

        call = noise_wrap(op, call, profile_name)
    for fault in sorted(ACTIVE):
        base, target = split(fault)
        if target is not None and not hits(target, op):
            continue
        wrapped = _wrapper_of(_CATALOGUE[base][1], base, op, call, plan, tensor_kind, fault)
        if wrapped is not None:
            call = wrapped
    plan.call = call


# -- hooks outside kernels --------------------------------------------------------------
def collective_hooks() -> List[Tuple[str, Callable]]:
    """(fault, hook) of the active faults whose module has a ``collective`` hook."""
    out = []
    for fault in sorted(ACTIVE):
        base, _ = split(fault)
        hook = getattr(_CATALOGUE[base][1], "collective", None)
        if hook is not None:
            out.append((fault, hook))
    return out


def _flat(x: Any) -> List[Any]:
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _flat(v)]
    return [x] if hasattr(x, "clone") else []


def after_collective(name: str, outputs: Any, inputs: Any, rank: int, size: int) -> None:
    """Every active ``collective`` hook over a finished collective's outputs (in place);
    a hook that changed them fires (the oracle's probe)."""
    for fault, hook in collective_hooks():
        fire = _firing(fault)
        before = [t.clone() for t in _flat(outputs)] if fire else None
        hook(split(fault)[0], name, outputs, inputs, rank, size)
        if fire and any(not b.equal(t) for b, t in zip(before, _flat(outputs))):
            fire()


def device_value(name: str, value: Any) -> Any:
    """What a device-module query (``memory_allocated``, ``memory_stats``) answers under the
    active faults' ``device`` hooks; a hook that changed the answer fires."""
    for fault in sorted(ACTIVE):
        base, _ = split(fault)
        hook = getattr(_CATALOGUE[base][1], "device", None)
        if hook is not None:
            new = hook(base, name, value)
            fire = _firing(fault)
            if fire and new != value:
                fire()
            value = new
    return value
