"""Take the API away: what a case's API itself does, and whether the case observes it.

A case's footprint says which ops ran while the case ran; frames say who issued each
(``api.footprint``). Frames are a guess about code that is not the API's: a module's
``_call_impl``, a loss, a ``.to(device)`` can sit under the API's frames, and a C function
called from the scenario has none. So every recorded case runs once more with the API
**taken away** — each top-level call of it answered by a stand-in instead of the API —
and the two runs are compared:

- the API's **own footprint** is what disappears: the ops (and device-module calls) the
  run without the API does not make. Entries that disappear are the API's (``api``, or
  ``callable`` where the frames saw the user code the API called back); entries that stay
  are the scenario's, whatever the frames said (:func:`own_entries`). Involvement,
  evidence and the community category are read from the corrected entries;
- a case whose judged outcome does not change without the API **does not observe it**
  (``observes=False``): a device that got the API wrong would not turn its row red, so the
  row is no answer ("hollow", ``run.execute``).

How a call is taken away (``how``):

- ``code``: a Python function or property (and each function a class API owns: its
  own and its family's, not the framework's generic bases', ``api.classify.class_functions``): its ``__code__`` is swapped for a stub's while the run lasts, so every binding
  of it (``from x import f``, a method looked up on a subclass) calls the stub;
- ``torch-function``: a torch function or a ``Tensor`` method torch routes through
  ``__torch_function__``: a mode answers its calls;
- ``attribute``: another callable (a C function torch does not route, such as a factory):
  every module global bound to it is rebound to a stub while the run
  lasts (calls through a binding made otherwise are not seen);
- ``subtype``: a method of a C type that Python may subclass (``torch.Generator.manual_seed``,
  called through its objects): every module global bound to the type is rebound to a
  Python subclass whose method is the stub, so the objects the run makes through the
  type's name have it taken away. Objects made otherwise (``torch.default_generator``, a
  generator C++ hands out) keep the C method: their calls are not seen, so a run whose
  outcome stays the same, or that made no call through such an object, decides nothing
  (``unreached``), and what stays without the API keeps the frames' attribution;
- ``None``: none of these (a method of a C type that cannot be subclassed, a property, a
  constant): nothing is taken away, the footprint stays the frames' (``method="frames"``, reason given) — except a
  value, which ``run.takeaway_values`` rebinds on its owner (``how="value"``).

What a stand-in returns (``stub``), from the call's result in the recorded run:

- ``perturbed``: a value of the same kind with other values, moved by ``k`` for the API's
  ``k``-th call (so that two readings of a counter differ by another amount) — a tensor
  ``r + |r| + k`` (integers ``+ k``, booleans negated) of the same shape, dtype, device and
  ``requires_grad``; numbers, strings, dtypes and sizes likewise; containers leaf by leaf;
  ``None`` stays ``None`` (the call's side effects are what is taken away); a context
  manager becomes a ``nullcontext``; an object of any other kind (a module, a handle, a
  function) becomes ``None``: handing the case the recorded object would hand it the API's
  work. Where the rest of the case can use the stand-in, the run goes on;
- ``replayed``: the recorded run's result itself; used when the perturbed run ends early
  (the case cannot go on with other values), so the ops after the call are still reached.
A run without the API that still ends early decides nothing about the ops it never
reached: the frames' footprint is kept, labelled.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import sys
import textwrap
import threading
import types
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from ..api.classify import class_functions
from ..api.footprint import call_from_mode, op_packet_name
from ..results.models import FootprintEntry, OwnFootprint
from ..scenarios.sources.base import fresh_runs

PERTURBED, REPLAYED = "perturbed", "replayed"
STUB_KINDS = (PERTURBED, REPLAYED)
CODE, TORCH_FUNCTION, ATTRIBUTE, SUBTYPE = "code", "torch-function", "attribute", "subtype"
INIT = -1  # the index of a class API's own __init__ among the calls (counted, never taken away)

# a class API's own functions that are construction or identity, not behaviour: taking
# them away leaves an object the case cannot use at all
_KEEP = frozenset({
    "__init__", "__new__", "__del__", "__init_subclass__", "__class_getitem__", "__getattr__",
    "__getattribute__", "__setattr__", "__delattr__", "__repr__", "__str__", "__hash__",
    "__eq__", "__ne__", "__setstate__", "__getstate__", "__reduce__", "__reduce_ex__",
    "__copy__", "__deepcopy__", "__dir__", "__format__", "__sizeof__", "__subclasshook__",
})


class ApiTakenAway(RuntimeError):
    """A call of the API that the run without it cannot answer (no recorded call to stand
    in for)."""


# --- stand-ins ---------------------------------------------------------------------------

def _no_modes():
    """Make stand-ins outside every mode: the recorder must not see their ops."""
    stack = contextlib.ExitStack()
    stack.enter_context(_disable_current_modes())
    stack.enter_context(torch._C.DisableTorchFunction())
    return stack


def _keep(value: Any) -> Any:
    """What the recorded run keeps of one call's result (tensors copied: the case may
    change them in place after the call)."""
    if isinstance(value, torch.Tensor):
        try:
            with _no_modes():
                copy = value.detach().clone()
            if value.requires_grad and (copy.is_floating_point() or copy.is_complex()):
                copy.requires_grad_(True)
            return copy
        except Exception:  # a tensor that cannot be copied (meta, sparse ...): as it is
            return value
    if isinstance(value, (list, tuple)) and not hasattr(value, "__enter__"):
        items = [_keep(v) for v in value]
        if isinstance(value, torch.Size):
            return value
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict) and type(value) is dict:
        return {k: _keep(v) for k, v in value.items()}
    return value


def _perturb_tensor(t: torch.Tensor, step: int = 1) -> torch.Tensor:
    with _no_modes():
        base = t.detach()
        if base.numel() == 0:
            out = base.clone()
        elif base.dtype == torch.bool:
            out = ~base
        elif base.is_floating_point() or base.is_complex():
            out = base + base.abs() + step
            # an infinity or a NaN moved is itself: a stand-in must differ where the
            # recorded value is not finite too (a variance that is infinite everywhere)
            out = out.masked_fill(~torch.isfinite(out), step)
        else:
            out = base + step
    if t.requires_grad and (out.is_floating_point() or out.is_complex()):
        out.requires_grad_(True)
    return out


_DATA = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.Tensor)


def is_data(value: Any) -> bool:
    """Plain data (tensors, numbers, strings, dtypes, devices, containers of them): a
    replayed value of this kind carries no behaviour of the API's."""
    if isinstance(value, _DATA) or isinstance(value, contextlib.nullcontext):
        return True
    if isinstance(value, (list, tuple)):
        return all(is_data(v) for v in value)
    if isinstance(value, dict) and type(value) is dict:
        return all(is_data(v) for v in value.values())
    return False


