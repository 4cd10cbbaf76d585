"""The ``runtime`` source's cases for top-level ``torch`` APIs that are not ops.

Global switches (threads, deterministic algorithms, matmul precision, warn-always), the
random generators, dtype / device / layout objects, numpy interop, serialisation,
autocast, ``torch.compile`` and the symbolic-shape helpers. Each block runs with
``torch``, ``device``, ``dtype`` and the helpers of ``PRELUDE`` in scope, does device work
under the API and leaves its answer in ``out``; a block that changes process-wide state
restores it in ``finally`` (the CPU reference and the device run share one process).
"""

from __future__ import annotations

from typing import Dict, Tuple

PRELUDE = '''\
def on_run_device(obj):
    return obj.device.type == torch.device(device).type

x = torch.randn(4, 3, dtype=dtype if dtype.is_floating_point else torch.float32).to(device)
'''

ALL = ("float32", "float64", "float16", "bfloat16")
F32 = ("float32",)
F32_64 = ("float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")

_THREADS = '''\
n = torch.get_num_threads()
try:
    torch.set_num_threads(1)
    during = torch.get_num_threads()
    y = x @ x.T
finally:
    torch.set_num_threads(n)
out = [during, torch.get_num_threads() == n, y]
'''

_DETERMINISTIC = '''\
prev = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
idx = torch.tensor([0, 1, 0, 2, 1]).to(device)
src = torch.arange(5, dtype=dtype).to(device)
try:
    torch.use_deterministic_algorithms(True, warn_only=True)
    state = [torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()]
    y = torch.zeros(3, dtype=dtype).to(device).scatter_add_(0, idx, src)
finally:
    torch.use_deterministic_algorithms(prev[0], warn_only=prev[1])
out = [state, y, (torch.are_deterministic_algorithms_enabled(),
                  torch.is_deterministic_algorithms_warn_only_enabled()) == prev]
'''

_DEBUG_MODE = '''\
prev = torch.get_deterministic_debug_mode()
idx = torch.tensor([0, 1, 0, 2, 1]).to(device)
src = torch.arange(5, dtype=dtype).to(device)
try:
    torch.set_deterministic_debug_mode("warn")
    state = [torch.get_deterministic_debug_mode(), torch.are_deterministic_algorithms_enabled()]
    y = torch.zeros(3, dtype=dtype).to(device).index_add_(0, idx, src)
finally:
    torch.set_deterministic_debug_mode(prev)
out = [state, y, torch.get_deterministic_debug_mode() == prev]
'''

_MATMUL_PRECISION = '''\
prev = torch.get_float32_matmul_precision()
a = torch.randn(8, 8, dtype=dtype).to(device)
try:
    torch.set_float32_matmul_precision("high")
    high = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    y = a @ a
finally:
    torch.set_float32_matmul_precision(prev)
out = [high, y, torch.get_float32_matmul_precision() == prev]
'''

_WARN_ALWAYS = '''\
prev = torch.is_warn_always_enabled()
try:
    torch.set_warn_always(True)
    on = torch.is_warn_always_enabled()
    y = x.abs().sqrt()
finally:
    torch.set_warn_always(prev)
out = [on, torch.is_warn_always_enabled() == prev, y]
'''

# random: the device's own draws are compared through what the seed guarantees
# (reproducibility, shape, dtype, place), not their values
_MANUAL_SEED = '''\
torch.manual_seed(7)
a = torch.rand(256, dtype=dtype, device=device)
torch.manual_seed(7)
b = torch.rand(256, dtype=dtype, device=device)
out = [tuple(a.shape), str(a.dtype), on_run_device(a), torch.equal(a, b), torch.initial_seed(), Draws(a)]
'''

_SEED = '''\
s = torch.seed()
a = torch.rand(8, dtype=dtype, device=device)
torch.manual_seed(s)
b = torch.rand(8, dtype=dtype, device=device)
out = [isinstance(s, int), s == torch.initial_seed(), torch.equal(a, b), on_run_device(a)]
'''

