"""Operator footprint: the aten ops (and their dtypes) dispatched while code runs.

Recorded with a ``TorchDispatchMode`` (below autograd, so backward ops are seen too).
Every op is attributed to who issued it:

- ``api``: the API itself (its own Python body, or a torch function that *is* the API);
- ``callable``: user code the API called back (the function given to gradcheck);
- ``scenario``: code around the API call (setup, a context manager's body, other APIs).

Attribution walks the Python stack of the thread that issued the op. Backward ops run
by the autograd engine have no such stack; they inherit the attribution of the forward
call that created their autograd node, tagged on ``node.metadata`` by a companion
``TorchFunctionMode``.

A device kernel that raises inside backward on the autograd engine's device thread must
not raise through the dispatch mode: torch turns an exception out of
``__torch_dispatch__`` into a C++ exception that leaves the Python error indicator set,
and while it unwinds the engine's stream guard calls back into Python (a Python-registered
device's guard, ``exchangeStream``, noexcept), which fails on the pending error:
std::terminate, the worker dies. There the mode keeps the exception and returns a value
C++ cannot convert (:class:`KernelFailed`, :func:`call_from_mode`; the other dispatch
modes of the project use it too), a plain C++ error that ends the backward
cleanly; the companion function mode raises the kept exception from the ``backward`` /
``grad`` call that ran it. Ops up to the failure (the failing one included) are recorded.
"""

from __future__ import annotations

import sys
import threading
import types
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ..devices import precision, refusals
from ..dtypes import dtype_name
from ..results.models import FootprintEntry

_TAG = "torchparity_source"
# The autograd node being run in backward; where a torch lacks it, backward ops are
# attributed by the Python stack alone (coarser: the engine thread has none).
_current_node = getattr(torch._C, "_current_autograd_node", None)

# ops that only reshape metadata or move data around; "issues a compute op" ignores them
METADATA_OPS = frozenset({
    "alias", "view", "_unsafe_view", "_reshape_alias", "as_strided", "expand", "t",
    "transpose", "permute", "squeeze", "unsqueeze", "slice", "select", "detach",
    "lift_fresh", "empty", "empty_like", "empty_strided", "clone", "copy_", "_to_copy",
    "_local_scalar_dense", "is_same_size", "_has_same_storage_numel", "lift_fresh_copy",
    "resize_", "set_", "unbind", "split", "split_with_sizes", "contiguous", "reshape",
    "new_empty", "new_empty_strided", "zeros_like", "ones_like", "zeros", "ones", "fill_",
    "zero_", "_fw_primal", "_make_dual", "_unpack_dual", "view_as_real", "view_as_complex",
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "sym_is_contiguous",
    "_has_compatible_shallow_copy_type",  # a query (Module._apply asks it): computes nothing
})


def op_packet_name(func: Any) -> str:
    """'aten.dot.default' -> 'aten.dot'."""
    name = str(func)
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) >= 3 else name


def _tensors(tree: Any) -> List[torch.Tensor]:
    flat, _ = tree_flatten(tree)
    return [t for t in flat if isinstance(t, torch.Tensor)]


class _Attribution:
    def __init__(self, api_codes: Iterable[types.CodeType], user_files: Iterable[str],
                 api_objects: Iterable[Any]):
        self.api_codes: Set[types.CodeType] = set(api_codes)
        self.user_files: Set[str] = set(user_files)
        self.api_objects = list(api_objects)
        self.function_depth = 0  # inside a torch function that is the API itself
        self.main_thread = threading.get_ident()

    def _walk(self, frame: Optional[types.FrameType]) -> Optional[str]:
        seen_user = False
        while frame is not None:
            code = frame.f_code
            if code in self.api_codes:
                return "callable" if seen_user else "api"
            if code.co_filename in self.user_files:
                seen_user = True
            frame = frame.f_back
        if seen_user:
            return "scenario"
        return None

    def from_stack(self) -> Optional[str]:
        source = self._walk(sys._getframe(1))
        if self.function_depth and source in (None, "scenario"):
            return "api"
        return source

    def from_other_threads(self) -> str:
        """For autograd-engine threads: attribute by what the main thread is running."""
        source = self._walk(sys._current_frames().get(self.main_thread))
        if self.function_depth and source in (None, "scenario"):
            return "api"
        return source or "scenario"