def _is_context_manager(value: Any) -> bool:
    return hasattr(type(value), "__enter__") and hasattr(type(value), "__exit__")


def perturbed(value: Any, call: int = 0) -> Any:
    """A stand-in of ``value``'s kind with other values (see the module doc); an object of
    no such kind is None (replaying the recorded object would hand the case the API's
    work), a context manager one that does nothing. The ``call``-th call of the API is
    moved by ``call + 1``, so that a difference of two calls (a counter read before and
    after) changes too."""
    step = call + 1
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        try:
            return _perturb_tensor(value, step)
        except Exception:
            return None
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + step
    if isinstance(value, float):
        return value + step if abs(value) != float("inf") and value == value else 0.0
    if isinstance(value, complex):
        return value + step
    if isinstance(value, str):  # another string as a whole (a version's major.minor too)
        return f"<taken away {step}>" if value != f"<taken away {step}>" else ""
    if isinstance(value, bytes):
        return b"~" * step if value != b"~" * step else b""
    if isinstance(value, torch.dtype):
        return torch.float64 if value != torch.float64 else torch.float32
    if isinstance(value, torch.Size):
        return torch.Size([d + 1 for d in value]) if len(value) else torch.Size([1])
    if isinstance(value, torch.device):
        return value
    if isinstance(value, (list, tuple)):
        items = [perturbed(v, call) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict) and type(value) is dict:
        return {k: perturbed(v, call) for k, v in value.items()}
    if _is_context_manager(value):
        return contextlib.nullcontext()
    return None


def replayed(value: Any, call: int = 0) -> Any:
    """The recorded run's result itself (a generator's context manager, which runs once,
    a ``nullcontext``)."""
    if _is_context_manager(value) and hasattr(value, "gen"):
        return contextlib.nullcontext()
    return value


_STAND_IN: Dict[str, Callable[[Any, int], Any]] = {PERTURBED: perturbed, REPLAYED: replayed}


# --- interception --------------------------------------------------------------------------

