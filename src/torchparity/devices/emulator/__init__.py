"""The emulated accelerator: a PrivateUse1 backend in pure Python, driven by a profile.

``activate(profile)`` registers a device named ``profile.device_type`` (``npu`` for the
Ascend profiles) that runs every op on the CPU and behaves like the device the profile
describes. Nothing is registered until an emulated device is asked for; a process hosts
one profile (PrivateUse1 cannot be unregistered), so a second ``activate`` with another
profile raises. ``support_problem()`` says, without registering anything, whether this
torch can host the emulator.

How it works (modules of this package):

- ``storage``: device tensors are plain PrivateUse1 tensors over host (CPU) memory; every
  C++ alias finds the host bytes through the device storage's Python object.
- ``dispatch``: one boxed fallback runs each op's CPU kernel on CPU views of the device
  tensors and maps results back (aliases, in-place and ``out=`` as on the CPU); mixed
  multi-dimensional CPU + device inputs raise "Expected all tensors to be on the same
  device".
- ``kernels``: explicit kernels (``_to_copy``, ``_copy_from``, ``set_``, ``resize_``,
  convolution) and direct kernels for the structured ops.
- ``checks``: profile enforcement before an op runs. The dtype checked is that of the first
  tensor argument; factories are checked with their result dtype. A refusal is a
  RuntimeError shaped like the real backend's (``"dot_npu" not implemented for 'Double'``).
- ``features``: what lies outside kernels. With ``features.itt: false``,
  ``torch.profiler.itt.is_available()`` returns False and ``emit_itt(enabled=True)``
  raises "Can't use ITT profiler - PyTorch was compiled without ITT" (``errors.itt``);
  this holds only once the emulator is active, i.e. for the rest of the process, except
  inside ``reference()``: a CPU reference run stands for plain CPU torch and sees none of
  the emulated build's feature switches.
  ``torch.Generator(device=<emu>)`` is a CPU generator whose ``device`` is the emulated
  device (its draws are the CPU's for the same seed); ``UntypedStorage.resize_`` gives a
  device storage new host memory in place. Pinned memory and sparse/quantized layouts
  cannot be emulated from Python and raise "... not supported by the emulated device"; so
  do ops on a nested tensor (strided layout) on the device, whose metadata alone answers.
- ``module``: ``torch.<device_type>``: is_available, device_count (1), current_device,
  set_device, synchronize, ``device`` context manager, seeding and RNG state,
  ``get_amp_supported_dtype`` (autocast as the profile allows), ``amp``; only the members
  torch_npu's ``torch.npu`` has (``_npu_members``: its ``__all__`` with the source).
- ``runtime``: streams (each its own id; work is done when the call returns), events
  (host-clock timing), stream contexts, memory functions over ``memstats`` (counters kept
  per device storage, freed with its last alias; reserved = allocated, no cache),
  ``caching_allocator_alloc/delete`` (counted host memory by pointer); graph capture, IPC
  handles, pluggable allocators raise "not supported by the emulated device".
- ``autocast``: cast policies for ``torch.autocast("<device>")`` (torch has none for
  PrivateUse1).
- ``fused``: the fused LSTM/GRU cell ops ATen sends accelerators to (CUDA-only in torch).
- ``numerics``: optional reduced-precision inputs for listed ops (``profile.numerics``).
- ``faults`` / ``noise``: injected device bugs (``TORCHPARITY_EMU_FAULT=NAME[,NAME...]``)
  and a correct chip's rounding (``TORCHPARITY_EMU_NUMERICS=device``, rules in
  ``profiles/noise/device.yaml``), read once per process; when set, each op plan's CPU
  call is wrapped once (never per call), device results only, the CPU reference untouched.
- ``collectives``: a ``torch.distributed`` backend (``torchparity_emu``) running gloo on
  host views of the device tensors, refusing the collective dtypes the profile's
  ``c10d.*`` entries leave out.

``trace_ops()`` records the (aten op, dtype) pairs that reach the device while it is open:
the ops after decomposition (``allclose`` arrives as ``isclose``, ``ne``, ...), i.e. what
the profile is asked about — what a TorchDispatchMode above the device cannot see.

Random ops on the device use the device module's own generator, seeded by
``torch.manual_seed`` together with the CPU's, so seeded runs agree with the CPU.

Not emulated: more than one device (index 0 only), asynchronous streams (all work is
synchronous), graph capture, IPC/shared CUDA-style handles, ``torch.compile`` backends. Growing a
device tensor (``resize_``, an ``out=`` that must grow) re-points it at new memory; other
views of the old memory keep the old bytes.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Set, Tuple

from .registration import activate, active_profile, is_active, support_problem

__all__ = ["activate", "active_profile", "is_active", "prefork", "reference", "support_problem",
           "trace_ops"]


def prefork(profile) -> None:
    """What a process that forks ranks emulating ``profile`` can do once for all of them,
    registering no device, running no op and starting no thread: import the emulator and
    build the op packets its registration looks up (``kernels.resolve``, the vendor
    composites' ``candidates``); the profile itself was read by whoever loaded it
    (``load_profile`` keeps what it read). A rank forked after it sets its device up in a
    fraction of a fresh process's time; what it registers is the same."""
    from . import collectives, composites, kernels  # noqa: F401  (imported for the ranks)

    kernels.resolve()
    for _ in composites.candidates(profile, profile.device_type):
        pass


@contextmanager
def reference() -> Iterator[None]:
    """While open, the emulated build's process-wide feature switches (ITT, ...) are off:
    what runs is the CPU reference, which must behave as plain CPU torch (re-entrant)."""
    from .dispatch import STATE

    STATE.reference += 1
    try:
        yield
    finally:
        STATE.reference -= 1


@contextmanager
def unverified_ops() -> Iterator[Set[Tuple[str, str]]]:
    """Collect the (op packet, dtype) calls a generated profile has no capability fact for
    (``checks.SilentRule``): they ran, but nothing says the chip runs them (not re-entrant)."""
    from .checks import UNVERIFIED

    seen: Set[Tuple[str, str]] = set()
    UNVERIFIED.seen = seen
    try:
        yield seen
    finally:
        UNVERIFIED.seen = None


@contextmanager
def trace_ops() -> Iterator[Set[Tuple[str, str]]]:
    """Collect the (op packet, dtype) pairs dispatched to the device (not re-entrant)."""
    from .dispatch import STATE

    seen: Set[Tuple[str, str]] = set()
    STATE.trace = seen
    try:
        yield seen
    finally:
        STATE.trace = None
