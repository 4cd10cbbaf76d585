"""The cases of the ``member`` source: one small code block per Tensor / Storage member.

Each block runs with ``torch``, ``device``, ``dtype`` and the helpers of ``PRELUDE`` in
scope and leaves its answer in ``out``; the block is both the scenario and the snippet a
report shows. Inputs are made on the CPU and moved; the view ``x`` is taken on the device
so its strides and storage offset are the device's own.

Device-dependent answers are normalised so that the same behaviour gives the same
answer: ``device`` / ``get_device`` / ``is_cuda`` / ``is_hpu`` / ``data_ptr`` are compared
with what the run's own device should give; ``type()`` strings lose the device module (``torch.npu.`` or torch_npu's ``torch_npu.npu.``
becomes ``torch.``).
Members that are device-specific by definition are left out, with the reason, in
``EXCLUDED``.
"""

from __future__ import annotations

from typing import Dict, Tuple

PRELUDE = '''\
def on_run_device(obj):
    return obj.device.type == torch.device(device).type

def expected_get_device():
    d = torch.device(device)
    return -1 if d.type == "cpu" else (d.index or 0)

def storage_view(st):
    """size, dtype and values of a storage (wherever it lives)"""
    typed = hasattr(st, "dtype")
    return {"len": st.size() if typed else st.nbytes(),
            "dtype": str(st.dtype) if typed else "untyped",
            "values": st.cpu().tolist()}

def plain_type(text):
    """torch.npu.FloatTensor / torch_npu.npu.FloatStorage -> torch.FloatTensor / torch.FloatStorage"""
    import re
    return re.sub(r"^\\w+\\." + torch.device(device).type + r"\\.", "torch.", text)

x = torch.randn(4, 3, dtype=dtype).to(device)[1:, 1:]
'''

LEAF = "g = torch.randn(3, dtype=dtype).to(device).requires_grad_()\n"
SPARSE = "e = (torch.eye(3, dtype=dtype) * 2).to(device)\ns = e.to_sparse()\n"
QUANT = ("q = torch.quantize_per_tensor(torch.randn(4, dtype=torch.float32), 0.1, 0, torch.qint8)"
         ".to(device)\n")

COO = ("s = torch.sparse_coo_tensor(torch.tensor([[0, 0, 1], [1, 1, 2]]), "
       "torch.tensor([1.0, 2.0, 3.0], dtype=dtype), (3, 3)).to(device)\n")
CPU_ONLY = ("try:\n    {call}\n    raised = False\nexcept {exc}:\n    raised = True\n"
            "raised_off_cpu = raised == (torch.device(device).type != 'cpu')\n")

ALL = ("float32", "float64", "float16", "bfloat16")
F32 = ("float32",)

