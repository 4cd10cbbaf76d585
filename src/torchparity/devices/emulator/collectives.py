"""A ``torch.distributed`` backend for the emulated device: gloo over host memory.

A real accelerator brings its own collective library (hccl, nccl); the emulated device
keeps its tensors in host memory (``storage``), so its collectives are gloo's, run on CPU
views of the device tensors: what gloo writes into a view lands in the device tensor.

:func:`register` registers the backend ``torchparity_emu`` with
``torch.distributed.Backend.register_backend`` for the CPU and the emulated device type
active in this process, so ``init_process_group(backend=register())`` serves both. It is a Python
``ProcessGroup`` (torch's ``Backend`` has no Python constructor) wrapping a
``ProcessGroupGloo`` made on the same store.

Profile enforcement, as for single ops (``checks``): before a collective runs on device
tensors, its ``c10d`` op (``c10d.allreduce_``, ``c10d.broadcast_``, ...) is looked up in
the profile with the dtype of the tensor it carries; a refusal is the profile's message
(``"allreduce_npu" not implemented for 'Double'``), raised in the rank that called it. An
op the profile does not list follows its ``default``. ``barrier`` carries no tensor and is
never refused.
Every rank refuses the same call, so no rank waits for a peer that gave up.
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta
from typing import Callable, Iterator, List, Optional

import torch

from . import faults
from .checks import OpRule
from .storage import cpu_view

BACKEND = "torchparity_emu"
_STATE = {"profile": None}


def register() -> str:
    """Register the collective backend for the emulated device active in this process
    (idempotent); returns the backend name to give ``init_process_group``."""
    import torch.distributed as dist

    from .registration import active_profile

    profile = active_profile()
    if profile is None:
        raise RuntimeError("emu: no emulated device is active in this process; activate one "
                           "before asking for its collective backend")
    _STATE["profile"] = profile
    if BACKEND.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND, _create, devices=["cpu", profile.device_type])
    return BACKEND


def _create(store, rank: int, size: int, timeout: timedelta):
    return HostGlooGroup(store, rank, size, timeout)


def _rule(op_base: str) -> Optional[OpRule]:
    """The profile's rule for ``c10d.<op_base>``, None when every dtype is allowed."""
    profile = _STATE["profile"]
    if profile is None:
        return None
    entry = profile.op_support(f"c10d.{op_base}")
    kernel = f"{op_base.strip('_')}_{profile.device_type}"
    if entry is None:
        if profile.default == "allow":
            return None
        return OpRule(f"c10d::{op_base}", kernel, False, None, profile.errors)
    if entry.supported and entry.dtypes is None:
        return None
    return OpRule(f"c10d::{op_base}", kernel, entry.supported, entry.dtypes, profile.errors)


def _is_device(t) -> bool:
    profile = _STATE["profile"]
    return (isinstance(t, torch.Tensor) and profile is not None
            and t.device.type == profile.device_type)


def _flat(xs) -> List[torch.Tensor]:
    out = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out.extend(_flat(x))
        elif isinstance(x, torch.Tensor):
            out.append(x)
    return out


# who hears each collective run here (``observing``): a footprint recorder of a rank; the
# collectives of this Python group never reach torch's dispatcher, so no dispatch mode
# sees their ``c10d`` op as it sees a C++ backend's
_OBSERVERS: List[Callable[[str, List[torch.Tensor]], None]] = []


@contextmanager
def observing(note: Callable[[str, List[torch.Tensor]], None]) -> Iterator[None]:
    """While open, ``note("c10d.<op>", device tensors)`` before each collective that
    carries device tensors (a refused one included: it is the op that raised)."""
    _OBSERVERS.append(note)
    try:
        yield
    finally:
        _OBSERVERS.remove(note)


def _check(op_base: str, *carried) -> None:
    """Refuse the collective if the profile does not allow the dtype of the first device
    tensor it carries."""
    tensors = [t for t in _flat(carried) if _is_device(t)]
    if not tensors:
        return
    for note in list(_OBSERVERS):
        note(f"c10d.{op_base}", tensors)
    rule = _rule(op_base)
    if rule is not None:
        rule.check(tensors[0].dtype)


def _host(x):
    """CPU views of the device tensors in ``x`` (a tensor or nested lists of tensors)."""
    if isinstance(x, (list, tuple)):
        return [_host(v) for v in x]
    if _is_device(x):
        return cpu_view(x)
    return x


