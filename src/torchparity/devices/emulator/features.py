"""Device features around the kernels: build options, generators, pinned memory, storages.

Installed once by ``activate()`` and never removed (a PrivateUse1 registration cannot be
undone within a process either):

- ITT (``profile.features.itt: false``): ``torch.profiler.itt.is_available()`` returns
  False, and entering ``torch.autograd.profiler.emit_itt(enabled=True)`` or calling
  ``torch.profiler.itt.range_push/range_pop/mark`` raises ``RuntimeError(profile.errors.itt)``
  ("Can't use ITT profiler - PyTorch was compiled without ITT"), as in a build without
  ITT. ``emit_itt(enabled=False)`` stays a no-op. torch 2.13's emit_itt does not consult
  ``is_available()``, hence the patched ``__enter__``. The switch is process-wide (a build
  property) except inside ``reference()`` (see ``__init__``): a CPU reference run sees the
  plain CPU build's ITT, as it would without the emulator.
- ``torch.Generator(device=<emu>)``: a Python backend cannot register device generators
  (``getNewGenerator`` is not among the Python hooks); ``torch.Generator`` is replaced by a
  thin subclass that, for the emulated device, returns a ``DeviceGenerator`` (a CPU
  generator underneath whose ``device`` is the emulated device: the device's random ops
  draw on the host), and otherwise a plain ``torch._C.Generator`` (``isinstance`` keeps
  working). Unlike a real device generator, C++ sees a CPU generator: a CPU op given it is
  not refused.
- ``Tensor.pin_memory()``: the CPU's ``_pin_memory`` kernel is replaced by one raising
  "pinned memory ... not supported by the emulated device" (no pinned allocator exists
  for the emulated device).
- ``UntypedStorage.resize_`` on a device storage: new host memory swapped into the same
  C++ storage (``storage.resize_device_storage``); ``resize_(0)`` frees it (the memory
  counters drop), a later ``resize_(n)`` allocates again.
- ``torch.UntypedStorage(n, device=<emu>)``: C++ would allocate with a PrivateUse1
  allocator that does not exist (a segfault); the constructor makes host memory and the
  device storage over it. ``torch.load``/``deepcopy``/``storage.to(<emu>)`` go through it.
- sparse / sparse CSR / quantized dispatch keys of the device: a fallback raising
  "... not supported by the emulated device". The compressed-layout constructors
  (``torch.sparse_csr_tensor`` & co., and ``Tensor.to(<emu>)`` of a CSR/CSC/BSR/BSC
  tensor) are composite in ATen and would build a device tensor that no kernel can read
  (its ``col_indices()`` raising "... expected sparse row compressed tensor layout but got
  SparseCsr"): they refuse the same way, as soon as their inputs are on the device.
- nested tensors (``torch.nested``, the strided layout): torch builds a device nested tensor
  in composite code the emulator does not see, and has no nested kernels for PrivateUse1.
  Its metadata ops (``_nested_tensor_size/strides/storage_offsets``) run the CPU's
  (device-independent) kernels; every other op on the device's nested key is refused with
  "... not supported by the emulated device", as is a CPU kernel returning a nested tensor
  for the device (``storage.wrap``). The metadata ops matter: autograd asks
  ``_nested_tensor_size`` when a nested tensor that requires grad is first viewed, at a
  point where an exception cannot propagate, and the process dies (std::terminate).
  The jagged layout (a Python subclass over strided tensors) is not affected.
- dynamo (``torch.compile``): the emulator's files are on its skip list (``_DynamoSkip``),
  as a real device's native kernels are out of its sight; else each Python kernel frame
  called while a compiled graph runs would be compiled in turn.
- ``torch.accelerator.synchronize()``: a no-op for the emulated device (it is synchronous;
  the Python device guard cannot implement stream synchronisation).
- ``torch.accelerator.memory.*`` (and the same names on ``torch.accelerator``): routed to
  the emulated module's counters when the emulated device is the accelerator (torch_npu
  registers its caching allocator with c10, so they work on a real NPU; a Python backend
  has no c10 allocator to register).
"""