class KernelFailed:
    """What a dispatch mode returns for a device kernel that raised in the autograd
    engine's device thread (see the module docstring): C++ cannot convert it, which ends
    the backward with a C++ error naming it ("Unable to cast <...> to Tensor")."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def __repr__(self) -> str:
        return f"<a device kernel raised in backward: {type(self.exc).__name__}: {self.exc}>"


def in_engine_thread() -> bool:
    """Running a backward node on one of the autograd engine's own threads (scenarios
    run on the main thread; the engine runs a device's nodes on a thread of its own)."""
    if threading.get_ident() == threading.main_thread().ident:
        return False
    return _current_node is None or _current_node() is not None


def call_from_mode(func: Any, args: tuple, kwargs: dict, keep: Any = None) -> Any:
    """``func(*args, **kwargs)`` for a ``__torch_dispatch__`` that must not raise through
    C++ on the autograd engine's thread (see the module docstring): there an exception is
    handed to ``keep`` (if given) and :class:`KernelFailed` returned instead."""
    try:
        return func(*args, **kwargs)
    except Exception as exc:
        if not in_engine_thread():
            raise
        if keep is not None:
            keep(exc)
        return KernelFailed(exc)


class _FunctionMode(TorchFunctionMode):
    """Marks calls of the API when it is a torch function, and tags autograd nodes; raises
    a device kernel's exception kept from backward (see the module docstring)."""

    def __init__(self, attribution: _Attribution, recorder: Optional["FootprintRecorder"] = None):
        super().__init__()
        self.attr = attribution
        self.rec = recorder

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        is_api = any(func is obj for obj in self.attr.api_objects)
        if is_api:
            self.attr.function_depth += 1
        try:
            out = func(*args, **kwargs)
        except Exception:
            kept = self.rec.take_backward_failure() if self.rec is not None else None
            if kept is not None:
                raise kept from None
            raise
        finally:
            if is_api:
                self.attr.function_depth -= 1
        source = "api" if is_api or self.attr.function_depth else self.attr.from_stack()
        if source:
            for t in _tensors(out):
                node = t.grad_fn
                if node is not None and _TAG not in node.metadata:
                    node.metadata[_TAG] = source
        return out


class _DispatchMode(TorchDispatchMode):
    def __init__(self, recorder: "FootprintRecorder"):
        super().__init__()
        self.rec = recorder

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.rec._record(func, args, kwargs)
        try:
            out = call_from_mode(func, args, kwargs, self.rec._keep_backward_failure)
        except Exception:
            self.rec._note_failure()
            raise
        if isinstance(out, KernelFailed):
            self.rec._note_failure()
        return out