class HostGlooGroup(torch.distributed.ProcessGroup):
    """A process group whose collectives run gloo on host views of device tensors."""

    def __init__(self, store, rank: int, size: int, timeout: timedelta):
        from torch.distributed import PrefixStore
        from torch.distributed.distributed_c10d import ProcessGroupGloo

        super().__init__(rank, size)
        self._gloo = ProcessGroupGloo(PrefixStore("host-gloo", store), rank, size, timeout)

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return BACKEND

    def name(self) -> str:
        return BACKEND

    # -- names: c10d names every group it makes (``_set_group_name``); torch keeps the
    # name on the group's C++ backends, which a Python group has none of, so it is kept
    # here (DeviceMesh, DTensor and fully_shard look groups up by it)
    def _set_group_name(self, name: str) -> None:
        self._tp_group_name = name

    @property
    def group_name(self) -> str:
        name = getattr(self, "_tp_group_name", None)
        if name is None:
            raise RuntimeError("ProcessGroup name not set")
        return name

    @property
    def _device_types(self) -> List[torch.device]:
        """The device types this group serves (the backend is registered for both): torch
        asks it for a group's default device (the CPU where it is listed, as for gloo)."""
        profile = _STATE["profile"]
        types = ["cpu"] + ([profile.device_type] if profile is not None else [])
        return [torch.device(t) for t in types]

    def _set_group_desc(self, desc: str) -> None:
        self._tp_group_desc = desc

    @property
    def group_desc(self) -> str:
        return getattr(self, "_tp_group_desc", "undefined")

    # -- collectives -------------------------------------------------------------------
    def _hooked(self, name: str, work, outputs, inputs):
        """``work`` as it is, or, where an active fault module has a ``collective`` hook
        (``faults.after_collective``), finished here and its outputs handed to the hook,
        which may change them in place (what the caller and the work's future read)."""
        if not faults.ACTIVE or not faults.collective_hooks():
            return work
        work.wait()
        faults.after_collective(name, outputs, inputs, self.rank(), self.size())
        return work

    def allreduce(self, tensors, opts=None):
        _check("allreduce_", tensors)
        host = _host(tensors)
        if faults.COLLECTIVE_NOOP:  # injected bug: the local tensor stays as it is
            return _noop(self._gloo.allreduce(_clones(host), _opts(opts, "AllreduceOptions")), host)
        return self._hooked("allreduce", self._gloo.allreduce(host, _opts(opts, "AllreduceOptions")), host, host)

    def allreduce_coalesced(self, tensors, opts=None):
        _check("allreduce_coalesced_", tensors)
        host = _host(tensors)
        if faults.COLLECTIVE_NOOP:
            return _noop(self._gloo.allreduce_coalesced(_clones(host), _opts(opts, "AllreduceCoalescedOptions")),
                         host)
        return self._gloo.allreduce_coalesced(host, _opts(opts, "AllreduceCoalescedOptions"))

    def broadcast(self, tensors, opts=None):
        _check("broadcast_", tensors)
        host = _host(tensors)
        if faults.COLLECTIVE_NOOP:  # injected bug: a non-root keeps its own tensor
            return _noop(self._gloo.broadcast(_clones(host), _opts(opts, "BroadcastOptions")), host)
        return self._hooked("broadcast", self._gloo.broadcast(host, _opts(opts, "BroadcastOptions")), host, host)

    def allgather(self, output_lists, inputs, opts=None):
        _check("allgather_", inputs, output_lists)
        outs, ins = _host(output_lists), _host(inputs)
        if faults.COLLECTIVE_NOOP:  # injected bug: every slot gets the local tensor
            for slots, local in zip(outs, ins):
                for slot in slots:
                    slot.copy_(local)
            return _noop(self._gloo.allgather(_clones(outs), ins, _opts(opts, "AllgatherOptions")), outs)
        return self._hooked("allgather", self._gloo.allgather(outs, ins, _opts(opts, "AllgatherOptions")), outs, ins)

    def _allgather_base(self, output, input, opts=None):
        _check("_allgather_base_", input, output)
        out, inp = _host(output), _host(input)
        if faults.COLLECTIVE_NOOP:
            return _noop(self._gloo._allgather_base(_gather_local(out, inp), inp, _opts(opts, "AllgatherOptions")),
                         out)
        return self._hooked("allgather_into_tensor", self._gloo._allgather_base(out, inp, _opts(opts, "AllgatherOptions")),
                            out, inp)

    def all_gather_single(self, output, input, opts=None):  # torch >= 2.13's name
        return self._allgather_base(output, input, opts)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        _check("allgather_into_tensor_coalesced_", inputs, outputs)
        outs, ins = _host(outputs), _host(inputs)
        if faults.COLLECTIVE_NOOP:
            return _noop(_in_turn(self._gloo._allgather_base, [_gather_local(o, i) for o, i in zip(outs, ins)],
                                  ins, lambda: _opts(opts, "AllgatherOptions")), outs[-1])
        return _in_turn(self._gloo._allgather_base, outs, ins,
                        lambda: _opts(opts, "AllgatherOptions"))

    def reduce_scatter(self, outputs, input_lists, opts=None):
        _check("reduce_scatter_", outputs, input_lists)
        outs, ins = _host(outputs), _host(input_lists)
        if faults.COLLECTIVE_NOOP:  # injected bug: this rank's own slice, not reduced
            for out, slots in zip(outs, ins):
                out.copy_(slots[self.rank()])
            return _noop(self._gloo.reduce_scatter(_clones(outs), ins, _opts(opts, "ReduceScatterOptions")), outs)
        return self._hooked("reduce_scatter", self._gloo.reduce_scatter(outs, ins, _opts(opts, "ReduceScatterOptions")),
                            outs, ins)

    def _reduce_scatter_base(self, output, input, opts=None):
        _check("_reduce_scatter_base_", output, input)
        out, inp = _host(output), _host(input)
        if faults.COLLECTIVE_NOOP:
            return _noop(self._gloo._reduce_scatter_base(_scatter_local(out, inp, self.rank(), self.size()), inp,
                                                         _opts(opts, "ReduceScatterOptions")), out)
        return self._hooked("reduce_scatter_tensor",
                            self._gloo._reduce_scatter_base(out, inp, _opts(opts, "ReduceScatterOptions")), out, inp)

    def reduce_scatter_single(self, output, input, opts=None):  # torch >= 2.13's name
        return self._reduce_scatter_base(output, input, opts)

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        _check("reduce_scatter_tensor_coalesced_", outputs, inputs)
        outs, ins = _host(outputs), _host(inputs)
        if faults.COLLECTIVE_NOOP:
            local = [_scatter_local(o, i, self.rank(), self.size()) for o, i in zip(outs, ins)]
            return _noop(_in_turn(self._gloo._reduce_scatter_base, local, ins,
                                  lambda: _opts(opts, "ReduceScatterOptions")), outs[-1])
        return _in_turn(self._gloo._reduce_scatter_base, outs, ins,
                        lambda: _opts(opts, "ReduceScatterOptions"))

    def reduce(self, tensors, opts=None):
        _check("reduce_", tensors)
        host = _host(tensors)
        if faults.COLLECTIVE_NOOP:  # injected bug: the root keeps its own tensor, unreduced
            return _noop(self._gloo.reduce(_clones(host), _opts(opts, "ReduceOptions")), host)
        return self._hooked("reduce", self._gloo.reduce(host, _opts(opts, "ReduceOptions")), host, host)

    def gather(self, output_lists, inputs, opts=None):
        _check("gather_", inputs, output_lists)
        outs = _host(output_lists)
        if faults.COLLECTIVE_NOOP:  # injected bug: the root's slots stay as they were
            return _noop(self._gloo.gather(_clones(outs), _host(inputs), _opts(opts, "GatherOptions")), outs)
        ins = _host(inputs)
        return self._hooked("gather", self._gloo.gather(outs, ins, _opts(opts, "GatherOptions")), outs, ins)

    def scatter(self, outputs, input_lists, opts=None):
        _check("scatter_", outputs, input_lists)
        outs = _host(outputs)
        if faults.COLLECTIVE_NOOP:  # injected bug: the output stays as it was
            return _noop(self._gloo.scatter(_clones(outs), _host(input_lists), _opts(opts, "ScatterOptions")), outs)
        ins = _host(input_lists)
        return self._hooked("scatter", self._gloo.scatter(outs, ins, _opts(opts, "ScatterOptions")), outs, ins)

    def alltoall(self, outputs, inputs, opts=None):
        _check("alltoall_", inputs, outputs)
        outs = _host(outputs)
        if faults.COLLECTIVE_NOOP:  # injected bug: the outputs stay as they were
            return _noop(self._gloo.alltoall(_clones(outs), _host(inputs), _opts(opts, "AllToAllOptions")), outs)
        ins = _host(inputs)
        return self._hooked("alltoall", self._gloo.alltoall(outs, ins, _opts(opts, "AllToAllOptions")), outs, ins)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        _check("alltoall_base_", input, output)
        out = _host(output)
        if faults.COLLECTIVE_NOOP:  # injected bug: the output stays as it was
            return _noop(self._gloo.alltoall_base(_clones(out), _host(input), output_split_sizes,
                                                  input_split_sizes, _opts(opts, "AllToAllOptions")), out)
        inp = _host(input)
        return self._hooked("alltoall_single", self._gloo.alltoall_base(out, inp, output_split_sizes,
                                                                        input_split_sizes,
                                                                        _opts(opts, "AllToAllOptions")), out, inp)

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    def barrier(self, opts=None):
        for note in list(_OBSERVERS):  # a device collective on the chip, with no tensor here
            note("c10d.barrier", [])
        return self._gloo.barrier(_opts(opts, "BarrierOptions"))

    # -- point to point ----------------------------------------------------------------
    def send(self, tensors, dst: int, tag: int = 0):
        _check("send", tensors)
        return self._gloo.send(_host(tensors), dst, tag)

    def recv(self, tensors, src: int, tag: int = 0):
        _check("recv_", tensors)
        bufs = _host(tensors)
        if faults.COLLECTIVE_NOOP:  # injected bug: the message is taken, the buffer keeps what it held
            return _noop(self._gloo.recv(_clones(bufs), src, tag), bufs)
        return self._hooked("recv", self._gloo.recv(bufs, src, tag), bufs, None)

    def recv_anysource(self, tensors, tag: int = 0):
        _check("recv_any_source_", tensors)
        bufs = _host(tensors)
        if faults.COLLECTIVE_NOOP:  # gloo's own work: dist.recv asks it for the sender's rank
            bufs = _clones(bufs)
        return self._gloo.recv_anysource(bufs, tag)