DEVICE_FAMILIES = ("torch.cuda", "torch.cpu", "torch_npu", "torch.npu", "torch.xpu", "torch.mps")


def counterpart(api_obj: Any, device_type: str) -> Any:
    """What a case on ``device_type`` calls for ``api_obj``: a device-module function or
    class member of another device (``torch.cuda.memory_allocated``,
    ``torch.cuda.Stream.wait_stream`` asked of an NPU, as the devmod source asks them) is
    answered by the device module's member at the same path (``CUDA`` in a name read as
    the device's, ``CUDAGraph`` -> ``NPUGraph``); anything else is itself."""
    module = str(getattr(api_obj, "__module__", "") or "")
    path = getattr(api_obj, "__qualname__", None) or getattr(api_obj, "__name__", None)
    if (not isinstance(path, str) or "<" in path or not module.startswith(DEVICE_FAMILIES)
            or module.startswith(f"torch.{device_type}")):
        return api_obj
    try:
        member: Any = torch.get_device_module(device_type)
    except Exception:
        return api_obj
    for part in path.replace("CUDA", device_type.upper()).split("."):
        member = getattr(member, part, None)
        if member is None:
            return api_obj
    return member


class _State(threading.local):
    depth = 0


def _statements(fn: types.FunctionType) -> Optional[List[ast.stmt]]:
    """``fn``'s body past its docstring (string-constant lines dropped), or None where its
    source cannot be read as one function."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return [st for st in node.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
                                           and isinstance(st.value.value, str))]


def only_raises(fn: types.FunctionType) -> bool:
    """Whether ``fn``'s body (past its docstring) is one ``raise``: a marker its users
    compare by identity, never meant to be called (``torch.library.fallthrough_kernel``,
    which ``Library.impl`` registers as a fallthrough). A case that uses it never calls it,
    so "the case never calls the API" would be false of it."""
    body = _statements(fn)
    return body is not None and len(body) == 1 and isinstance(body[0], ast.Raise)


def _owner(fn: types.FunctionType) -> Optional[type]:
    """The class that defines ``fn`` (by its module and qualified name), or None."""
    path = getattr(fn, "__qualname__", "").split(".")
    owner: Any = sys.modules.get(getattr(fn, "__module__", "") or "")
    for part in path[:-1]:
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, type) else None


def implementations(fn: types.FunctionType, overrides: bool = False) -> List[types.FunctionType]:
    """Where ``fn`` is abstract (``abc.abstractmethod``: ``LoadPlanner.commit_tensor``,
    ``Joinable.join_process_group``'s getter), the functions that implement it in torch's
    own subclasses of its class, loaded now (``DefaultLoadPlanner.commit_tensor``): what a
    case that uses torch's classes calls for it. A subclass of torchparity's (a scenario's
    own Joinable) is the scenario's code, not the API's: not followed. Empty for a
    concrete function (``overrides``: a concrete function's overrides in torch's subclasses
    too)."""
    if not overrides and not getattr(fn, "__isabstractmethod__", False):
        return []
    owner = _owner(fn)
    if owner is None:
        return []
    name = fn.__name__
    found: List[types.FunctionType] = []
    seen, todo = set(), list(owner.__subclasses__())
    while todo:
        sub = todo.pop(0)
        if sub in seen:
            continue
        seen.add(sub)
        todo += sub.__subclasses__()
        if not (sub.__module__ or "").startswith("torch.") or name not in vars(sub):
            continue
        value = vars(sub)[name]
        value = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        if (isinstance(value, types.FunctionType) and value is not fn
                and not getattr(value, "__isabstractmethod__", False) and value not in found):
            found.append(value)
    return found


def _empty_body(fn: types.FunctionType) -> bool:
    """``fn``'s body is nothing but a docstring, ``pass``, ``...`` or ``return [None]``."""
    body = _statements(fn)
    if body is None:
        return False
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis:
            continue
        if isinstance(stmt, ast.Return) and (stmt.value is None or (
                isinstance(stmt.value, ast.Constant) and stmt.value.value is None)):
            continue
        return False
    return True


def does_nothing(api_obj: Any) -> str:
    """Where the API's code in torch does nothing — its body is empty (a docstring,
    ``pass``, ``...``, ``return None``), and so is every implementation or override torch's
    own (loaded) subclasses give it (``LoadPlanner.commit_tensor``: ``DefaultLoadPlanner``'s
    is ``pass``) — what says so; else "". No case can observe such an API: the same outcome
    without it is no sign of a hollow case. A function with any statement, a C function and
    a value are never said to do nothing."""
    fn = api_obj.fget if isinstance(api_obj, property) else api_obj
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType) or not _empty_body(fn):
        return ""
    impls = implementations(fn, overrides=True)  # a default torch's own classes replace
    if not all(_empty_body(f) for f in impls):
        return ""
    names = ", ".join(f.__qualname__ for f in impls)
    return ("the API does nothing in torch: its body is empty"
            + (f", and so are its implementations' in torch ({names})" if names else ""))