class FootprintRecorder:
    """Context manager recording the ops dispatched on ``device_type`` tensors.

    ``api_objects``: the API (function, class, or torch function); ``user_files``: source
    files of the scenario code, so ops of callables defined there are told apart.
    """

    def __init__(self, device_type: str, api_objects: Iterable[Any] = (),
                 api_codes: Iterable[types.CodeType] = (), user_files: Iterable[str] = (),
                 runtime: bool = False):
        self.device_type = device_type
        # also record calls of the device module's functions (memory counters, streams,
        # device queries): entries ``runtime.<module>.<name>`` with no dtype
        self.runtime = runtime
        self._patched: List[Tuple[Any, str, Any]] = []
        self._in_runtime = False
        self.attr = _Attribution(api_codes, user_files, api_objects)
        self.counts: Dict[Tuple[str, str], int] = defaultdict(int)
        self.dtypes: Dict[Tuple[str, str], Set[str]] = defaultdict(set)
        # (overload, source) -> dtypes a backend's dtype check sees (see checked_dtype)
        self.checked: Dict[Tuple[str, str], Set[str]] = defaultdict(set)
        self._modes: List[Any] = []
        self._backward_failure: Optional[BaseException] = None
        self._last: Optional[Tuple[str, str, str]] = None
        # (op, source, dtype) of the first op whose kernel raised (None: none raised)
        self.failed: Optional[Tuple[str, str, str]] = None

    UNATTRIBUTED = "api"  # an op no frame attributes otherwise is the API's

    def _note_failure(self) -> None:
        if self.failed is None and self._last is not None:
            self.failed = self._last

    def _keep_backward_failure(self, exc: BaseException) -> None:
        if self._backward_failure is None:  # the engine stops at the first failure
            self._backward_failure = exc

    def take_backward_failure(self) -> Optional[BaseException]:
        """The exception a device kernel raised in backward, once (None if none)."""
        exc, self._backward_failure = self._backward_failure, None
        return exc

    def _source(self) -> str:
        node = _current_node() if _current_node is not None else None
        if node is not None:
            tagged = node.metadata.get(_TAG) if hasattr(node, "metadata") else None
            if tagged:
                return tagged
        if threading.get_ident() != self.attr.main_thread:
            return self.attr.from_other_threads() or self.UNATTRIBUTED
        return self.attr.from_stack() or self.UNATTRIBUTED

    def _record(self, func: Any, args: tuple, kwargs: dict) -> None:
        self._last = None
        tensors = _tensors((args, kwargs))
        on_device = [t for t in tensors if t.device.type == self.device_type]
        if not on_device:
            # factories: the device is in kwargs
            dev = kwargs.get("device")
            if dev is None or torch.device(dev).type != self.device_type:
                return
            dtype = kwargs.get("dtype") or torch.get_default_dtype()
            dtypes = {dtype_name(dtype)}
        else:
            dtypes = {dtype_name(t.dtype) for t in on_device}
        source = self._source()
        key = (op_packet_name(func), source)
        self._last = (key[0], source, ",".join(sorted(dtypes)))
        self.counts[key] += 1
        self.dtypes[key].update(dtypes)
        first = checked_dtype(args, kwargs) if on_device else next(iter(dtypes))
        if first is not None:
            self.checked[(str(func), source)].add(first)

    def _runtime_api_names(self) -> Set[str]:
        # a device-module API (torch.cuda.X asked of the device under test's module, as
        # the devmod source does) is answered by the member of the same name there (the
        # name it has in the module: a member may be a lambda or another member's function).
        # A device backend's wrapper of such an API (the emulator routes
        # torch.accelerator.memory.X to its module's member) is the API it wraps
        # (``__wrapped__``), answered by the member it names (``device_member``).
        families = ("torch.cuda", "torch.cpu", "torch.accelerator", f"torch.{self.device_type}",
                    "torch_npu")
        names: Set[str] = set()
        for o in self.attr.api_objects:
            chain = [o]
            while getattr(chain[-1], "__wrapped__", None) is not None and len(chain) < 8:
                chain.append(chain[-1].__wrapped__)
            if any(str(getattr(c, "__module__", "") or "").startswith(families) for c in chain):
                names.update(getattr(c, "__name__", None) for c in chain)
                names.update(getattr(c, "device_member", None) for c in chain)
        names.discard(None)
        return names

    def _runtime_source(self, fn: Any, name: str = "") -> str:
        names = self._runtime_api_names()
        if any(fn is o for o in self.attr.api_objects) or getattr(fn, "__name__", "") in names or name in names:
            return "api"
        return self.attr.from_stack() or "scenario"

    def _wrap_runtime(self, module: Any, label: str, name: str, fn: Any) -> Any:
        rec = self

        def runtime_call(*args, **kwargs):
            if rec._in_runtime:  # one entry per outermost call
                return fn(*args, **kwargs)
            rec._in_runtime = True
            try:
                return fn(*args, **kwargs)
            finally:
                rec._in_runtime = False
                if not _asked_by_fake_tensors():
                    rec.counts[(f"runtime.{label}.{name}", rec._runtime_source(fn, name))] += 1

        runtime_call.__name__ = getattr(fn, "__name__", name)
        runtime_call.__wrapped__ = fn
        return runtime_call

    def _c_entry_prefixes(self) -> Tuple[str, ...]:
        """The ``torch._C`` (and a backend's own ``_C``) entry points through which a
        device module's state is read on real hardware: ``_accelerator_*``
        (torch.accelerator.memory.max_memory_reserved -> _accelerator_getDeviceStats) and
        ``_<device type>_*`` (``_cuda_*``, torch_npu's ``_npu_*``)."""
        return ("_accelerator_", f"_{self.device_type}_")

    def _patch_runtime(self) -> None:
        try:
            module = torch.cpu if self.device_type == "cpu" else torch.get_device_module(self.device_type)
        except Exception:  # no device module for this type
            return
        accelerator = getattr(torch, "accelerator", None)
        modules = [(module, self.device_type), (accelerator, "accelerator"),
                   (getattr(accelerator, "memory", None), "accelerator.memory")]
        for mod, label in modules:
            if mod is None:
                continue
            for name, fn in list(vars(mod).items()):
                if name.startswith("_") or not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType)):
                    continue
                self._patched.append((mod, name, fn))
                setattr(mod, name, self._wrap_runtime(mod, label, name, fn))
        # the methods of the device module's streams and events (wait_stream, record,
        # synchronize, ...): device state as much as its module functions are
        for cls_name in ("Stream", "Event"):
            klass = getattr(module, cls_name, None)
            if not isinstance(klass, type) or klass.__module__.startswith("torch._C"):
                continue
            for name, fn in list(vars(klass).items()):
                if name.startswith("_") or not isinstance(fn, types.FunctionType):
                    continue
                self._patched.append((klass, name, fn))
                setattr(klass, name, self._wrap_runtime(klass, self.device_type, f"{cls_name}.{name}", fn))
        # the C entry points a device module's Python calls (one entry per outermost call:
        # under a module function above they are that call's, not entries of their own)
        prefixes = self._c_entry_prefixes()
        backend_c = sys.modules.get(f"torch_{self.device_type}._C")
        for mod, label in ((torch._C, "_C"), (backend_c, f"torch_{self.device_type}._C")):
            if mod is None:
                continue
            for name, fn in list(vars(mod).items()):
                if not name.startswith(prefixes) or not isinstance(fn, types.BuiltinFunctionType):
                    continue
                self._patched.append((mod, name, fn))
                setattr(mod, name, self._wrap_runtime(mod, label, name, fn))

    def _unpatch_runtime(self) -> None:
        for mod, name, fn in reversed(self._patched):
            setattr(mod, name, fn)
        self._patched = []

    def __enter__(self) -> "FootprintRecorder":
        if self.runtime:
            self._patch_runtime()
        fmode = _FunctionMode(self.attr, self)
        dmode = _DispatchMode(self)
        fmode.__enter__()
        try:
            dmode.__enter__()
        except BaseException:
            fmode.__exit__(None, None, None)
            self._unpatch_runtime()
            raise
        watch = refusals.observing(self._refused_above_modes)
        watch.__enter__()
        self._modes = [fmode, dmode, watch]
        _ACTIVE.append(self)
        return self

    def _refused_above_modes(self, op_name: str, dtype: Optional[torch.dtype]) -> None:
        """A kernel refused ``op_name`` before the dispatch modes saw it (a registered
        composite's rule): recorded and noted as the failure, with who issued it."""
        source = self._source()
        key = (op_packet_name(op_name), source)
        self.counts[key] += 1
        if dtype is not None:
            self.dtypes[key].add(dtype_name(dtype))
        if self.failed is None:
            self.failed = (key[0], source, dtype_name(dtype) if dtype is not None else "")

    def __exit__(self, *exc) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        fmode, dmode, watch = self._modes
        watch.__exit__(None, None, None)
        dmode.__exit__(*exc)
        fmode.__exit__(*exc)
        self._modes = []
        self._backward_failure = None
        self._unpatch_runtime()
        precision.clear()  # the recorded run is not judged: its ops say nothing of the next

    def entries(self) -> List[FootprintEntry]:
        return [
            FootprintEntry(op=op, source=src, count=n, dtypes=sorted(self.dtypes[(op, src)]))
            for (op, src), n in sorted(self.counts.items())
        ]


    def note(self, op: str, tensors: Sequence[torch.Tensor] = ()) -> None:
        """Record ``op`` (``"c10d.allreduce_"``) that a backend ran outside torch's dispatcher
        on ``tensors`` (none: an op that carries no tensor, a barrier), attributed as a
        dispatched op is; tensors none of which is on this device: not recorded."""
        on_device = [t for t in tensors if t.device.type == self.device_type]
        if tensors and not on_device:
            return
        key = (op, self._source())
        self.counts[key] += 1
        self.dtypes[key].update(dtype_name(t.dtype) for t in on_device)

    def absorb(self, records: Iterable[Any], user_files: Iterable[str] = ()) -> None:
        """Add the ops another process recorded for this one (the ranks of a world,
        :class:`StackRecorder`), attributed as if they had run here: by the API's code
        objects and the scenario's files (``user_files``: the files of the code the other
        process ran for the scenario, the world's body), with :meth:`_Attribution._walk`'s
        rule on the frames each op was issued from."""
        codes = {frame_key(c) for c in self.attr.api_codes}
        users = set(self.attr.user_files) | set(user_files)
        names = self._runtime_api_names()
        for op, frames, count, dtypes in records:
            source = source_of_frames(frames, codes, users)
            if op.startswith(RUNTIME_PREFIX):
                source = "api" if op.rsplit(".", 1)[-1] in names else (source or "scenario")
            key = (op, source or "api")
            self.counts[key] += int(count)
            self.dtypes[key].update(dtypes)

    def absorb_failure(self, failed: Optional[Sequence[Any]], user_files: Iterable[str] = ()) -> None:
        """The op whose kernel raised in another process (a rank of a world:
        :meth:`StackRecorder.failure`, ``[op, frames, dtypes]``), attributed as
        :meth:`absorb` attributes its ops, noted as this recorder's failure unless one is
        already: a rank's refused scaffolding is then told apart from the API's refusal
        by the rule that decides in-process rows (``run.execute.explain_scaffolding``)."""
        if not failed or self.failed is not None:
            return
        op, frames, dtypes = failed
        codes = {frame_key(c) for c in self.attr.api_codes}
        users = set(self.attr.user_files) | set(user_files)
        self.failed = (op, source_of_frames(frames, codes, users) or "api", dtypes)

    def checked_calls(self, sources: Iterable[str] = ("api", "callable")) -> List[Tuple[str, str]]:
        """(overload, checked dtype) pairs issued by ``sources``, sorted."""
        wanted = set(sources)
        return sorted((op, d) for (op, src), ds in self.checked.items() if src in wanted for d in ds)


