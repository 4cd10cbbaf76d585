"""The cases of the ``devmod`` source: one real function per device-module API, and the table.

``torch.cuda.X`` (and ``torch.cpu.X``) is asked of the device module of the device under
test (``c.m("X")`` is ``torch.<device>.X``, see :class:`Ctx`); ``torch.accelerator.*``,
``torch.backends.*`` flags, ``torch.random.*``, ``torch.Generator`` and
``torch.default_generator`` are called directly. Every body ``f(device, dtype)`` returns
values and facts, compared with the same body run on the CPU; its ``reference`` (the
Case's words) says what the CPU run answers: ``torch.cpu``'s own member, the CPU
generator's functions for RNG members, or the property the API promises.

Device work in a body flows through its API (a computation inside a stream context,
events around it, RNG state saved and restored, an allocation the memory counters must
see, a flag a device kernel reads); an API that is a host-side query (a build flag, the
CPU generator) does none and says so: its rows are host-only evidence. The helpers and
bodies live in this one file: a body's snippet is its source with the helpers it uses
(``Case.snippet``), and runs on its own.
"""

from __future__ import annotations

import gc
import math
import os
import tempfile
import warnings

import torch

from ..base import Case, Excluded

F32 = ("float32",)
RANDOM = ("random",)

CPU = "torch.cpu runs the same code"
RNG = "the CPU generator (torch.random) runs the same code"
FLAG = "the same flag set around the same computation on the CPU"
SAME = "the same code run on the CPU"
BUILD = "the same build answers on the CPU"
ACC = "the promise: the accelerator API agrees with the device module of the device"
ACC_MEM = "the promise (as for the device module's counterpart)"
REPLAY = "the replay's promise"

# the CPU generator's functions standing in for a device module's RNG members on the CPU
CPU_RNG = {
    "get_rng_state": lambda device=None: torch.random.get_rng_state(),
    "set_rng_state": lambda state, device=None: torch.random.set_rng_state(state),
    "get_rng_state_all": lambda: [torch.random.get_rng_state()],
    "set_rng_state_all": lambda states: torch.random.set_rng_state(states[0]),
    "manual_seed": torch.random.manual_seed, "manual_seed_all": torch.random.manual_seed,
    "seed": torch.random.seed, "seed_all": torch.random.seed,
    "initial_seed": torch.random.initial_seed,
    "default_generators": (torch.default_generator,),
}

NBYTES = 1 << 20  # the device allocation the memory bodies make (1 MiB)


class DeviceModuleMissing(RuntimeError):
    """The device module of the device under test lacks the API's counterpart (judged
    unsupported: a feature the device's module does not offer)."""


