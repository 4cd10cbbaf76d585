"""The ``runtime`` source's cases for ``torch.autograd``, ``torch.func``, ``torch.futures``
and a few classes used as frameworks (``torch.optim.Optimizer``, ``dependent_property``,
``torch.sparse.check_sparse_tensor_invariants``, nested tensors).

Same contract as ``runtime.torch_ns``: each block builds device tensors (``x``, the leaf
``g``), runs the API over them and leaves the answer in ``out``.
"""

from __future__ import annotations

from typing import Dict, Tuple

from .torch_ns import F32, F32_64

LEAF = "g = torch.randn(3, dtype=dtype).to(device).requires_grad_()\n"

_BACKWARD = LEAF + '''\
y = (g * g).sum()
z = g.sin().sum()
torch.autograd.backward([y, z], [torch.tensor(1.0, dtype=dtype).to(device), torch.tensor(2.0, dtype=dtype).to(device)])
out = g.grad
'''

_GRAD = LEAF + '''\
y = (g ** 3).sum()
(d,) = torch.autograd.grad(y, g, create_graph=True)
(dd,) = torch.autograd.grad(d.sum(), g)
out = [d, dd]
'''

_FUNCTION = LEAF + '''\
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
out = [y, g.grad, type(y.grad_fn).__name__]
'''

_FUNCTION_JVP = '''\
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
    d = fwAD.make_dual(x, torch.full_like(x, 0.5))
    p, t = fwAD.unpack_dual(ExpJ.apply(d))
out = [p, t]
'''

_FUNCTION_VMAP = '''\
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

out = [torch.func.vmap(ExpV.apply)(x), torch.func.vmap(ExpV.apply, in_dims=1)(x)]
'''

_MARK_DIRTY = LEAF + '''\
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
out = [y, g.grad, y is h]
'''

_NON_DIFFERENTIABLE = LEAF + '''\
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
out = [v, i, i.requires_grad, g.grad]
'''

_MATERIALIZE = LEAF + '''\
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
out = [seen, g.grad]
'''

_NODE = LEAF + '''\
y = (g * 2).exp().sum()
n = y.grad_fn
inner = n.next_functions[0][0]
n.metadata["tag"] = "mine"
seen, pre = [], []
inner.register_hook(lambda grad_inputs, grad_outputs: seen.append([t.clone() for t in grad_outputs]))
inner.register_prehook(lambda grad_outputs: tuple(t * 2 for t in grad_outputs))
y.backward()
out = [n.name(), [f.name() for f, _ in n.next_functions if f is not None], dict(n.metadata), seen, g.grad]
'''

_INFERENCE_CLONE = '''\
c = torch.inference_mode().clone()
with c:
    y = x * 2
out = [y.is_inference(), torch.is_inference_mode_enabled(), y]
'''

_GRAD_CLONE = LEAF + '''\
prev = torch.is_grad_enabled()
try:
    c = torch.set_grad_enabled(False).clone()
    with c:
        y = g * 2
        inside = torch.is_grad_enabled()
finally:
    torch.set_grad_enabled(prev)
out = [inside, y.requires_grad, y, torch.is_grad_enabled() == prev]
'''

_MULTITHREADING = LEAF + '''\
with torch.autograd.grad_mode.set_multithreading_enabled(False):
    (g * g.sin()).sum().backward()
out = g.grad
'''

# anomaly mode names the backward function that produced NaN (computed on the device)
_ANOMALY = LEAF + '''\
import warnings

class NanGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan")

def run(ctx):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with ctx:
                (NanGrad.apply(g) * 2).sum().backward()
        return None
    except RuntimeError as e:
        return str(e).splitlines()[0]

out = [run(CONTEXT), torch.is_anomaly_enabled(), (g * 3).sum()]
'''

_FORWARD_AD = '''\
import torch.autograd.forward_ad as fwAD
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.ones_like(x))
    p, t = fwAD.unpack_dual((d.sin() * d).sum(0))
out = [p, t]
'''

_NO_SAVED_HOOKS = LEAF + '''\
with torch.autograd.graph.disable_saved_tensors_hooks("saved tensor hooks are off here"):
    (g * g).sum().backward()
    try:
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
        msg = None
    except RuntimeError as e:
        msg = str(e).splitlines()[0]
out = [msg, g.grad]
'''

_GRAD_AND_VALUE = '''\
gr, val = torch.func.grad_and_value(lambda t: (t.sin() * t).sum())(x)
out = [gr, val]
'''

_FUNCTIONAL_CALL = '''\
m = torch.nn.Linear(3, 2).to(device=device, dtype=dtype)
params = {k: torch.full_like(v, 0.5) for k, v in m.named_parameters()}
out = [torch.func.functional_call(m, params, (x,)), m(x).shape == (4, 2)]
'''

_REPLACE_BN = '''\
m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)).to(device=device, dtype=dtype)
torch.func.replace_all_batch_norm_modules_(m)
y = m(x)
out = [m[1].running_mean is None, m[1].track_running_stats, y]
'''

_STACK_STATE = '''\
ms = [torch.nn.Linear(3, 2).to(device=device, dtype=dtype) for _ in range(3)]
params, buffers = torch.func.stack_module_state(ms)
out = [params["weight"], params["bias"], sorted(buffers), params["weight"].device.type == torch.device(device).type]
'''