_ACTIVE: List[FootprintRecorder] = []  # the recorders entered in this process, innermost last


def active_recorder() -> Optional[FootprintRecorder]:
    """The innermost footprint recorder running in this process (None: none is)."""
    return _ACTIVE[-1] if _ACTIVE else None


def frame_key(code: types.CodeType) -> str:
    """A code object as another process names it: file, first line, name."""
    return f"{code.co_filename}:{code.co_firstlineno}:{code.co_name}"


def source_of_frames(frames: Sequence[str], api_keys: Set[str], user_files: Set[str]) -> Optional[str]:
    """:meth:`_Attribution._walk` on frames named by :func:`frame_key`, innermost first."""
    seen_user = False
    for key in frames:
        if key in api_keys:
            return "callable" if seen_user else "api"
        if key.rsplit(":", 2)[0] in user_files:
            seen_user = True
    return "scenario" if seen_user else None


class _StackAttribution(_Attribution):
    """Attribution for a process that does not know the API (a rank of a world): each op
    keeps the frames it was issued from, innermost first, up to (not including) the frame
    of ``stop`` (the code that called the scenario's body); the process that knows the API
    attributes them (:meth:`FootprintRecorder.absorb`)."""

    def __init__(self, stop: Optional[types.CodeType]):
        super().__init__((), (), ())
        self.stop = stop

    def _walk(self, frame: Optional[types.FrameType]) -> Optional[str]:
        keys: List[str] = []
        while frame is not None and frame.f_code is not self.stop:
            if frame.f_code.co_filename != __file__:  # the recorder's own frames
                keys.append(frame_key(frame.f_code))
            frame = frame.f_back
        return _SEP.join(keys)

    def from_stack(self) -> Optional[str]:
        return self._walk(sys._getframe(1))

    def from_other_threads(self) -> str:
        return self._walk(sys._current_frames().get(self.main_thread)) or ""