_INITIAL_SEED = '''\
torch.manual_seed(1234)
s = torch.initial_seed()
y = torch.randn(256, dtype=dtype, device=device)
out = [s, tuple(y.shape), on_run_device(y), Draws(y)]
'''

# the CPU generator's state (set_rng_state restores only the CPU's): CPU draws, moved
_RNG_STATE = '''\
st = torch.get_rng_state()
a = torch.rand(6, dtype=dtype).to(device)
torch.set_rng_state(st)
b = torch.rand(6, dtype=dtype).to(device)
out = [a, b, torch.equal(a, b), str(st.dtype), tuple(st.shape)]
'''

_GRAD_ENABLED = '''\
g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
with torch.no_grad():
    inside = torch.is_grad_enabled()
    y = g * 2
z = g * 2
out = [inside, torch.is_grad_enabled(), y.requires_grad, z.requires_grad, z]
'''

_INFERENCE_ENABLED = '''\
with torch.inference_mode():
    inside = torch.is_inference_mode_enabled()
    y = x * 2
out = [inside, torch.is_inference_mode_enabled(), y.is_inference(), y]
'''

_FINFO = '''\
fi = torch.finfo(dtype)
big = torch.full((3,), fi.max, dtype=dtype).to(device)
tiny = torch.full((3,), fi.tiny, dtype=dtype).to(device)
out = [fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.resolution, str(fi.dtype), big * 2, tiny * 0.25,
       bool((big * 2).isinf().all())]
'''

_IINFO = '''\
ii = torch.iinfo(dtype)
hi = torch.full((3,), ii.max, dtype=dtype).to(device)
lo = torch.full((3,), ii.min, dtype=dtype).to(device)
out = [ii.bits, ii.min, ii.max, str(ii.dtype), hi, lo, hi - 1, lo + 1, (hi // 2).max()]
'''

_DTYPE = '''\
y = x * 2
d = y.dtype
out = [isinstance(d, torch.dtype), str(d), d.is_floating_point, d.is_complex, d.is_signed, d.itemsize,
       str(d.to_complex()), torch.zeros(2, dtype=d, device=device)]
'''

_LAYOUT = '''\
y = torch.zeros(2, 3, dtype=dtype, device=device)
e = torch.empty(2, layout=torch.strided, dtype=dtype, device=device)
out = [isinstance(y.layout, torch.layout), str(y.layout), y.layout == torch.strided, e.layout == torch.strided,
       on_run_device(e)]
'''

_DEVICE = '''\
d = torch.device(device)
y = torch.ones(2, dtype=dtype, device=d)
with d:
    z = torch.zeros(2, dtype=dtype)
out = [isinstance(d, torch.device), on_run_device(y), on_run_device(z),
       y.device.type == d.type and (y.device.index or 0) == (d.index or 0), y + z]
'''

_TENSOR_CLASS = '''\
y = torch.Tensor([1.5, -2.0, 3.0]).to(device)
out = [isinstance(y, torch.Tensor), type(y) is torch.Tensor, torch.Tensor.add(y, 1), y.dtype == torch.get_default_dtype()]
'''

_IS_CONJ = '''\
c = torch.complex(x, 2 * x)
out = [torch.is_conj(c), torch.is_conj(c.conj()), torch.is_conj(c.conj().resolve_conj()), c.conj().resolve_conj()]
'''

_HANN = '''\
out = [torch.hann_window(8, dtype=dtype, device=device),
       torch.hann_window(7, periodic=False, dtype=dtype, device=device)]
'''

_FOREACH = {
    "_foreach_asin": "ts = [torch.rand(5, dtype=dtype).to(device) * 2 - 1, torch.rand(3, dtype=dtype).to(device)]\n"
                     "out = torch._foreach_asin(ts)\n",
    "_foreach_sqrt": "ts = [torch.rand(5, dtype=dtype).to(device) * 4, torch.rand(3, dtype=dtype).to(device)]\n"
                     "out = torch._foreach_sqrt(ts)\n",
    "_foreach_neg_": "ts = [x.clone(), torch.rand(3, dtype=dtype).to(device)]\n"
                     "r = torch._foreach_neg_(ts)\nout = [ts, r is None]\n",
}

