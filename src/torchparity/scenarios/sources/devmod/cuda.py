"""Blocks of the ``devmod`` source for ``torch.cuda.*`` (and ``torch.cpu.*``), run through
the device module of the device under test (``c.m("X")`` is ``torch.<device>.X``).

Each entry: member path -> (block, reference). The block sets ``out``. ``reference`` says
what the CPU run answers: ``"torch.cpu"`` (torch.cpu's own member runs the same code),
``"torch.random"`` (the CPU generator's functions), or the property the API promises,
which the block returns on the CPU where torch.cpu has no such member.
"""

from __future__ import annotations

CPU = "torch.cpu runs the same code"
RNG = "the CPU generator (torch.random) runs the same code"

STREAMS = {
    "Stream": ("""
s = c.m("Stream")()
with c.m("stream")(s):
    y = x * 2 + 1
c.call(s, "synchronize")
out = {"y": y, "query": c.call(s, "query", ref=True)}
""", CPU + "; a stream whose work is synchronised reports query() True"),
    "Stream.wait_stream": ("""
S = c.m("Stream")
s1, s2 = S(), S()
with c.m("stream")(s1):
    y = x.sin()
s2.wait_stream(s1)
with c.m("stream")(s2):
    z = y + 1
c.m("synchronize")()
out = z
""", CPU),
    "StreamContext": ("""
s = c.m("Stream")()
cur = c.m("current_stream")
with c.m("StreamContext")(s):
    inside = cur() == s
    y = x.cumsum(0)
out = {"y": y, "current_inside": inside, "current_after": cur() == s}
""", CPU),
    "current_stream": ("""
cur = c.m("current_stream")
s0 = cur()
s = c.m("Stream")()
with c.m("stream")(s):
    inside = cur() == s
    y = x.exp()
out = {"y": y, "stable": cur() == s0, "inside": inside, "restored": cur() == s0}
""", CPU),
    "default_stream": ("""
y = (x * 3)
f = c.m("default_stream")
if f is None:
    out = {"y": y, "is_current": True, "stable": True}
else:
    d = f()
    out = {"y": y, "is_current": d == c.m("current_stream")(), "stable": f() == d}
""", "the promise: outside stream contexts the default stream is the current one"),
    "set_stream": ("""
f = c.m("set_stream")
if f is None:
    out = {"switched": True, "restored": True, "y": (x * 2)}
else:
    cur = c.m("current_stream")
    s0, s = cur(), c.m("Stream")()
    f(s)
    switched = cur() == s
    y = x * 2
    f(s0)
    out = {"switched": switched, "restored": cur() == s0, "y": y}
""", "the promise: set_stream(s) makes s current (and back)"),
    "stream": ("""
s = c.m("Stream")()
with c.m("stream")(s):
    y = x.matmul(x.T)
with c.m("stream")(None):
    z = y + 1
c.m("synchronize")()
out = {"y": y, "z": z}
""", CPU),
    "synchronize": ("""
y = x.matmul(x.T)
c.m("synchronize")()
out = y
""", CPU),
    "Event": ("""
e = c.m("Event")()
y = x * 2
e.record()
e.synchronize()
out = {"y": y, "query": e.query()}
""", CPU),
    "Event.query": ("""
e = c.m("Event")()
y = x.exp()
e.record()
e.synchronize()
out = {"y": y, "query": e.query()}
""", CPU),
    "Event.wait": ("""
e = c.m("Event")()
s = c.m("Stream")()
y = x * 2
e.record()
e.wait(s)
with c.m("stream")(s):
    z = y + 1
c.m("synchronize")()
out = z
""", CPU),
    "Event.elapsed_time": ("""
y = x.matmul(x.T)
if c.m("Event.elapsed_time") is None:
    out = {"y": y, "float": True, "finite_nonnegative": True}
else:
    E = c.m("Event")
    a, b = E(enable_timing=True), E(enable_timing=True)
    a.record()
    y = x.matmul(x.T)
    b.record()
    b.synchronize()
    t = a.elapsed_time(b)
    out = {"y": y, "float": isinstance(t, float), "finite_nonnegative": math.isfinite(t) and t >= 0}
""", "the promise: between two timed events, a finite float >= 0 milliseconds"),
    "Event.ipc_handle": ("""
if c.m("Event.ipc_handle") is None:
    out = {"bytes": True, "nonempty": True}
else:
    e = c.m("Event")(interprocess=True)
    y = x * 2
    e.record()
    h = e.ipc_handle()
    out = {"bytes": isinstance(h, bytes), "nonempty": len(h) > 0}
""", "the promise: an interprocess event yields a non-empty bytes handle"),
    "Event.from_ipc_handle": ("""
if c.m("Event.from_ipc_handle") is None:
    out = {"query": True}
else:
    E = c.m("Event")
    e = E(interprocess=True)
    y = x * 2
    e.record()
    e2 = E.from_ipc_handle(c.device, e.ipc_handle())
    e2.synchronize()
    out = {"query": e2.query()}
""", "the promise: the event rebuilt from the handle is complete after synchronize()"),
    "is_current_stream_capturing": ("""
f = c.m("is_current_stream_capturing")
y = (x + 1)
out = {"y": y, "outside_capture": False if f is None else f()}
""", "the promise: False outside a graph capture"),
}