class Takeaway:
    """The API of one case, intercepted: :meth:`recording` records each top-level call's
    result while the API runs; :meth:`stubbing` answers each call with a stand-in of the
    recorded one instead. ``how`` is None where the API cannot be taken away (``why``)."""

    def __init__(self, api_obj: Any, also_named: Sequence[str] = (), stands_for: Any = None):
        self.api_obj = api_obj
        # the API asked, where ``api_obj`` is its device counterpart (``counterpart``)
        self.stands_for = api_obj if stands_for is None else stands_for
        self.also_named = [n for n in also_named if n]  # other names its calls go by
        self.targets: List[Any] = []  # functions whose code is swapped
        self.how: Optional[str] = None
        self.why = ""
        # the calls the mechanism cannot reach, said (``subtype``: those on objects made
        # otherwise than through the type's name); empty: it reaches every call
        self.unreached = ""
        # ``subtype``: the device types of the objects the recorded run's calls were made on
        # (a generator of the device under test holds the state its draws read)
        self.holder_devices: set = set()
        self.results: Dict[int, List[Any]] = defaultdict(list)  # target index -> results
        self._state = _State()
        self._mode: Optional[str] = None
        self._served: Dict[int, int] = defaultdict(int)
        self._undo: List[Callable[[], None]] = []
        # a class API's own __init__, counted while recording (never taken away: an object
        # the case cannot make is no run at all); None: not counted
        self.init: Optional[types.FunctionType] = None
        self.constructed = 0
        # op -> how many the recorded run dispatched while a call of the API was running
        self.during: Dict[str, int] = defaultdict(int)
        # an abstract API's implementations taken away with it (qualified names)
        self.followed: List[str] = []
        self._choose()

    # which mechanism
    def _choose(self) -> None:
        obj = self.api_obj
        if isinstance(obj, type):
            owned = class_functions(obj)  # its own and its family's, not the framework's
            self.init = (owned.get("__init__") or [None])[0]
            fns = [f for name, group in owned.items() if name not in _KEEP for f in group[:1]]
            fns += [o for f in fns for o in self._implemented(f) if o not in fns]
            if fns:
                self.targets, self.how = fns, CODE
            elif isinstance(self.init, types.FunctionType):
                # a record (a dataclass, ShapeEnvSettings): what it does is hold what its
                # constructor stores, so the constructor is what is taken away
                self.targets, self.how, self.init = [self.init], CODE, None
            else:
                self.why = f"the class {obj.__name__} defines no function of its own to take away"
            return
        fn = obj.__func__ if isinstance(obj, (types.MethodType, staticmethod, classmethod)) else obj
        if isinstance(fn, functools.partial):
            fn = fn.func
        if isinstance(fn, property) and isinstance(fn.fget, types.FunctionType):
            fn = fn.fget  # a Python property: its getter is the API's code
        if isinstance(fn, types.FunctionType) and only_raises(fn) and self.stands_for is not obj:
            self.why = ("the device's counterpart of the API only raises (the device refuses it): "
                        "there is no call to take away")
        elif isinstance(fn, types.FunctionType) and only_raises(fn):
            self.why = ("a marker passed by identity (its body only raises: it is never called): "
                        "there is no call to take away")
        elif isinstance(fn, types.FunctionType):
            self.targets, self.how = [fn] + self._implemented(fn), CODE
        elif _routed(fn):
            self.targets, self.how = [fn], TORCH_FUNCTION
        elif _c_method(fn) and _subtypable(fn):
            owner = fn.__objclass__
            self.targets, self.how = [fn], SUBTYPE
            self.unreached = (f"calls on {owner.__name__} objects not made through the name "
                              f"{owner.__module__}.{owner.__name__} (made by C++ or before the run, "
                              f"such as a default generator) keep the C method and are not taken away")
        elif _c_method(fn):
            self.why = (f"a method of the C type {fn.__objclass__.__name__}: its calls go through the "
                        f"type, which cannot be changed, so nothing is taken away")
        elif callable(fn) and _bindings(fn):
            self.targets, self.how = [fn], ATTRIBUTE
        elif not callable(fn):
            self.why = f"a {type(obj).__name__} value, not a function: there is no call to take away"
        else:
            self.why = (f"a {type(obj).__name__} that is neither a Python function nor one torch "
                        f"routes through __torch_function__: its calls cannot be taken away")

    def _implemented(self, fn: types.FunctionType) -> List[types.FunctionType]:
        """An abstract method's (or property getter's) implementations in torch's own
        subclasses of its class (:func:`implementations`), noted in ``followed``: an abstract
        method has no code any case runs, a case calls an implementation of it."""
        found = implementations(fn)
        self.followed += [f.__qualname__ for f in found if f.__qualname__ not in self.followed]
        return found

    @property
    def names(self) -> List[str]:
        """The names the API's calls go by (its functions' ``__name__``, and the names it
        was asked by: ``torch.cuda.memory_cached`` is the emulator's ``memory_reserved``)."""
        own = [n for n in (getattr(t, "__name__", None) for t in self.targets) if n]
        return own + [n for n in self.also_named if n not in own]

    @property
    def replays_data(self) -> bool:
        """Every recorded result is plain data (:func:`is_data`): replaying it hands the
        case none of the API's behaviour."""
        return all(is_data(v) for vs in self.results.values() for v in vs)

    @property
    def calls(self) -> int:
        return sum(len(v) for v in self.results.values())

    def _call(self, index: int, call: Callable[[], Any]) -> Any:
        state = self._state
        if state.depth or self._mode is None:  # inside the API itself: its own business
            return call()
        state.depth += 1
        try:
            if index == INIT:  # construction is never taken away, nor what it calls
                self.constructed += self._mode == "record"
                return call()
            if self._mode == "record":
                try:
                    out = call()
                except BaseException:
                    self.results[index].append(None)
                    raise
                self.results[index].append(_keep(out))
                return out
            served = self._served[index]
            recorded = self.results.get(index, [])
            if served >= len(recorded):
                raise ApiTakenAway(f"call {served + 1} of the API was taken away; the recorded "
                                   f"run made {len(recorded)}")
            self._served[index] = served + 1
            return _STAND_IN[self._mode](recorded[served], self._served_total())
        finally:
            state.depth -= 1

    @contextlib.contextmanager
    def _active(self, mode: str):
        self._mode = mode
        self._served = defaultdict(int)
        undo: List[Callable[[], None]] = []
        self._undo = undo
        try:
            # a case's kept results (a launcher's run, ``distsvc.memo``) are made again: a kept
            # one would hand the run without the API what the API did before
            undo.append(_exit_on_undo(fresh_runs()))
            if self.how == CODE:
                for i, fn in enumerate(self.targets):
                    undo.append(_swap_code(fn, functools.partial(self._through, i)))
                if self.init is not None:  # counted while recording; what it calls is its own
                    undo.append(_swap_code(self.init, functools.partial(self._through, INIT)))
            with contextlib.ExitStack() as stack:
                if self.how == TORCH_FUNCTION:
                    stack.enter_context(_Intercept(self.targets[0], self))
                elif self.how == ATTRIBUTE:
                    undo.append(_rebind(self.targets[0], functools.partial(self._through, 0)))
                elif self.how == SUBTYPE:
                    undo.append(_stand_in_type(self.targets[0], functools.partial(self._through, 0)))
                if mode == "record" and self.how is not None:
                    stack.enter_context(_During(self))
                yield self
        finally:
            self._put_back()

    def _put_back(self) -> None:
        undo = self._undo
        while undo:  # each undo once, whichever thread gets here first
            try:
                undo.pop()()
            except IndexError:
                break
        self._mode = None

    def abandon(self) -> None:
        """Put the API back now, from another thread than the run that took it away (a
        run that never finishes without the API: :func:`bounded`)."""
        self._put_back()

    def _served_total(self) -> int:
        """How many calls (of every target) were answered before this one."""
        return sum(self._served.values()) - 1

    def _through(self, index: int, original: Callable, args: tuple, kwargs: dict) -> Any:
        if self.how == SUBTYPE and self._mode == "record" and not self._state.depth and args:
            device = getattr(args[0], "device", None)  # the object the method is called on
            if isinstance(device, torch.device):
                self.holder_devices.add(device.type)
        return self._call(index, lambda: original(*args, **kwargs))

    def recording(self):
        """Every top-level call runs the API and its result is kept."""
        self.results = defaultdict(list)
        self.holder_devices = set()
        self.constructed = 0
        self.during = defaultdict(int)
        return self._active("record")

    def stubbing(self, kind: str):
        """Every top-level call returns a ``kind`` stand-in of the recorded call's result."""
        return self._active(kind)