_SEP = "\n"


class StackRecorder(FootprintRecorder):
    """A :class:`FootprintRecorder` for a process that does not know the API (a rank of a
    world): :meth:`records` are ``[op, frames, count, dtypes]`` lists (JSON- and
    pickle-able) for :meth:`FootprintRecorder.absorb` in the process that does; ``stop``:
    the code object whose frame called the scenario's code (the frames above it are the
    harness's)."""

    def __init__(self, device_type: str, stop: Optional[types.CodeType] = None, runtime: bool = True):
        super().__init__(device_type, runtime=runtime)
        self.attr = _StackAttribution(stop)

    UNATTRIBUTED = ""  # the frames go to the process that knows the API

    def _runtime_source(self, fn: Any, name: str = "") -> str:
        return self.attr.from_stack() or ""

    def records(self) -> List[list]:
        return [[op, frames.split(_SEP) if frames else [], n, sorted(self.dtypes[(op, frames)])]
                for (op, frames), n in sorted(self.counts.items())]

    def failure(self) -> Optional[list]:
        """The op whose kernel raised, ``[op, frames, dtypes]`` (None: none raised), for
        :meth:`FootprintRecorder.absorb_failure` in the process that knows the API."""
        if self.failed is None:
            return None
        op, frames, dtypes = self.failed
        return [op, frames.split(_SEP) if frames else [], dtypes]