def _peak_reset(name: str, kind: str) -> str:
    """The block of a peak-reset member: after it, the peak of ``memory_<kind>`` equals
    its current value (a big tensor made and freed first, so the peak was above it)."""
    return f"""
f = c.m("{name}")
if f is None:
    out = {{"peak_back_to_current": True}}
else:
    t = c.big()
    del t
    gc.collect()
    f()
    out = {{"peak_back_to_current": c.m("max_memory_{kind}")() == c.m("memory_{kind}")()}}
"""


MEMORY = {
    "memory_allocated": ("""
f = c.m("memory_allocated")
if f is None:
    out = {"grows_by_nbytes": True, "back_after_free": True}
else:
    gc.collect()
    before = f()
    t = c.big()
    during = f()
    del t
    gc.collect()
    out = {"grows_by_nbytes": during - before >= NBYTES, "back_after_free": f() <= during - NBYTES}
""", "the promise: allocated bytes grow by >= the bytes of a new device tensor and drop by them when it is freed"),
    "max_memory_allocated": ("""
f = c.m("max_memory_allocated")
if f is None:
    out = {"peak_covers_current": True, "peak_kept_after_free": True}
else:
    t = c.big()
    p = f()
    cur = c.m("memory_allocated")()
    del t
    gc.collect()
    out = {"peak_covers_current": p >= cur >= NBYTES, "peak_kept_after_free": f() >= p}
""", "the promise: the peak covers the current allocation and survives a free"),
    "memory_reserved": ("""
f = c.m("memory_reserved")
if f is None:
    out = {"covers_allocated": True}
else:
    t = c.big()
    out = {"covers_allocated": f() >= c.m("memory_allocated")() >= NBYTES}
""", "the promise: reserved >= allocated, which covers a live device tensor"),
    "max_memory_reserved": ("""
f = c.m("max_memory_reserved")
if f is None:
    out = {"peak_covers_reserved": True}
else:
    t = c.big()
    out = {"peak_covers_reserved": f() >= c.m("memory_reserved")() >= NBYTES}
""", "the promise: the reserved peak covers what is reserved"),
    "memory_cached": ("""
f = c.m("memory_cached")
if f is None:
    out = {"equals_reserved": True}
else:
    t = c.big()
    out = {"equals_reserved": f() == c.m("memory_reserved")()}
""", "the promise: the deprecated name answers memory_reserved()"),
    "max_memory_cached": ("""
f = c.m("max_memory_cached")
if f is None:
    out = {"equals_max_reserved": True}
else:
    t = c.big()
    out = {"equals_max_reserved": f() == c.m("max_memory_reserved")()}
""", "the promise: the deprecated name answers max_memory_reserved()"),
    "memory_stats": ("""
f = c.m("memory_stats")
if f is None:
    out = {"dict": True, "current_matches_memory_allocated": True}
else:
    t = c.big()
    st = f()
    out = {"dict": isinstance(st, dict),
           "current_matches_memory_allocated": st.get("allocated_bytes.all.current") == c.m("memory_allocated")()}
""", "the promise: a dict whose allocated_bytes.all.current is memory_allocated()"),
    "memory_summary": ("""
f = c.m("memory_summary")
t = c.big()
s = "summary" if f is None else f()
out = {"non_empty_str": isinstance(s, str) and len(s) > 0}
""", "the promise: a non-empty text"),
    "memory_usage": ("""
f = c.m("memory_usage")
y = (x * 2)
u = 0 if f is None else f()
out = {"y": y, "percent": isinstance(u, int) and 0 <= u <= 100}
""", "the promise: an int percentage in [0, 100]"),
    "utilization": ("""
f = c.m("utilization")
y = (x * 2)
u = 0 if f is None else f()
out = {"y": y, "percent": isinstance(u, int) and 0 <= u <= 100}
""", "the promise: an int percentage in [0, 100]"),
    "empty_cache": ("""
f = c.m("empty_cache")
t = c.big()
del t
if f is None:
    out = {"reserved_covers_allocated": True, "y": (x + 1)}
else:
    f()
    out = {"reserved_covers_allocated": c.m("memory_reserved")() >= c.m("memory_allocated")(),
           "y": (x + 1)}
""", "the promise: after it, reserved still covers allocated and the device keeps computing"),
    "mem_get_info": ("""
f = c.m("mem_get_info")
free, total = (1, 2) if f is None else f()
out = {"ints": isinstance(free, int) and isinstance(total, int), "0<free<=total": 0 < free <= total}
""", "the promise: (free, total) ints with 0 < free <= total"),
    "reset_peak_memory_stats": (_peak_reset("reset_peak_memory_stats", "allocated"), "the promise: after it the peak equals the current allocation"),
    "reset_max_memory_allocated": (_peak_reset("reset_max_memory_allocated", "allocated"), "the promise: after it the peak equals the current allocation"),
    "reset_max_memory_cached": (_peak_reset("reset_max_memory_cached", "reserved"), "the promise: after it the reserved peak equals what is reserved"),
    "reset_accumulated_memory_stats": ("""
f = c.m("reset_accumulated_memory_stats")
if f is None:
    out = {"accumulated_dropped": True}
else:
    t = c.big()
    before = c.m("memory_stats")().get("allocated_bytes.all.allocated", 0)
    f()
    after = c.m("memory_stats")().get("allocated_bytes.all.allocated", 0)
    out = {"accumulated_dropped": before >= NBYTES and after < before}
""", "the promise: accumulated allocation totals drop (to what is allocated after it)"),
    "caching_allocator_alloc": ("""
f = c.m("caching_allocator_alloc")
if f is None:
    out = {"nonzero_int": True}
else:
    p = f(4096)
    out = {"nonzero_int": isinstance(p, int) and p != 0}
    c.m("caching_allocator_delete")(p)
""", "the promise: a non-zero int device pointer"),
    "caching_allocator_delete": ("""
f = c.m("caching_allocator_delete")
if f is None:
    out = {"freed": True}
else:
    before = c.m("memory_allocated")()
    p = c.m("caching_allocator_alloc")(NBYTES)
    f(p)
    out = {"freed": c.m("memory_allocated")() <= before}
""", "the promise: allocated bytes return to their level after the delete"),
    "get_allocator_backend": ("""
f = c.m("get_allocator_backend")
b = "native" if f is None else f()
out = {"known": b in ("native", "cudaMallocAsync")}
""", "the promise: one of the documented backend names"),
    "set_per_process_memory_fraction": ("""
f = c.m("set_per_process_memory_fraction")
y = (x * 2)
if f is None:
    out = {"y": y, "rejects_1.5": True}
else:
    f(1.0)
    try:
        f(1.5)
        rejects = False
    except (ValueError, RuntimeError):
        rejects = True
    f(1.0)
    out = {"y": (x * 2), "rejects_1.5": rejects}
""", "the promise: a fraction above 1 is refused; computing goes on"),
    "host_memory_stats": ("""
f = c.m("host_memory_stats")
st = {} if f is None else f()
out = {"dict_of_ints": isinstance(st, dict) and all(isinstance(v, int) for v in st.values())}
""", "the promise: a dict of int counters"),
    "host_memory_stats_as_nested_dict": ("""
f = c.m("host_memory_stats_as_nested_dict")
st = {} if f is None else f()
out = {"dict": isinstance(st, dict)}
""", "the promise: a dict"),
    "reset_accumulated_host_memory_stats": ("""
f = c.m("reset_accumulated_host_memory_stats")
if f is not None:
    f()
    st = c.m("host_memory_stats")()
    out = {"allocations_reset": st.get("num_host_alloc", 0) == 0}
else:
    out = {"allocations_reset": True}
""", "the promise: accumulated host allocation counts are zero after it"),
    "reset_peak_host_memory_stats": ("""
f = c.m("reset_peak_host_memory_stats")
if f is not None:
    f()
    st = c.m("host_memory_stats")()
    out = {"peak_is_current": all(st.get(k, 0) == st.get(k.replace(".peak", ".current"), 0)
                                  for k in st if k.endswith(".peak"))}
else:
    out = {"peak_is_current": True}
""", "the promise: every host peak equals its current value after it"),
}