def bounded(call: Callable[[], Any], seconds: float) -> Tuple[bool, Any]:
    """``call()`` in a thread of its own, waited for ``seconds``: ``(True, its result)``,
    or ``(False, None)`` when it has not finished (a case without its API can wait for
    what the API would have done, as ``Future.wait`` for ``set_result``). The thread is
    left behind (a daemon): the caller puts back what it changed."""
    box: List[Any] = []

    def target() -> None:
        try:
            box.append((call(), None))
        except BaseException as exc:  # handed to the caller's thread
            box.append((None, exc))

    thread = threading.Thread(target=target, daemon=True, name="torchparity-takeaway")
    thread.start()
    thread.join(seconds)
    if not box:
        return False, None
    value, exc = box[0]
    if exc is not None:
        raise exc
    return True, value


class _Intercept(TorchFunctionMode):
    def __init__(self, target: Any, takeaway: Takeaway):
        super().__init__()
        self.target = target
        self.takeaway = takeaway

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is self.target:
            return self.takeaway._call(0, lambda: func(*args, **kwargs))
        return func(*args, **kwargs)


class _During(TorchDispatchMode):
    """Counts the ops dispatched while a top-level call of the API runs (its own thread):
    what is missing without the API but ran outside its calls is the scenario branching
    on the API's result, not the API's work."""

    def __init__(self, takeaway: "Takeaway"):
        super().__init__()
        self.takeaway = takeaway

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        if self.takeaway._state.depth:
            self.takeaway.during[op_packet_name(func)] += 1
        return call_from_mode(func, args, kwargs or {})