# member -> (code block, dtypes)
TENSOR: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "is_floating_point": ("out = x.is_floating_point()", ALL),
    "is_complex": ("out = [x.is_complex(), torch.complex(x, x).is_complex()]", ("float32", "float64")),
    "is_conj": ("c = torch.complex(x, x)\nout = [x.is_conj(), c.conj().is_conj()]", ("float32", "float64")),
    "is_signed": ("out = x.is_signed()", ALL),
    "is_contiguous": ("y = torch.randn(3, 4, dtype=dtype).t().to(device)\n"
                      "out = [y.is_contiguous(), torch.zeros_like(y).is_contiguous(), "
                      "x.is_contiguous(), x.contiguous().is_contiguous(), "
                      "x.t().is_contiguous(memory_format=torch.contiguous_format)]", ALL),
    "is_inference": ("with torch.inference_mode():\n    y = x * 2\nout = [x.is_inference(), y.is_inference()]", ALL),
    "is_quantized": ("out = [x.is_quantized, " + "torch.quantize_per_tensor(torch.randn(2), 0.1, 0, torch.qint8)"
                     ".to(device).is_quantized]", F32),
    "is_meta": ("out = x.is_meta", ALL),
    "is_sparse": (SPARSE + "out = [e.is_sparse, s.is_sparse]", F32),
    "is_pinned": ("out = x.is_pinned()", ALL),
    "is_set_to": ("y = torch.empty(0, dtype=dtype).to(device)\ny.set_(x)\nout = [y.is_set_to(x), x.is_set_to(y.clone())]",
                  ALL),
    "is_leaf": (LEAF + "out = [g.is_leaf, (g * 2).is_leaf, x.is_leaf]", ("float32", "float64")),
    "dim": ("out = x.dim()", ALL),
    "ndim": ("out = x.ndim", ALL),
    "ndimension": ("out = x.ndimension()", ALL),
    "nelement": ("out = x.nelement()", ALL),
    "numel": ("out = x.numel()", ALL),
    "element_size": ("out = x.element_size()", ALL),
    "itemsize": ("out = x.itemsize", ALL),
    "nbytes": ("out = x.nbytes", ALL),
    "shape": ("out = tuple(x.shape)", ALL),
    "size": ("out = [tuple(x.size()), x.size(0), x.size(-1)]", ALL),
    # y: a non-contiguous tensor the device's own copy kernel made (preserve_format), and
    # its empty_like: strides a device that makes every output contiguous would lose
    "stride": ("y = torch.randn(3, 4, dtype=dtype).t().to(device)\n"
               "out = [x.stride(), x.stride(0), y.stride(), torch.empty_like(y).stride()]", ALL),
    "storage_offset": ("out = x.storage_offset()", ALL),
    "dim_order": ("out = [x.dim_order(), x.t().dim_order()]", ALL),
    "requires_grad": (LEAF + "out = [g.requires_grad, x.requires_grad, (g * 2).requires_grad]", ("float32", "float64")),
    "requires_grad_": ("y = x.clone().requires_grad_()\nout = [y.requires_grad, y.requires_grad_(False).requires_grad]",
                       ("float32", "float64")),
    "tolist": ("out = x.tolist()", ALL),
    "data_ptr": ("base = x.untyped_storage().data_ptr()\n"
                 "out = [x.data_ptr() != 0, x.data_ptr() - base == x.storage_offset() * x.element_size()]", ALL),
    "device": ("out = [on_run_device(x), x.device.index == torch.device(device).index or x.device.index == 0]",
               ALL),
    "get_device": ("out = x.get_device() == expected_get_device()", ALL),
    "is_cuda": ('out = x.is_cuda == (torch.device(device).type == "cuda")', ALL),
    "storage_type": ("kind = x.storage_type()\nout = None if kind is None else kind.__name__", ALL),
    "type": ("out = [plain_type(x.type()), x.type(torch.float64).dtype]", ALL),
    "type_as": ("out = x.type_as(torch.zeros(1, dtype=torch.float64).to(device))", ALL),
    "new_tensor": ("out = x.new_tensor([1.5, -2.0, 3.25])", ALL),
    "cpu": ('y = x.cpu()\nout = [y.device.type, y.tolist()]', ALL),
    "detach": ("out = x.detach()", ALL),
    "detach_": ("y = x.clone()\nout = y.detach_()", ALL),
    "copy_": ("y = torch.zeros_like(x)\ny.copy_(torch.arange(6, dtype=dtype).view(3, 2))\nout = y", ALL),
    "fill_diagonal_": ("y = torch.zeros(3, 4, dtype=dtype).to(device)\nout = y.fill_diagonal_(1.5)", ALL),
    "hardshrink": ("out = x.hardshrink(0.5)", ALL),
    "slogdet": ("out = torch.randn(3, 3, dtype=dtype).to(device).slogdet()", ("float32", "float64")),
    "real": ("c = torch.complex(x, 2 * x)\nout = c.real", ("float32", "float64")),
    "imag": ("c = torch.complex(x, 2 * x)\nout = c.imag", ("float32", "float64")),
    "set_": ("y = torch.empty(0, dtype=dtype).to(device)\n"
             "y.set_(x.untyped_storage(), x.storage_offset(), x.size(), x.stride())\nout = y", ALL),
    "untyped_storage": ("st = x.untyped_storage()\nout = [storage_view(st), on_run_device(st)]", ALL),
    "storage": ("st = x.storage()\nout = [storage_view(st), on_run_device(st)]", ALL),
    "as_subclass": ("class Sub(torch.Tensor):\n    pass\ny = x.as_subclass(Sub)\n"
                    "out = [type(y).__name__, y.as_subclass(torch.Tensor)]", ALL),
    "share_memory_": ("out = x.clone().share_memory_()", ALL),
    "backward": (LEAF + "(g * g).sum().backward()\nout = g.grad", ("float32", "float64")),
    "grad": (LEAF + "(g * g * g).sum().backward()\nout = [g.grad, (g * 2).grad is None]", ("float32", "float64")),
    "retain_grad": (LEAF + "h = g * 2\nh.retain_grad()\n(h * h).sum().backward()\nout = h.grad",
                    ("float32", "float64")),
    "retains_grad": (LEAF + "h = g * 2\nbefore = h.retains_grad\nh.retain_grad()\nout = [before, h.retains_grad]",
                     ("float32", "float64")),
    "register_hook": (LEAF + "g.register_hook(lambda grad: grad * 3)\n(g * g).sum().backward()\nout = g.grad",
                      ("float32", "float64")),
    "register_post_accumulate_grad_hook": (
        LEAF + "seen = []\ng.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))\n"
        "(g * g).sum().backward()\nout = seen", ("float32", "float64")),
    "bernoulli_": ("y = torch.empty(64, dtype=dtype).to(device).bernoulli_(0.5)\n"
                   "out = [tuple(y.shape), str(y.dtype), on_run_device(y), bool(((y == 0) | (y == 1)).all())]", ALL),
    "random_": ("y = torch.empty(64, dtype=dtype).to(device).random_(0, 10)\n"
                "out = [tuple(y.shape), on_run_device(y), bool(((y >= 0) & (y < 10) & (y == y.floor())).all())]", ALL),
    "to_dense": (SPARSE + "out = s.to_dense()", F32),
    "to_sparse_csr": (SPARSE + "out = e.to_sparse_csr().to_dense()", F32),
    "to_sparse_csc": (SPARSE + "out = e.to_sparse_csc().to_dense()", F32),
    "to_sparse_bsr": ("e = torch.eye(4, dtype=dtype).to(device)\nout = e.to_sparse_bsr((2, 2)).to_dense()", F32),
    "to_sparse_bsc": ("e = torch.eye(4, dtype=dtype).to(device)\nout = e.to_sparse_bsc((2, 2)).to_dense()", F32),
    "indices": (SPARSE + "out = s.indices()", F32),
    "values": (SPARSE + "out = s.values()", F32),
    "dense_dim": (SPARSE + "out = [s.dense_dim(), s.sparse_dim()]", F32),
    "sparse_dim": (SPARSE + "out = [s.sparse_dim(), e.to_sparse(1).sparse_dim()]", F32),
    "sparse_mask": (SPARSE + "out = torch.ones(3, 3, dtype=dtype).to(device).sparse_mask(s).to_dense()", F32),
    "smm": (SPARSE + "out = s.smm(torch.ones(3, 2, dtype=dtype).to(device)).to_dense()", F32),
    "sspaddmm": (SPARSE + "out = s.sspaddmm(s, torch.ones(3, 3, dtype=dtype).to(device)).to_dense()", F32),
    # COO tensors with repeated indices, compressed layouts: a device that cannot hold
    # sparse tensors refuses at the first line
    "coalesce": (COO + "c = s.coalesce()\nout = [c.indices(), c.values(), c.is_coalesced()]", F32),
    "is_coalesced": (COO + "out = [s.is_coalesced(), s.coalesce().is_coalesced()]", F32),
    "is_sparse_csr": (SPARSE + "out = [x.is_sparse_csr, e.to_sparse_csr().is_sparse_csr, s.is_sparse_csr]", F32),
    "ccol_indices": (SPARSE + "c = e.to_sparse_csc()\nout = [c.ccol_indices(), c.row_indices()]", F32),
    "row_indices": (SPARSE + "c = e.to_sparse_csc()\nout = [c.row_indices(), c.values()]", F32),
    "sparse_resize_": (SPARSE + "s.sparse_resize_((4, 4), 2, 0)\nout = [tuple(s.shape), s.to_dense()]", F32),
    "sparse_resize_and_clear_": (SPARSE + "s.sparse_resize_and_clear_((4, 4), 2, 0)\n"
                                 "out = [tuple(s.shape), s._nnz(), s.to_dense()]", F32),
    # CPU-only members: on a tensor elsewhere they raise by definition (the answer,
    # normalised: "raised exactly when not on the CPU"), and are used on its CPU copy
    "apply_": (CPU_ONLY.format(call="x.clone().apply_(lambda v: v * 2)", exc="TypeError")
               + "out = [raised_off_cpu, x.cpu().apply_(lambda v: v * 2 + 1).to(device)]", ALL),
    "map_": (CPU_ONLY.format(call="x.clone().map_(x, lambda a, b: a + b)", exc="TypeError")
             + "c = x.cpu()\nout = [raised_off_cpu, c.map_(c * 3, lambda a, b: a - b).to(device)]", ALL),
    "numpy": (CPU_ONLY.format(call="x.numpy()", exc="TypeError")
              + "out = [raised_off_cpu, torch.from_numpy(x.cpu().numpy() * 2).to(device)]",
              ("float32", "float64", "float16")),
    "to_mkldnn": (CPU_ONLY.format(call="x.contiguous().to_mkldnn()", exc="RuntimeError")
                  + "out = [raised_off_cpu, x.cpu().contiguous().to_mkldnn().to_dense().to(device)]", F32),
    "dequantize": (QUANT + "out = q.dequantize()", F32),
    "int_repr": (QUANT + "out = q.int_repr()", F32),
    "qscheme": (QUANT + "out = str(q.qscheme())", F32),
}

