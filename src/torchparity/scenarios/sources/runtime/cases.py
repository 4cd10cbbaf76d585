"""The cases of the ``runtime`` source: one real function per case, and the table.

Top-level ``torch`` APIs that are not ops (global switches: threads, deterministic
algorithms, matmul precision, warn-always; the random generators, dtype / device / layout
objects, numpy interop, serialisation, autocast, ``torch.compile``, the symbolic-shape
helpers) and ``torch.autograd`` / ``torch.func`` / ``torch.futures``. Every body
``f(device, dtype)`` does device work under its API and returns its answer (compared with
the same body run on the CPU); a body that changes process-wide state restores it in
``finally`` (the CPU reference and the device run share one process). APIs answered by
the same code are one case with aliases. :class:`On` holds the shared input ``x`` (drawn
on the CPU, moved) and ``on_run_device``. Helpers and bodies live in this one file: the
footprint recorder tells scenario code from the API's by file.
"""

from __future__ import annotations

import torch

from ...registry import Draws
from ..base import Case, Excluded

ALL = ("float32", "float64", "float16", "bfloat16")
F32 = ("float32",)
F32_64 = ("float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
RANDOM = ("random",)


class On:
    """The device under test and its input ``x`` (4 x 3, drawn on the CPU in ``dtype``, or
    float32 for an integer dtype, and moved)."""

    def __init__(self, device, dtype):
        self.device = device
        self.x = torch.randn(4, 3, dtype=dtype if dtype.is_floating_point else torch.float32).to(device)

    def on_run_device(self, obj):
        return obj.device.type == torch.device(self.device).type


# --- the bodies -----------------------------------------------------------------------------


def Tag(device, dtype):
    """Operator tags answer on the host (no device argument, no device op): host-only."""
    tags = torch.ops.aten.mul.Tensor.tags
    return [all(isinstance(t, torch.Tag) for t in tags), sorted(t.name for t in tags),
            torch.Tag.pointwise in tags, torch.Tag.nondeterministic_seeded in torch.ops.aten.randn.default.tags,
            torch.Tag.inplace_view in torch.ops.aten.transpose_.default.tags, sorted(torch.Tag.__members__)]


def quasirandom_SobolEngine_draw(device, dtype):
    """Sobol points are drawn on the host; ``out=`` a device tensor is where the device
    enters (the draw is resized into it and copied)."""
    engine = torch.quasirandom.SobolEngine(dimension=3, scramble=True, seed=11)
    first = engine.draw(4, dtype=dtype)
    out = torch.empty(0, dtype=dtype, device=device)
    second = engine.draw(5, out=out, dtype=dtype)
    return [first.tolist(), second is out, out, engine.num_generated]  # first: host values


def set_num_threads(device, dtype):
    on = On(device, dtype)
    n = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        during = torch.get_num_threads()
        y = on.x @ on.x.T
    finally:
        torch.set_num_threads(n)
    return [during, torch.get_num_threads() == n, y]


def get_num_interop_threads(device, dtype):
    on = On(device, dtype)
    k = torch.get_num_interop_threads()
    fut = torch.jit.fork(torch.mm, on.x, on.x.T)
    return [isinstance(k, int) and k >= 1, torch.jit.wait(fut)]


def use_deterministic_algorithms(device, dtype):
    prev = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    idx = torch.tensor([0, 1, 0, 2, 1]).to(device)
    src = torch.arange(5, dtype=dtype).to(device)
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
        state = [torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()]
        y = torch.zeros(3, dtype=dtype).to(device).scatter_add_(0, idx, src)
    finally:
        torch.use_deterministic_algorithms(prev[0], warn_only=prev[1])
    return [state, y, (torch.are_deterministic_algorithms_enabled(),
                      torch.is_deterministic_algorithms_warn_only_enabled()) == prev]


def set_deterministic_debug_mode(device, dtype):
    prev = torch.get_deterministic_debug_mode()
    idx = torch.tensor([0, 1, 0, 2, 1]).to(device)
    src = torch.arange(5, dtype=dtype).to(device)
    try:
        torch.set_deterministic_debug_mode("warn")
        state = [torch.get_deterministic_debug_mode(), torch.are_deterministic_algorithms_enabled()]
        y = torch.zeros(3, dtype=dtype).to(device).index_add_(0, idx, src)
    finally:
        torch.set_deterministic_debug_mode(prev)
    return [state, y, torch.get_deterministic_debug_mode() == prev]


def set_float32_matmul_precision(device, dtype):
    prev = torch.get_float32_matmul_precision()
    a = torch.randn(8, 8, dtype=dtype).to(device)
    try:
        torch.set_float32_matmul_precision("high")
        high = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("highest")
        y = a @ a
    finally:
        torch.set_float32_matmul_precision(prev)
    return [high, y, torch.get_float32_matmul_precision() == prev]


def set_warn_always(device, dtype):
    run = On(device, dtype)
    prev = torch.is_warn_always_enabled()
    try:
        torch.set_warn_always(True)
        on = torch.is_warn_always_enabled()
        y = run.x.abs().sqrt()
    finally:
        torch.set_warn_always(prev)
    return [on, torch.is_warn_always_enabled() == prev, y]


def manual_seed(device, dtype):
    on = On(device, dtype)
    torch.manual_seed(7)
    a = torch.rand(256, dtype=dtype, device=device)
    torch.manual_seed(7)
    b = torch.rand(256, dtype=dtype, device=device)
    return [tuple(a.shape), str(a.dtype), on.on_run_device(a), torch.equal(a, b), torch.initial_seed(), Draws(a)]


def seed(device, dtype):
    on = On(device, dtype)
    s = torch.seed()
    a = torch.rand(8, dtype=dtype, device=device)
    torch.manual_seed(s)
    b = torch.rand(8, dtype=dtype, device=device)
    return [isinstance(s, int), s == torch.initial_seed(), torch.equal(a, b), on.on_run_device(a)]


def initial_seed(device, dtype):
    on = On(device, dtype)
    torch.manual_seed(1234)
    s = torch.initial_seed()
    y = torch.randn(256, dtype=dtype, device=device)
    return [s, tuple(y.shape), on.on_run_device(y), Draws(y)]


def get_rng_state(device, dtype):
    st = torch.get_rng_state()
    a = torch.rand(6, dtype=dtype).to(device)
    torch.set_rng_state(st)
    b = torch.rand(6, dtype=dtype).to(device)
    return [a, b, torch.equal(a, b), str(st.dtype), tuple(st.shape)]


def is_grad_enabled(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    with torch.no_grad():
        inside = torch.is_grad_enabled()
        y = g * 2
    z = g * 2
    return [inside, torch.is_grad_enabled(), y.requires_grad, z.requires_grad, z]


def is_inference_mode_enabled(device, dtype):
    on = On(device, dtype)
    with torch.inference_mode():
        inside = torch.is_inference_mode_enabled()
        y = on.x * 2
    return [inside, torch.is_inference_mode_enabled(), y.is_inference(), y]


def finfo(device, dtype):
    fi = torch.finfo(dtype)
    big = torch.full((3,), fi.max, dtype=dtype).to(device)
    tiny = torch.full((3,), fi.tiny, dtype=dtype).to(device)
    return [fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.resolution, str(fi.dtype), big * 2, tiny * 0.25,
           bool((big * 2).isinf().all())]


def iinfo(device, dtype):
    ii = torch.iinfo(dtype)
    hi = torch.full((3,), ii.max, dtype=dtype).to(device)
    lo = torch.full((3,), ii.min, dtype=dtype).to(device)
    return [ii.bits, ii.min, ii.max, str(ii.dtype), hi, lo, hi - 1, lo + 1, (hi // 2).max()]


def dtype(device, dtype):
    on = On(device, dtype)
    y = on.x * 2
    d = y.dtype
    return [isinstance(d, torch.dtype), str(d), d.is_floating_point, d.is_complex, d.is_signed, d.itemsize,
           str(d.to_complex()), torch.zeros(2, dtype=d, device=device)]


def layout(device, dtype):
    on = On(device, dtype)
    y = torch.zeros(2, 3, dtype=dtype, device=device)
    e = torch.empty(2, layout=torch.strided, dtype=dtype, device=device)
    return [isinstance(y.layout, torch.layout), str(y.layout), y.layout == torch.strided, e.layout == torch.strided,
           on.on_run_device(e)]


def device(device, dtype):
    on = On(device, dtype)
    d = torch.device(device)
    y = torch.ones(2, dtype=dtype, device=d)
    with d:
        z = torch.zeros(2, dtype=dtype)
    return [isinstance(d, torch.device), on.on_run_device(y), on.on_run_device(z),
           y.device.type == d.type and (y.device.index or 0) == (d.index or 0), y + z]


def Tensor(device, dtype):
    y = torch.Tensor([1.5, -2.0, 3.0]).to(device)
    return [isinstance(y, torch.Tensor), type(y) is torch.Tensor, torch.Tensor.add(y, 1), y.dtype == torch.get_default_dtype()]


def is_conj(device, dtype):
    on = On(device, dtype)
    c = torch.complex(on.x, 2 * on.x)
    return [torch.is_conj(c), torch.is_conj(c.conj()), torch.is_conj(c.conj().resolve_conj()), c.conj().resolve_conj()]


def hann_window(device, dtype):
    return [torch.hann_window(8, dtype=dtype, device=device),
           torch.hann_window(7, periodic=False, dtype=dtype, device=device)]


def dequantize(device, dtype):
    q = torch.quantize_per_tensor(torch.tensor([-1.0, 0.0, 0.5, 1.25]), 0.25, 0, torch.qint8).to(device)
    return torch.dequantize(q)


def save(device, dtype):
    on = On(device, dtype)
    import os
    import tempfile
    y = on.x * 3
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.pt")
        torch.save({"y": y, "n": 3, "view": y[1:]}, path)
        back = torch.load(path)
        on_cpu = torch.load(path, map_location="cpu")
    return [back["y"], back["view"], on.on_run_device(back["y"]), back["n"], on_cpu["y"].device.type,
           back["view"].storage_offset()]


def _assert(device, dtype):
    on = On(device, dtype)
    torch._assert((on.x.abs() >= 0).all(), "negative abs")
    try:
        torch._assert((on.x > 1e9).any(), "too big")
        msg = None
    except AssertionError as e:
        msg = str(e)
    return [msg, on.x.sum()]


def broadcast_shapes(device, dtype):
    a = torch.randn(3, 1, dtype=dtype).to(device)
    b = torch.randn(1, 4, dtype=dtype).to(device)
    shape = torch.broadcast_shapes(a.shape, b.shape, (1,))
    return [tuple(shape), a.expand(shape) + b.expand(shape)]


def autocast(device, dtype):
    a = torch.randn(4, 4, dtype=dtype).to(device)
    b = torch.randn(4, 4, dtype=dtype).to(device)
    kind = torch.device(device).type
    with torch.autocast(device_type=kind, dtype=torch.bfloat16):
        y = a @ b
        inside = torch.is_autocast_enabled(kind)
    return [str(y.dtype), y, inside, torch.is_autocast_enabled(kind)]


def compile(device, dtype):
    on = On(device, dtype)
    torch._dynamo.reset()
    def f(t):
        return (t.sin() + t.new_ones(torch.sym_max(t.shape[0], 2), 1)).sum(0)
    g = torch.compile(f, backend="eager", dynamic=True)
    return [g(on.x), g(torch.randn(6, 3, dtype=dtype).to(device))]


def _foreach_asin(device, dtype):
    ts = [torch.rand(5, dtype=dtype).to(device) * 2 - 1, torch.rand(3, dtype=dtype).to(device)]
    return torch._foreach_asin(ts)


def _foreach_sqrt(device, dtype):
    ts = [torch.rand(5, dtype=dtype).to(device) * 4, torch.rand(3, dtype=dtype).to(device)]
    return torch._foreach_sqrt(ts)


def _foreach_neg_(device, dtype):
    on = On(device, dtype)
    ts = [on.x.clone(), torch.rand(3, dtype=dtype).to(device)]
    r = torch._foreach_neg_(ts)
    return [ts, r is None]


def as_tensor(device, dtype):
    on = On(device, dtype)
    import numpy as np
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.as_tensor(a, dtype=dtype, device=device)
    return [t, on.on_run_device(t)]


def asarray(device, dtype):
    on = On(device, dtype)
    import numpy as np
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.asarray(a, dtype=dtype, device=device)
    u = torch.asarray([1.5, 2.5], device=device)
    return [t, u, on.on_run_device(t), on.on_run_device(u)]


def from_numpy(device, dtype):
    on = On(device, dtype)
    import numpy as np
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(a)
    a[0, 0] = 9
    d = t.to(device=device, dtype=dtype) * 2
    return [d, t.device.type, on.on_run_device(d)]


def TypedStorage(device, dtype):
    on = On(device, dtype)
    st = torch.TypedStorage(4, dtype=dtype, device=device)
    st.fill_(1.5)
    return [st.size(), str(st.dtype), on.on_run_device(st), st.tolist()]


def UntypedStorage(device, dtype):
    on = On(device, dtype)
    st = torch.UntypedStorage(8, device=device)
    st.fill_(3)
    return [st.nbytes(), on.on_run_device(st), st.tolist()]


def sym_float(device, dtype):
    on = On(device, dtype)
    from torch.fx.experimental.proxy_tensor import make_fx
    kinds = {}
    def f(t):
        n = t.shape[0]
        kinds["SymInt"] = isinstance(n, torch.SymInt)
        fl = torch.sym_float(n)
        kinds["SymFloat"] = isinstance(fl, torch.SymFloat)
        b = n > 2
        kinds["SymBool"] = isinstance(b, torch.SymBool) and isinstance(torch.sym_not(b), torch.SymBool)
        m, k, i = torch.sym_max(n, 5), torch.sym_min(n, 2), torch.sym_int(fl / 2)
        return t.new_zeros(m) + k, t.new_ones(i) * fl
    gm = make_fx(f, tracing_mode="symbolic")(on.x)
    return [sorted(kinds.items()), gm(on.x), gm(torch.randn(8, 3, dtype=dtype).to(device))]


def autograd_backward(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    y = (g * g).sum()
    z = g.sin().sum()
    torch.autograd.backward([y, z], [torch.tensor(1.0, dtype=dtype).to(device), torch.tensor(2.0, dtype=dtype).to(device)])
    return g.grad


def autograd_grad(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    y = (g ** 3).sum() + (g * 2).sum()  # two paths: the engine accumulates g's gradient
    (d,) = torch.autograd.grad(y, g, create_graph=True)
    (dd,) = torch.autograd.grad(d.sum(), g)
    # broadcast operands: b (3,) over a's rows, c (2, 1) over its columns; their gradients
    # are the output's gradient summed back over the broadcast dimensions
    a = torch.randn(2, 3, dtype=dtype).to(device).requires_grad_()
    b = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    c = torch.randn(2, 1, dtype=dtype).to(device).requires_grad_()
    ga, gb, gc = torch.autograd.grad(((a * b + c) ** 2).sum(), (a, b, c))
    return [d, dd, ga, gb, gc]


def autograd_Function(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            r = i.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, grad):
            (r,) = ctx.saved_tensors
            return grad * r

    y = Exp.apply(g)
    (y * y).sum().backward()
    return [y, g.grad, type(y.grad_fn).__name__]


def autograd_Function_jvp(device, dtype):
    on = On(device, dtype)
    import torch.autograd.forward_ad as fwAD

    class ExpJ(torch.autograd.Function):
        @staticmethod
        def forward(i):
            return i.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, grad):
            return grad

        @staticmethod
        def jvp(ctx, t):
            (r,) = ctx.saved_tensors
            return t * r

    with fwAD.dual_level():
        d = fwAD.make_dual(on.x, torch.full_like(on.x, 0.5))
        p, t = fwAD.unpack_dual(ExpJ.apply(d))
    return [p, t]


def autograd_Function_vmap(device, dtype):
    on = On(device, dtype)
    class ExpV(torch.autograd.Function):
        @staticmethod
        def forward(i):
            return i.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad):
            (r,) = ctx.saved_tensors
            return grad * r

        @staticmethod
        def vmap(info, in_dims, i):
            return i.exp(), in_dims[0]

    return [torch.func.vmap(ExpV.apply)(on.x), torch.func.vmap(ExpV.apply, in_dims=1)(on.x)]


def autograd_FunctionCtx_mark_dirty(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    class Inc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, grad):
            return grad

    h = g.clone()
    y = Inc.apply(h)
    (y * y).sum().backward()
    return [y, g.grad, y is h]


def autograd_FunctionCtx_mark_non_differentiable(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    class SortIdx(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            v, i = a.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return torch.zeros_like(gv).index_add_(0, i, gv)

    v, i = SortIdx.apply(g)
    (v * torch.arange(3, dtype=dtype).to(device)).sum().backward()
    return [v, i, i.requires_grad, g.grad]


def autograd_FunctionCtx_set_materialize_grads(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    seen = []

    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a.clone(), a.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2 is None)
            return g1 * 2

    a1, a2 = Two.apply(g)
    a1.sum().backward()
    return [seen, g.grad]


def autograd_grad_mode_inference_mode_clone(device, dtype):
    on = On(device, dtype)
    c = torch.inference_mode().clone()
    with c:
        y = on.x * 2
    return [y.is_inference(), torch.is_inference_mode_enabled(), y]


def autograd_grad_mode_set_grad_enabled_clone(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    prev = torch.is_grad_enabled()
    try:
        c = torch.set_grad_enabled(False).clone()
        with c:
            y = g * 2
            inside = torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(prev)
    return [inside, y.requires_grad, y, torch.is_grad_enabled() == prev]


def autograd_grad_mode_set_multithreading_enabled(device, dtype):
    # what the switch does: the flag inside, and a device backward run on the calling
    # thread instead of the engine's device thread (a CPU backward always is); the
    # gradient alone is the same either way
    import threading

    caller = threading.get_ident()
    on_caller = []
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    g.register_hook(lambda grad: on_caller.append(threading.get_ident() == caller))
    prev = torch._C._is_multithreading_enabled()
    torch._C._set_multithreading_enabled(True)  # from the default: a run before may have left it off
    try:
        with torch.autograd.grad_mode.set_multithreading_enabled(False):
            flag = torch._C._is_multithreading_enabled()
            (g * g.sin()).sum().backward()
        after = torch._C._is_multithreading_enabled()  # its exit restores the flag
    finally:
        torch._C._set_multithreading_enabled(prev)
    return [g.grad, flag, on_caller, after]


class NanGrad(torch.autograd.Function):
    """Identity forward, a NaN gradient backward: what anomaly detection must catch."""

    @staticmethod
    def forward(ctx, a):
        return a.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan")


def anomaly_message(g, ctx):
    """The first line of the error a NaN backward raises under ``ctx`` (None: none)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with ctx:
                (NanGrad.apply(g) * 2).sum().backward()
        return None
    except RuntimeError as e:
        return str(e).splitlines()[0]


def autograd_detect_anomaly(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    return [anomaly_message(g, torch.autograd.detect_anomaly()), torch.is_anomaly_enabled(), (g * 3).sum()]


def autograd_set_detect_anomaly(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    return [anomaly_message(g, torch.autograd.set_detect_anomaly(True)), torch.is_anomaly_enabled(),
            (g * 3).sum()]


def autograd_forward_ad_dual_level(device, dtype):
    on = On(device, dtype)
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        d = fwAD.make_dual(on.x, torch.ones_like(on.x))
        p, t = fwAD.unpack_dual((d.sin() * d).sum(0))
    return [p, t]


def autograd_graph_disable_saved_tensors_hooks(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    with torch.autograd.graph.disable_saved_tensors_hooks("saved tensor hooks are off here"):
        (g * g).sum().backward()
        try:
            with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
            msg = None
        except RuntimeError as e:
            msg = str(e).splitlines()[0]
    return [msg, g.grad]


def func_grad_and_value(device, dtype):
    on = On(device, dtype)
    gr, val = torch.func.grad_and_value(lambda t: (t.sin() * t).sum())(on.x)
    return [gr, val]


def func_functional_call(device, dtype):
    on = On(device, dtype)
    m = torch.nn.Linear(3, 2).to(device=device, dtype=dtype)
    params = {k: torch.full_like(v, 0.5) for k, v in m.named_parameters()}
    return [torch.func.functional_call(m, params, (on.x,)), m(on.x).shape == (4, 2)]


def func_replace_all_batch_norm_modules_(device, dtype):
    on = On(device, dtype)
    m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)).to(device=device, dtype=dtype)
    torch.func.replace_all_batch_norm_modules_(m)
    y = m(on.x)
    return [m[1].running_mean is None, m[1].track_running_stats, y]


def func_stack_module_state(device, dtype):
    ms = [torch.nn.Linear(3, 2).to(device=device, dtype=dtype) for _ in range(3)]
    params, buffers = torch.func.stack_module_state(ms)
    return [params["weight"], params["bias"], sorted(buffers), params["weight"].device.type == torch.device(device).type]


def futures_Future(device, dtype):
    on = On(device, dtype)
    f = torch.futures.Future()
    before = f.done()
    chained = f.then(lambda fut: fut.value() * 2)
    f.set_result(on.x + 1)
    return [before, f.done(), f.value(), chained.wait(), chained.value().device.type == torch.device(device).type]


def futures_Future_wait(device, dtype):
    on = On(device, dtype)
    f = torch.futures.Future()
    f.set_result((on.x @ on.x.T, on.x.sum()))
    e = torch.futures.Future()
    e.set_exception(ValueError("boom"))
    try:
        e.wait()
        msg = None
    except ValueError as err:
        msg = str(err)
    return [f.wait(), msg]


def compiled_with_cxx11_abi(device, dtype):
    """a property of the torch build, asked on the host: no device is involved (host-only)"""
    return torch.compiled_with_cxx11_abi()


def futures_wait_all(device, dtype):
    on = On(device, dtype)
    fs = [torch.futures.Future() for _ in range(3)]
    fs[0].set_result(on.x)
    fs[1].set_result(on.x.sum())
    fs[2].set_result([on.x * 2])
    return torch.futures.wait_all(fs)


def optim_Optimizer(device, dtype):
    class PlainSGD(torch.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        @torch.no_grad()
        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        st = self.state[p]
                        st["n"] = st.get("n", 0) + 1
                        p.add_(p.grad, alpha=-group["lr"])

    w = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    opt = PlainSGD([w], lr=0.25)
    for _ in range(2):
        opt.zero_grad()
        (w * w * w).sum().backward()
        opt.step()
    sd = opt.state_dict()
    return [w.detach(), sd["param_groups"][0]["lr"], sd["state"][0]["n"]]


def distributions_constraints_dependent_property(device, dtype):
    from torch.distributions import Distribution, constraints

    class Box(Distribution):
        arg_constraints = {}

        def __init__(self, low, high):
            self.low, self.high = low, high
            super().__init__(batch_shape=low.shape, validate_args=False)

        @constraints.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return constraints.interval(self.low, self.high)

    b = Box(torch.zeros(3, dtype=dtype).to(device), torch.ones(3, dtype=dtype).to(device))
    v = torch.tensor([0.5, 1.5, -0.1], dtype=dtype).to(device)
    return [b.support.check(v), Box.support.is_discrete, Box.support.event_dim]


def sparse_check_sparse_tensor_invariants_enable(device, dtype):
    inv = torch.sparse.check_sparse_tensor_invariants
    prev = inv.is_enabled()
    try:
        inv.enable()
        on = inv.is_enabled()
        i = torch.tensor([[0, 5], [1, 0]]).to(device)
        v = torch.tensor([1.0, 2.0], dtype=dtype).to(device)
        try:
            torch.sparse_coo_tensor(i, v, (3, 3))
            msg = None
        except RuntimeError as e:
            if "inconsistent with indices" not in str(e):
                raise
            msg = str(e).splitlines()[0]
        inv.disable()
        off = inv.is_enabled()
    finally:
        (inv.enable if prev else inv.disable)()
    return [on, off, msg]


def nested_to_padded_tensor(device, dtype):
    nt = torch.nested.nested_tensor([torch.arange(2, dtype=dtype), torch.arange(3, dtype=dtype)], device=device)
    return torch.nested.to_padded_tensor(nt, 0.5)


def autograd_Node_name(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    y = (g * 2).exp().sum()
    n = y.grad_fn
    inner = n.next_functions[0][0]
    n.metadata["tag"] = "mine"
    seen = []
    inner.register_hook(lambda grad_inputs, grad_outputs: seen.append([t.clone() for t in grad_outputs]))
    inner.register_prehook(lambda grad_outputs: tuple(t * 2 for t in grad_outputs))
    y.backward()
    return [n.name(), [f.name() for f, _ in n.next_functions if f is not None], dict(n.metadata), seen, g.grad]


# --- the table ----------------------------------------------------------------------------

CASES = (
    Case("torch.set_num_threads", set_num_threads, F32, aliases=("torch.get_num_threads",)),
    Case("torch.get_num_interop_threads", get_num_interop_threads, F32),
    Case("torch.use_deterministic_algorithms", use_deterministic_algorithms, F32_64, aliases=("torch.are_deterministic_algorithms_enabled", "torch.is_deterministic_algorithms_warn_only_enabled")),
    Case("torch.set_deterministic_debug_mode", set_deterministic_debug_mode, F32_64, aliases=("torch.get_deterministic_debug_mode",)),
    Case("torch.set_float32_matmul_precision", set_float32_matmul_precision, F32, aliases=("torch.get_float32_matmul_precision",)),
    Case("torch.set_warn_always", set_warn_always, F32, aliases=("torch.is_warn_always_enabled",)),
    Case("torch.manual_seed", manual_seed, ALL, tags=RANDOM),
    Case("torch.seed", seed, F32, tags=RANDOM),
    Case("torch.initial_seed", initial_seed, F32, tags=RANDOM),
    Case("torch.get_rng_state", get_rng_state, ALL, aliases=("torch.set_rng_state",)),
    Case("torch.is_grad_enabled", is_grad_enabled, F32_64),
    Case("torch.is_inference_mode_enabled", is_inference_mode_enabled, F32_64),
    Case("torch.finfo", finfo, ALL),
    Case("torch.iinfo", iinfo, INTS),
    Case("torch.dtype", dtype, ALL),
    Case("torch.layout", layout, ALL),
    Case("torch.device", device, F32),
    Case("torch.Tensor", Tensor, F32),
    Case("torch.is_conj", is_conj, F32_64),
    Case("torch.hann_window", hann_window, ALL),
    Case("torch.dequantize", dequantize, F32),
    Case("torch.save", save, ALL, aliases=("torch.load",)),
    Case("torch._assert", _assert, F32),
    Case("torch.broadcast_shapes", broadcast_shapes, F32),
    Case("torch.autocast", autocast, F32),
    Case("torch.compile", compile, F32),
    Case("torch._foreach_asin", _foreach_asin, F32_64),
    Case("torch._foreach_sqrt", _foreach_sqrt, F32_64),
    Case("torch._foreach_neg_", _foreach_neg_, F32_64),
    Case("torch.as_tensor", as_tensor, ALL),
    Case("torch.asarray", asarray, ALL),
    Case("torch.from_numpy", from_numpy, ALL),
    Case("torch.TypedStorage", TypedStorage, F32),
    Case("torch.UntypedStorage", UntypedStorage, F32),
    Case("torch.sym_float", sym_float, F32, aliases=("torch.sym_int", "torch.sym_max", "torch.sym_min", "torch.sym_not", "torch.SymInt", "torch.SymFloat", "torch.SymBool")),
    Case("torch.autograd.backward", autograd_backward, F32_64),
    Case("torch.autograd.grad", autograd_grad, F32_64),
    Case("torch.autograd.Function", autograd_Function, F32_64, aliases=("torch.autograd.Function.forward", "torch.autograd.Function.backward", "torch.autograd.FunctionCtx.save_for_backward")),
    Case("torch.autograd.Function.jvp", autograd_Function_jvp, F32_64),
    Case("torch.autograd.Function.vmap", autograd_Function_vmap, F32_64),
    Case("torch.autograd.FunctionCtx.mark_dirty", autograd_FunctionCtx_mark_dirty, F32_64),
    Case("torch.autograd.FunctionCtx.mark_non_differentiable", autograd_FunctionCtx_mark_non_differentiable, F32_64),
    Case("torch.autograd.FunctionCtx.set_materialize_grads", autograd_FunctionCtx_set_materialize_grads, F32_64),
    Case("torch.autograd.grad_mode.inference_mode.clone", autograd_grad_mode_inference_mode_clone, F32_64),
    Case("torch.autograd.grad_mode.set_grad_enabled.clone", autograd_grad_mode_set_grad_enabled_clone, F32_64),
    Case("torch.autograd.grad_mode.set_multithreading_enabled", autograd_grad_mode_set_multithreading_enabled, F32_64),
    Case("torch.autograd.detect_anomaly", autograd_detect_anomaly, F32_64),
    Case("torch.autograd.set_detect_anomaly", autograd_set_detect_anomaly, F32_64),
    Case("torch.autograd.forward_ad.dual_level", autograd_forward_ad_dual_level, F32_64, aliases=("torch.autograd.forward_ad.make_dual",)),
    Case("torch.autograd.graph.disable_saved_tensors_hooks", autograd_graph_disable_saved_tensors_hooks, F32_64),
    Case("torch.func.grad_and_value", func_grad_and_value, F32_64),
    Case("torch.func.functional_call", func_functional_call, F32_64),
    Case("torch.func.replace_all_batch_norm_modules_", func_replace_all_batch_norm_modules_, F32_64),
    Case("torch.func.stack_module_state", func_stack_module_state, F32_64),
    Case("torch.futures.Future", futures_Future, F32, aliases=("torch.futures.Future.done", "torch.futures.Future.set_result", "torch.futures.Future.value", "torch.futures.Future.then")),
    Case("torch.futures.Future.wait", futures_Future_wait, F32, aliases=("torch.futures.Future.set_exception",)),
    Case("torch.futures.wait_all", futures_wait_all, F32),
    Case("torch.optim.Optimizer", optim_Optimizer, F32_64),
    Case("torch.distributions.constraints.dependent_property", distributions_constraints_dependent_property, F32_64),
    Case("torch.sparse.check_sparse_tensor_invariants.enable", sparse_check_sparse_tensor_invariants_enable, F32, aliases=("torch.sparse.check_sparse_tensor_invariants.disable", "torch.sparse.check_sparse_tensor_invariants.is_enabled")),
    Case("torch.nested.to_padded_tensor", nested_to_padded_tensor, F32_64),
    Case("torch.autograd.Node.name", autograd_Node_name, F32_64, aliases=("torch.autograd.Node.next_functions", "torch.autograd.Node.metadata", "torch.autograd.Node.register_hook", "torch.autograd.Node.register_prehook")),
    Excluded("torch.set_num_interop_threads", "settable once per process, before any inter-op work: the device run, after the CPU reference in the same process, always raises"),
    Case("torch.compiled_with_cxx11_abi", compiled_with_cxx11_abi, F32),
    Case("torch.Tag", Tag, F32, aliases=("torch.Tag.name",)),
    Case("torch.quasirandom.SobolEngine.draw", quasirandom_SobolEngine_draw, F32_64),
)