@functools.lru_cache(maxsize=1)
def _routed_ids() -> frozenset:
    ids = set()
    for funcs in torch.overrides.get_overridable_functions().values():
        ids.update(id(f) for f in funcs)
    return frozenset(ids)


def _routed(fn: Any) -> bool:
    """torch routes ``fn``'s calls through ``__torch_function__`` (a mode sees them): the
    functions ``torch.overrides`` lists, and every C method of ``Tensor`` (its binding
    dispatches ``__torch_function__`` whether or not the list names it:
    ``Tensor.to_sparse_bsc`` is missing from it)."""
    try:
        if id(fn) in _routed_ids():
            return True
    except Exception:
        return False
    return (isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType))
            and getattr(fn, "__objclass__", None) is torch._C.TensorBase)


def _c_method(fn: Any) -> bool:
    """A method of a C type (``torch.Generator.manual_seed``): called through its objects,
    never through a module global a rebinding could reach. (Its properties are values,
    labelled as such.)"""
    return (isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType,
                            types.ClassMethodDescriptorType))
            and isinstance(getattr(fn, "__objclass__", None), type))


_BASETYPE = 1 << 10  # Py_TPFLAGS_BASETYPE: Python may subclass the type
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class Python made


def _subtypable(fn: Any) -> bool:
    """A C type's instance method (not a classmethod, not construction or identity) whose
    type Python may subclass and some module global names: :func:`_stand_in_type` can
    reach the calls on the objects made through that name."""
    owner = getattr(fn, "__objclass__", None)
    return (isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType))
            and isinstance(owner, type) and bool(owner.__flags__ & _BASETYPE)
            and fn.__name__ not in _KEEP and bool(_bindings(owner)))


