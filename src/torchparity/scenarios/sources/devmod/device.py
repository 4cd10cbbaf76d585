"""Blocks of the ``devmod`` source for the graph, device, RNG, amp and comm members of
``torch.cuda.*`` (format: see ``devmod.cuda``)."""

from __future__ import annotations

from .cuda import CPU, RNG

GRAPHS = {
    "CUDAGraph": ("out = capture(c)", "the replay's promise: the captured formula on the new input"),
    "CUDAGraph.capture_begin": ("out = capture(c, 'begin_end')", "the replay's promise"),
    "CUDAGraph.capture_end": ("out = capture(c, 'begin_end')", "the replay's promise"),
    "CUDAGraph.replay": ("out = capture(c)", "the replay's promise"),
    "CUDAGraph.reset": ("out = capture(c, 'reset')", "the replay's promise"),
    "CUDAGraph.pool": ("""
G = c.m("CUDAGraph")
if G is None:
    out = {"pool_is_tuple": True, "replay": capture(c)}
else:
    out = {"replay": capture(c)}
    g = G()
    with c.m("graph")(g):
        b = torch.ones(4, device=c.device) * 3
    out["pool_is_tuple"] = isinstance(g.pool(), tuple)
""", "the promise: pool() is a handle tuple; the replay gives the captured formula"),
    "CUDAGraph.debug_dump": ("""
import os, tempfile
G = c.m("CUDAGraph")
if G is None:
    out = {"dumped": True}
else:
    g = G()
    g.enable_debug_mode()
    with c.m("graph")(g):
        b = torch.ones(4, device=c.device) * 3
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "graph.dot")
        g.debug_dump(path)
        out = {"dumped": os.path.getsize(path) > 0}
""", "the promise: debug_dump writes a non-empty file"),
    "graph": ("out = capture(c)", "the replay's promise"),
    "graph_pool_handle": ("out = capture(c, 'pool')", "the replay's promise"),
    "make_graphed_callables": ("""
torch.manual_seed(0)
lin = torch.nn.Linear(4, 3)
inp = torch.arange(8.0).reshape(2, 4)
f = c.m("make_graphed_callables")
if f is None:
    out = lin(inp).detach()
else:
    lin = lin.to(c.device)
    sample = torch.zeros(2, 4, device=c.device, requires_grad=True)
    graphed = f(lin, (sample,))
    out = graphed(inp.to(c.device).requires_grad_()).detach()
""", "the promise: the graphed module computes what the module computes"),
}

DEVICE = {
    "is_available": ("out = {'available': c.m('is_available')(), 'y': (x * 2)}", CPU),
    "is_initialized": ("""
y = (x * 2)
out = {"initialized_after_work": c.m("is_initialized")(), "y": y}
""", CPU),
    "init": ("""
f = c.m("init")
if f is not None:
    f()
out = {"initialized": c.m("is_initialized")(), "y": (x + 1)}
""", CPU + " (torch.cpu has no init: the promise is is_initialized() afterwards)"),
    "device_count": ("""
n = c.m("device_count")()
out = {"at_least_one": n >= 1, "index_below_count": c.index < n, "y": (x * 2)}
""", CPU),
    "current_device": ("""
if c.is_cpu:
    out = {"matches_new_tensor": True}
else:
    t = torch.empty(1, device=c.type)
    out = {"matches_new_tensor": (t.device.index or 0) == c.m("current_device")()}
""", "the promise: a tensor made on the bare device type lands on current_device()"),
    "set_device": ("""
if c.is_cpu:
    out = {"lands_there": True, "current": True}
else:
    c.m("set_device")(c.index)
    t = torch.ones(2, device=c.type)
    out = {"lands_there": (t.device.index or 0) == c.index, "current": c.m("current_device")() == c.index}
""", "the promise: after set_device(i), new tensors land on i and i is current"),
    "device": ("""
f = c.m("device")
if f is None:
    out = {"lands_there": True, "y": (x * 2)}
else:
    with f(c.index):
        t = torch.ones(2, device=c.type)
        y = x * 2
    out = {"lands_there": (t.device.index or 0) == c.index, "y": y}
""", "the promise: inside device(i), new tensors land on i"),
    "device_of": ("""
f = c.m("device_of")
if f is None:
    out = {"y": (x + 1)}
else:
    with f(x):
        y = x + 1
    out = {"y": y}
""", "the promise: work inside device_of(t) runs on t's device"),
    "get_device_name": ("""
n = "name" if c.is_cpu else c.m("get_device_name")()
out = {"non_empty_str": isinstance(n, str) and len(n) > 0}
""", "the promise: a non-empty name"),
    "get_device_properties": ("""
f = c.m("get_device_properties")
if f is None:
    out = {"name_matches": True, "total_memory_positive": True}
else:
    p = f(c.index)
    out = {"name_matches": p.name == c.m("get_device_name")(c.index),
           "total_memory_positive": p.total_memory > 0}
""", "the promise: properties whose name is get_device_name() and total_memory > 0"),
    "get_device_capability": ("""
f = c.m("get_device_capability")
cap = (0, 0) if f is None else f(c.index)
out = {"pair_of_ints": isinstance(cap, tuple) and len(cap) == 2 and all(isinstance(v, int) for v in cap)}
""", "the promise: a (major, minor) pair of ints"),
    "can_device_access_peer": ("""
f = c.m("can_device_access_peer")
r = False if f is None else f(c.index, c.index)
out = {"bool": isinstance(r, bool)}
""", "the promise: a bool"),
    "current_blas_handle": ("""
f = c.m("current_blas_handle")
y = x.matmul(x.T)
h = 1 if f is None else f()
out = {"y": y, "nonzero_int": isinstance(h, int) and h != 0}
""", "the promise: a non-zero int handle"),
    "get_sync_debug_mode": ("""
f = c.m("get_sync_debug_mode")
if f is None:
    out = {"default_0": True, "warn_1": True}
else:
    old = f()
    c.m("set_sync_debug_mode")("warn")
    warn = f()
    c.m("set_sync_debug_mode")(old)
    out = {"default_0": old == 0, "warn_1": warn == 1}
""", "the promise: 0 by default, 1 after set_sync_debug_mode('warn')"),
    "set_sync_debug_mode": ("""
f = c.m("set_sync_debug_mode")
y = (x * 2)
if f is None:
    out = {"y": y, "error_2": True, "restored": True}
else:
    old = c.m("get_sync_debug_mode")()
    f("error")
    err = c.m("get_sync_debug_mode")()
    f(old)
    out = {"y": y, "error_2": err == 2, "restored": c.m("get_sync_debug_mode")() == old}
""", "the promise: 'error' reads back 2; the old mode comes back"),
    "ipc_collect": ("""
f = c.m("ipc_collect")
if f is not None:
    f()
out = (x * 2)
""", "the promise: it returns and the device keeps computing"),
}