from __future__ import annotations

import sys
import warnings

import torch

from . import storage as st
from .dispatch import STATE


def install_itt(profile) -> None:
    if profile.features.itt:
        return
    message = profile.errors.itt
    import torch.autograd.profiler as autograd_profiler
    import torch.profiler.itt as itt

    original = {name: getattr(itt, name) for name in ("is_available", "range_push", "range_pop", "mark")}

    def is_available() -> bool:
        return original["is_available"]() if STATE.reference else False

    def refusing(name):
        def unavailable(*args, **kwargs):
            if STATE.reference:
                return original[name](*args, **kwargs)
            raise RuntimeError(message)

        unavailable.__wrapped__ = original[name]
        return unavailable

    itt.is_available = is_available
    for name in ("range_push", "range_pop", "mark"):
        setattr(itt, name, refusing(name))
    emit_itt = autograd_profiler.emit_itt
    original_enter = emit_itt.__enter__

    def __enter__(self):
        if self.enabled and not STATE.reference:
            raise RuntimeError(message)
        return original_enter(self)

    __enter__.__wrapped__ = original_enter
    emit_itt.__enter__ = __enter__


def install_generator() -> None:
    base = torch._C.Generator

    class _GeneratorMeta(type(base)):
        def __instancecheck__(cls, obj):
            return isinstance(obj, base)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, base)

    class Generator(base, metaclass=_GeneratorMeta):
        __doc__ = base.__doc__

        def __new__(cls, device="cpu"):
            dev = torch.device(device) if not isinstance(device, torch.device) else device
            if dev.type == STATE.device_type:
                if dev.index not in (None, 0):
                    raise RuntimeError(f"Invalid device {dev}: the emulated device has one "
                                       f"{STATE.device_type} device, index 0")
                return DeviceGenerator.__new__(DeviceGenerator)
            # looked up when called: a stand-in bound there for the type (the takeaway's
            # subclass, run.takeaway) makes the host generators too
            return torch._C.Generator(device)

    class DeviceGenerator(base):
        """A generator of the emulated device: the device's random ops draw on the host, so
        its state is a CPU generator's (seed, ``get_state``/``set_state``, ``graphsafe_*``),
        and its ``device`` is the emulated device. Ops given it draw the numbers a CPU
        generator with the same seed draws (as the device's default generator does)."""

        __slots__ = ()

        def __new__(cls):
            return base.__new__(cls, "cpu")

        @property
        def device(self) -> torch.device:
            return torch.device(STATE.device_type, 0)

        def clone_state(self):
            twin = DeviceGenerator.__new__(DeviceGenerator)
            twin.set_state(self.get_state())
            return twin

        def __reduce__(self):
            return (_device_generator, (self.get_state(),))

        def __repr__(self) -> str:
            return f"<torch.Generator object (emulated {STATE.device_type}:0)>"

    Generator.__module__ = "torch"
    Generator.__qualname__ = "Generator"
    DeviceGenerator.__module__ = "torch"
    DeviceGenerator.__qualname__ = "Generator"
    torch.Generator = Generator


def _device_generator(state: torch.Tensor):
    g = torch.Generator(device=STATE.device_type)
    g.set_state(state)
    return g


def _pin_memory(self, device=None):
    raise st.feature_error("pinned memory (Tensor.pin_memory())")


def install_pin_memory(lib: torch.library.Library) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
        lib.impl("_pin_memory", _pin_memory, "CPU")


def install_storage() -> None:
    cls = torch.UntypedStorage
    c_new = torch._C.StorageBase.__new__

    def __new__(klass, *args, device=None, **kwargs):
        if device is not None:
            dev = torch.device(device) if not isinstance(device, torch.device) else device
            if dev.type == STATE.device_type:
                if dev.index not in (None, 0):
                    raise RuntimeError(f"Invalid device {dev}: the emulated device has one "
                                       f"{STATE.device_type} device, index 0")
                host = c_new(klass, *args, **kwargs)
                return st.device_storage(host, torch.device(dev.type, 0))
            kwargs["device"] = device
        return c_new(klass, *args, **kwargs)

    cls.__new__ = __new__
    _install_storage_methods(cls)