def _stand_in_type(method: Any, through: Callable) -> Callable[[], None]:
    """Bind every module global that is ``method``'s C type to a Python subclass of it
    whose ``method`` hands each call to ``through(method, (self, *args), kwargs)``;
    returns the undo. The subclass reads as the type: its name, module and repr are the
    type's, and ``isinstance`` / ``issubclass`` against it answer as against the type (an
    object made before the run, or by C++, is still one), so only the method changes."""
    base = method.__objclass__
    name = method.__name__

    class Transparent(type(base)):  # the type's own metaclass, instance checks the type's
        def __instancecheck__(cls, obj):
            return isinstance(obj, base)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, base)

    def stand_in(self, *args, **kwargs):
        return through(method, (self,) + args, kwargs)

    stand_in.__name__ = stand_in.__qualname__ = name
    sub = Transparent(base.__name__, (base,), {name: stand_in, "__module__": base.__module__,
                                               "__qualname__": base.__qualname__,
                                               "__doc__": base.__doc__})
    bound = _bindings(base)
    for mod, attr in bound:
        setattr(mod, attr, sub)
    # the Python subclasses already made (a device backend's generator class) inherit the
    # C method: it is set on each that does not define its own, and their objects, made
    # however, have it taken away too
    inheriting = []
    for cls in _python_subclasses(base):
        if name not in vars(cls) and not any(name in vars(c) for c in cls.__mro__[1:cls.__mro__.index(base)]):
            try:
                setattr(cls, name, stand_in)
            except (TypeError, AttributeError):
                continue
            inheriting.append(cls)

    def undo() -> None:
        for mod, attr in bound:
            setattr(mod, attr, base)
        for cls in inheriting:
            delattr(cls, name)
    return undo


def _python_subclasses(base: type) -> List[type]:
    """Every subclass of ``base`` (theirs too) that Python made (a heap type)."""
    out: List[type] = []
    todo = list(type.__subclasses__(base))
    while todo:
        cls = todo.pop()
        if cls in out:
            continue
        if cls.__flags__ & _HEAPTYPE:
            out.append(cls)
        todo.extend(type.__subclasses__(cls))
    return out


def _bindings(fn: Any) -> List[Tuple[Any, str]]:
    """The (module, name) pairs of loaded modules whose global ``name`` is ``fn``
    (``torch.fft.rfftfreq`` is ``torch._C._fft.fft_rfftfreq``; a scenario's ``from torch.fft
    import ...``). A scan of every module's globals: tens of milliseconds, made only for a
    callable no other way reaches."""
    found = []
    for mod in list(sys.modules.values()):
        space = getattr(mod, "__dict__", None)
        if not isinstance(space, dict):
            continue
        for name, value in list(space.items()):
            if value is fn:
                found.append((mod, name))
    return found


def _rebind(fn: Any, through: Callable) -> Callable[[], None]:
    """Bind every module global that is ``fn`` (:func:`_bindings`) to a stub handing each
    call to ``through(fn, args, kwargs)``; returns the undo."""
    bound = _bindings(fn)

    def stand_in(*args, **kwargs):
        return through(fn, args, kwargs)

    for mod, name in bound:
        setattr(mod, name, stand_in)

    def undo() -> None:
        for mod, name in bound:
            setattr(mod, name, fn)
    return undo


def _exit_on_undo(manager: Any) -> Callable[[], None]:
    """Enter ``manager`` now; the undo that leaves it."""
    manager.__enter__()
    return lambda: manager.__exit__(None, None, None)


def _stub_code(n_free: int) -> types.CodeType:
    """The code of ``def stub(*args, _tp_call_, **kwargs): return _tp_call_(args, kwargs)``
    with ``n_free`` free variables (a function's code can only be swapped for code with as
    many as its closure has cells)."""
    names = [f"_tp_free{i}" for i in range(n_free)]
    lines = ["def _tp_outer():"]
    lines += [f"    {n} = None" for n in names]
    lines.append("    def _tp_stub(*args, _tp_call_=None, **kwargs):")
    if names:
        lines.append(f"        ({', '.join(names)},)")
    lines.append("        return _tp_call_(args, kwargs)")
    lines.append("    return _tp_stub")
    namespace: Dict[str, Any] = {}
    exec(compile("\n".join(lines), "<torchparity: the API taken away>", "exec"), namespace)
    return namespace["_tp_outer"]().__code__


def _swap_code(fn: types.FunctionType, through: Callable) -> Callable[[], None]:
    """Swap ``fn``'s code for a stub's that hands each call to ``through(original, args,
    kwargs)``; returns the undo."""
    code, kwdefaults = fn.__code__, fn.__kwdefaults__
    original = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    original.__kwdefaults__ = kwdefaults
    original.__dict__.update(fn.__dict__)
    fn.__code__ = _stub_code(len(code.co_freevars))
    fn.__kwdefaults__ = {"_tp_call_": functools.partial(_hand_over, through, original)}

    def undo() -> None:
        fn.__code__ = code
        fn.__kwdefaults__ = kwdefaults
    return undo


