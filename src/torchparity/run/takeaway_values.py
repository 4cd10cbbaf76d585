"""Take a value away: constants, class attributes and C types' members (issue 48).

``run.takeaway`` takes a *call* away. An API that is a value — a constant
(``torch.ao.quantization.qconfig.float_qparams_weight_only_qconfig``), an enum member
(``ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT``), a class attribute
(``Kumaraswamy.support``, ``LowRankMultivariateNormal.has_rsample``), a class-level
property (``torch.FloatStorage.dtype``), a flag (``torch.backends.cudnn.deterministic``) or
a C type's property (``torch.monitor.Stat.count``, ``torch.Tag.name``) — has no call: what
the case does with it is *read* it. So the attribute is **rebound on its owner** (the
module or class the API's name says, restored after the run) to a stand-in of the same
kind with another value, and the case goes on: a judged outcome that changes means the
case observes the value (what disappears is its own footprint, as for a function: for a
value, usually nothing, unless the scenario's device work steers by it); an outcome that
does not change is hollow, never counted (``run.execute.hollow``).

How it is rebound (``how = "value"``):

- on a class (or a module object's class, ``torch.backends.cudnn``'s flags): the attribute
  is replaced, on the owner, by a descriptor that reads the original (plain value,
  ``classproperty``, ``property``, pybind property, ``ContextProp``) and hands back the
  stand-in; a write goes to the original's setter where it has one. Reads are counted
  (``calls``): a case that never reads the value is hollow by the same rule as a call;
- on a module: the global is rebound, in the owner and in every module that re-exports it
  under the same name (``from .qconfig import *``). Reads of a module global cannot be
  counted (``calls`` is None): only the outcome decides.

What stands in (:func:`stand_in`, the ``perturbed`` stand-in of a value): a boolean
negated; an enum member the next member of its enum; a dtype another of its family
(float32 <-> float64, quint8 -> qint8, ...); a distribution constraint another constraint
of the same event dimension (``real``, or ``positive`` for ``real``); a dict or list item by
item; numbers, strings and sizes as :func:`run.takeaway.perturbed` moves them; any other
object another value of its exact type that its module holds (another ``QConfig``).
``replayed`` is the value itself.

Where a value cannot be rebound, nothing is taken away and the reason is named
(:func:`value_takeaway`): a C type's slot that refuses assignment (``C type slot: cannot
rebind``), an owner that cannot be found, a value of a kind with no stand-in.
"""

from __future__ import annotations

import contextlib
import enum
import sys
import threading
import types
import warnings
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from ..scenarios.sources.base import resolve_quiet
from .takeaway import PERTURBED, REPLAYED, is_data, perturbed

VALUE = "value"  # how: the value rebound on its owner

# --- stand-ins ---------------------------------------------------------------------------

_FAMILIES: Tuple[Tuple[torch.dtype, ...], ...] = (
    (torch.float32, torch.float64),
    (torch.float16, torch.bfloat16),
    (torch.complex64, torch.complex128),
    (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8),
    (torch.bool, torch.uint8),
    (torch.quint8, torch.qint8, torch.qint32, torch.quint4x2, torch.quint2x4),
)


def other_dtype(dtype: torch.dtype) -> torch.dtype:
    """Another dtype of ``dtype``'s family (the next in its row, cyclic): a case that makes
    a tensor of it can still make one, of another element size or kind."""
    for family in _FAMILIES:
        if dtype in family:
            return family[(family.index(dtype) + 1) % len(family)]
    return torch.float64 if dtype != torch.float64 else torch.float32


def _other_constraint(c: Any) -> Any:
    from torch.distributions import constraints

    base = constraints.positive if c is constraints.real else constraints.real
    dim = getattr(c, "event_dim", 0) or 0
    return constraints.independent(base, dim) if dim else base


def _sibling(value: Any, home: Any, name: str = "") -> Any:
    """Another public value of ``value``'s exact type held by the module ``home`` (the
    next by name after ``name``, cyclic), or None."""
    space = getattr(home, "__dict__", None)
    if not isinstance(space, dict):
        return None
    names = sorted(k for k, v in space.items() if type(v) is type(value) and not k.startswith("_")
                   and v is not value)
    if not names:
        return None
    after = [k for k in names if k > name]
    return space[(after or names)[0]]


class NoStandIn(ValueError):
    """A value of a kind with no stand-in of the same kind."""