_FUTURE = '''\
f = torch.futures.Future()
before = f.done()
chained = f.then(lambda fut: fut.value() * 2)
f.set_result(x + 1)
out = [before, f.done(), f.value(), chained.wait(), chained.value().device.type == torch.device(device).type]
'''

_FUTURE_WAIT = '''\
f = torch.futures.Future()
f.set_result((x @ x.T, x.sum()))
e = torch.futures.Future()
e.set_exception(ValueError("boom"))
try:
    e.wait()
    msg = None
except ValueError as err:
    msg = str(err)
out = [f.wait(), msg]
'''

_WAIT_ALL = '''\
fs = [torch.futures.Future() for _ in range(3)]
fs[0].set_result(x)
fs[1].set_result(x.sum())
fs[2].set_result([x * 2])
out = torch.futures.wait_all(fs)
'''

_OPTIMIZER = '''\
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
out = [w.detach(), sd["param_groups"][0]["lr"], sd["state"][0]["n"]]
'''

_DEPENDENT_PROPERTY = '''\
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
out = [b.support.check(v), Box.support.is_discrete, Box.support.event_dim]
'''

# only the invariant's own message is the answer; anything else (a device that cannot
# hold sparse tensors) propagates and is judged as such
_SPARSE_INVARIANTS = '''\
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
out = [on, off, msg]
'''

_NESTED_PADDED = '''\
nt = torch.nested.nested_tensor([torch.arange(2, dtype=dtype), torch.arange(3, dtype=dtype)], device=device)
out = torch.nested.to_padded_tensor(nt, 0.5)
'''

_A = "torch.autograd."
CASES: Dict[str, Tuple[str, Tuple[str, ...], bool]] = {
    _A + "backward": (_BACKWARD, F32_64, False),
    _A + "grad": (_GRAD, F32_64, False),
    _A + "Function": (_FUNCTION, F32_64, False),
    _A + "Function.forward": (_FUNCTION, F32_64, False),
    _A + "Function.backward": (_FUNCTION, F32_64, False),
    _A + "FunctionCtx.save_for_backward": (_FUNCTION, F32_64, False),
    _A + "Function.jvp": (_FUNCTION_JVP, F32_64, False),
    _A + "Function.vmap": (_FUNCTION_VMAP, F32_64, False),
    _A + "FunctionCtx.mark_dirty": (_MARK_DIRTY, F32_64, False),
    _A + "FunctionCtx.mark_non_differentiable": (_NON_DIFFERENTIABLE, F32_64, False),
    _A + "FunctionCtx.set_materialize_grads": (_MATERIALIZE, F32_64, False),
    _A + "grad_mode.inference_mode.clone": (_INFERENCE_CLONE, F32_64, False),
    _A + "grad_mode.set_grad_enabled.clone": (_GRAD_CLONE, F32_64, False),
    _A + "grad_mode.set_multithreading_enabled": (_MULTITHREADING, F32_64, False),
    _A + "detect_anomaly": (_ANOMALY.replace("CONTEXT", "torch.autograd.detect_anomaly()"), F32_64, False),
    _A + "set_detect_anomaly": (_ANOMALY.replace("CONTEXT", "torch.autograd.set_detect_anomaly(True)"),
                                F32_64, False),
    _A + "forward_ad.dual_level": (_FORWARD_AD, F32_64, False),
    _A + "forward_ad.make_dual": (_FORWARD_AD, F32_64, False),
    _A + "graph.disable_saved_tensors_hooks": (_NO_SAVED_HOOKS, F32_64, False),
    "torch.func.grad_and_value": (_GRAD_AND_VALUE, F32_64, False),
    "torch.func.functional_call": (_FUNCTIONAL_CALL, F32_64, False),
    "torch.func.replace_all_batch_norm_modules_": (_REPLACE_BN, F32_64, False),
    "torch.func.stack_module_state": (_STACK_STATE, F32_64, False),
    "torch.futures.Future": (_FUTURE, F32, False),
    "torch.futures.Future.done": (_FUTURE, F32, False),
    "torch.futures.Future.set_result": (_FUTURE, F32, False),
    "torch.futures.Future.value": (_FUTURE, F32, False),
    "torch.futures.Future.then": (_FUTURE, F32, False),
    "torch.futures.Future.wait": (_FUTURE_WAIT, F32, False),
    "torch.futures.Future.set_exception": (_FUTURE_WAIT, F32, False),
    "torch.futures.wait_all": (_WAIT_ALL, F32, False),
    "torch.optim.Optimizer": (_OPTIMIZER, F32_64, False),
    "torch.distributions.constraints.dependent_property": (_DEPENDENT_PROPERTY, F32_64, False),
    "torch.sparse.check_sparse_tensor_invariants.enable": (_SPARSE_INVARIANTS, F32, False),
    "torch.sparse.check_sparse_tensor_invariants.disable": (_SPARSE_INVARIANTS, F32, False),
    "torch.sparse.check_sparse_tensor_invariants.is_enabled": (_SPARSE_INVARIANTS, F32, False),
    "torch.nested.to_padded_tensor": (_NESTED_PADDED, F32_64, False),
}
CASES.update({_A + f"Node.{m}": (_NODE, F32_64, False)
              for m in ("name", "next_functions", "metadata", "register_hook", "register_prehook")})