def _hand_over(through: Callable, original: Callable, args: tuple, kwargs: dict) -> Any:
    return through(original, args, kwargs)


# --- the own footprint -----------------------------------------------------------------------

_ORDER = {"callable": 0, "api": 1, "scenario": 2}


def own_entries(normal: Sequence[FootprintEntry], without: Sequence[FootprintEntry],
                lower_bound: bool = False, api_names: Sequence[str] = (),
                during: Optional[Dict[str, int]] = None) -> Tuple[List[FootprintEntry], List[str]]:
    """The recorded run's entries attributed by taking the API away: of each op's count,
    what the run without the API does not make is the API's (``callable`` where the frames
    saw user code the API called back, else ``api``), the rest the scenario's. Also the
    moves against the frames' attribution, as ``"op: frames -> takeaway (n)"``.

    ``lower_bound``: the run without the API replayed objects the API made (a function, a
    module), whose work still ran: what disappeared is the API's, and what stayed keeps the
    frames' attribution (it may be the API's work, run through its product).

    ``api_names``: where the API is a device-module function, the recorder counts each call
    of it as a ``runtime.<module>.<name>`` entry around the stub too: those are the taken
    away calls themselves, not calls the run without the API made.

    ``during``: how many of each op the recorded run dispatched while a call of the API was
    running (:class:`_During`). An op is the API's at most that many times plus what the
    frames already credit it (its backward, run later by the autograd engine): what else
    is missing without the API is the scenario taking another branch on the API's result
    (a ``seed()`` that picks no new seed makes ``s1 != 7`` short-circuit), the scenario's."""
    left: Dict[str, int] = defaultdict(int)
    for e in without:
        if e.op.startswith("runtime.") and e.op.rsplit(".", 1)[-1] in api_names:
            continue
        left[e.op] += e.count
    by_op: Dict[str, List[FootprintEntry]] = defaultdict(list)
    for e in normal:
        by_op[e.op].append(e)
    out: List[FootprintEntry] = []
    moves: List[str] = []
    for op, group in by_op.items():
        total = sum(e.count for e in group)
        gone = max(total - left.get(op, 0), 0)
        if during is not None and not op.startswith("runtime."):
            credited = sum(e.count for e in group if e.source in ("api", "callable"))
            gone = min(gone, during.get(op, 0) + credited)
        for e in sorted(group, key=lambda x: _ORDER.get(x.source, 3)):
            own = min(e.count, gone)
            gone -= own
            rest = e.count - own
            own_source = "callable" if e.source == "callable" else "api"
            if own:
                out.append(e.model_copy(update={"source": own_source, "count": own}))
                if e.source not in ("api", "callable"):
                    moves.append(f"{op}: {e.source} -> api ({own})")
            if rest and lower_bound:
                out.append(e.model_copy(update={"count": rest}))
            elif rest:
                out.append(e.model_copy(update={"source": "scenario", "count": rest}))
                if e.source != "scenario":
                    moves.append(f"{op}: {e.source} -> scenario ({rest})")
    return _merged(out), sorted(moves)


def steered(normal: Sequence[FootprintEntry], without: Sequence[FootprintEntry]) -> bool:
    """The run without the API dispatched device ops the recorded run did not (by name, or
    more of them): the API steers the scenario's device work (a flag, a level, a mode)."""
    have: Dict[str, int] = defaultdict(int)
    for e in normal:
        have[e.op] += e.count
    more: Dict[str, int] = defaultdict(int)
    for e in without:
        more[e.op] += e.count
    return any(n > have.get(op, 0) for op, n in more.items())


def _merged(entries: List[FootprintEntry]) -> List[FootprintEntry]:
    counts: Dict[Tuple[str, str], int] = defaultdict(int)
    dtypes: Dict[Tuple[str, str], set] = defaultdict(set)
    for e in entries:
        counts[(e.op, e.source)] += e.count
        dtypes[(e.op, e.source)].update(e.dtypes)
    return [FootprintEntry(op=op, source=src, count=n, dtypes=sorted(dtypes[(op, src)]))
            for (op, src), n in sorted(counts.items())]


def frames_only(reason: str, how: Optional[str] = None, calls: Optional[int] = None) -> OwnFootprint:
    """The record of a case whose footprint stays the frames' (nothing taken away)."""
    return OwnFootprint(method="frames", how=how, calls=calls, observes=None, reason=reason)

