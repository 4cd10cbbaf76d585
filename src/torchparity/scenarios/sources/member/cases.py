"""The cases of the ``member`` source: one real function per member, and the table.

Tensor members that are not ops (``element_size``, ``is_contiguous``, ``storage_offset``,
``untyped_storage``, ``data_ptr``, autograd members, sparse and quantized accessors),
``torch.UntypedStorage.*`` and ``torch.TypedStorage.*`` (one body per member, the storage
class a parameter), the legacy typed storage classes (``torch.FloatStorage``, ...),
``torch.nn.Module`` members, the container classes' members, the global module hooks and
``torch.nn.init``. Every body ``f(device, dtype)`` makes its inputs on the CPU, moves them
and returns its answer, compared with the same body run on the CPU; the view ``x``
(:func:`member_input`) is taken on the device so its strides and storage offset are the
device's own. ``net`` (:func:`model`) is a small model (PReLU, BatchNorm1d, Tanh,
LayerNorm: parameters, buffers and no matrix product, so a device's matmul limits are not
blamed on a Module member) built on the CPU in the run's dtype and moved.

Device-dependent answers are normalised so that the same behaviour gives the same
answer (:class:`On`): ``device`` / ``get_device`` / ``is_cuda`` / ``is_hpu`` / ``data_ptr``
are compared with what the run's own device should give; ``type()`` strings lose the
device module (``torch.npu.`` or torch_npu's ``torch_npu.npu.`` becomes ``torch.``).
Initialisers that draw random numbers are compared by shape, dtype and summary statistics
of 4,096 draws within wide bounds (the device has its own generator). Members that are
device-specific by definition are left out, with the reason (``EXCLUDED``,
``EXCLUDED_NN``: by member name, whatever the class). Helpers and bodies live in this one
file: the footprint recorder tells scenario code from the API's by file.
"""

from __future__ import annotations

import re

import torch
import torch.nn.modules.module as M

from ...registry import EXACT, Draws, Raises
from ..base import Case

ALL = ("float32", "float64", "float16", "bfloat16")
F32 = ("float32",)
FB = ("float32", "float64")
F3 = ("float32", "float64", "float16")
RANDOM = ("random",)
# the float dtypes a case is asked in although its body never reads ``dtype`` (its answer
# cannot depend on it): the rows these members always had (their code blocks shared a
# prelude that read it); narrowing them to float32 would be a change of the matrix, not
# of the code
EVERY = ALL
U = "torch.UntypedStorage."
S = "torch.TypedStorage."


class On:
    """The device under test and what it should answer."""

    def __init__(self, device):
        self.device = device

    def on_run_device(self, obj):
        return obj.device.type == torch.device(self.device).type

    def expected_get_device(self):
        d = torch.device(self.device)
        return -1 if d.type == "cpu" else (d.index or 0)

    def plain_type(self, text):
        """torch.npu.FloatTensor / torch_npu.npu.FloatStorage -> torch.FloatTensor / torch.FloatStorage"""
        return re.sub(r"^\w+\." + torch.device(self.device).type + r"\.", "torch.", text)


def member_input(device, dtype):
    """A 3 x 2 view (offset 4) of a 4 x 3 tensor drawn on the CPU and moved: the view is
    taken on the device."""
    return torch.randn(4, 3, dtype=dtype).to(device)[1:, 1:]


def storage_view(st):
    """size, dtype and values of a storage (wherever it lives)"""
    typed = hasattr(st, "dtype")
    return {"len": st.size() if typed else st.nbytes(),
            "dtype": str(st.dtype) if typed else "untyped",
            "values": st.cpu().tolist()}


def raised_off_cpu(device, call, exc):
    """A CPU-only member on a tensor elsewhere raises by definition: whether ``call()``
    raised ``exc`` exactly when the device is not the CPU."""
    try:
        call()
        raised = False
    except exc:
        raised = True
    return raised == (torch.device(device).type != "cpu")


def storage_under_test(device, dtype, api):
    """``st``: a device storage of the class ``api`` names (``torch.UntypedStorage.*`` or
    ``torch.TypedStorage.*``) holding 0..5; ``ref``: a CPU one of that class holding ones."""
    if api.startswith(U):
        return (torch.arange(6, dtype=dtype).to(device).untyped_storage(),
                torch.ones(6, dtype=dtype).untyped_storage())
    return torch.arange(6, dtype=dtype).to(device).storage(), torch.ones(6, dtype=dtype).storage()


def build(device, dtype):
    return torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.BatchNorm1d(3), torch.nn.Tanh(),
                               torch.nn.LayerNorm(3)).to(dtype).to(device)


# float64 values a conversion into float32 / float16 / bfloat16 must round, ties to even
# among them: 1 + 2^-8 and 1 + 3 x 2^-8 (bfloat16 ties: down to even, up to even),
# 1 + 2^-11 and 1 + 3 x 2^-11 (float16 ties), 1 + 2^-24 + 2^-30 (float32 rounds up),
# values just above and below halfway, negatives; the first three round up in float16
# (1 + 3 x 2^-11) and in bfloat16 (0.1, 1 + 3 x 2^-8), so even a 3-element parameter
# tells a device that truncates (or rounds ties away from zero) in the last place
ROUNDING = (1 + 3 * 2 ** -11, 0.1, 1 + 3 * 2 ** -8, 3.14159265358979, 1 + 2 ** -11, 1 + 2 ** -8,
            1 + 2 ** -9, 1 + 2 ** -7 + 2 ** -9, 1 + 2 ** -12, 1 + 2 ** -24 + 2 ** -30,
            -(1 + 3 * 2 ** -8), -(1 + 3 * 2 ** -11), 1000.0 + 2 ** -4 + 2 ** -6)