class Ctx:
    """The device under test and its device module, as a body sees them. On the CPU the
    module is ``torch.cpu``; where it lacks a member, :meth:`m` answers None and the body
    answers with the property the API promises (the CPU generator's functions stand in
    for the RNG members). On a device whose module lacks it, :class:`DeviceModuleMissing`."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.type = self.device.type
        self.is_cpu = self.type == "cpu"
        self.mod = torch.cpu if self.is_cpu else torch.get_device_module(self.type)
        self.index = self.device.index or 0

    def name(self, path):
        """``CUDAGraph`` -> ``NPUGraph`` on an NPU (torch_npu's names)."""
        return path.replace("CUDA", self.type.upper())

    def m(self, path):
        """Member ``path`` (dotted) of the device module; None on the CPU where torch.cpu
        lacks it."""
        obj = self.mod
        for part in self.name(path).split("."):
            nxt = getattr(obj, part, None)
            if nxt is None and self.is_cpu and obj is self.mod and part in CPU_RNG:
                nxt = CPU_RNG[part]
            if nxt is None:
                if self.is_cpu:
                    return None
                raise DeviceModuleMissing(
                    f"the device module {self.mod.__name__} has no member {self.name(path)} "
                    f"(counterpart of torch.cuda.{path}): not supported by this device's module")
            obj = nxt
        return obj

    def only(self, owner, path, device_type="cuda"):
        """An API that exists for ``device_type`` alone (``torch.backends.cuda.X``): the
        object on that device, None on the CPU (reference property), else missing."""
        if self.type == device_type:
            obj = __import__(owner, fromlist=["_"])
            for part in path.split("."):
                obj = getattr(obj, part)
            return obj
        if self.is_cpu:
            return None
        raise DeviceModuleMissing(
            f"the device module {self.mod.__name__} has no member {path} (counterpart of "
            f"{owner}.{path}, which serves {device_type} devices only): not supported by this "
            "device's module")

    def call(self, obj, method, *args, ref=None, **kwargs):
        """``obj.method(*args)``; on the CPU, where torch.cpu's object lacks it, ``ref``."""
        fn = getattr(obj, method, None)
        if fn is None:
            if self.is_cpu:
                return ref
            raise DeviceModuleMissing(
                f"the device module {self.mod.__name__} has no member "
                f"{type(obj).__name__}.{method}: not supported by this device's module")
        return fn(*args, **kwargs)

    def tensor(self, n=12):
        """A float32 input made on the CPU, then moved (making it is no device work)."""
        return (torch.arange(n, dtype=torch.float32).reshape(-1, 4) / 4).to(self.device)

    def big(self):
        return torch.empty(NBYTES // 4, dtype=torch.float32, device=self.device)


def acc_here(c):
    """Whether the device under test is torch's current accelerator (the CPU is none: a
    torch.accelerator body answers there with the promise)."""
    acc = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    return acc is not None and acc.type == c.type


def capture(c, how="graph"):
    """Capture ``b = a * 2 + 1`` into a device graph, change ``a``, replay: the replayed
    ``b`` (the reference: the same formula on the new ``a``). ``how`` picks the members
    used: ``graph`` (context manager), ``begin_end`` (capture_begin/end), ``pool``
    (graph_pool_handle), ``reset`` (reset then re-capture)."""
    G = c.m("CUDAGraph")
    a = torch.ones(8, device=c.device)
    new = torch.arange(8.0)
    if G is None:
        return (new * 2 + 1)
    side = c.m("Stream")()
    side.wait_stream(c.m("current_stream")())
    with c.m("stream")(side):
        b = a * 2 + 1  # warm-up outside capture, as the API asks
    c.m("current_stream")().wait_stream(side)
    g = G()
    if how == "begin_end":
        with c.m("stream")(side):
            g.capture_begin()
            b = a * 2 + 1
            g.capture_end()
    elif how == "pool":
        with c.m("graph")(g, pool=c.m("graph_pool_handle")()):
            b = a * 2 + 1
    else:
        with c.m("graph")(g):
            b = a * 2 + 1
        if how == "reset":
            g.reset()
            g = G()
            with c.m("graph")(g):
                b = a * 2 + 1
    a.copy_(new.to(c.device))
    g.replay()
    c.m("synchronize")()
    return b


# --- torch.cuda.* streams and events ----------------------------------------------------------


def cuda_Stream(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    s = c.m("Stream")()
    with c.m("stream")(s):
        y = x * 2 + 1
    c.call(s, "synchronize")
    return {"y": y, "query": c.call(s, "query", ref=True)}


def cuda_Stream_wait_stream(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    S = c.m("Stream")
    s1, s2 = S(), S()
    with c.m("stream")(s1):
        y = x.sin()
    s2.wait_stream(s1)
    with c.m("stream")(s2):
        z = y + 1
    c.m("synchronize")()
    return z


def cuda_StreamContext(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    s = c.m("Stream")()
    cur = c.m("current_stream")
    with c.m("StreamContext")(s):
        inside = cur() == s
        y = x.cumsum(0)
    return {"y": y, "current_inside": inside, "current_after": cur() == s}


def cuda_current_stream(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    cur = c.m("current_stream")
    s0 = cur()
    s = c.m("Stream")()
    with c.m("stream")(s):
        inside = cur() == s
        y = x.exp()
    return {"y": y, "stable": cur() == s0, "inside": inside, "restored": cur() == s0}


def cuda_default_stream(device, dtype):
    c = Ctx(device)
    f = c.m("default_stream")
    if f is None:
        return {"is_current": True, "stable": True}
    d = f()
    return {"is_current": d == c.m("current_stream")(), "stable": f() == d}


def cuda_set_stream(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    f = c.m("set_stream")
    if f is None:
        return {"switched": True, "restored": True, "y": (x * 2)}
    cur = c.m("current_stream")
    s0, s = cur(), c.m("Stream")()
    f(s)
    switched = cur() == s
    y = x * 2
    f(s0)
    return {"switched": switched, "restored": cur() == s0, "y": y}


def cuda_stream(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    s = c.m("Stream")()
    with c.m("stream")(s):
        y = x.matmul(x.T)
    with c.m("stream")(None):
        z = y + 1
    c.m("synchronize")()
    return {"y": y, "z": z}


def cuda_synchronize(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    y = x.matmul(x.T)
    c.m("synchronize")()
    return y


def cuda_Event(device, dtype, op="mul"):
    """an event recorded after device work (``op``: the work), then synchronised"""
    c = Ctx(device)
    x = c.tensor()
    e = c.m("Event")()
    y = x * 2 if op == "mul" else x.exp()
    e.record()
    e.synchronize()
    return {"y": y, "query": e.query()}


def cuda_Event_wait(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    e = c.m("Event")()
    s = c.m("Stream")()
    y = x * 2
    e.record()
    e.wait(s)
    with c.m("stream")(s):
        z = y + 1
    c.m("synchronize")()
    return z


def cuda_Event_elapsed_time(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    y = x.matmul(x.T)
    if c.m("Event.elapsed_time") is None:
        return {"y": y, "float": True, "finite_nonnegative": True}
    E = c.m("Event")
    a, b = E(enable_timing=True), E(enable_timing=True)
    a.record()
    y = x.matmul(x.T)
    b.record()
    b.synchronize()
    t = a.elapsed_time(b)
    return {"y": y, "float": isinstance(t, float), "finite_nonnegative": math.isfinite(t) and t >= 0}


def cuda_Event_ipc_handle(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    if c.m("Event.ipc_handle") is None:
        return {"bytes": True, "nonempty": True}
    e = c.m("Event")(interprocess=True)
    x * 2
    e.record()
    h = e.ipc_handle()
    return {"bytes": isinstance(h, bytes), "nonempty": len(h) > 0}


def cuda_Event_from_ipc_handle(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    if c.m("Event.from_ipc_handle") is None:
        return {"query": True}
    E = c.m("Event")
    e = E(interprocess=True)
    x * 2
    e.record()
    e2 = E.from_ipc_handle(c.device, e.ipc_handle())
    e2.synchronize()
    return {"query": e2.query()}


def cuda_is_current_stream_capturing(device, dtype):
    c = Ctx(device)
    f = c.m("is_current_stream_capturing")
    return {"outside_capture": False if f is None else f()}


# --- torch.cuda.* memory ----------------------------------------------------------------------


def cuda_memory_allocated(device, dtype):
    c = Ctx(device)
    f = c.m("memory_allocated")
    if f is None:
        return {"grows_by_nbytes": True, "back_after_free": True, "is_the_allocators_stat": True}
    gc.collect()
    before = f()
    t = c.big()
    during = f()
    exact = during == c.m("memory_stats")().get("allocated_bytes.all.current")
    del t
    gc.collect()
    return {"grows_by_nbytes": during - before >= NBYTES, "back_after_free": f() <= during - NBYTES,
            "is_the_allocators_stat": exact}


def cuda_max_memory_allocated(device, dtype):
    c = Ctx(device)
    f = c.m("max_memory_allocated")
    if f is None:
        return {"peak_covers_current": True, "peak_kept_after_free": True, "is_the_allocators_stat": True}
    t = c.big()
    p = f()
    cur = c.m("memory_allocated")()
    exact = p == c.m("memory_stats")().get("allocated_bytes.all.peak")
    del t
    gc.collect()
    return {"peak_covers_current": p >= cur >= NBYTES, "peak_kept_after_free": f() >= p,
            "is_the_allocators_stat": exact}


def cuda_memory_reserved(device, dtype):
    c = Ctx(device)
    f = c.m("memory_reserved")
    if f is None:
        return {"covers_allocated": True, "is_the_allocators_stat": True}
    t = c.big()  # noqa: F841 (live while the counters are read)
    now = f()
    return {"covers_allocated": now >= c.m("memory_allocated")() >= NBYTES,
            "is_the_allocators_stat": now == c.m("memory_stats")().get("reserved_bytes.all.current")}


def cuda_max_memory_reserved(device, dtype):
    c = Ctx(device)
    f = c.m("max_memory_reserved")
    if f is None:
        return {"peak_covers_reserved": True, "is_the_allocators_stat": True}
    t = c.big()  # noqa: F841
    peak = f()
    return {"peak_covers_reserved": peak >= c.m("memory_reserved")() >= NBYTES,
            "is_the_allocators_stat": peak == c.m("memory_stats")().get("reserved_bytes.all.peak")}


def cuda_memory_cached(device, dtype):
    c = Ctx(device)
    f = c.m("memory_cached")
    if f is None:
        return {"equals_reserved": True}
    t = c.big()  # noqa: F841
    return {"equals_reserved": f() == c.m("memory_reserved")()}


def cuda_max_memory_cached(device, dtype):
    c = Ctx(device)
    f = c.m("max_memory_cached")
    if f is None:
        return {"equals_max_reserved": True}
    t = c.big()  # noqa: F841
    return {"equals_max_reserved": f() == c.m("max_memory_reserved")()}


def cuda_memory_stats(device, dtype):
    c = Ctx(device)
    f = c.m("memory_stats")
    if f is None:
        return {"dict": True, "current_matches_memory_allocated": True, "current_covers_the_tensor": True,
                "peak_covers_current": True}
    t = c.big()  # noqa: F841
    st = f()
    current = st.get("allocated_bytes.all.current", 0)
    return {"dict": isinstance(st, dict),
            "current_matches_memory_allocated": current == c.m("memory_allocated")(),
            # a counter stuck at 0 would match memory_allocated's 0: the live tensor's bytes must show
            "current_covers_the_tensor": current >= NBYTES,
            # and the peak, which a device may keep apart (and get wrong), holds at least that
            "peak_covers_current": st.get("allocated_bytes.all.peak", 0) >= current}


def cuda_memory_summary(device, dtype):
    c = Ctx(device)
    f = c.m("memory_summary")
    t = c.big()  # noqa: F841
    s = "summary" if f is None else f()
    return {"non_empty_str": isinstance(s, str) and len(s) > 0}


def cuda_percent(device, dtype, member):
    """``memory_usage`` / ``utilization`` (``member``): an int percentage"""
    c = Ctx(device)
    f = c.m(member)
    u = 0 if f is None else f()
    return {"percent": isinstance(u, int) and 0 <= u <= 100}


def cuda_empty_cache(device, dtype):
    c = Ctx(device)
    f = c.m("empty_cache")
    t = c.big()
    del t
    if f is None:
        return {"reserved_covers_allocated": True}
    f()
    return {"reserved_covers_allocated": c.m("memory_reserved")() >= c.m("memory_allocated")()}


def cuda_mem_get_info(device, dtype):
    c = Ctx(device)
    f = c.m("mem_get_info")
    free, total = (1, 2) if f is None else f()
    return {"ints": isinstance(free, int) and isinstance(total, int), "0<free<=total": 0 < free <= total}


def cuda_peak_reset(device, dtype, member, kind):
    """a peak-reset ``member``: after it, the peak of ``memory_<kind>`` equals its current
    value (a big tensor made and freed first, so the peak was above it)"""
    c = Ctx(device)
    f = c.m(member)
    if f is None:
        return {"peak_back_to_current": True}
    t = c.big()
    del t
    gc.collect()
    f()
    return {"peak_back_to_current": c.m(f"max_memory_{kind}")() == c.m(f"memory_{kind}")()}


def cuda_reset_accumulated_memory_stats(device, dtype):
    c = Ctx(device)
    f = c.m("reset_accumulated_memory_stats")
    if f is None:
        return {"accumulated_dropped": True}
    t = c.big()  # noqa: F841
    before = c.m("memory_stats")().get("allocated_bytes.all.allocated", 0)
    f()
    after = c.m("memory_stats")().get("allocated_bytes.all.allocated", 0)
    return {"accumulated_dropped": before >= NBYTES and after < before}


def cuda_caching_allocator_alloc(device, dtype):
    c = Ctx(device)
    f = c.m("caching_allocator_alloc")
    if f is None:
        return {"nonzero_int": True}
    p = f(4096)
    out = {"nonzero_int": isinstance(p, int) and p != 0}
    c.m("caching_allocator_delete")(p)
    return out


def cuda_caching_allocator_delete(device, dtype):
    c = Ctx(device)
    f = c.m("caching_allocator_delete")
    if f is None:
        return {"freed": True}
    before = c.m("memory_allocated")()
    p = c.m("caching_allocator_alloc")(NBYTES)
    f(p)
    return {"freed": c.m("memory_allocated")() <= before}


def cuda_get_allocator_backend(device, dtype):
    c = Ctx(device)
    f = c.m("get_allocator_backend")
    b = "native" if f is None else f()
    return {"known": b in ("native", "cudaMallocAsync")}


def cuda_set_per_process_memory_fraction(device, dtype):
    c = Ctx(device)
    f = c.m("set_per_process_memory_fraction")
    if f is None:
        return {"rejects_1.5": True}
    f(1.0)
    try:
        f(1.5)
        rejects = False
    except (ValueError, RuntimeError):
        rejects = True
    f(1.0)
    return {"rejects_1.5": rejects}


def cuda_host_memory_stats(device, dtype):
    c = Ctx(device)
    f = c.m("host_memory_stats")
    st = {} if f is None else f()
    return {"dict_of_ints": isinstance(st, dict) and all(isinstance(v, int) for v in st.values())}


def cuda_host_memory_stats_as_nested_dict(device, dtype):
    c = Ctx(device)
    f = c.m("host_memory_stats_as_nested_dict")
    st = {} if f is None else f()
    return {"dict": isinstance(st, dict)}


def cuda_reset_accumulated_host_memory_stats(device, dtype):
    c = Ctx(device)
    f = c.m("reset_accumulated_host_memory_stats")
    if f is None:
        return {"allocations_reset": True}
    f()
    st = c.m("host_memory_stats")()
    return {"allocations_reset": st.get("num_host_alloc", 0) == 0}


def cuda_reset_peak_host_memory_stats(device, dtype):
    c = Ctx(device)
    f = c.m("reset_peak_host_memory_stats")
    if f is None:
        return {"peak_is_current": True}
    f()
    st = c.m("host_memory_stats")()
    return {"peak_is_current": all(st.get(k, 0) == st.get(k.replace(".peak", ".current"), 0)
                                   for k in st if k.endswith(".peak"))}


# --- torch.cuda.* graphs ----------------------------------------------------------------------


def cuda_graph_replay(device, dtype, how="graph"):
    """a captured graph replayed on a new input (``how``: the members used, see ``capture``)"""
    return capture(Ctx(device), how)


def cuda_CUDAGraph_pool(device, dtype):
    c = Ctx(device)
    G = c.m("CUDAGraph")
    if G is None:
        return {"pool_is_tuple": True, "replay": capture(c)}
    out = {"replay": capture(c)}
    g = G()
    with c.m("graph")(g):
        torch.ones(4, device=c.device) * 3
    out["pool_is_tuple"] = isinstance(g.pool(), tuple)
    return out


def cuda_CUDAGraph_debug_dump(device, dtype):
    c = Ctx(device)
    G = c.m("CUDAGraph")
    if G is None:
        return {"dumped": True}
    g = G()
    g.enable_debug_mode()
    with c.m("graph")(g):
        torch.ones(4, device=c.device) * 3
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "graph.dot")
        g.debug_dump(path)
        return {"dumped": os.path.getsize(path) > 0}


def cuda_make_graphed_callables(device, dtype):
    c = Ctx(device)
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    inp = torch.arange(8.0).reshape(2, 4)
    f = c.m("make_graphed_callables")
    if f is None:
        return lin(inp).detach()
    lin = lin.to(c.device)
    sample = torch.zeros(2, 4, device=c.device, requires_grad=True)
    graphed = f(lin, (sample,))
    return graphed(inp.to(c.device).requires_grad_()).detach()


# --- torch.cuda.* device, RNG, amp, comm ----------------------------------------------------


def cuda_is_available(device, dtype):
    return {"available": Ctx(device).m("is_available")()}


def cuda_is_initialized(device, dtype):
    c = Ctx(device)
    c.tensor()  # moving a tensor there initialises the device
    return {"initialized_after_work": c.m("is_initialized")()}


def cuda_init(device, dtype):
    c = Ctx(device)
    f = c.m("init")
    if f is not None:
        f()
    return {"initialized": c.m("is_initialized")()}


def cuda_device_count(device, dtype):
    c = Ctx(device)
    n = c.m("device_count")()
    return {"at_least_one": n >= 1, "index_below_count": c.index < n}


def cuda_current_device(device, dtype):
    c = Ctx(device)
    if c.is_cpu:
        return {"matches_new_tensor": True}
    t = torch.empty(1, device=c.type)
    return {"matches_new_tensor": (t.device.index or 0) == c.m("current_device")()}


def cuda_set_device(device, dtype):
    c = Ctx(device)
    if c.is_cpu:
        return {"lands_there": True, "current": True}
    c.m("set_device")(c.index)
    t = torch.ones(2, device=c.type)
    return {"lands_there": (t.device.index or 0) == c.index, "current": c.m("current_device")() == c.index}


def cuda_device(device, dtype):
    c = Ctx(device)
    f = c.m("device")
    if f is None:
        return {"lands_there": True}
    with f(c.index):
        t = torch.ones(2, device=c.type)
    return {"lands_there": (t.device.index or 0) == c.index}


def cuda_device_of(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    f = c.m("device_of")
    if f is None:
        return {"y": (x + 1)}
    with f(x):
        y = x + 1
    return {"y": y}


def cuda_get_device_name(device, dtype):
    c = Ctx(device)
    n = "name" if c.is_cpu else c.m("get_device_name")()
    return {"non_empty_str": isinstance(n, str) and len(n) > 0}


def cuda_get_device_properties(device, dtype):
    c = Ctx(device)
    f = c.m("get_device_properties")
    if f is None:
        return {"name_matches": True, "total_memory_positive": True}
    p = f(c.index)
    return {"name_matches": p.name == c.m("get_device_name")(c.index),
            "total_memory_positive": p.total_memory > 0}


def cuda_get_device_capability(device, dtype):
    c = Ctx(device)
    f = c.m("get_device_capability")
    cap = (0, 0) if f is None else f(c.index)
    return {"pair_of_ints": isinstance(cap, tuple) and len(cap) == 2 and all(isinstance(v, int) for v in cap)}


def cuda_can_device_access_peer(device, dtype):
    c = Ctx(device)
    f = c.m("can_device_access_peer")
    r = False if f is None else f(c.index, c.index)
    return {"bool": isinstance(r, bool)}


def cuda_current_blas_handle(device, dtype):
    c = Ctx(device)
    f = c.m("current_blas_handle")
    h = 1 if f is None else f()
    return {"nonzero_int": isinstance(h, int) and h != 0}


def cuda_get_sync_debug_mode(device, dtype):
    c = Ctx(device)
    f = c.m("get_sync_debug_mode")
    if f is None:
        return {"default_0": True, "warn_1": True}
    old = f()
    c.m("set_sync_debug_mode")("warn")
    warn = f()
    c.m("set_sync_debug_mode")(old)
    return {"default_0": old == 0, "warn_1": warn == 1}


def cuda_set_sync_debug_mode(device, dtype):
    c = Ctx(device)
    f = c.m("set_sync_debug_mode")
    if f is None:
        return {"error_2": True, "restored": True}
    old = c.m("get_sync_debug_mode")()
    f("error")
    err = c.m("get_sync_debug_mode")()
    f(old)
    return {"error_2": err == 2, "restored": c.m("get_sync_debug_mode")() == old}


def cuda_ipc_collect(device, dtype):
    c = Ctx(device)
    f = c.m("ipc_collect")
    return {"returns_none": True if f is None else f() is None}


def cuda_get_rng_state(device, dtype):
    c = Ctx(device)
    st = c.m("get_rng_state")()
    a = torch.rand(5, device=c.device)
    c.m("set_rng_state")(st)
    b = torch.rand(5, device=c.device)
    return {"byte_state": st.dtype == torch.uint8, "same_draws": torch.equal(a, b)}


def cuda_set_rng_state(device, dtype):
    c = Ctx(device)
    st = c.m("get_rng_state")()
    a = torch.randn(6, device=c.device)
    torch.randn(3, device=c.device)
    c.m("set_rng_state")(st)
    b = torch.randn(6, device=c.device)
    return {"same_draws": torch.equal(a, b)}


def cuda_set_rng_state_all(device, dtype):
    c = Ctx(device)
    sts = c.m("get_rng_state_all")()
    a = torch.rand(5, device=c.device)
    c.m("set_rng_state_all")(sts)
    b = torch.rand(5, device=c.device)
    return {"list": isinstance(sts, list), "same_draws": torch.equal(a, b)}


def cuda_manual_seed(device, dtype, member="manual_seed", seed=123):
    """``manual_seed`` / ``manual_seed_all`` (``member``): the same draws after the same seed"""
    c = Ctx(device)
    c.m(member)(seed)
    a = torch.rand(5, device=c.device)
    c.m(member)(seed)
    b = torch.rand(5, device=c.device)
    return {"same_draws": torch.equal(a, b), "initial_seed": c.m("initial_seed")() == seed}


def cuda_seed(device, dtype, member="seed", replay="manual_seed"):
    """``seed`` / ``seed_all`` (``member``): the seed it picked replays its draws"""
    c = Ctx(device)
    c.m("manual_seed")(7)
    fixed = torch.rand(5, device=c.device)
    c.m("manual_seed")(7)
    c.m(member)()  # picks a new, non-deterministic seed
    s1 = c.m("initial_seed")()
    a = torch.rand(5, device=c.device)
    c.m(replay)(s1)
    b = torch.rand(5, device=c.device)
    return {"int_seed": isinstance(s1, int), "seed_replays": torch.equal(a, b),
            # a seed() that does nothing leaves seed 7 and its draws in place
            "reseeded": s1 != 7 and not torch.equal(a, fixed)}


def cuda_initial_seed(device, dtype):
    c = Ctx(device)
    c.m("manual_seed")(7)
    torch.rand(3, device=c.device)  # a draw advances the generator, not its initial seed
    return {"initial_seed": c.m("initial_seed")() == 7}


def cuda_amp_autocast(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    with c.m("amp.autocast")(dtype=torch.bfloat16):
        y = x.matmul(x.T)
        z = x + 1
    return {"mm_dtype": str(y.dtype), "add_dtype": str(z.dtype), "mm": y.float()}


def cuda_amp_GradScaler(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 2).to(c.device)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    scaler = c.m("amp.GradScaler")(init_scale=16.0)
    loss = lin(x).square().mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return {"scale": scaler.get_scale(), "weight": lin.weight.detach()}


def amp_decorators(c):
    """the device module's ``amp.custom_fwd`` / ``amp.custom_bwd``; on the CPU, torch.amp's
    with device_type='cpu'"""
    fwd = c.m("amp.custom_fwd") or (lambda f=None, **k: torch.amp.custom_fwd(f, device_type="cpu", **k))
    bwd = c.m("amp.custom_bwd") or (lambda f: torch.amp.custom_bwd(f, device_type="cpu"))
    return fwd, bwd


def cuda_amp_custom_fwd(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    fwd, _ = amp_decorators(c)

    class Sq(torch.autograd.Function):
        @staticmethod
        @fwd(cast_inputs=torch.float32)
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    a = x.to(torch.bfloat16).requires_grad_()
    with torch.autocast(c.type, dtype=torch.bfloat16):
        y = Sq.apply(a)
    y.sum().backward()
    return {"out_dtype": str(y.dtype), "y": y.detach(), "grad": a.grad.float()}


def cuda_amp_custom_bwd(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    fwd, bwd = amp_decorators(c)
    seen = []

    class Sq(torch.autograd.Function):
        @staticmethod
        @fwd
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a.matmul(a.T)

        @staticmethod
        @bwd
        def backward(ctx, g):
            seen.append(str(g.dtype))
            (a,) = ctx.saved_tensors
            return g.matmul(a) + g.T.matmul(a)

    a = x.clone().requires_grad_()
    with torch.autocast(c.type, dtype=torch.bfloat16):
        y = Sq.apply(a)
    y.float().sum().backward()
    return {"grad_dtype_in_backward": seen, "grad": a.grad.float()}


def cuda_comm_scatter(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    f = c.m("comm.scatter")
    if f is None:
        return {"chunks": 1, "chunk": x}
    parts = f(x, devices=[c.index])
    return {"chunks": len(parts), "chunk": parts[0]}


def cuda_comm_gather(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    f = c.m("comm.gather")
    if f is None:
        return torch.cat([x, x + 1])
    return f([x, x + 1], destination=c.index)


# --- torch.accelerator.* ----------------------------------------------------------------------


def accelerator_matches_module(device, dtype, member, counterpart):
    """``torch.accelerator.<member>()`` equals the device module's ``<counterpart>()``"""
    c = Ctx(device)
    if not acc_here(c):
        return {"matches_module": True}
    return {"matches_module": getattr(torch.accelerator, member)() == c.m(counterpart)()}


def accelerator_is_available(device, dtype):
    c = Ctx(device)
    return {"available": True if not acc_here(c) else torch.accelerator.is_available()}


def accelerator_current_stream(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    if not acc_here(c):
        return {"on_device": True, "y": (x * 2)}
    s = torch.accelerator.current_stream()
    with s:
        y = x * 2
    return {"on_device": s.device.type == c.type, "y": y}


def accelerator_set_device_index(device, dtype, member="set_device_index"):
    """``set_device_index`` / its old name ``set_device_idx`` (``member``)"""
    c = Ctx(device)
    if not acc_here(c):
        return {"current": True}
    getattr(torch.accelerator, member)(c.index)
    return {"current": c.m("current_device")() == c.index}


def accelerator_set_stream(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    if not acc_here(c):
        return {"switched": True, "restored": True, "y": (x * 2)}
    s0 = torch.accelerator.current_stream()
    s = torch.Stream(c.type)
    torch.accelerator.set_stream(s)
    switched = torch.accelerator.current_stream() == s
    y = x * 2
    torch.accelerator.set_stream(s0)
    return {"switched": switched, "restored": torch.accelerator.current_stream() == s0, "y": y}


def accelerator_synchronize(device, dtype):
    c = Ctx(device)
    x = c.tensor()
    y = x.matmul(x.T)
    if acc_here(c):
        torch.accelerator.synchronize()
    return y


def accelerator_device_index(device, dtype):
    c = Ctx(device)
    if not acc_here(c):
        return {"current_inside": True, "lands_there": True}
    with torch.accelerator.device_index(c.index):
        inside = torch.accelerator.current_device_index() == c.index
        t = torch.ones(2, device=c.type)  # made on the bare device type: lands on the index set
    return {"current_inside": inside, "lands_there": (t.device.index or 0) == c.index}


def accelerator_get_device_capability(device, dtype):
    c = Ctx(device)
    if not acc_here(c):
        return {"dict": True}
    return {"dict": isinstance(torch.accelerator.get_device_capability(c.index), dict)}


def _stat(module, key: str):
    """One counter of ``module.memory_stats()`` (what torch's counter functions read), or
    None where the backend keeps no such stat."""
    return module.memory_stats().get(key)


def accelerator_memory(device, dtype, member):
    """``torch.accelerator.memory.<member>`` around a device allocation: the promise its
    device-module counterpart makes (the CPU, no accelerator, answers with it)"""
    c = Ctx(device)
    if not acc_here(c):
        return dict.fromkeys(MEMORY_KEYS[member], True)
    import torch.accelerator.memory as am
    if member == "memory_allocated":
        gc.collect()
        before = am.memory_allocated()
        t = c.big()
        now = am.memory_allocated()
        return {"grows_by_nbytes": now - before >= NBYTES,
                "is_the_allocators_stat": now == _stat(am, "allocated_bytes.all.current")}
    if member == "empty_host_cache":
        return {"returns_none": am.empty_host_cache() is None}
    if member == "get_memory_info":
        free, total = am.get_memory_info()
        return {"0<free<=total": 0 < free <= total}
    t = c.big()
    if member == "max_memory_allocated":
        peak = am.max_memory_allocated()
        return {"peak_covers_current": peak >= am.memory_allocated() >= NBYTES,
                "is_the_allocators_stat": peak == _stat(am, "allocated_bytes.all.peak")}
    if member == "memory_reserved":
        now = am.memory_reserved()
        return {"covers_allocated": now >= am.memory_allocated() >= NBYTES,
                "is_the_allocators_stat": now == _stat(am, "reserved_bytes.all.current")}
    if member == "max_memory_reserved":
        peak = am.max_memory_reserved()
        return {"peak_covers_reserved": peak >= am.memory_reserved() >= NBYTES,
                "is_the_allocators_stat": peak == _stat(am, "reserved_bytes.all.peak")}
    if member == "memory_stats":
        st = am.memory_stats()
        return {"current_matches": st.get("allocated_bytes.all.current") == am.memory_allocated()}
    if member == "reset_accumulated_memory_stats":
        before = am.memory_stats().get("allocated_bytes.all.allocated", 0)
        am.reset_accumulated_memory_stats()
        after = am.memory_stats().get("allocated_bytes.all.allocated", 0)
        return {"dropped": before >= NBYTES and after < before}
    del t
    gc.collect()
    if member == "reset_peak_memory_stats":
        am.reset_peak_memory_stats()
        return {"peak_back_to_current": am.max_memory_allocated() == am.memory_allocated()}
    am.empty_cache()  # empty_cache
    return {"reserved_covers_allocated": am.memory_reserved() >= am.memory_allocated()}


# what each torch.accelerator.memory body returns (the CPU's promise: every key True)
MEMORY_KEYS = {
    "memory_allocated": ("grows_by_nbytes", "is_the_allocators_stat"),
    "max_memory_allocated": ("peak_covers_current", "is_the_allocators_stat"),
    "memory_reserved": ("covers_allocated", "is_the_allocators_stat"),
    "max_memory_reserved": ("peak_covers_reserved", "is_the_allocators_stat"),
    "memory_stats": ("current_matches",), "reset_peak_memory_stats": ("peak_back_to_current",),
    "reset_accumulated_memory_stats": ("dropped",), "empty_cache": ("reserved_covers_allocated",),
    "empty_host_cache": ("returns_none",), "get_memory_info": ("0<free<=total",),
}


# --- torch.backends.* -------------------------------------------------------------------------

CUDNN_FLAGS = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")


def conv_inputs(device):
    torch.manual_seed(0)
    w = torch.randn(3, 2, 3, 3).to(device)
    inp = torch.randn(1, 2, 6, 6).to(device)
    return inp, w


def backends_cudnn_flag(device, dtype, flag, value):
    """One cuDNN flag set, the others kept, through ``torch.backends.cudnn.flags()`` (a test
    harness may forbid plain assignment once it has frozen the global flags), the flag read
    back inside; a device convolution under it only where the build has cuDNN (it reads the
    flag there): elsewhere the flag is host-only, and a convolution beside it decorative."""
    cudnn = torch.backends.cudnn
    old = getattr(cudnn, flag)
    keep = {f: getattr(cudnn, f) for f in CUDNN_FLAGS if f != flag}
    with cudnn.flags(**{flag: value}, **keep):
        seen = getattr(cudnn, flag)
        y = None
        if cudnn.is_available():
            inp, w = conv_inputs(device)
            y = torch.nn.functional.conv2d(inp, w, padding=1)
    return {"flag": seen, "y": y, "restored": getattr(cudnn, flag) == old}


def build_query(device, dtype, api):
    """A build query (``api``: ``torch.backends.X.is_available`` and the like): host-only,
    the same answer whatever the device"""
    owner, _, name = api.rpartition(".")
    value = getattr(__import__(owner, fromlist=["_"]), name)()
    key = {"is_built": "built", "get_cpu_capability": "str", "get_opt_einsum": "module"}.get(name, "available")
    if name == "get_cpu_capability":
        value = isinstance(value, str)
    elif name == "get_opt_einsum":
        value = value is not None
    return {key: value}


def backends_cuda_matmul_allow_tf32(device, dtype):
    """the flag read back inside; a device matmul under it only in a CUDA build (CUDA's
    matmul reads it; any other device's kernels do not: the flag is host-only there)"""
    c = Ctx(device)
    m = torch.backends.cuda.matmul
    old = m.allow_tf32
    m.allow_tf32 = False
    try:
        seen = m.allow_tf32
        y = None
        if torch.backends.cuda.is_built():
            x = c.tensor()
            y = x.matmul(x.T)
    finally:
        m.allow_tf32 = old
    return {"flag": seen, "y": y}


def sdpa_inputs(device):
    torch.manual_seed(0)
    return [torch.randn(1, 2, 4, 8).to(device) for _ in range(3)]


def backends_cuda_sdp(device, dtype, kind, value):
    """``enable_<kind>_sdp(value)`` around a device attention (the SDPA backend choice reads
    it on every device), read back through ``<kind>_sdp_enabled()``"""
    q, k, v = sdpa_inputs(device)
    b = torch.backends.cuda
    enable, read = getattr(b, f"enable_{kind}_sdp"), getattr(b, f"{kind}_sdp_enabled")
    old = read()
    enable(value)
    try:
        seen = read()
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    finally:
        enable(old)
    return {"flag": seen, "y": y}


def backends_cuda_sdp_kernel(device, dtype):
    q, k, v = sdpa_inputs(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False):
            seen = (torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled())
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return {"flags_inside": seen, "y": y}


def backends_cuda_preferred_linalg_library(device, dtype):
    """the library read back; a device inverse under it only in a CUDA build (CUDA's linalg
    reads it; elsewhere it is host-only)"""
    lib = torch.backends.cuda.preferred_linalg_library
    old = lib()
    lib("default")
    try:
        seen = str(lib())
        y = None
        if torch.backends.cuda.is_built():
            y = torch.linalg.inv((torch.eye(3) * 2 + torch.ones(3, 3)).to(device))
    finally:
        lib(old)
    return {"flag": seen, "y": y}


def backends_cuda_cufft_plan_cache(device, dtype, member):
    """the device's cuFFT plan cache after a device FFT (``member``: what is asked of it);
    on a non-CUDA device there is none (unsupported), on the CPU the promise"""
    c = Ctx(device)
    x = c.tensor()
    cache = c.only("torch.backends.cuda", "cufft_plan_cache")
    if member == "max_size":
        if cache is None:
            return {"reads_back": True, "y": torch.fft.fft(x.reshape(-1)).abs()}
        pc = cache[c.index]
        old = pc.max_size
        pc.max_size = 3
        seen = pc.max_size == 3
        y = torch.fft.fft(x.reshape(-1)).abs()
        pc.max_size = old
        return {"reads_back": seen, "y": y}
    y = torch.fft.fft(x.reshape(-1)).abs()
    if member == "clear":
        if cache is None:
            return {"empty_after_clear": True, "y": y}
        cache[c.index].clear()
        return {"empty_after_clear": cache[c.index].size == 0, "y": y}
    key = "int_positive" if member == "size" else "plans_cached"
    return {"y": y, key: True if cache is None else cache[c.index].size >= 1}


def backends_verbose(device, dtype, lib):
    """``torch.backends.<lib>.verbose`` (mkl, mkldnn: CPU libraries) around a matmul they
    run: on the host, whatever the device (the flag is host-only)"""
    mod = getattr(torch.backends, lib)
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4
    with mod.verbose(mod.VERBOSE_OFF):
        y = x.matmul(x.T)
    return y.tolist()  # values: a host tensor is no device answer


def einsum_inputs(device):
    torch.manual_seed(0)
    return torch.randn(3, 4).to(device), torch.randn(4, 5).to(device), torch.randn(5, 2).to(device)


def backends_opt_einsum_enabled(device, dtype):
    """the contraction order of a device einsum is planned under the flag"""
    a, b, d = einsum_inputs(device)
    oe = torch.backends.opt_einsum
    old = oe.enabled
    oe.enabled = False
    try:
        seen = oe.enabled
        y = torch.einsum("ij,jk,kl->il", a, b, d)
    finally:
        oe.enabled = old
    return {"flag": seen, "y": y}


def backends_opt_einsum_strategy(device, dtype):
    a, b, d = einsum_inputs(device)
    oe = torch.backends.opt_einsum
    if not oe.is_available():
        return {"flag": None, "y": torch.einsum("ij,jk,kl->il", a, b, d)}
    old = oe.strategy
    oe.strategy = "greedy"
    try:
        seen = oe.strategy
        y = torch.einsum("ij,jk,kl->il", a, b, d)
    finally:
        oe.strategy = old
    return {"flag": seen, "y": y}


# --- torch.random.*, torch.Generator, torch.default_generator ---------------------------------


def random_fork_rng(device, dtype):
    c = Ctx(device)
    forked = {"devices": []} if c.is_cpu else {"device_type": c.type}
    torch.manual_seed(5)
    with torch.random.fork_rng(**forked):
        torch.rand(7, device=c.device)
    after = torch.rand(4, device=c.device)
    torch.manual_seed(5)
    again = torch.rand(4, device=c.device)
    return {"state_restored": torch.equal(after, again)}


def random_manual_seed(device, dtype):
    torch.random.manual_seed(9)
    a = torch.rand(5, device=device)
    torch.random.manual_seed(9)
    b = torch.rand(5, device=device)
    return {"same_draws": torch.equal(a, b)}


def random_seed(device, dtype):
    s = torch.random.seed()
    a = torch.rand(5, device=device)
    torch.random.manual_seed(s)
    b = torch.rand(5, device=device)
    return {"int": isinstance(s, int), "seed_replays": torch.equal(a, b)}


def random_initial_seed(device, dtype):
    """the CPU generator's initial seed: host-only"""
    torch.random.manual_seed(13)
    torch.rand(3)
    return {"initial_seed": torch.random.initial_seed() == 13}


def random_get_rng_state(device, dtype):
    """the CPU generator's state: host-only (its draws stay on the host)"""
    st = torch.random.get_rng_state()
    a = torch.rand(5) * 2
    torch.random.set_rng_state(st)
    b = torch.rand(5) * 2
    return {"byte_state": st.dtype == torch.uint8, "same": torch.equal(a, b)}


def random_set_rng_state(device, dtype):
    """the CPU generator's state: host-only (its draws stay on the host)"""
    st = torch.random.get_rng_state()
    a = torch.randn(5).exp()
    torch.random.set_rng_state(st)
    b = torch.randn(5).exp()
    return {"same": torch.equal(a, b)}


def Generator(device, dtype):
    g = torch.Generator(device=device)
    g.manual_seed(17)
    a = torch.rand(5, generator=g, device=device)
    g.manual_seed(17)
    b = torch.rand(5, generator=g, device=device)
    return {"device_type_matches": g.device.type == torch.device(device).type, "same_draws": torch.equal(a, b)}


def Generator_seed(device, dtype):
    g = torch.Generator(device=device)
    s = g.seed()
    a = torch.rand(5, generator=g, device=device)
    g.manual_seed(s)
    b = torch.rand(5, generator=g, device=device)
    return {"int": isinstance(s, int), "initial_seed": g.initial_seed() == s, "seed_replays": torch.equal(a, b)}


def default_generator(device, dtype):
    c = Ctx(device)
    g = c.m("default_generators")[c.index]
    g.manual_seed(11)
    a = torch.rand(5, device=c.device)
    g.manual_seed(11)
    b = torch.rand(5, device=c.device)
    return {"same_draws": torch.equal(a, b), "initial_seed": g.initial_seed() == 11}


# --- the table ----------------------------------------------------------------------------
# torch.cpu.X asks the same question as torch.cuda.X (torch.cpu runs it as the reference):
# one case, the torch.cpu name an alias

C = "torch.cuda."
PEAK = "the promise: after it the peak equals the current allocation"
PERCENT = "the promise: an int percentage in [0, 100]"


def cpu_too(member):
    return ("torch.cpu." + member,)


CASES = (
    # streams and events
    Case(C + "Stream", cuda_Stream, F32, aliases=cpu_too("Stream"),
         reference=CPU + "; a stream whose work is synchronised reports query() True"),
    Case(C + "Stream.wait_stream", cuda_Stream_wait_stream, F32, reference=CPU),
    Case(C + "StreamContext", cuda_StreamContext, F32, reference=CPU, aliases=cpu_too("StreamContext")),
    Case(C + "current_stream", cuda_current_stream, F32, reference=CPU, aliases=cpu_too("current_stream")),
    Case(C + "default_stream", cuda_default_stream, F32,
         reference="the promise: outside stream contexts the default stream is the current one"),
    Case(C + "set_stream", cuda_set_stream, F32,
         reference="the promise: set_stream(s) makes s current (and back)"),
    Case(C + "stream", cuda_stream, F32, reference=CPU, aliases=cpu_too("stream")),
    Case(C + "synchronize", cuda_synchronize, F32, reference=CPU, aliases=cpu_too("synchronize")),
    Case(C + "Event", cuda_Event, F32, reference=CPU),
    Case(C + "Event.query", cuda_Event, F32, reference=CPU, params={"op": "exp"}),
    Case(C + "Event.wait", cuda_Event_wait, F32, reference=CPU),
    Case(C + "Event.elapsed_time", cuda_Event_elapsed_time, F32,
         reference="the promise: between two timed events, a finite float >= 0 milliseconds"),
    Case(C + "Event.ipc_handle", cuda_Event_ipc_handle, F32,
         reference="the promise: an interprocess event yields a non-empty bytes handle"),
    Case(C + "Event.from_ipc_handle", cuda_Event_from_ipc_handle, F32,
         reference="the promise: the event rebuilt from the handle is complete after synchronize()"),
    Case(C + "is_current_stream_capturing", cuda_is_current_stream_capturing, F32,
         reference="the promise: False outside a graph capture"),
    # memory
    Case(C + "memory_allocated", cuda_memory_allocated, F32,
         reference="the promise: allocated bytes grow by >= the bytes of a new device tensor and drop by them when it is freed"),
    Case(C + "max_memory_allocated", cuda_max_memory_allocated, F32,
         reference="the promise: the peak covers the current allocation and survives a free"),
    Case(C + "memory_reserved", cuda_memory_reserved, F32,
         reference="the promise: reserved >= allocated, which covers a live device tensor"),
    Case(C + "max_memory_reserved", cuda_max_memory_reserved, F32,
         reference="the promise: the reserved peak covers what is reserved"),
    Case(C + "memory_cached", cuda_memory_cached, F32,
         reference="the promise: the deprecated name answers memory_reserved()"),
    Case(C + "max_memory_cached", cuda_max_memory_cached, F32,
         reference="the promise: the deprecated name answers max_memory_reserved()"),
    Case(C + "memory_stats", cuda_memory_stats, F32,
         reference="the promise: a dict whose allocated_bytes.all.current is memory_allocated(), "
                   "its peak at least that"),
    Case(C + "memory_summary", cuda_memory_summary, F32, reference="the promise: a non-empty text"),
    Case(C + "memory_usage", cuda_percent, F32, reference=PERCENT, params={"member": "memory_usage"}),
    Case(C + "utilization", cuda_percent, F32, reference=PERCENT, params={"member": "utilization"}),
    Case(C + "empty_cache", cuda_empty_cache, F32,
         reference="the promise: after it, reserved still covers allocated"),
    Case(C + "mem_get_info", cuda_mem_get_info, F32,
         reference="the promise: (free, total) ints with 0 < free <= total"),
    Case(C + "reset_peak_memory_stats", cuda_peak_reset, F32, reference=PEAK,
         params={"member": "reset_peak_memory_stats", "kind": "allocated"}),
    Case(C + "reset_max_memory_allocated", cuda_peak_reset, F32, reference=PEAK,
         params={"member": "reset_max_memory_allocated", "kind": "allocated"}),
    Case(C + "reset_max_memory_cached", cuda_peak_reset, F32,
         reference="the promise: after it the reserved peak equals what is reserved",
         params={"member": "reset_max_memory_cached", "kind": "reserved"}),
    Case(C + "reset_accumulated_memory_stats", cuda_reset_accumulated_memory_stats, F32,
         reference="the promise: accumulated allocation totals drop (to what is allocated after it)"),
    Case(C + "caching_allocator_alloc", cuda_caching_allocator_alloc, F32,
         reference="the promise: a non-zero int device pointer"),
    Case(C + "caching_allocator_delete", cuda_caching_allocator_delete, F32,
         reference="the promise: allocated bytes return to their level after the delete"),
    Case(C + "get_allocator_backend", cuda_get_allocator_backend, F32,
         reference="the promise: one of the documented backend names"),
    Case(C + "set_per_process_memory_fraction", cuda_set_per_process_memory_fraction, F32,
         reference="the promise: a fraction above 1 is refused"),
    Case(C + "host_memory_stats", cuda_host_memory_stats, F32, reference="the promise: a dict of int counters"),
    Case(C + "host_memory_stats_as_nested_dict", cuda_host_memory_stats_as_nested_dict, F32,
         reference="the promise: a dict"),
    Case(C + "reset_accumulated_host_memory_stats", cuda_reset_accumulated_host_memory_stats, F32,
         reference="the promise: accumulated host allocation counts are zero after it"),
    Case(C + "reset_peak_host_memory_stats", cuda_reset_peak_host_memory_stats, F32,
         reference="the promise: every host peak equals its current value after it"),
    # graphs
    Case(C + "CUDAGraph", cuda_graph_replay, F32,
         reference="the replay's promise: the captured formula on the new input",
         aliases=(C + "CUDAGraph.replay", C + "graph")),
    Case(C + "CUDAGraph.capture_begin", cuda_graph_replay, F32, reference=REPLAY,
         params={"how": "begin_end"}, aliases=(C + "CUDAGraph.capture_end",)),
    Case(C + "CUDAGraph.reset", cuda_graph_replay, F32, reference=REPLAY, params={"how": "reset"}),
    Case(C + "graph_pool_handle", cuda_graph_replay, F32, reference=REPLAY, params={"how": "pool"}),
    Case(C + "CUDAGraph.pool", cuda_CUDAGraph_pool, F32,
         reference="the promise: pool() is a handle tuple; the replay gives the captured formula"),
    Case(C + "CUDAGraph.debug_dump", cuda_CUDAGraph_debug_dump, F32,
         reference="the promise: debug_dump writes a non-empty file"),
    Case(C + "make_graphed_callables", cuda_make_graphed_callables, F32,
         reference="the promise: the graphed module computes what the module computes"),
    # device
    Case(C + "is_available", cuda_is_available, F32, reference=CPU, aliases=cpu_too("is_available")),
    Case(C + "is_initialized", cuda_is_initialized, F32, reference=CPU),
    Case(C + "init", cuda_init, F32,
         reference=CPU + " (torch.cpu has no init: the promise is is_initialized() afterwards)"),
    Case(C + "device_count", cuda_device_count, F32, reference=CPU, aliases=cpu_too("device_count")),
    Case(C + "current_device", cuda_current_device, F32,
         reference="the promise: a tensor made on the bare device type lands on current_device()"),
    Case(C + "set_device", cuda_set_device, F32,
         reference="the promise: after set_device(i), new tensors land on i and i is current"),
    Case(C + "device", cuda_device, F32, reference="the promise: inside device(i), new tensors land on i"),
    Case(C + "device_of", cuda_device_of, F32, reference="the promise: work inside device_of(t) runs on t's device"),
    Case(C + "get_device_name", cuda_get_device_name, F32, reference="the promise: a non-empty name"),
    Case(C + "get_device_properties", cuda_get_device_properties, F32,
         reference="the promise: properties whose name is get_device_name() and total_memory > 0"),
    Case(C + "get_device_capability", cuda_get_device_capability, F32,
         reference="the promise: a (major, minor) pair of ints"),
    Case(C + "can_device_access_peer", cuda_can_device_access_peer, F32, reference="the promise: a bool"),
    Case(C + "current_blas_handle", cuda_current_blas_handle, F32, reference="the promise: a non-zero int handle"),
    Case(C + "get_sync_debug_mode", cuda_get_sync_debug_mode, F32,
         reference="the promise: 0 by default, 1 after set_sync_debug_mode('warn')"),
    Case(C + "set_sync_debug_mode", cuda_set_sync_debug_mode, F32,
         reference="the promise: 'error' reads back 2; the old mode comes back"),
    Case(C + "ipc_collect", cuda_ipc_collect, F32, reference="the promise: it returns None"),
    # RNG
    Case(C + "get_rng_state", cuda_get_rng_state, F32, reference=RNG),
    Case(C + "set_rng_state", cuda_set_rng_state, F32, reference=RNG),
    Case(C + "set_rng_state_all", cuda_set_rng_state_all, F32, reference=RNG),
    Case(C + "manual_seed", cuda_manual_seed, F32, reference=RNG),
    Case(C + "manual_seed_all", cuda_manual_seed, F32, reference=RNG,
         params={"member": "manual_seed_all", "seed": 321}),
    Case(C + "seed", cuda_seed, F32, RANDOM, reference=RNG),
    Case(C + "seed_all", cuda_seed, F32, RANDOM, reference=RNG,
         params={"member": "seed_all", "replay": "manual_seed_all"}),
    Case(C + "initial_seed", cuda_initial_seed, F32, reference=RNG),
    # amp, comm
    Case(C + "amp.autocast", cuda_amp_autocast, F32, reference=CPU + " (bfloat16 asked for explicitly)",
         aliases=cpu_too("amp.autocast")),
    Case(C + "amp.GradScaler", cuda_amp_GradScaler, F32, reference=CPU),
    Case(C + "amp.custom_fwd", cuda_amp_custom_fwd, F32,
         reference="torch.amp.custom_fwd(device_type='cpu') runs the same code"),
    Case(C + "amp.custom_bwd", cuda_amp_custom_bwd, F32,
         reference="torch.amp.custom_bwd(device_type='cpu') runs the same code"),
    Case(C + "comm.scatter", cuda_comm_scatter, F32,
         reference="the promise: scattering to one device gives one chunk equal to the input"),
    Case(C + "comm.gather", cuda_comm_gather, F32, reference="the promise: the tensors concatenated along dim 0"),
    Excluded(C + "_sanitizer.enable_cuda_sanitizer",
             "installs a process-wide dispatch mode for the rest of the process and cannot be "
             "turned off: it would change every later case in the worker"),
    Excluded(C + "CUDAPluggableAllocator", "needs an allocator compiled as a shared library (a C/C++ toolchain)"),
    Excluded(C + "change_current_allocator",
             "needs an allocator compiled as a shared library (a C/C++ toolchain), and can only "
             "be called before the device's first allocation"),
    # torch.accelerator
    Case("torch.accelerator.current_device_index", accelerator_matches_module, F32, reference=ACC,
         params={"member": "current_device_index", "counterpart": "current_device"}),
    Case("torch.accelerator.current_device_idx", accelerator_matches_module, F32, reference=ACC,
         params={"member": "current_device_idx", "counterpart": "current_device"}),
    Case("torch.accelerator.device_count", accelerator_matches_module, F32, reference=ACC,
         params={"member": "device_count", "counterpart": "device_count"}),
    Case("torch.accelerator.is_available", accelerator_is_available, F32, reference=ACC),
    Case("torch.accelerator.current_stream", accelerator_current_stream, F32, reference=ACC),
    Case("torch.accelerator.set_device_index", accelerator_set_device_index, F32, reference=ACC),
    Case("torch.accelerator.set_device_idx", accelerator_set_device_index, F32, reference=ACC,
         params={"member": "set_device_idx"}),
    Case("torch.accelerator.set_stream", accelerator_set_stream, F32, reference=ACC),
    Case("torch.accelerator.synchronize", accelerator_synchronize, F32, reference="the same computation on the CPU"),
    Case("torch.accelerator.device_index", accelerator_device_index, F32, reference=ACC),
    Case("torch.accelerator.get_device_capability", accelerator_get_device_capability, F32,
         reference="the promise: a dict of capabilities"),
    *(Case("torch.accelerator.memory." + m, accelerator_memory, F32, params={"member": m},
           reference="the promise: it returns None" if m == "empty_host_cache" else ACC_MEM)
      for m in MEMORY_KEYS),
    # torch.backends
    *(Case("torch.backends.cudnn." + f, backends_cudnn_flag, F32, reference=FLAG,
           params={"flag": f, "value": v})
      for f, v in (("allow_tf32", False), ("benchmark", True), ("benchmark_limit", 4),
                   ("deterministic", True), ("enabled", False))),
    Case("torch.backends.cudnn.is_available", build_query, F32,
         reference="the same build answers on the CPU (a build query: host-only)"),
    Case("torch.backends.cuda.is_built", build_query, F32, reference=BUILD,
         aliases=("torch.backends.cpu.get_cpu_capability", "torch.backends.mkl.is_available",
                  "torch.backends.mkldnn.is_available", "torch.backends.openmp.is_available",
                  "torch.backends.mps.is_available", "torch.backends.mps.is_built",
                  "torch.backends.opt_einsum.is_available", "torch.backends.opt_einsum.get_opt_einsum")),
    Case("torch.backends.cuda.matmul.allow_tf32", backends_cuda_matmul_allow_tf32, F32, reference=FLAG),
    Case("torch.backends.cuda.enable_flash_sdp", backends_cuda_sdp, F32, reference=FLAG,
         params={"kind": "flash", "value": False}, aliases=("torch.backends.cuda.flash_sdp_enabled",)),
    Case("torch.backends.cuda.enable_math_sdp", backends_cuda_sdp, F32, reference=FLAG,
         params={"kind": "math", "value": True}, aliases=("torch.backends.cuda.math_sdp_enabled",)),
    Case("torch.backends.cuda.enable_mem_efficient_sdp", backends_cuda_sdp, F32, reference=FLAG,
         params={"kind": "mem_efficient", "value": False},
         aliases=("torch.backends.cuda.mem_efficient_sdp_enabled",)),
    Case("torch.backends.cuda.sdp_kernel", backends_cuda_sdp_kernel, F32, reference=FLAG),
    Case("torch.backends.cuda.preferred_linalg_library", backends_cuda_preferred_linalg_library, F32,
         reference=FLAG),
    Case("torch.backends.cuda.cufft_plan_cache", backends_cuda_cufft_plan_cache, F32,
         reference="the promise: after an FFT the device's plan cache holds a plan", params={"member": ""}),
    Case("torch.backends.cuda.cufft_plan_cache.size", backends_cuda_cufft_plan_cache, F32,
         reference="the promise: after an FFT, size >= 1", params={"member": "size"}),
    Case("torch.backends.cuda.cufft_plan_cache.max_size", backends_cuda_cufft_plan_cache, F32,
         reference="the promise: a max_size set reads back", params={"member": "max_size"}),
    Case("torch.backends.cuda.cufft_plan_cache.clear", backends_cuda_cufft_plan_cache, F32,
         reference="the promise: size 0 after clear()", params={"member": "clear"}),
    Case("torch.backends.mkl.verbose", backends_verbose, F32, params={"lib": "mkl"},
         reference="the same flag around the same host matmul on the CPU (a CPU library's flag: host-only)"),
    Case("torch.backends.mkldnn.verbose", backends_verbose, F32, params={"lib": "mkldnn"},
         reference="the same flag around the same host matmul on the CPU (a CPU library's flag: host-only)"),
    Case("torch.backends.opt_einsum.enabled", backends_opt_einsum_enabled, F32, reference=FLAG),
    Case("torch.backends.opt_einsum.strategy", backends_opt_einsum_strategy, F32, reference=FLAG),
    # torch.random, torch.Generator, torch.default_generator
    Case("torch.random.fork_rng", random_fork_rng, F32,
         reference="the CPU generator forked the same way (devices=[])"),
    Case("torch.random.manual_seed", random_manual_seed, F32, reference=SAME),
    Case("torch.random.seed", random_seed, F32, RANDOM, reference=SAME),
    Case("torch.random.initial_seed", random_initial_seed, F32, reference=SAME + " (the CPU generator: host-only)"),
    Case("torch.random.get_rng_state", random_get_rng_state, F32, reference=SAME + " (the CPU generator: host-only)"),
    Case("torch.random.set_rng_state", random_set_rng_state, F32, reference=SAME + " (the CPU generator: host-only)"),
    Case("torch.Generator", Generator, F32, reference=SAME, aliases=("torch.Generator.manual_seed",)),
    Case("torch.Generator.seed", Generator_seed, F32, RANDOM, reference=SAME),
    Case("torch.default_generator", default_generator, F32,
         reference="torch.default_generator on the CPU; the device's default generator "
                   "(torch.<device>.default_generators) on the device"),
)