# storage members: ``st`` is the storage under test (see STORAGE_MAKERS)
_CONVERSIONS = ("bfloat16", "bool", "byte", "char", "complex_double", "complex_float", "double", "float",
                "float8_e4m3fn", "float8_e5m2", "half", "int", "long", "short")
STORAGE: Dict[str, str] = {m: f"out = storage_view(st.{m}())" for m in _CONVERSIONS}
STORAGE.update({
    "byteswap": "c = st.clone()\nc.byteswap(dtype)\nout = storage_view(c)",
    "clone": "c = st.clone()\nout = [storage_view(c), on_run_device(c)]",
    "copy_": "c = st.clone()\nc.copy_(ref)\nout = storage_view(c)",
    "cpu": "c = st.cpu()\nout = [c.device.type, storage_view(c)]",
    "data_ptr": "out = st.data_ptr() != 0",
    "device": "out = on_run_device(st)",
    "dtype": "out = str(st.dtype)",
    "element_size": "out = st.element_size()",
    "filename": "out = st.filename",
    "fill_": "c = st.clone()\nc.fill_(7)\nout = storage_view(c)",
    # a CPU storage answers None (a CPU tensor -1): either means "not on a device"
    "get_device": "g = st.get_device()\nout = (g is None or g < 0) if expected_get_device() < 0 "
                  "else g == expected_get_device()",
    "is_cuda": 'out = st.is_cuda == (torch.device(device).type == "cuda")',
    "is_hpu": 'out = st.is_hpu == (torch.device(device).type == "hpu")',
    "is_pinned": "out = st.is_pinned()",
    "is_sparse": "out = st.is_sparse",
    "is_sparse_csr": "out = st.is_sparse_csr",
    "nbytes": "out = st.nbytes()",
    "new": "n = st.new()\nout = [n.nbytes(), on_run_device(n)]",
    "resize_": "c = st.clone()\nc.resize_(2 * (c.size() if hasattr(c, 'dtype') else c.nbytes()))\n"
               "out = c.size() if hasattr(c, 'dtype') else c.nbytes()",
    "share_memory_": "c = st.clone()\nc.share_memory_()\nout = storage_view(c)",
    "size": "out = st.size()",
    "tolist": "out = st.tolist()",
    "type": "out = plain_type(st.type())",
    "untyped": "out = storage_view(st.untyped())",
    "pickle_storage_type": "out = st.pickle_storage_type()",
})