def rounding_input(shape, dtype=torch.float64):
    """A CPU tensor of ``shape`` filled with :data:`ROUNDING` (cycled), in ``dtype``."""
    n = 1
    for s in shape:
        n *= s
    base = torch.tensor(ROUNDING, dtype=torch.float64)
    return base.repeat(n // len(ROUNDING) + 1)[:n].view(*shape).to(dtype)


def model(device, dtype):
    """``net`` on the device and its input ``x`` (5 x 3, drawn on the CPU and moved)."""
    return build(device, dtype), torch.randn(5, 3, dtype=dtype).to(device)


# --- the bodies -----------------------------------------------------------------------------


def Tensor_is_floating_point(device, dtype):
    x = member_input(device, dtype)
    return x.is_floating_point()


def Tensor_is_complex(device, dtype):
    x = member_input(device, dtype)
    return [x.is_complex(), torch.complex(x, x).is_complex()]


def Tensor_is_conj(device, dtype):
    x = member_input(device, dtype)
    c = torch.complex(x, x)
    return [x.is_conj(), c.conj().is_conj()]


def Tensor_is_signed(device, dtype):
    x = member_input(device, dtype)
    return x.is_signed()


def Tensor_is_contiguous(device, dtype):
    x = member_input(device, dtype)
    y = torch.randn(3, 4, dtype=dtype).t().to(device)
    return [y.is_contiguous(), torch.zeros_like(y).is_contiguous(), x.is_contiguous(), x.contiguous().is_contiguous(), x.t().is_contiguous(memory_format=torch.contiguous_format)]


def Tensor_is_inference(device, dtype):
    x = member_input(device, dtype)
    with torch.inference_mode():
        y = x * 2
    return [x.is_inference(), y.is_inference()]


def Tensor_is_quantized(device, dtype):
    x = member_input(device, dtype)
    return [x.is_quantized, torch.quantize_per_tensor(torch.randn(2), 0.1, 0, torch.qint8).to(device).is_quantized]


def Tensor_is_meta(device, dtype):
    x = member_input(device, dtype)
    return x.is_meta


def Tensor_is_sparse(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return [e.is_sparse, s.is_sparse]


def Tensor_is_pinned(device, dtype):
    x = member_input(device, dtype)
    return x.is_pinned()


def Tensor_is_set_to(device, dtype):
    x = member_input(device, dtype)
    y = torch.empty(0, dtype=dtype).to(device)
    y.set_(x)
    return [y.is_set_to(x), x.is_set_to(y.clone())]


def Tensor_is_leaf(device, dtype):
    x = member_input(device, dtype)
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    return [g.is_leaf, (g * 2).is_leaf, x.is_leaf]


def Tensor_dim(device, dtype):
    x = member_input(device, dtype)
    return x.dim()


def Tensor_ndim(device, dtype):
    x = member_input(device, dtype)
    return x.ndim


def Tensor_ndimension(device, dtype):
    x = member_input(device, dtype)
    return x.ndimension()


def Tensor_nelement(device, dtype):
    x = member_input(device, dtype)
    return x.nelement()


def Tensor_numel(device, dtype):
    x = member_input(device, dtype)
    return x.numel()


def Tensor_element_size(device, dtype):
    x = member_input(device, dtype)
    return x.element_size()


def Tensor_itemsize(device, dtype):
    x = member_input(device, dtype)
    return x.itemsize


def Tensor_nbytes(device, dtype):
    x = member_input(device, dtype)
    return x.nbytes


def Tensor_shape(device, dtype):
    x = member_input(device, dtype)
    return tuple(x.shape)


def Tensor_size(device, dtype):
    x = member_input(device, dtype)
    return [tuple(x.size()), x.size(0), x.size(-1)]


def Tensor_stride(device, dtype):
    x = member_input(device, dtype)
    y = torch.randn(3, 4, dtype=dtype).t().to(device)
    return [x.stride(), x.stride(0), y.stride(), torch.empty_like(y).stride()]


def Tensor_storage_offset(device, dtype):
    x = member_input(device, dtype)
    return x.storage_offset()


def Tensor_dim_order(device, dtype):
    x = member_input(device, dtype)
    return [x.dim_order(), x.t().dim_order()]


def Tensor_requires_grad(device, dtype):
    x = member_input(device, dtype)
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    return [g.requires_grad, x.requires_grad, (g * 2).requires_grad]


def Tensor_requires_grad_(device, dtype):
    x = member_input(device, dtype)
    y = x.clone().requires_grad_()
    return [y.requires_grad, y.requires_grad_(False).requires_grad]


def Tensor_tolist(device, dtype):
    x = member_input(device, dtype)
    return x.tolist()


def Tensor_data_ptr(device, dtype):
    x = member_input(device, dtype)
    base = x.untyped_storage().data_ptr()
    return [x.data_ptr() != 0, x.data_ptr() - base == x.storage_offset() * x.element_size()]


def Tensor_device(device, dtype):
    on = On(device)
    x = member_input(device, dtype)
    return [on.on_run_device(x), x.device.index == torch.device(device).index or x.device.index == 0]


def Tensor_get_device(device, dtype):
    on = On(device)
    x = member_input(device, dtype)
    return x.get_device() == on.expected_get_device()


def Tensor_is_cuda(device, dtype):
    x = member_input(device, dtype)
    return x.is_cuda == (torch.device(device).type == "cuda")


def Tensor_storage_type(device, dtype):
    x = member_input(device, dtype)
    kind = x.storage_type()
    return None if kind is None else kind.__name__


def Tensor_type(device, dtype):
    on = On(device)
    x = member_input(device, dtype)
    # ... and conversions into every lower float dtype from values that need rounding
    r = rounding_input((3, 4)).to(device)
    return [on.plain_type(x.type()), x.type(torch.float64).dtype,
            [r.type(t) for t in (torch.float32, torch.float16, torch.bfloat16) if t != dtype]
            + [r.to(dtype).type(t) for t in (torch.float16, torch.bfloat16) if t != dtype]]


def Tensor_type_as(device, dtype):
    x = member_input(device, dtype)
    return x.type_as(torch.zeros(1, dtype=torch.float64).to(device))


def Tensor_new_tensor(device, dtype):
    x = member_input(device, dtype)
    return x.new_tensor([1.5, -2.0, 3.25])


def Tensor_cpu(device, dtype):
    x = member_input(device, dtype)
    y = x.cpu()
    return [y.device.type, y.tolist()]


def Tensor_detach(device, dtype):
    x = member_input(device, dtype)
    return x.detach()


def Tensor_detach_(device, dtype):
    x = member_input(device, dtype)
    y = x.clone()
    return y.detach_()


def Tensor_copy_(device, dtype):
    x = member_input(device, dtype)
    y = torch.zeros_like(x)
    y.copy_(torch.arange(6, dtype=dtype).view(3, 2))
    # copies that convert: from the host and on the device, from float64 values that need
    # rounding into the run's dtype (one right answer: round to nearest even)
    z = torch.zeros(3, 4, dtype=dtype).to(device)
    z.copy_(rounding_input((3, 4)))
    w = torch.zeros(3, 4, dtype=dtype).to(device)
    w.copy_(rounding_input((3, 4)).to(device))
    return [y, z, w]


def Tensor_fill_diagonal_(device, dtype):
    y = torch.zeros(3, 4, dtype=dtype).to(device)
    return y.fill_diagonal_(1.5)


def Tensor_hardshrink(device, dtype):
    x = member_input(device, dtype)
    return x.hardshrink(0.5)


def Tensor_slogdet(device, dtype):
    return torch.randn(3, 3, dtype=dtype).to(device).slogdet()


def Tensor_real(device, dtype):
    x = member_input(device, dtype)
    c = torch.complex(x, 2 * x)
    return c.real


def Tensor_imag(device, dtype):
    x = member_input(device, dtype)
    c = torch.complex(x, 2 * x)
    return c.imag


def Tensor_set_(device, dtype):
    x = member_input(device, dtype)
    y = torch.empty(0, dtype=dtype).to(device)
    y.set_(x.untyped_storage(), x.storage_offset(), x.size(), x.stride())
    return y


def Tensor_untyped_storage(device, dtype):
    on = On(device)
    x = member_input(device, dtype)
    st = x.untyped_storage()
    return [storage_view(st), on.on_run_device(st)]


def Tensor_storage(device, dtype):
    on = On(device)
    x = member_input(device, dtype)
    st = x.storage()
    return [storage_view(st), on.on_run_device(st)]


def Tensor_as_subclass(device, dtype):
    x = member_input(device, dtype)
    class Sub(torch.Tensor):
        pass
    y = x.as_subclass(Sub)
    return [type(y).__name__, y.as_subclass(torch.Tensor)]


def Tensor_share_memory_(device, dtype):
    x = member_input(device, dtype)
    return x.clone().share_memory_()


def Tensor_backward(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    (g * g).sum().backward()
    return g.grad


def Tensor_grad(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    (g * g * g).sum().backward()
    return [g.grad, (g * 2).grad is None]


def Tensor_retain_grad(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    h = g * 2
    h.retain_grad()
    (h * h).sum().backward()
    return h.grad


def Tensor_retains_grad(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    h = g * 2
    before = h.retains_grad
    h.retain_grad()
    return [before, h.retains_grad]


def Tensor_register_hook(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    g.register_hook(lambda grad: grad * 3)
    (g * g).sum().backward()
    return g.grad


def Tensor_register_post_accumulate_grad_hook(device, dtype):
    g = torch.randn(3, dtype=dtype).to(device).requires_grad_()
    seen = []
    g.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    (g * g).sum().backward()
    return seen


def Tensor_bernoulli_(device, dtype):
    on = On(device)
    y = torch.empty(64, dtype=dtype).to(device).bernoulli_(0.5)
    return [tuple(y.shape), str(y.dtype), on.on_run_device(y), bool(((y == 0) | (y == 1)).all())]


def Tensor_random_(device, dtype):
    on = On(device)
    y = torch.empty(64, dtype=dtype).to(device).random_(0, 10)
    return [tuple(y.shape), on.on_run_device(y), bool(((y >= 0) & (y < 10) & (y == y.floor())).all())]


def Tensor_to_dense(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return s.to_dense()


def Tensor_to_sparse_csr(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()  # noqa: F841  (unused: run as it always was)
    return e.to_sparse_csr().to_dense()


def Tensor_to_sparse_csc(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()  # noqa: F841  (unused: run as it always was)
    return e.to_sparse_csc().to_dense()


def Tensor_to_sparse_bsr(device, dtype):
    e = torch.eye(4, dtype=dtype).to(device)
    return e.to_sparse_bsr((2, 2)).to_dense()


def Tensor_to_sparse_bsc(device, dtype):
    e = torch.eye(4, dtype=dtype).to(device)
    return e.to_sparse_bsc((2, 2)).to_dense()


def Tensor_indices(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return s.indices()


def Tensor_values(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return s.values()


def Tensor_dense_dim(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return [s.dense_dim(), s.sparse_dim()]


def Tensor_sparse_dim(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return [s.sparse_dim(), e.to_sparse(1).sparse_dim()]


def Tensor_sparse_mask(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return torch.ones(3, 3, dtype=dtype).to(device).sparse_mask(s).to_dense()


def Tensor_smm(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return s.smm(torch.ones(3, 2, dtype=dtype).to(device)).to_dense()


def Tensor_sspaddmm(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return s.sspaddmm(s, torch.ones(3, 3, dtype=dtype).to(device)).to_dense()


def Tensor_coalesce(device, dtype):
    s = torch.sparse_coo_tensor(torch.tensor([[0, 0, 1], [1, 1, 2]]), torch.tensor([1.0, 2.0, 3.0], dtype=dtype), (3, 3)).to(device)
    c = s.coalesce()
    return [c.indices(), c.values(), c.is_coalesced()]


def Tensor_is_coalesced(device, dtype):
    s = torch.sparse_coo_tensor(torch.tensor([[0, 0, 1], [1, 1, 2]]), torch.tensor([1.0, 2.0, 3.0], dtype=dtype), (3, 3)).to(device)
    return [s.is_coalesced(), s.coalesce().is_coalesced()]


def Tensor_is_sparse_csr(device, dtype):
    x = member_input(device, dtype)
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    return [x.is_sparse_csr, e.to_sparse_csr().is_sparse_csr, s.is_sparse_csr]


def Tensor_ccol_indices(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()  # noqa: F841  (unused: run as it always was)
    c = e.to_sparse_csc()
    return [c.ccol_indices(), c.row_indices()]


def Tensor_row_indices(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()  # noqa: F841  (unused: run as it always was)
    c = e.to_sparse_csc()
    return [c.row_indices(), c.values()]


def Tensor_sparse_resize_(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    s.sparse_resize_((4, 4), 2, 0)
    return [tuple(s.shape), s.to_dense()]


def Tensor_sparse_resize_and_clear_(device, dtype):
    e = (torch.eye(3, dtype=dtype) * 2).to(device)
    s = e.to_sparse()
    s.sparse_resize_and_clear_((4, 4), 2, 0)
    return [tuple(s.shape), s._nnz(), s.to_dense()]


def Tensor_dequantize(device, dtype):
    q = torch.quantize_per_tensor(torch.randn(4, dtype=torch.float32), 0.1, 0, torch.qint8).to(device)
    return q.dequantize()


def Tensor_int_repr(device, dtype):
    q = torch.quantize_per_tensor(torch.randn(4, dtype=torch.float32), 0.1, 0, torch.qint8).to(device)
    return q.int_repr()


def Tensor_qscheme(device, dtype):
    q = torch.quantize_per_tensor(torch.randn(4, dtype=torch.float32), 0.1, 0, torch.qint8).to(device)
    return str(q.qscheme())




# CPU-only members: on a tensor elsewhere they raise by definition (the answer,
# normalised: "raised exactly when not on the CPU"), and are used on its CPU copy
def Tensor_apply_(device, dtype):
    x = member_input(device, dtype)
    return [raised_off_cpu(device, lambda: x.clone().apply_(lambda v: v * 2), TypeError),
            x.cpu().apply_(lambda v: v * 2 + 1).to(device)]


def Tensor_map_(device, dtype):
    x = member_input(device, dtype)
    off = raised_off_cpu(device, lambda: x.clone().map_(x, lambda a, b: a + b), TypeError)
    c = x.cpu()
    return [off, c.map_(c * 3, lambda a, b: a - b).to(device)]


def Tensor_numpy(device, dtype):
    x = member_input(device, dtype)
    return [raised_off_cpu(device, lambda: x.numpy(), TypeError),
            torch.from_numpy(x.cpu().numpy() * 2).to(device)]


def Tensor_to_mkldnn(device, dtype):
    x = member_input(device, dtype)
    return [raised_off_cpu(device, lambda: x.contiguous().to_mkldnn(), RuntimeError),
            x.cpu().contiguous().to_mkldnn().to_dense().to(device)]


# storage conversions: st.bfloat16(), st.bool(), ...
CONVERSIONS = ("bfloat16", "bool", "byte", "char", "complex_double", "complex_float", "double", "float",
               "float8_e4m3fn", "float8_e5m2", "half", "int", "long", "short")


def storage_conversion(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return storage_view(getattr(st, api.rsplit(".", 1)[-1])())


# the legacy typed storage classes (torch.FloatStorage, ...) and their dtype
LEGACY_CLASSES = ("DoubleStorage", "FloatStorage", "HalfStorage", "LongStorage", "IntStorage",
                  "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "BFloat16Storage",
                  "ComplexDoubleStorage", "ComplexFloatStorage")
LEGACY_QUANTIZED = ("QUInt8Storage", "QInt8Storage", "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage")


def legacy_storage(device, dtype, api):
    # a device tensor of the class's dtype has a storage of that dtype and element size
    on = On(device)
    cls = getattr(torch, api.split(".")[1])
    t = torch.zeros(3, dtype=cls.dtype).to(device)
    st = t.untyped_storage()
    return [str(cls.dtype), st.nbytes() // 3, t.element_size(), on.on_run_device(st)]


def legacy_quantized_storage(device, dtype, api):
    # a quantized device tensor of the class's dtype
    on = On(device)
    cls = getattr(torch, api.split(".")[1])
    t = torch.quantize_per_tensor(torch.zeros(4), 0.5, 0, cls.dtype).to(device)
    st = t.untyped_storage()
    return [str(cls.dtype), st.nbytes(), t.element_size(), on.on_run_device(st)]


def forward(net, x, device, dtype):
    net(x)


def backward(net, x, device, dtype):
    net(x).sum().backward()


def register_buffer(net, x, device, dtype):
    net[0].register_buffer("extra", torch.ones(2, dtype=dtype).to(device))


def add_module(net, x, device, dtype):
    net.add_module("tail", torch.nn.Tanh())


def register_parameter(net, x, device, dtype):
    net[0].register_parameter("extra", torch.nn.Parameter(torch.ones(2, dtype=dtype).to(device)))


# global hook -> (the hook it registers, given the list it appends to; what runs under it)
GLOBAL_HOOKS = {
    "register_module_forward_pre_hook": (lambda seen: lambda m, i: seen.append(type(m).__name__), forward),
    "register_module_forward_hook": (lambda seen: lambda m, i, o: seen.append(o.clone()), forward),
    "register_module_backward_hook": (lambda seen: lambda m, gi, go: seen.append(type(m).__name__), backward),
    "register_module_full_backward_pre_hook": (lambda seen: lambda m, go: seen.append(go[0].clone()), backward),
    "register_module_full_backward_hook": (lambda seen: lambda m, gi, go: seen.append(go[0].clone()), backward),
    "register_module_buffer_registration_hook": (lambda seen: lambda m, n, b: seen.append([n, b]),
                                                 register_buffer),
    "register_module_module_registration_hook": (lambda seen: lambda m, n, s: seen.append(n), add_module),
    "register_module_parameter_registration_hook": (lambda seen: lambda m, n, p: seen.append([n, p]),
                                                    register_parameter),
}


def global_hook(device, dtype, api):
    # removing a global backward hook's handle does not reset torch's process-wide "full or
    # not" flag (set by register_module_backward_hook / ..._full_backward_hook): without the
    # restore, every later register_module_full_backward_hook in the process (a planning
    # probe, a worker) raises "Cannot use both regular backward hooks and full backward hooks"
    net, x = model(device, dtype)
    name = api.rsplit(".", 1)[-1]
    hook, action = GLOBAL_HOOKS[name]
    flag = M._global_is_full_backward_hook
    seen = []
    handle = getattr(M, name)(hook(seen))
    try:
        action(net, x, device, dtype)
    finally:
        handle.remove()
        M._global_is_full_backward_hook = flag
    return seen


# random initialiser -> (the call on the 64 x 64 device tensor w, the facts it is judged by)
INIT_DRAWS = {
    "uniform_": (lambda w: torch.nn.init.uniform_(w, -1, 1),
                 lambda w: [bool(((w >= -1) & (w <= 1)).all()), abs(float(w.float().mean())) < 0.1]),
    "normal_": (lambda w: torch.nn.init.normal_(w, 0.0, 1.0),
                lambda w: [abs(float(w.float().mean())) < 0.1, 0.9 < float(w.float().std()) < 1.1]),
    "xavier_uniform_": (lambda w: torch.nn.init.xavier_uniform_(w),
                        lambda w: [bool((w.abs() <= (6 / 128) ** 0.5 + 1e-3).all())]),
    "xavier_normal_": (lambda w: torch.nn.init.xavier_normal_(w),
                       lambda w: [0.8 < float(w.float().std()) / (2 / 128) ** 0.5 < 1.2]),
    "kaiming_uniform_": (lambda w: torch.nn.init.kaiming_uniform_(w, nonlinearity="relu"),
                         lambda w: [bool((w.abs() <= (6 / 64) ** 0.5 + 1e-3).all())]),
    "kaiming_normal_": (lambda w: torch.nn.init.kaiming_normal_(w, nonlinearity="relu"),
                        lambda w: [0.8 < float(w.float().std()) / (2 / 64) ** 0.5 < 1.2]),
    "trunc_normal_": (lambda w: torch.nn.init.trunc_normal_(w, 0.0, 1.0, -2.0, 2.0),
                      lambda w: [bool((w.abs() <= 2).all())]),
    "orthogonal_": (lambda w: torch.nn.init.orthogonal_(w),
                    lambda w: [bool(torch.allclose((w.float() @ w.float().t()).cpu(), torch.eye(64), atol=1e-2))]),
    "sparse_": (lambda w: torch.nn.init.sparse_(w, sparsity=0.5), lambda w: [int((w == 0).sum(0).min())]),
}


def random_init(device, dtype, api):
    on = On(device)
    call, facts = INIT_DRAWS[api.rsplit(".", 1)[-1]]
    w = torch.empty(64, 64, dtype=dtype).to(device)
    call(w)
    return [tuple(w.shape), str(w.dtype), on.on_run_device(w), bool(torch.isfinite(w).all()), *facts(w), Draws(w)]


def storage_byteswap(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    c = st.clone()
    c.byteswap(dtype)
    return storage_view(c)


def storage_clone(device, dtype, api):
    on = On(device)
    st, ref = storage_under_test(device, dtype, api)
    c = st.clone()
    return [storage_view(c), on.on_run_device(c)]


def storage_copy_(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    c = st.clone()
    c.copy_(ref)
    return storage_view(c)


def storage_cpu(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    c = st.cpu()
    return [c.device.type, storage_view(c)]


def storage_data_ptr(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.data_ptr() != 0


def storage_device(device, dtype, api):
    on = On(device)
    st, ref = storage_under_test(device, dtype, api)
    return on.on_run_device(st)


def storage_dtype(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return str(st.dtype)


def storage_element_size(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.element_size()


def storage_filename(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.filename


def storage_fill_(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    c = st.clone()
    c.fill_(7)
    return storage_view(c)


def storage_get_device(device, dtype, api):
    on = On(device)
    st, ref = storage_under_test(device, dtype, api)
    g = st.get_device()
    return (g is None or g < 0) if on.expected_get_device() < 0 else g == on.expected_get_device()


def storage_is_cuda(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.is_cuda == (torch.device(device).type == "cuda")


def storage_is_hpu(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.is_hpu == (torch.device(device).type == "hpu")


def storage_is_pinned(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.is_pinned()


def storage_is_sparse(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.is_sparse


def storage_is_sparse_csr(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.is_sparse_csr


def storage_nbytes(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.nbytes()


def storage_from_buffer(device, dtype, api):
    """A storage over a Python buffer is made on the host (no device argument): host-only."""
    raw = bytes(torch.arange(6, dtype=dtype).view(torch.uint8).tolist())
    cls = torch.UntypedStorage if api.startswith(U) else torch.TypedStorage
    return storage_view(cls.from_buffer(raw, byte_order="little", dtype=dtype))


def storage_from_file(device, dtype, api):
    """A storage mapped from a file is made on the host (no device argument): host-only.
    TypedStorage's classmethod runs on the dtype's typed class (the base refuses it)."""
    import os
    import tempfile

    raw = bytes(torch.arange(6, dtype=dtype).view(torch.uint8).tolist())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "storage.bin")
        with open(path, "wb") as f:
            f.write(raw)
        if api.startswith(U):
            st = torch.UntypedStorage.from_file(path, False, len(raw))
        else:
            typed = {torch.float32: torch.FloatStorage, torch.float64: torch.DoubleStorage,
                     torch.float16: torch.HalfStorage, torch.bfloat16: torch.BFloat16Storage}[dtype]
            st = typed.from_file(path, False, 6)
        return storage_view(st)


def storage_new(device, dtype, api):
    on = On(device)
    st, ref = storage_under_test(device, dtype, api)
    n = st.new()
    return [n.nbytes(), on.on_run_device(n)]


def storage_resize_(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    c = st.clone()
    c.resize_(2 * (c.size() if hasattr(c, 'dtype') else c.nbytes()))
    return c.size() if hasattr(c, 'dtype') else c.nbytes()


def storage_share_memory_(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    c = st.clone()
    c.share_memory_()
    return storage_view(c)


def storage_size(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.size()


def storage_tolist(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.tolist()


def storage_type(device, dtype, api):
    on = On(device)
    st, ref = storage_under_test(device, dtype, api)
    return on.plain_type(st.type())


def storage_untyped(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return storage_view(st.untyped())


def storage_pickle_storage_type(device, dtype, api):
    st, ref = storage_under_test(device, dtype, api)
    return st.pickle_storage_type()


def Module_add_module(device, dtype):
    net, x = model(device, dtype)
    net.add_module('extra', torch.nn.Tanh())
    return net(x)


def Module_register_module(device, dtype):
    net, x = model(device, dtype)
    net.register_module('extra', torch.nn.Tanh())
    return net(x)


def Module_apply(device, dtype):
    net, x = model(device, dtype)
    net.apply(lambda m: torch.nn.init.constant_(m.weight, 0.5) if isinstance(m, torch.nn.PReLU) else None)
    return net(x)


def _rounding_parameters(net):
    """``net``'s parameters and buffers set to values a conversion must round (a fresh
    model's are 1, 0 and 0.25: exact in every float dtype, they convert nothing)."""
    with torch.no_grad():
        for t in list(net.parameters()) + [b for b in net.buffers() if b.is_floating_point()]:
            t.copy_(rounding_input(tuple(t.shape), t.dtype).abs())
    return net


def Module_bfloat16(device, dtype):
    net, x = model(device, dtype)
    _rounding_parameters(net)
    return dict(net.bfloat16().named_parameters()), dict(net.named_buffers())


def Module_half(device, dtype):
    net, x = model(device, dtype)
    _rounding_parameters(net)
    return dict(net.half().named_parameters()), dict(net.named_buffers())


def Module_float(device, dtype):
    net, x = model(device, dtype)
    return dict(net.float().named_parameters())


def Module_double(device, dtype):
    net, x = model(device, dtype)
    return dict(net.double().named_parameters())


def Module_buffers(device, dtype):
    net, x = model(device, dtype)
    net(x)
    return list(net.buffers())


def Module_children(device, dtype):
    net, x = model(device, dtype)
    return [type(c).__name__ for c in net.children()]


def Module_modules(device, dtype):
    net, x = model(device, dtype)
    return [type(c).__name__ for c in net.modules()]


def Module_named_children(device, dtype):
    net, x = model(device, dtype)
    return [n for n, _ in net.named_children()]


def Module_named_modules(device, dtype):
    net, x = model(device, dtype)
    return [n for n, _ in net.named_modules()]


def Module_named_buffers(device, dtype):
    net, x = model(device, dtype)
    net(x)
    return dict(net.named_buffers())


def Module_named_parameters(device, dtype):
    net, x = model(device, dtype)
    return dict(net.named_parameters())


def Module_parameters(device, dtype):
    net, x = model(device, dtype)
    return list(net.parameters())


def Module_compile(device, dtype):
    net, x = model(device, dtype)
    net.compile(backend='eager')
    return net(x)


def Module_cpu(device, dtype):
    net, x = model(device, dtype)
    m = net.cpu()
    return [sorted({p.device.type for p in m.parameters()}), m(x.cpu()).tolist()]


def Module_eval(device, dtype):
    net, x = model(device, dtype)
    m = net.eval()
    return [m.training, m[1].training, m(x)]


def Module_train(device, dtype):
    net, x = model(device, dtype)
    m = net.train()
    return [m.training, m(x), m[1].running_mean, m.train(False).training]


def Module_extra_repr(device, dtype):
    net, x = model(device, dtype)
    return [m.extra_repr() for m in net]


def Module_forward(device, dtype):
    net, x = model(device, dtype)
    return net.forward(x)


def Module_get_buffer(device, dtype):
    net, x = model(device, dtype)
    net(x)
    return net.get_buffer('1.running_var')


def Module_get_parameter(device, dtype):
    net, x = model(device, dtype)
    return net.get_parameter('3.weight')


def Module_get_submodule(device, dtype):
    net, x = model(device, dtype)
    return [type(net.get_submodule('1')).__name__, net.get_submodule('0')(x)]


def Module_set_submodule(device, dtype):
    net, x = model(device, dtype)
    net.set_submodule('2', torch.nn.Tanh())
    return net(x)


def Module_get_extra_state(device, dtype):
    # a module that defines no extra state refuses (its documented RuntimeError): the case
    # declares that refusal (``raises``) instead of comparing its text as a value
    net, x = model(device, dtype)
    return net.get_extra_state()


def Module_set_extra_state(device, dtype):
    net, x = model(device, dtype)
    net.set_extra_state({})
    return 'set'


def Module_load_state_dict(device, dtype):
    net, x = model(device, dtype)
    sd = {k: v.cpu() for k, v in net.state_dict().items()}
    fresh = build(device, dtype)
    result = fresh.load_state_dict(sd)
    return [list(result.missing_keys), fresh(x), dict(fresh.named_parameters())]


def Module_state_dict(device, dtype):
    net, x = model(device, dtype)
    net(x)
    return dict(net.state_dict())


def Module_register_buffer(device, dtype):
    on = On(device)
    net, x = model(device, dtype)
    net[0].register_buffer('scale', torch.full((3,), 2.0, dtype=dtype))
    net.to(device)
    return [net[0].scale, on.on_run_device(net[0].scale)]


def Module_register_parameter(device, dtype):
    net, x = model(device, dtype)
    net[0].register_parameter('extra', torch.nn.Parameter(torch.ones(2, dtype=dtype).to(device)))
    return dict(net.named_parameters())


def Module_register_forward_hook(device, dtype):
    net, x = model(device, dtype)
    net[0].register_forward_hook(lambda m, i, o: o * 2)
    return net(x)


def Module_register_forward_pre_hook(device, dtype):
    net, x = model(device, dtype)
    net[0].register_forward_pre_hook(lambda m, i: (i[0] + 1,))
    return net(x)


def Module_register_backward_hook(device, dtype):
    net, x = model(device, dtype)
    seen = []
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        net[3].register_backward_hook(lambda m, gi, go: seen.append(go[0].clone()))
    net(x).sum().backward()
    return seen


def Module_register_full_backward_hook(device, dtype):
    net, x = model(device, dtype)
    seen = []
    net[3].register_full_backward_hook(lambda m, gi, go: seen.append([g.clone() for g in gi]))
    net(x).sum().backward()
    return seen


def Module_register_full_backward_pre_hook(device, dtype):
    net, x = model(device, dtype)
    seen = []
    net[3].register_full_backward_pre_hook(lambda m, go: seen.append(go[0].clone()))
    net(x).sum().backward()
    return seen


def Module_register_load_state_dict_post_hook(device, dtype):
    net, x = model(device, dtype)
    seen = []
    net.register_load_state_dict_post_hook(lambda m, keys: seen.append(len(keys.missing_keys)))
    net.load_state_dict(net.state_dict())
    return [seen, net(x)]


def Module_register_state_dict_pre_hook(device, dtype):
    net, x = model(device, dtype)
    seen = []
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(prefix))
    return [seen, sorted(net.state_dict()), seen]


def Module_requires_grad_(device, dtype):
    net, x = model(device, dtype)
    net.requires_grad_(False)
    return [[p.requires_grad for p in net.parameters()], net(x).requires_grad]


def Module_share_memory(device, dtype):
    net, x = model(device, dtype)
    return net.share_memory()(x)


def Module_to(device, dtype):
    net, x = model(device, dtype)
    m = net.cpu().to(device=device, dtype=dtype)
    return [dict(m.named_parameters()), m(x)]


def Module_to_empty(device, dtype):
    on = On(device)
    net, x = model(device, dtype)
    m = net.to_empty(device=device)
    return [(n, tuple(p.shape), str(p.dtype), on.on_run_device(p)) for n, p in m.named_parameters()]


def Module_type(device, dtype):
    net, x = model(device, dtype)
    m = net.type(dtype)
    return [dict(m.named_parameters()), m(x)]


def Module_zero_grad(device, dtype):
    net, x = model(device, dtype)
    net(x).sum().backward()
    net.zero_grad()
    return [p.grad is None for p in net.parameters()]


def Sequential_append(device, dtype):
    net, x = model(device, dtype)
    net.append(torch.nn.Tanh().to(device))
    return net(x)


def ModuleList_append(device, dtype):
    net, x = model(device, dtype)
    ml = torch.nn.ModuleList([torch.nn.PReLU(3)]).to(dtype).to(device)
    ml.append(torch.nn.LayerNorm(3).to(dtype).to(device))
    return [m(x) for m in ml]


def ModuleList_extend(device, dtype):
    net, x = model(device, dtype)
    ml = torch.nn.ModuleList().to(device)
    ml.extend([torch.nn.PReLU(3).to(dtype).to(device), torch.nn.Tanh()])
    return [len(ml), ml[1](ml[0](x))]


def ModuleList_insert(device, dtype):
    net, x = model(device, dtype)
    ml = torch.nn.ModuleList([torch.nn.Tanh()])
    ml.insert(0, torch.nn.PReLU(3).to(dtype).to(device))
    return ml[1](ml[0](x))


def ModuleDict_clear(device, dtype):
    net, x = model(device, dtype)
    md = torch.nn.ModuleDict({'a': net})
    md.clear()
    return len(md)


def ModuleDict_items(device, dtype):
    net, x = model(device, dtype)
    md = torch.nn.ModuleDict({'a': net[0], 'b': net[3]})
    return {k: v.weight for k, v in md.items()}


def ModuleDict_keys(device, dtype):
    net, x = model(device, dtype)
    md = torch.nn.ModuleDict({'b': net[3], 'a': net[0]})
    return list(md.keys())


def ModuleDict_values(device, dtype):
    net, x = model(device, dtype)
    md = torch.nn.ModuleDict({'a': net[0]})
    return [m(x) for m in md.values()]


def ModuleDict_pop(device, dtype):
    net, x = model(device, dtype)
    md = torch.nn.ModuleDict({'a': net[0], 'b': net[3]})
    return [md.pop('a')(x), list(md)]


def ModuleDict_update(device, dtype):
    net, x = model(device, dtype)
    md = torch.nn.ModuleDict({'a': net[0]})
    md.update({'b': net[2]})
    return md['b'](md['a'](x))


def ParameterList_append(device, dtype):
    net, x = model(device, dtype)
    pl = torch.nn.ParameterList([net[0].weight])
    pl.append(torch.nn.Parameter(torch.ones(2, dtype=dtype).to(device)))
    return list(pl)


def ParameterList_extend(device, dtype):
    on = On(device)
    net, x = model(device, dtype)
    pl = torch.nn.ParameterList()
    pl.extend([net[0].weight, net[3].bias])
    return [list(pl), on.on_run_device(pl[0])]


def ParameterDict_clear(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    pd.clear()
    return len(pd)


def ParameterDict_copy(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    c = pd.copy()
    return dict(c.items())


def ParameterDict_fromkeys(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    return dict(pd.fromkeys(['u', 'v'], net[3].bias).items())


def ParameterDict_get(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    return [pd.get('w'), pd.get('missing')]


def ParameterDict_items(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    return dict(pd.items())


def ParameterDict_keys(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    return list(pd.keys())


def ParameterDict_values(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    return list(pd.values())


def ParameterDict_pop(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    return [pd.pop('w'), list(pd)]


def ParameterDict_popitem(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    k, v = pd.popitem()
    return [k, v, list(pd)]


def ParameterDict_setdefault(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    return [pd.setdefault('w'), pd.setdefault('z', net[3].bias), list(pd)]


def ParameterDict_update(device, dtype):
    net, x = model(device, dtype)
    pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})
    pd.update({'z': net[3].bias})
    return dict(pd.items())


def init_calculate_gain(device, dtype):
    return [torch.nn.init.calculate_gain(n) for n in ('linear', 'relu', 'tanh', 'selu')]


def init_constant_(device, dtype):
    w = torch.empty(3, 4, dtype=dtype).to(device)
    return torch.nn.init.constant_(w, 0.25)


def init_ones_(device, dtype):
    w = torch.empty(3, 4, dtype=dtype).to(device)
    return torch.nn.init.ones_(w)


def init_zeros_(device, dtype):
    w = torch.empty(3, 4, dtype=dtype).to(device)
    return torch.nn.init.zeros_(w)


def init_eye_(device, dtype):
    w = torch.empty(3, 4, dtype=dtype).to(device)
    return torch.nn.init.eye_(w)


def init_dirac_(device, dtype):
    w = torch.empty(4, 2, 3, dtype=dtype).to(device)
    return torch.nn.init.dirac_(w)



# --- the table ----------------------------------------------------------------------------

HOOKS = "torch.nn.modules.module."
INIT = "torch.nn.init."

CASES = (
    Case("torch.Tensor.is_floating_point", Tensor_is_floating_point, ALL),
    Case("torch.Tensor.is_complex", Tensor_is_complex, FB),
    Case("torch.Tensor.is_conj", Tensor_is_conj, FB),
    Case("torch.Tensor.is_signed", Tensor_is_signed, ALL),
    Case("torch.Tensor.is_contiguous", Tensor_is_contiguous, ALL),
    Case("torch.Tensor.is_inference", Tensor_is_inference, ALL),
    Case("torch.Tensor.is_quantized", Tensor_is_quantized, F32),
    Case("torch.Tensor.is_meta", Tensor_is_meta, ALL),
    Case("torch.Tensor.is_sparse", Tensor_is_sparse, F32),
    Case("torch.Tensor.is_pinned", Tensor_is_pinned, ALL),
    Case("torch.Tensor.is_set_to", Tensor_is_set_to, ALL),
    Case("torch.Tensor.is_leaf", Tensor_is_leaf, FB),
    Case("torch.Tensor.dim", Tensor_dim, ALL),
    Case("torch.Tensor.ndim", Tensor_ndim, ALL),
    Case("torch.Tensor.ndimension", Tensor_ndimension, ALL),
    Case("torch.Tensor.nelement", Tensor_nelement, ALL),
    Case("torch.Tensor.numel", Tensor_numel, ALL),
    Case("torch.Tensor.element_size", Tensor_element_size, ALL),
    Case("torch.Tensor.itemsize", Tensor_itemsize, ALL),
    Case("torch.Tensor.nbytes", Tensor_nbytes, ALL),
    Case("torch.Tensor.shape", Tensor_shape, ALL),
    Case("torch.Tensor.size", Tensor_size, ALL),
    Case("torch.Tensor.stride", Tensor_stride, ALL),
    Case("torch.Tensor.storage_offset", Tensor_storage_offset, ALL),
    Case("torch.Tensor.dim_order", Tensor_dim_order, ALL),
    Case("torch.Tensor.requires_grad", Tensor_requires_grad, FB),
    Case("torch.Tensor.requires_grad_", Tensor_requires_grad_, FB),
    Case("torch.Tensor.tolist", Tensor_tolist, ALL),
    Case("torch.Tensor.data_ptr", Tensor_data_ptr, ALL),
    Case("torch.Tensor.device", Tensor_device, ALL),
    Case("torch.Tensor.get_device", Tensor_get_device, ALL),
    Case("torch.Tensor.is_cuda", Tensor_is_cuda, ALL),
    Case("torch.Tensor.storage_type", Tensor_storage_type, ALL),
    Case("torch.Tensor.type", Tensor_type, ALL, tags=(EXACT,)),
    Case("torch.Tensor.type_as", Tensor_type_as, ALL),
    Case("torch.Tensor.new_tensor", Tensor_new_tensor, ALL),
    Case("torch.Tensor.cpu", Tensor_cpu, ALL),
    Case("torch.Tensor.detach", Tensor_detach, ALL),
    Case("torch.Tensor.detach_", Tensor_detach_, ALL),
    Case("torch.Tensor.copy_", Tensor_copy_, ALL, tags=(EXACT,)),
    Case("torch.Tensor.fill_diagonal_", Tensor_fill_diagonal_, ALL),
    Case("torch.Tensor.hardshrink", Tensor_hardshrink, ALL),
    Case("torch.Tensor.slogdet", Tensor_slogdet, FB),
    Case("torch.Tensor.real", Tensor_real, FB),
    Case("torch.Tensor.imag", Tensor_imag, FB),
    Case("torch.Tensor.set_", Tensor_set_, ALL),
    Case("torch.Tensor.untyped_storage", Tensor_untyped_storage, ALL),
    Case("torch.Tensor.storage", Tensor_storage, ALL),
    Case("torch.Tensor.as_subclass", Tensor_as_subclass, ALL),
    Case("torch.Tensor.share_memory_", Tensor_share_memory_, ALL),
    Case("torch.Tensor.backward", Tensor_backward, FB),
    Case("torch.Tensor.grad", Tensor_grad, FB),
    Case("torch.Tensor.retain_grad", Tensor_retain_grad, FB),
    Case("torch.Tensor.retains_grad", Tensor_retains_grad, FB),
    Case("torch.Tensor.register_hook", Tensor_register_hook, FB),
    Case("torch.Tensor.register_post_accumulate_grad_hook", Tensor_register_post_accumulate_grad_hook, FB),
    Case("torch.Tensor.bernoulli_", Tensor_bernoulli_, ALL, tags=RANDOM),
    Case("torch.Tensor.random_", Tensor_random_, ALL, tags=RANDOM),
    Case("torch.Tensor.to_dense", Tensor_to_dense, F32),
    Case("torch.Tensor.to_sparse_csr", Tensor_to_sparse_csr, F32),
    Case("torch.Tensor.to_sparse_csc", Tensor_to_sparse_csc, F32),
    Case("torch.Tensor.to_sparse_bsr", Tensor_to_sparse_bsr, F32),
    Case("torch.Tensor.to_sparse_bsc", Tensor_to_sparse_bsc, F32),
    Case("torch.Tensor.indices", Tensor_indices, F32),
    Case("torch.Tensor.values", Tensor_values, F32),
    Case("torch.Tensor.dense_dim", Tensor_dense_dim, F32),
    Case("torch.Tensor.sparse_dim", Tensor_sparse_dim, F32),
    Case("torch.Tensor.sparse_mask", Tensor_sparse_mask, F32),
    Case("torch.Tensor.smm", Tensor_smm, F32),
    Case("torch.Tensor.sspaddmm", Tensor_sspaddmm, F32),
    Case("torch.Tensor.coalesce", Tensor_coalesce, F32),
    Case("torch.Tensor.is_coalesced", Tensor_is_coalesced, F32),
    Case("torch.Tensor.is_sparse_csr", Tensor_is_sparse_csr, F32),
    Case("torch.Tensor.ccol_indices", Tensor_ccol_indices, F32),
    Case("torch.Tensor.row_indices", Tensor_row_indices, F32),
    Case("torch.Tensor.sparse_resize_", Tensor_sparse_resize_, F32),
    Case("torch.Tensor.sparse_resize_and_clear_", Tensor_sparse_resize_and_clear_, F32),
    Case("torch.Tensor.apply_", Tensor_apply_, ALL),
    Case("torch.Tensor.map_", Tensor_map_, ALL),
    Case("torch.Tensor.numpy", Tensor_numpy, F3),
    Case("torch.Tensor.to_mkldnn", Tensor_to_mkldnn, F32),
    Case("torch.Tensor.dequantize", Tensor_dequantize, EVERY),
    Case("torch.Tensor.int_repr", Tensor_int_repr, EVERY),
    Case("torch.Tensor.qscheme", Tensor_qscheme, EVERY),
    Case(U + "byteswap", storage_byteswap, ALL, aliases=(S + "byteswap",)),
    Case(U + "clone", storage_clone, ALL, aliases=(S + "clone",)),
    Case(U + "copy_", storage_copy_, ALL, aliases=(S + "copy_",)),
    Case(U + "cpu", storage_cpu, ALL, aliases=(S + "cpu",)),
    Case(U + "data_ptr", storage_data_ptr, ALL, aliases=(S + "data_ptr",)),
    Case(U + "device", storage_device, ALL, aliases=(S + "device",)),
    Case(U + "dtype", storage_dtype, ALL, aliases=(S + "dtype",)),
    Case(U + "element_size", storage_element_size, ALL, aliases=(S + "element_size",)),
    Case(U + "filename", storage_filename, ALL, aliases=(S + "filename",)),
    Case(U + "fill_", storage_fill_, ALL, aliases=(S + "fill_",)),
    Case(U + "get_device", storage_get_device, ALL, aliases=(S + "get_device",)),
    Case(U + "is_cuda", storage_is_cuda, ALL, aliases=(S + "is_cuda",)),
    Case(U + "is_hpu", storage_is_hpu, ALL, aliases=(S + "is_hpu",)),
    Case(U + "is_pinned", storage_is_pinned, ALL, aliases=(S + "is_pinned",)),
    Case(U + "is_sparse", storage_is_sparse, ALL, aliases=(S + "is_sparse",)),
    Case(U + "is_sparse_csr", storage_is_sparse_csr, ALL, aliases=(S + "is_sparse_csr",)),
    Case(U + "nbytes", storage_nbytes, ALL, aliases=(S + "nbytes",)),
    Case(U + "from_buffer", storage_from_buffer, ALL, aliases=(S + "from_buffer",)),
    Case(U + "from_file", storage_from_file, ALL, aliases=(S + "from_file",)),
    Case(U + "new", storage_new, ALL, aliases=(S + "new",)),
    Case(U + "resize_", storage_resize_, ALL, aliases=(S + "resize_",)),
    Case(U + "share_memory_", storage_share_memory_, ALL, aliases=(S + "share_memory_",)),
    Case(U + "size", storage_size, ALL, aliases=(S + "size",)),
    Case(U + "tolist", storage_tolist, ALL, aliases=(S + "tolist",)),
    Case(U + "type", storage_type, ALL, aliases=(S + "type",)),
    Case(U + "untyped", storage_untyped, ALL, aliases=(S + "untyped",)),
    Case(U + "pickle_storage_type", storage_pickle_storage_type, ALL, aliases=(S + "pickle_storage_type",)),
    Case(U + CONVERSIONS[0], storage_conversion, ALL, aliases=(
        *(U + m for m in CONVERSIONS[1:]), *(S + m for m in CONVERSIONS))),
    Case("torch." + LEGACY_CLASSES[0], legacy_storage, EVERY, aliases=(
        *("torch." + c for c in LEGACY_CLASSES[1:]), *(f"torch.{c}.dtype" for c in LEGACY_CLASSES))),
    Case("torch." + LEGACY_QUANTIZED[0], legacy_quantized_storage, EVERY, aliases=(
        *("torch." + c for c in LEGACY_QUANTIZED[1:]), *(f"torch.{c}.dtype" for c in LEGACY_QUANTIZED))),
    Case("torch.nn.Module.add_module", Module_add_module, F32),
    Case("torch.nn.Module.register_module", Module_register_module, F32),
    Case("torch.nn.Module.apply", Module_apply, F32),
    Case("torch.nn.Module.bfloat16", Module_bfloat16, F32, tags=(EXACT,)),
    Case("torch.nn.Module.half", Module_half, F32, tags=(EXACT,)),
    Case("torch.nn.Module.float", Module_float, F32),
    Case("torch.nn.Module.double", Module_double, F32),
    Case("torch.nn.Module.buffers", Module_buffers, F32),
    Case("torch.nn.Module.children", Module_children, F32),
    Case("torch.nn.Module.modules", Module_modules, F32),
    Case("torch.nn.Module.named_children", Module_named_children, F32),
    Case("torch.nn.Module.named_modules", Module_named_modules, F32),
    Case("torch.nn.Module.named_buffers", Module_named_buffers, F32),
    Case("torch.nn.Module.named_parameters", Module_named_parameters, F32),
    Case("torch.nn.Module.parameters", Module_parameters, F32),
    Case("torch.nn.Module.compile", Module_compile, F32),
    Case("torch.nn.Module.cpu", Module_cpu, F32),
    Case("torch.nn.Module.eval", Module_eval, F32),
    Case("torch.nn.Module.train", Module_train, F32),
    Case("torch.nn.Module.extra_repr", Module_extra_repr, F32),
    Case("torch.nn.Module.forward", Module_forward, F32),
    Case("torch.nn.Module.get_buffer", Module_get_buffer, F32),
    Case("torch.nn.Module.get_parameter", Module_get_parameter, F32),
    Case("torch.nn.Module.get_submodule", Module_get_submodule, F32),
    Case("torch.nn.Module.set_submodule", Module_set_submodule, F32),
    Case("torch.nn.Module.get_extra_state", Module_get_extra_state, F32,
         raises=Raises("RuntimeError", r"Module\.get_extra_state\(\) that should never be called")),
    Case("torch.nn.Module.set_extra_state", Module_set_extra_state, F32,
         raises=Raises("RuntimeError", r"Module\.set_extra_state\(\) that should never be called")),
    Case("torch.nn.Module.load_state_dict", Module_load_state_dict, F32),
    Case("torch.nn.Module.state_dict", Module_state_dict, F32),
    Case("torch.nn.Module.register_buffer", Module_register_buffer, F32),
    Case("torch.nn.Module.register_parameter", Module_register_parameter, F32),
    Case("torch.nn.Module.register_forward_hook", Module_register_forward_hook, F32),
    Case("torch.nn.Module.register_forward_pre_hook", Module_register_forward_pre_hook, F32),
    Case("torch.nn.Module.register_backward_hook", Module_register_backward_hook, F32),
    Case("torch.nn.Module.register_full_backward_hook", Module_register_full_backward_hook, F32),
    Case("torch.nn.Module.register_full_backward_pre_hook", Module_register_full_backward_pre_hook, F32),
    Case("torch.nn.Module.register_load_state_dict_post_hook", Module_register_load_state_dict_post_hook, F32),
    Case("torch.nn.Module.register_state_dict_pre_hook", Module_register_state_dict_pre_hook, F32),
    Case("torch.nn.Module.requires_grad_", Module_requires_grad_, F32),
    Case("torch.nn.Module.share_memory", Module_share_memory, F32),
    Case("torch.nn.Module.to", Module_to, F32),
    Case("torch.nn.Module.to_empty", Module_to_empty, F32),
    Case("torch.nn.Module.type", Module_type, F32),
    Case("torch.nn.Module.zero_grad", Module_zero_grad, F32),
    Case("torch.nn.Sequential.append", Sequential_append, F32),
    Case("torch.nn.ModuleList.append", ModuleList_append, F32),
    Case("torch.nn.ModuleList.extend", ModuleList_extend, F32),
    Case("torch.nn.ModuleList.insert", ModuleList_insert, F32),
    Case("torch.nn.ModuleDict.clear", ModuleDict_clear, F32),
    Case("torch.nn.ModuleDict.items", ModuleDict_items, F32),
    Case("torch.nn.ModuleDict.keys", ModuleDict_keys, F32),
    Case("torch.nn.ModuleDict.values", ModuleDict_values, F32),
    Case("torch.nn.ModuleDict.pop", ModuleDict_pop, F32),
    Case("torch.nn.ModuleDict.update", ModuleDict_update, F32),
    Case("torch.nn.ParameterList.append", ParameterList_append, F32),
    Case("torch.nn.ParameterList.extend", ParameterList_extend, F32),
    Case("torch.nn.ParameterDict.clear", ParameterDict_clear, F32),
    Case("torch.nn.ParameterDict.copy", ParameterDict_copy, F32),
    Case("torch.nn.ParameterDict.fromkeys", ParameterDict_fromkeys, F32),
    Case("torch.nn.ParameterDict.get", ParameterDict_get, F32),
    Case("torch.nn.ParameterDict.items", ParameterDict_items, F32),
    Case("torch.nn.ParameterDict.keys", ParameterDict_keys, F32),
    Case("torch.nn.ParameterDict.values", ParameterDict_values, F32),
    Case("torch.nn.ParameterDict.pop", ParameterDict_pop, F32),
    Case("torch.nn.ParameterDict.popitem", ParameterDict_popitem, F32),
    Case("torch.nn.ParameterDict.setdefault", ParameterDict_setdefault, F32),
    Case("torch.nn.ParameterDict.update", ParameterDict_update, F32),
    Case(HOOKS + next(iter(GLOBAL_HOOKS)), global_hook, F32,
         aliases=tuple(HOOKS + h for h in list(GLOBAL_HOOKS)[1:])),
    Case("torch.nn.init.calculate_gain", init_calculate_gain, EVERY),
    Case("torch.nn.init.constant_", init_constant_, FB),
    Case("torch.nn.init.ones_", init_ones_, FB),
    Case("torch.nn.init.zeros_", init_zeros_, FB),
    Case("torch.nn.init.eye_", init_eye_, FB),
    Case("torch.nn.init.dirac_", init_dirac_, FB),
    Case(INIT + next(iter(INIT_DRAWS)), random_init, FB, tags=RANDOM,
         aliases=tuple(INIT + i for i in list(INIT_DRAWS)[1:])),
)

_BY_DEFINITION = "device-specific by definition (every accelerator answers differently from the CPU)"
# members left out, by member name (of a Tensor, a storage class, ...), and why
EXCLUDED = {
    'cuda': 'moves to a CUDA device: not a question about another device',
    'hpu': 'moves to an HPU device: not a question about another device',
    'mps': 'moves to an MPS device: not a question about another device',
    'record_stream': 'CUDA streams only',
    'pin_memory': "pins CPU memory for an accelerator: needs the device's host allocator, not a device result",
    'is_shared': _BY_DEFINITION + ' (CUDA storages always report shared)',
}
# torch.nn.Module members left out, and why
EXCLUDED_NN = {
    'cuda': 'moves to a CUDA device: not a question about another device',
    'xpu': 'moves to an XPU device: not a question about another device',
    'ipu': 'moves to an IPU device: not a question about another device',
    'npu': 'added by torch_npu; the portable spelling is .to(device)',
}