RANDOM = {
    "get_rng_state": ("""
st = c.m("get_rng_state")()
a = torch.rand(5, device=c.device)
c.m("set_rng_state")(st)
b = torch.rand(5, device=c.device)
out = {"byte_state": st.dtype == torch.uint8, "same_draws": torch.equal(a, b)}
""", RNG),
    "set_rng_state": ("""
st = c.m("get_rng_state")()
a = torch.randn(6, device=c.device)
torch.randn(3, device=c.device)
c.m("set_rng_state")(st)
b = torch.randn(6, device=c.device)
out = {"same_draws": torch.equal(a, b)}
""", RNG),
    "set_rng_state_all": ("""
sts = c.m("get_rng_state_all")()
a = torch.rand(5, device=c.device)
c.m("set_rng_state_all")(sts)
b = torch.rand(5, device=c.device)
out = {"list": isinstance(sts, list), "same_draws": torch.equal(a, b)}
""", RNG),
    "manual_seed": ("""
c.m("manual_seed")(123)
a = torch.rand(5, device=c.device)
c.m("manual_seed")(123)
b = torch.rand(5, device=c.device)
out = {"same_draws": torch.equal(a, b), "initial_seed": c.m("initial_seed")() == 123}
""", RNG),
    "manual_seed_all": ("""
c.m("manual_seed_all")(321)
a = torch.rand(5, device=c.device)
c.m("manual_seed_all")(321)
b = torch.rand(5, device=c.device)
out = {"same_draws": torch.equal(a, b), "initial_seed": c.m("initial_seed")() == 321}
""", RNG),
    "seed": ("""
c.m("seed")()
s1 = c.m("initial_seed")()
a = torch.rand(5, device=c.device)
c.m("manual_seed")(s1)
b = torch.rand(5, device=c.device)
out = {"int_seed": isinstance(s1, int), "seed_replays": torch.equal(a, b)}
""", RNG),
    "seed_all": ("""
c.m("seed_all")()
s1 = c.m("initial_seed")()
a = torch.rand(5, device=c.device)
c.m("manual_seed_all")(s1)
b = torch.rand(5, device=c.device)
out = {"int_seed": isinstance(s1, int), "seed_replays": torch.equal(a, b)}
""", RNG),
    "initial_seed": ("""
c.m("manual_seed")(7)
torch.rand(3, device=c.device)
out = {"initial_seed": c.m("initial_seed")() == 7}
""", RNG),
}

AMP = {
    "amp.autocast": ("""
with c.m("amp.autocast")(dtype=torch.bfloat16):
    y = x.matmul(x.T)
    z = x + 1
out = {"mm_dtype": str(y.dtype), "add_dtype": str(z.dtype), "mm": y.float()}
""", CPU + " (bfloat16 asked for explicitly)"),
    "amp.GradScaler": ("""
torch.manual_seed(0)
lin = torch.nn.Linear(4, 2).to(c.device)
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
scaler = c.m("amp.GradScaler")(init_scale=16.0)
loss = lin(x).square().mean()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
out = {"scale": scaler.get_scale(), "weight": lin.weight.detach()}
""", CPU),
    "amp.custom_fwd": ("""
fwd = c.m("amp.custom_fwd") or (lambda f=None, **k: torch.amp.custom_fwd(f, device_type="cpu", **k))
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
out = {"out_dtype": str(y.dtype), "y": y.detach(), "grad": a.grad.float()}
""", "torch.amp.custom_fwd(device_type='cpu') runs the same code"),
    "amp.custom_bwd": ("""
fwd = c.m("amp.custom_fwd") or (lambda f=None, **k: torch.amp.custom_fwd(f, device_type="cpu", **k))
bwd = c.m("amp.custom_bwd") or (lambda f: torch.amp.custom_bwd(f, device_type="cpu"))
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
out = {"grad_dtype_in_backward": seen, "grad": a.grad.float()}
""", "torch.amp.custom_bwd(device_type='cpu') runs the same code"),
}

COMM = {
    "comm.scatter": ("""
f = c.m("comm.scatter")
if f is None:
    out = {"chunks": 1, "chunk": x}
else:
    parts = f(x, devices=[c.index])
    out = {"chunks": len(parts), "chunk": parts[0]}
""", "the promise: scattering to one device gives one chunk equal to the input"),
    "comm.gather": ("""
f = c.m("comm.gather")
if f is None:
    out = torch.cat([x, x + 1])
else:
    out = f([x, x + 1], destination=c.index)
""", "the promise: the tensors concatenated along dim 0"),
}

ALL = {**GRAPHS, **DEVICE, **RANDOM, **AMP, **COMM}