def merge(entries: Iterable[FootprintEntry]) -> List[FootprintEntry]:
    """Merge entries of several scenarios: one row per (op, source)."""
    counts: Dict[Tuple[str, str], int] = defaultdict(int)
    dtypes: Dict[Tuple[str, str], Set[str]] = defaultdict(set)
    for e in entries:
        counts[(e.op, e.source)] += e.count
        dtypes[(e.op, e.source)].update(e.dtypes)
    return [FootprintEntry(op=op, source=src, count=n, dtypes=sorted(dtypes[(op, src)]))
            for (op, src), n in sorted(counts.items())]


def _asked_by_fake_tensors() -> bool:
    """Whether the device-module call being recorded comes from a FakeTensorMode's own code
    (its ``avoid_device_init`` asks whether the backend is available while export or
    ``pipeline()`` traces a module): fake tensors never reach the device, so the query is
    device work of no one's, neither of the API whose frame is on the stack (pipe_split,
    traced) nor of the scenario. Not recorded."""
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    where = getattr(fake, "__file__", None)
    if where is None:  # not imported: nothing traces with fake tensors
        return False
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == where:
            return True
        frame = frame.f_back
    return False


RUNTIME_PREFIX = "runtime."  # entries of device-module calls (FootprintRecorder(runtime=True))
# an entry saying that part of the case ran where no recorder reached (an RPC's callee
# threads, a rank that sent no footprint): the footprint is incomplete, "not recorded"
UNRECORDED = "runtime.unrecorded"
# an entry saying that a world's ranks sent their footprints back and they are in it
RANKS_RECORDED = "runtime.world.ranks_recorded"


def is_runtime(entry: FootprintEntry) -> bool:
    return entry.op.startswith(RUNTIME_PREFIX)


def compute_ops(entries: Iterable[FootprintEntry], source: str = "api") -> List[FootprintEntry]:
    """Entries of ``source`` that do real work (not views, copies, allocation or runtime
    calls)."""
    return [e for e in entries if e.source == source and not is_runtime(e)
            and e.op.split(".", 1)[-1] not in METADATA_OPS]


def involvement(entries: Iterable[FootprintEntry]) -> str:
    """none | indirect | direct: does the API itself issue device operators?"""
    entries = list(entries)
    if any(e.source == "api" for e in entries):
        return "direct"
    if entries:
        return "indirect"
    return "none"


def checked_dtype(args: tuple, kwargs: dict, out: Any = None) -> Optional[str]:
    """The dtype a backend's dtype check sees: the first tensor argument (a list's first
    tensor counts), keyword arguments after positional ones; for factories (no tensor
    argument) the result's dtype."""
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor):
            return dtype_name(a.dtype)
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, torch.Tensor):
                    return dtype_name(x.dtype)
    for t in _tensors(out):
        return dtype_name(t.dtype)
    return None


class DispatchRecorder(TorchDispatchMode):
    """Every aten overload dispatched, with the dtype a backend's check would see.

    ``calls`` is a list of ``(overload, dtype)`` such as ``("aten.dot.default",
    "float64")``, in order, repeats collapsed. Runs on any device (the CPU included).
    """

    def __init__(self):
        super().__init__()
        self.calls: List[Tuple[str, Optional[str]]] = []
        self._seen: Set[Tuple[str, Optional[str]]] = set()

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        key = (str(func), checked_dtype(args, kwargs, out))
        if key not in self._seen:
            self._seen.add(key)
            self.calls.append(key)
        return out