def _install_storage_methods(cls) -> None:
    """Storage methods whose C++ needs what a Python backend lacks, for device storages.

    A device storage is a non-owning storage over host memory (storage.py): it has no
    allocator, so C++ ``new()`` (which allocates an empty storage with the allocator of
    ``self``) dereferences a null allocator and kills the process; here it makes an empty
    device storage the emulator's way. ``resize_`` asks the PrivateUse1 hooks for
    ``resizePrivateUse1Bytes``, which torch's Python hooks cannot provide; here the storage
    is given new host memory in place (``storage.resize_device_storage``: its bytes kept up
    to the smaller size, as a device's resize keeps them), so every tensor over it sees the
    new memory — what FSDP's ``fully_shard`` does to free and re-allocate its parameters.
    """
    c_new_storage = cls.new
    c_resize = cls.resize_

    def new(self):
        if self.device.type == STATE.device_type:
            return st.device_storage(torch.UntypedStorage(0), self.device)
        return c_new_storage(self)

    def resize_(self, size):
        if self.device.type == STATE.device_type:
            st.resize_device_storage(self, int(size))
            return self
        return c_resize(self, size)

    for fn, original in ((new, c_new_storage), (resize_, c_resize)):
        fn.__doc__ = original.__doc__
        fn.__wrapped__ = original
    cls.new = new
    cls.resize_ = resize_


class _DynamoSkip:
    """An import hook: once ``torch._dynamo.trace_rules`` is loaded, the emulator's files
    join its skip list. A real device's kernels are native code that dynamo never sees; the
    emulator's are Python frames called from C++ while a compiled graph runs, and dynamo
    would try to compile each one (``Module.compile(backend="eager")`` on the device: 7 s
    for one Linear, 0.05 s with the skip)."""

    TARGET = "torch._dynamo.trace_rules"

    def find_spec(self, name, path=None, target=None):
        if name != self.TARGET:
            return None
        import importlib.machinery

        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.add(__package__)
        spec.loader.exec_module = exec_module
        return spec


def hide_kernels_from_dynamo() -> None:
    """The emulator's frames skipped by dynamo (see ``_DynamoSkip``), now if dynamo is
    loaded, else when it is (importing it here would cost seconds)."""
    rules = sys.modules.get(_DynamoSkip.TARGET)
    if rules is not None:
        rules.add(__package__)
    elif not any(isinstance(f, _DynamoSkip) for f in sys.meta_path):
        sys.meta_path.insert(0, _DynamoSkip())


def install_accelerator() -> None:
    """``torch.accelerator.synchronize()`` asks the device guard to synchronise every
    stream, which a Python device guard cannot implement: the emulated device runs
    synchronously, so it has nothing to wait for."""
    import torch.accelerator as acc

    original = acc.synchronize

    def synchronize(device=None, /) -> None:
        if acc.current_accelerator().type == STATE.device_type:
            return None
        return original(device)

    synchronize.__doc__ = original.__doc__
    synchronize.__wrapped__ = original
    acc.synchronize = synchronize
    _install_accelerator_memory()


# torch.accelerator.memory.<name> -> the device module's member. torch_npu registers its
# caching allocator with c10 (NPUCachingAllocator.cpp: REGISTER_ALLOCATOR for PrivateUse1), so
# these work on a real NPU; a Python backend registers none, so they are routed here to the
# emulated module's counters.
ACCELERATOR_MEMORY = {
    "empty_cache": "empty_cache", "empty_host_cache": "host_empty_cache",
    "get_memory_info": "mem_get_info", "max_memory_allocated": "max_memory_allocated",
    "max_memory_reserved": "max_memory_reserved", "memory_allocated": "memory_allocated",
    "memory_reserved": "memory_reserved", "memory_stats": "memory_stats",
    "reset_accumulated_memory_stats": "reset_accumulated_memory_stats",
    "reset_peak_memory_stats": "reset_peak_memory_stats",
}