_DEQUANTIZE = '''\
q = torch.quantize_per_tensor(torch.tensor([-1.0, 0.0, 0.5, 1.25]), 0.25, 0, torch.qint8).to(device)
out = torch.dequantize(q)
'''

_NUMPY = {
    "as_tensor": "import numpy as np\na = np.arange(6, dtype=np.float32).reshape(2, 3)\n"
                 "t = torch.as_tensor(a, dtype=dtype, device=device)\nout = [t, on_run_device(t)]\n",
    "asarray": "import numpy as np\na = np.arange(6, dtype=np.float32).reshape(2, 3)\n"
               "t = torch.asarray(a, dtype=dtype, device=device)\nu = torch.asarray([1.5, 2.5], device=device)\n"
               "out = [t, u, on_run_device(t), on_run_device(u)]\n",
    # a CPU tensor over the array's memory by definition: shown sharing it, then moved
    "from_numpy": "import numpy as np\na = np.arange(6, dtype=np.float32).reshape(2, 3)\n"
                  "t = torch.from_numpy(a)\na[0, 0] = 9\nd = t.to(device=device, dtype=dtype) * 2\n"
                  "out = [d, t.device.type, on_run_device(d)]\n",
}

_SAVE_LOAD = '''\
import os, tempfile
y = x * 3
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "t.pt")
    torch.save({"y": y, "n": 3, "view": y[1:]}, path)
    back = torch.load(path)
    on_cpu = torch.load(path, map_location="cpu")
out = [back["y"], back["view"], on_run_device(back["y"]), back["n"], on_cpu["y"].device.type,
       back["view"].storage_offset()]
'''

_ASSERT = '''\
torch._assert((x.abs() >= 0).all(), "negative abs")
try:
    torch._assert((x > 1e9).any(), "too big")
    msg = None
except AssertionError as e:
    msg = str(e)
out = [msg, x.sum()]
'''

_BROADCAST_SHAPES = '''\
a = torch.randn(3, 1, dtype=dtype).to(device)
b = torch.randn(1, 4, dtype=dtype).to(device)
shape = torch.broadcast_shapes(a.shape, b.shape, (1,))
out = [tuple(shape), a.expand(shape) + b.expand(shape)]
'''

_AUTOCAST = '''\
a = torch.randn(4, 4, dtype=dtype).to(device)
b = torch.randn(4, 4, dtype=dtype).to(device)
kind = torch.device(device).type
with torch.autocast(device_type=kind, dtype=torch.bfloat16):
    y = a @ b
    inside = torch.is_autocast_enabled(kind)
out = [str(y.dtype), y, inside, torch.is_autocast_enabled(kind)]
'''

# torch.compile with the "eager" backend (dynamo only: no C++ toolchain), dynamic shapes;
# dynamo's cache is per code object and this block's globals are fresh on every run
_COMPILE = '''\
torch._dynamo.reset()
def f(t):
    return (t.sin() + t.new_ones(torch.sym_max(t.shape[0], 2), 1)).sum(0)
g = torch.compile(f, backend="eager", dynamic=True)
out = [g(x), g(torch.randn(6, 3, dtype=dtype).to(device))]
'''

# the symbolic-shape helpers where shapes are symbolic: a function traced with symbolic
# sizes from a device tensor, then run on the device for two sizes
_SYMBOLIC = '''\
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
gm = make_fx(f, tracing_mode="symbolic")(x)
out = [sorted(kinds.items()), gm(x), gm(torch.randn(8, 3, dtype=dtype).to(device))]
'''

_NUM_INTEROP = '''\
k = torch.get_num_interop_threads()
fut = torch.jit.fork(torch.mm, x, x.T)
out = [isinstance(k, int) and k >= 1, torch.jit.wait(fut)]
'''