def stand_in(value: Any, home: Any = None, name: str = "") -> Any:
    """A value of ``value``'s kind with another value (the module doc); ``home``: the
    module where another value of an object's type is looked for (the API's owner, else
    the type's module). Raises :class:`NoStandIn` where there is none."""
    from torch.distributions.constraints import Constraint

    if isinstance(value, bool):
        return not value
    if isinstance(value, enum.Enum):
        members = list(type(value))
        if len(members) < 2:
            raise NoStandIn(f"{type(value).__name__} has one member")
        return members[(members.index(value) + 1) % len(members)]
    if isinstance(value, torch.dtype):
        return other_dtype(value)
    if isinstance(value, Constraint):
        return _other_constraint(value)
    if isinstance(value, dict) and type(value) is dict:
        return {k: stand_in(v, home) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields") and not isinstance(value, torch.Size):
        return type(value)(stand_in(v, home) for v in value)
    if value is None or isinstance(value, torch.device):
        raise NoStandIn(f"{value!r} has no other value the case could use")
    if isinstance(value, (int, float, complex, str, bytes, torch.Size, torch.Tensor)):
        return perturbed(value, 0)
    for where in (home, sys.modules.get(getattr(type(value), "__module__", "") or "")):
        other = _sibling(value, where, name) if where is not None else None
        if other is not None:
            return other
    raise NoStandIn(f"no other {type(value).__name__} to stand in")


# --- where the value lives -----------------------------------------------------------------

HEAPTYPE, IMMUTABLETYPE = 1 << 9, 1 << 8


def c_slot(cls: type) -> bool:
    """A C type that refuses attribute assignment (a static or immutable type:
    ``torch._C.TensorBase``, ``torch._C.Generator``)."""
    flags = getattr(cls, "__flags__", 0)
    return not flags & HEAPTYPE or bool(flags & IMMUTABLETYPE)


def _raw(holder: type, name: str) -> Tuple[Optional[type], Any]:
    """(the class of ``holder``'s MRO that defines ``name``, what it holds there)."""
    for cls in getattr(holder, "__mro__", ()):
        if name in vars(cls):
            return cls, vars(cls)[name]
    return None, None


def _set(cls: type, name: str, value: Any) -> None:
    try:
        setattr(cls, name, value)
    except (AttributeError, TypeError):  # an enum refuses its members' reassignment
        type.__setattr__(cls, name, value)


def _del(cls: type, name: str) -> None:
    try:
        delattr(cls, name)
    except (AttributeError, TypeError):
        type.__delattr__(cls, name)


class _State(threading.local):
    depth = 0


class _Read:
    """Stands in a class's attribute while the run lasts: each read reads the original
    (``raw``: a plain value or a descriptor) and hands ``take`` the value."""

    def __init__(self, raw: Any, take: "ValueTakeaway"):
        self.raw, self.take = raw, take

    def __get__(self, obj: Any, cls: Optional[type] = None) -> Any:
        get = getattr(type(self.raw), "__get__", None)
        value = get(self.raw, obj, cls) if get is not None else self.raw
        if obj is None and value is self.raw and get is not None:
            return value  # an instance descriptor read on the class: itself, no read
        return self.take.read(value)


class _ReadWrite(_Read):
    """:class:`_Read` for a data descriptor: writes (``cudnn.deterministic = True``) go to
    the original."""

    def __set__(self, obj: Any, value: Any) -> None:
        type(self.raw).__set__(self.raw, obj, value)

    def __delete__(self, obj: Any) -> None:
        type(self.raw).__delete__(self.raw, obj)


def _inert(value: Any) -> bool:
    """Plain data or an enum member: reading it does nothing but hand over the value."""
    return is_data(value) or isinstance(value, enum.Enum)


class ValueTakeaway:
    """A value API, intercepted as :class:`run.takeaway.Takeaway` intercepts a call (the
    same interface ``run.execute.take_away`` reads): :meth:`recording` counts the reads
    (and notes a kind with no stand-in); :meth:`stubbing` hands each read a stand-in
    (``perturbed``) or the value itself (``replayed``)."""

    how = VALUE
    init = None
    constructed = 0
    replays_data = True  # replaying a value hands back the value: nothing of the API's runs

    def __init__(self, api: str, owner: Any, name: str, value: Any, home: Any):
        self.api, self.owner, self.name, self.value, self.home = api, owner, name, value, home
        self.why = ""
        self.targets: List[Any] = []
        self.names: List[str] = []
        self.results: Dict[int, List[Any]] = defaultdict(list)
        self.during: Dict[str, int] = defaultdict(int)
        self.reads = 0
        self._mode: Optional[str] = None
        self._state = _State()
        self.counted = _where(owner, name)[0] in (CLASS, GETATTR)
        self._kinds: set = set()
        # an object the case works through (a QConfig's observers, a constraint's check),
        # not data: what its stand-in still does may be the value's work (the frames keep it)
        self.works = not _inert(value) and not (
            self.counted and hasattr(type(value), "__get__") and not callable(value))

    @property
    def calls(self) -> Optional[int]:
        """Reads of the value in the recorded run (None where they cannot be counted: a
        module global)."""
        return self.reads if self.counted else None

    def read(self, value: Any) -> Any:
        if self._mode is None or self._state.depth:
            return value
        if self._mode == "record":  # counted, not kept: a replayed value is the value itself
            self.reads += 1
            self._check(value)
            return value
        if self._mode == REPLAYED:
            return value
        self._state.depth += 1
        try:
            return stand_in(value, self.home, self.name)
        except NoStandIn:
            return value
        finally:
            self._state.depth -= 1

    def _check(self, value: Any) -> None:
        """A value read with no stand-in of its kind (a tensor's device): the value cannot be
        taken away; said so (``how`` None) rather than reading the same outcome as hollow."""
        kind = type(value)
        if kind in self._kinds:
            return
        self.works = self.works or not _inert(value)
        self._kinds.add(kind)
        self._state.depth += 1
        try:
            stand_in(value, self.home, self.name)
        except NoStandIn as exc:
            self.how, self.why = None, f"a {kind.__name__} value read with no stand-in of its kind ({exc})"
        except Exception:  # a stand-in that could not be made here is tried, and seen, in the run
            pass
        finally:
            self._state.depth -= 1

    @contextlib.contextmanager
    def _active(self, mode: str):
        self._mode = mode
        undo: List[Callable[[], None]] = []
        try:
            how, cls = _where(self.owner, self.name)
            if how == CLASS:
                undo.append(_wrap(cls, self.name, self))
            elif how == GETATTR:
                undo.append(_wrap_getattr(cls, self.name, self))
            elif mode == PERTURBED:  # a module global: rebound where it is bound by its name
                undo.append(_rebind_global(self.owner, self.name, stand_in(self.value, self.home, self.name)))
            yield self
        finally:
            for u in reversed(undo):
                u()
            self._mode = None

    def recording(self):
        self.results = defaultdict(list)
        self.reads = 0
        self._kinds = set()
        self.how, self.why = VALUE, ""
        return self._active("record")

    def stubbing(self, kind: str):
        return self._active(kind)


CLASS, GETATTR, GLOBAL = "class", "getattr", "global"


def _where(owner: Any, name: str) -> Tuple[str, Optional[type]]:
    """How a read of ``owner.name`` is intercepted, and on which class:

    - ``class``: ``owner`` itself where it is a class, else the owner's class where that
      defines ``name`` (``torch.backends.cudnn``'s flags, a module object's properties);
    - ``getattr``: the owner's class answers ``name`` through its ``__getattr__``
      (``torch.backends.cuda.matmul.allow_tf32``): that is wrapped;
    - ``global``: a module's global (not counted);
    - ``""``: none of these (an object's own attribute)."""
    if isinstance(owner, type):
        return CLASS, owner
    cls, _ = _raw(type(owner), name)
    if cls is not None and cls not in (types.ModuleType, object):
        return CLASS, type(owner)
    if isinstance(owner, types.ModuleType) and name in vars(owner):
        return GLOBAL, None
    space = getattr(owner, "__dict__", None)
    if hasattr(type(owner), "__getattr__") and not (isinstance(space, dict) and name in space):
        return GETATTR, type(owner)
    return "", None


def _holder(owner: Any, name: str) -> Optional[type]:
    """The class whose attribute ``name`` stands in for reads of ``owner.name`` (None:
    a module global, or an object's own attribute)."""
    how, cls = _where(owner, name)
    return cls if how == CLASS else None


def _wrap_getattr(cls: type, name: str, take: "ValueTakeaway") -> Callable[[], None]:
    """Wrap ``cls.__getattr__`` so that reads of ``name`` hand ``take`` the value."""
    own = "__getattr__" in vars(cls)
    original = vars(cls).get("__getattr__")
    inherited = cls.__getattr__

    def __getattr__(self, attr):
        value = inherited(self, attr)
        return take.read(value) if attr == name else value

    cls.__getattr__ = __getattr__

    def undo() -> None:
        if own:
            cls.__getattr__ = original
        else:
            del cls.__getattr__
    return undo


def _wrap(holder: type, name: str, take: ValueTakeaway) -> Callable[[], None]:
    _, raw = _raw(holder, name)
    own = name in vars(holder)
    original = vars(holder)[name] if own else None
    wrapper = (_ReadWrite if hasattr(type(raw), "__set__") else _Read)(raw, take)
    _set(holder, name, wrapper)

    def undo() -> None:
        if own:
            _set(holder, name, original)
        else:
            _del(holder, name)
    return undo


def _rebind_global(module: Any, name: str, value: Any) -> Callable[[], None]:
    """Rebind ``module.name`` and every loaded module's global of that name bound to the
    same object (a re-export) to ``value``; returns the undo."""
    original = getattr(module, name)
    bound = [m for m in list(sys.modules.values())
             if isinstance(getattr(m, "__dict__", None), dict) and m.__dict__.get(name, None) is original]
    if module not in bound:
        bound.append(module)
    for m in bound:
        setattr(m, name, value)

    def undo() -> None:
        for m in bound:
            setattr(m, name, original)
    return undo


def value_takeaway(api: str, value: Any, owner: Any = None) -> Tuple[Optional[ValueTakeaway], str]:
    """A :class:`ValueTakeaway` for the API ``api`` whose object is ``value`` (not a
    function), or (None, the reason it cannot be taken away). ``owner``: the module or
    class holding it (default: what the API's name without its last part resolves to)."""
    if "." not in api:
        return None, "a value whose owner is not named"
    owner_name, name = api.rsplit(".", 1)
    owner = owner if owner is not None else resolve_quiet(owner_name)
    missing = object()
    with warnings.catch_warnings():  # a legacy storage class's dtype warns of its deprecation
        warnings.simplefilter("ignore")
        current = getattr(owner, name, missing) if owner is not None else missing
    if current is missing:
        return None, f"a {type(value).__name__} value whose owner {owner_name} cannot be found"
    how, cls = _where(owner, name)
    if not how:
        return None, (f"an attribute of a {type(owner).__name__} object (neither a class's, a module's "
                      f"nor one its class answers): cannot rebind")
    if cls is not None and c_slot(cls):
        return None, (f"C type slot: cannot rebind ({cls.__module__}.{cls.__qualname__} refuses "
                      f"attribute assignment)")
    holder = cls if how == CLASS else None
    home = owner if isinstance(owner, types.ModuleType) else sys.modules.get(
        getattr(owner, "__module__", "") or "")
    raw = _raw(holder, name)[1] if holder is not None else None
    if not (raw is current and hasattr(type(raw), "__get__")):  # an instance's property: read per object
        try:
            stand_in(current, home, name)
        except NoStandIn as exc:
            return None, f"a {type(value).__name__} value with no stand-in of its kind ({exc})"
    return ValueTakeaway(api, owner, name, current, home), ""


class MembersTakeaway:
    """A C class API whose own members are properties (a pybind class such as
    ``torch.distributed.TCPStore``: ``host``, ``port``, ``libuvBackend``; its other methods
    are its base's): no Python function of its own, so :class:`run.takeaway.Takeaway` has
    nothing to swap. What it defines is taken away as values are (:class:`ValueTakeaway`,
    each property rebound on the class), all together: a class API owns the members it
    defines. Construction is not taken away (an object the case cannot make is no run)."""

    how = VALUE
    init = None
    constructed = 0
    replays_data = True

    def __init__(self, parts: List[ValueTakeaway]):
        self.parts = parts
        self.why = ""
        self.targets: List[Any] = []
        self.names: List[str] = []
        self.results: Dict[int, List[Any]] = defaultdict(list)
        self.during: Dict[str, int] = defaultdict(int)

    @property
    def calls(self) -> int:
        return sum(p.calls or 0 for p in self.parts)

    @property
    def works(self) -> bool:
        return any(p.works for p in self.parts)

    @contextlib.contextmanager
    def _all(self, enter: Callable[[ValueTakeaway], Any]):
        with contextlib.ExitStack() as stack:
            for p in self.parts:
                stack.enter_context(enter(p))
            yield self

    def recording(self):
        self.how, self.why = VALUE, ""
        return self._after(self._all(lambda p: p.recording()))

    @contextlib.contextmanager
    def _after(self, inner):
        with inner:
            yield self
        # a member read with no stand-in of its kind: the class cannot be taken away
        lost = [p for p in self.parts if p.how is None]
        if lost:
            self.how, self.why = None, lost[0].why

    def stubbing(self, kind: str):
        return self._all(lambda p: p.stubbing(kind))


def members_takeaway(api: str, cls: Any) -> Tuple[Optional[MembersTakeaway], str]:
    """A :class:`MembersTakeaway` for the class API ``api`` whose own members (in its
    ``__dict__``, not dunders) are all properties of a C class, or (None, why not)."""
    if not isinstance(cls, type):
        return None, "not a class"
    own = {n: v for n, v in vars(cls).items() if not n.startswith("_")}
    props = [n for n, v in own.items() if isinstance(v, property) and not isinstance(v.fget, types.FunctionType)]
    if not props or len(props) != len(own):
        return None, f"the class {cls.__name__} defines no function of its own to take away"
    parts = []
    for name in props:
        take, why = value_takeaway(f"{api}.{name}", vars(cls)[name], owner=cls)
        if take is None:
            return None, f"{name}: {why}"
        parts.append(take)
    return MembersTakeaway(parts), ""