def _install_accelerator_memory() -> None:
    import torch.accelerator as acc
    import torch.accelerator.memory as accmem

    for name, member in ACCELERATOR_MEMORY.items():
        original = getattr(accmem, name, None)
        if original is None:
            continue

        def routed(*args, _original=original, _member=member, _takes=name, **kwargs):
            if acc.current_accelerator().type != STATE.device_type:
                return _original(*args, **kwargs)
            fn = getattr(torch.get_device_module(STATE.device_type), _member)
            if _takes in ("empty_cache", "empty_host_cache"):
                return fn()
            return fn(*args, **kwargs)

        routed.__doc__ = original.__doc__
        routed.__wrapped__ = original
        routed.__name__ = name
        routed.device_member = member  # the footprint's runtime entry names the member
        setattr(accmem, name, routed)
        if getattr(acc, name, None) is original:
            setattr(acc, name, routed)


def _sparse_fallback(op, *args, **kwargs):
    raise st.feature_error(f"{op._schema.name} on a sparse or quantized tensor")


# the ops through which every compressed sparse tensor with device components is made
COMPRESSED_CONSTRUCTORS = ("sparse_compressed_tensor.comp_plain_value_size",
                           "sparse_compressed_tensor.comp_plain_value",
                           "_sparse_compressed_tensor_unsafe")


def install_compressed_refusals(impls: torch.library.Library) -> None:
    """Refuse building a CSR/CSC/BSR/BSC tensor from device components (see module doc)."""
    def refuse(name):
        def refusing(*args, **kwargs):
            layout = kwargs.get("layout")
            what = f"a {layout} tensor" if layout is not None else "a sparse compressed tensor"
            raise st.feature_error(f"{what} (sparse layouts, via aten::{name})")
        return refusing

    # BackendSelect sends them to the sparse compressed key of the target device (the
    # layout and device arguments), where ATen's composite kernel would win over the
    # layout fallback; the dense key is the one plain device components reach
    for name in COMPRESSED_CONSTRUCTORS:
        for key in ("SparseCsrPrivateUse1", "PrivateUse1"):
            try:
                impls.impl(name, refuse(name.split(".")[0]), key)
            except (RuntimeError, ValueError):  # an op or key this torch does not have
                pass


def install_layout_fallbacks(lib: torch.library.Library) -> None:
    for key in ("SparsePrivateUse1", "SparseCsrPrivateUse1", "QuantizedPrivateUse1"):
        try:
            lib.fallback(_sparse_fallback, key)
        except (RuntimeError, ValueError):  # a key this torch does not have
            pass
    try:
        lib.fallback(_nested_fallback, "NestedTensorPrivateUse1")
    except (RuntimeError, ValueError):
        pass


NESTED = "a nested tensor (torch.nested, strided layout)"
_NESTED_METADATA = ("_nested_tensor_size", "_nested_tensor_strides", "_nested_tensor_storage_offsets")


def _nested_fallback(op, *args, **kwargs):
    raise st.feature_error(f"{op._schema.name} on {NESTED}")


def _nested_metadata(op):
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.NestedTensorCPU)
    handle = op._handle

    def kernel(self):
        return handle.redispatch_boxed(keys, self)

    return kernel


def install_nested(lib: torch.library.Library) -> None:
    """Nested tensors on the device: metadata answered, everything else refused (see the
    module docstring). The fallback itself is installed by ``install_layout_fallbacks``."""
    for name in _NESTED_METADATA:
        op = getattr(torch.ops.aten, name).default
        lib.impl(name, _nested_metadata(op), "NestedTensorPrivateUse1")