_STORAGES = {
    "TypedStorage": "st = torch.TypedStorage(4, dtype=dtype, device=device)\nst.fill_(1.5)\n"
                    "out = [st.size(), str(st.dtype), on_run_device(st), st.tolist()]\n",
    "UntypedStorage": "st = torch.UntypedStorage(8, device=device)\nst.fill_(3)\n"
                      "out = [st.nbytes(), on_run_device(st), st.tolist()]\n",
}

# api -> (code block, dtypes, random?)
CASES: Dict[str, Tuple[str, Tuple[str, ...], bool]] = {
    "torch.set_num_threads": (_THREADS, F32, False),
    "torch.get_num_threads": (_THREADS, F32, False),
    "torch.get_num_interop_threads": (_NUM_INTEROP, F32, False),
    "torch.use_deterministic_algorithms": (_DETERMINISTIC, F32_64, False),
    "torch.are_deterministic_algorithms_enabled": (_DETERMINISTIC, F32_64, False),
    "torch.is_deterministic_algorithms_warn_only_enabled": (_DETERMINISTIC, F32_64, False),
    "torch.set_deterministic_debug_mode": (_DEBUG_MODE, F32_64, False),
    "torch.get_deterministic_debug_mode": (_DEBUG_MODE, F32_64, False),
    "torch.set_float32_matmul_precision": (_MATMUL_PRECISION, F32, False),
    "torch.get_float32_matmul_precision": (_MATMUL_PRECISION, F32, False),
    "torch.set_warn_always": (_WARN_ALWAYS, F32, False),
    "torch.is_warn_always_enabled": (_WARN_ALWAYS, F32, False),
    "torch.manual_seed": (_MANUAL_SEED, ALL, True),
    "torch.seed": (_SEED, F32, True),
    "torch.initial_seed": (_INITIAL_SEED, F32, True),
    "torch.get_rng_state": (_RNG_STATE, ALL, False),
    "torch.set_rng_state": (_RNG_STATE, ALL, False),
    "torch.is_grad_enabled": (_GRAD_ENABLED, F32_64, False),
    "torch.is_inference_mode_enabled": (_INFERENCE_ENABLED, F32_64, False),
    "torch.finfo": (_FINFO, ALL, False),
    "torch.iinfo": (_IINFO, INTS, False),
    "torch.dtype": (_DTYPE, ALL, False),
    "torch.layout": (_LAYOUT, ALL, False),
    "torch.device": (_DEVICE, F32, False),
    "torch.Tensor": (_TENSOR_CLASS, F32, False),
    "torch.is_conj": (_IS_CONJ, F32_64, False),
    "torch.hann_window": (_HANN, ALL, False),
    "torch.dequantize": (_DEQUANTIZE, F32, False),
    "torch.save": (_SAVE_LOAD, ALL, False),
    "torch.load": (_SAVE_LOAD, ALL, False),
    "torch._assert": (_ASSERT, F32, False),
    "torch.broadcast_shapes": (_BROADCAST_SHAPES, F32, False),
    "torch.autocast": (_AUTOCAST, F32, False),
    "torch.compile": (_COMPILE, F32, False),
}
CASES.update({f"torch.{k}": (v, F32_64, False) for k, v in _FOREACH.items()})
CASES.update({f"torch.{k}": (v, ALL, False) for k, v in _NUMPY.items()})
CASES.update({f"torch.{k}": (v, F32, False) for k, v in _STORAGES.items()})
CASES.update({f"torch.{k}": (_SYMBOLIC, F32, False) for k in (
    "sym_float", "sym_int", "sym_max", "sym_min", "sym_not", "SymInt", "SymFloat", "SymBool")})

# APIs of these namespaces with no case, and why (shown by why_not)
REASONS: Dict[str, str] = {
    "torch.set_num_interop_threads": "settable once per process, before any inter-op work: the device run, "
                                     "after the CPU reference in the same process, always raises",
    "torch.compiled_with_cxx11_abi": "a property of the torch build: no device is involved",
    "torch.Tag": "an enum describing operators (torch.ops.*.tags): no device is involved",
    "torch.Tag.name": "an enum member's name (operator tags): no device is involved",
    "torch.quasirandom.SobolEngine.draw": "SobolEngine draws on the CPU by definition (no device argument)",
}