STORAGE_MAKERS = {
    "UntypedStorage": ("st = torch.arange(6, dtype=dtype).to(device).untyped_storage()\n"
                       "ref = torch.ones(6, dtype=dtype).untyped_storage()\n"),
    "TypedStorage": ("st = torch.arange(6, dtype=dtype).to(device).storage()\n"
                     "ref = torch.ones(6, dtype=dtype).storage()\n"),
}

# the legacy typed storage classes (torch.FloatStorage, ...): a device tensor of the
# class's dtype has a storage of that dtype and element size
LEGACY = ("out = None\nt = torch.zeros(3, dtype=cls.dtype).to(device)\nst = t.untyped_storage()\n"
          "out = [str(cls.dtype), st.nbytes() // 3, t.element_size(), on_run_device(st)]")

# the quantized legacy classes: a quantized device tensor of the class's dtype
LEGACY_QUANTIZED = ("out = None\nt = torch.quantize_per_tensor(torch.zeros(4), 0.5, 0, cls.dtype).to(device)\n"
                    "st = t.untyped_storage()\n"
                    "out = [str(cls.dtype), st.nbytes(), t.element_size(), on_run_device(st)]")

_BY_DEFINITION = "device-specific by definition (every accelerator answers differently from the CPU)"
EXCLUDED: Dict[str, str] = {
    "cuda": "moves to a CUDA device: not a question about another device",
    "hpu": "moves to an HPU device: not a question about another device",
    "mps": "moves to an MPS device: not a question about another device",
    "record_stream": "CUDA streams only",
    "pin_memory": "pins CPU memory for an accelerator: needs the device's host allocator, not a device result",
    "is_shared": _BY_DEFINITION + " (CUDA storages always report shared)",
    "from_buffer": "makes a CPU storage from a Python buffer: no device involved",
    "from_file": "maps a file into a CPU storage: no device involved",
}