class _NoopWork(torch.distributed.Work):
    """``collective-noop``: gloo's work on copies, answering with what the caller holds
    (``mine``, left as this rank had it) once the peers are done — through its future too,
    which callers such as DDP's reducer and ``Join`` read instead of the tensors they
    passed in. Waiting raises what gloo's work raises."""

    def __init__(self, work, mine):
        super().__init__()
        self._work = work
        self._future = work.get_future().then(lambda done: (done.value(), mine)[1])

    def wait(self, timeout=None):
        self._work.wait() if timeout is None else self._work.wait(timeout)
        return True

    def is_completed(self):
        return self._work.is_completed()

    def get_future(self):
        return self._future


_noop = _NoopWork


def _clones(x):
    """Copies for gloo to write into: the peers stay in step while the tensors the caller
    holds keep what this rank put there (``collective-noop``)."""
    if isinstance(x, (list, tuple)):
        return [_clones(v) for v in x]
    return x.clone() if isinstance(x, torch.Tensor) else x


def _gather_local(out, inp):
    """``collective-noop`` all-gather into one tensor: every rank's slot holds the local
    input; returns the copy gloo writes into instead."""
    for chunk in out.chunk(max(1, out.numel() // max(1, inp.numel()))):
        chunk.copy_(inp.reshape(chunk.shape))
    return out.clone()


def _scatter_local(out, inp, rank: int, size: int):
    """``collective-noop`` reduce-scatter from one tensor: this rank's slice, unreduced."""
    out.copy_(inp.reshape(size, -1)[rank].reshape(out.shape))
    return out.clone()


def _in_turn(single, outputs, inputs, opts):
    """A coalesced collective as its single-tensor form, pair by pair (gloo's Python
    binding has no coalesced all-gather / reduce-scatter of tensors; the functional
    collectives DTensor and fully_shard use ask for them): every pair but the last is
    waited for here, the last one's work is returned."""
    if not outputs:
        raise ValueError("a coalesced collective needs at least one tensor")
    for out, inp in zip(outputs[:-1], inputs[:-1]):
        single(out, inp, opts()).wait()
    return single(outputs[-1], inputs[-1], opts())


def _opts(opts, kind: str):
    if opts is not None:
        return opts
    import torch.distributed as dist

    return getattr(dist, kind)()
