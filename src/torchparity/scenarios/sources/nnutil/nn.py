"""``torch.nn`` classes, ``torch.nn.parameter``, ``torch.nn.modules.*`` and
``torch.nn.functional`` leftovers for the ``nnutil`` source: one code block per API.

A block runs with ``torch``, ``F`` (``torch.nn.functional``), ``device`` and ``dtype``
bound and the prelude's helpers; it leaves its answer in ``out``. Modules are built on
the CPU (seeded by the runner, so both runs start from the same weights) and moved with
``.to(device)``; inputs are made on the CPU and moved.
"""

from __future__ import annotations

from typing import Dict, Tuple

F32 = ("float32",)
FH = ("float32", "float16")

# (block, dtypes, tags)
Case = Tuple[str, Tuple[str, ...], Tuple[str, ...]]

_ASM = ("m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]).to(dtype).to(device)\n"
        "inp = torch.randn(6, 8, dtype=dtype).to(device)\n")
_TF = "d = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)\n"
_SRC = "src = dev(torch.randn(2, 5, 8, dtype=dtype))\ntgt = dev(torch.randn(2, 3, 8, dtype=dtype))\n"
# ref: CPU-drawn values, drawn before the lazy module materialises (on the device's own
# generator), loaded into it afterwards so its forward is comparable
_LAZY = ("ref = torch.nn.Linear(3, 4, dtype=dtype)\nm = torch.nn.LazyLinear(4, dtype=dtype).to(device)\nx = torch.randn(2, 3, dtype=dtype).to(device)\n"
         "pending = m.has_uninitialized_params()\n")
_LAZY_LOAD = ("made = [(n, tuple(p.shape), str(p.dtype), on_run_device(p)) for n, p in m.named_parameters()]\n"
              "with torch.no_grad():\n    m.weight.copy_(ref.weight.to(device))\n    m.bias.copy_(ref.bias.to(device))\n")

NN: Dict[str, Case] = {
    "torch.nn.AdaptiveLogSoftmaxWithLoss": (
        _ASM + "tgt = torch.tensor([0, 3, 5, 9, 4, 8]).to(device)\nr = m(inp, tgt)\n"
        "r.loss.backward()\nout = [r.output, r.loss, m.head.weight.grad]", F32, ()),
    "torch.nn.AdaptiveLogSoftmaxWithLoss.log_prob": (_ASM + "out = m.log_prob(inp)", F32, ()),
    "torch.nn.AdaptiveLogSoftmaxWithLoss.predict": (_ASM + "out = m.predict(inp)", F32, ()),
    "torch.nn.EmbeddingBag": (
        "eb = torch.nn.EmbeddingBag(10, 3, mode='sum').to(dtype).to(device)\n"
        "idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]).to(device)\noffsets = torch.tensor([0, 4]).to(device)\n"
        "y = eb(idx, offsets)\nloss(y).backward()\nout = [y, eb.weight.grad]", FH, ()),
    "torch.nn.EmbeddingBag.forward": (
        "eb = torch.nn.EmbeddingBag(10, 3, mode='sum').to(dtype).to(device)\n"
        "idx = torch.tensor([[1, 2, 4], [4, 3, 9]]).to(device)\n"
        "w = torch.tensor([[1.0, 0.5, 2.0], [0.25, 1.0, 1.0]], dtype=dtype).to(device)\n"
        "out = [eb.forward(idx, per_sample_weights=w), eb.forward(idx)]", FH, ()),
    "torch.nn.LazyLinear": (
        _LAZY + "m(x)\n" + _LAZY_LOAD + "out = [pending, type(m).__name__, made, m(x)]", F32, ()),
    "torch.nn.modules.lazy.LazyModuleMixin.has_uninitialized_params": (
        _LAZY + "m.initialize_parameters(x)\nafter = m.has_uninitialized_params()\n"
        "out = [pending, after, tuple(m.weight.shape), str(m.weight.dtype), on_run_device(m.weight)]", F32, ()),
    "torch.nn.modules.lazy.LazyModuleMixin.initialize_parameters": (
        _LAZY + "m.initialize_parameters(x)\n" + _LAZY_LOAD
        + "out = [pending, m.has_uninitialized_params(), made, m(x)]", F32, ()),
    "torch.nn.MaxUnpool2d": (
        "pool = torch.nn.MaxPool2d(2, stride=2, return_indices=True)\nunpool = torch.nn.MaxUnpool2d(2, stride=2)\n"
        "x = torch.arange(32, dtype=dtype).reshape(1, 2, 4, 4).flip(-1).to(device)\n"
        "y, ind = pool(x)\nout = [unpool(y, ind), unpool(y, ind, output_size=(1, 2, 5, 5))]", FH, ()),
    "torch.nn.Module": (
        "class Scale(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.w = torch.nn.Parameter(torch.linspace(-1, 1, 3, dtype=dtype))\n"
        "        self.register_buffer('b', torch.full((3,), 0.5, dtype=dtype))\n"
        "    def forward(self, x):\n        return torch.tanh(x * self.w + self.b)\n"
        "m = Scale().to(device)\nx = torch.randn(4, 3, dtype=dtype).to(device)\ny = m(x)\nloss(y).backward()\n"
        "out = [y, m.w.grad, dict(m.state_dict()), on_run_device(m.b)]", F32, ()),
    "torch.nn.Sequential": (
        "s = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3), torch.nn.Tanh()).to(dtype).to(device)\n"
        "x = torch.randn(4, 3, dtype=dtype).to(device)\ny = s(x)\nloss(y).backward()\n"
        "out = [y, s[0].weight.grad, len(s), s[1:](x)]", F32, ()),
    "torch.nn.ModuleList": (
        "ml = torch.nn.ModuleList([torch.nn.PReLU(3), torch.nn.LayerNorm(3)]).to(dtype).to(device)\n"
        "x = torch.randn(4, 3, dtype=dtype).to(device)\nfor m in ml:\n    x = m(x)\n"
        "out = [x, len(ml), [type(m).__name__ for m in ml], ml[1].weight]", F32, ()),
    "torch.nn.ModuleDict": (
        "md = torch.nn.ModuleDict({'act': torch.nn.PReLU(3), 'norm': torch.nn.LayerNorm(3)}).to(dtype).to(device)\n"
        "x = torch.randn(4, 3, dtype=dtype).to(device)\n"
        "out = [md['norm'](md['act'](x)), sorted(md.keys()), 'act' in md]", F32, ()),
    "torch.nn.ParameterList": (
        "pl = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(3, dtype=dtype)) for _ in range(2)]).to(device)\n"
        "x = torch.randn(3, dtype=dtype).to(device)\nloss = (pl[0] * x + pl[1]).pow(2).sum()\nloss.backward()\n"
        "out = [loss, [p.grad for p in pl], on_run_device(pl[0])]", F32, ()),
    "torch.nn.ParameterDict": (
        "pd = torch.nn.ParameterDict({'w': torch.nn.Parameter(torch.randn(3, dtype=dtype)),\n"
        "                             'b': torch.nn.Parameter(torch.zeros(3, dtype=dtype))}).to(device)\n"
        "x = torch.randn(3, dtype=dtype).to(device)\nloss = (pd['w'] * x + pd['b']).pow(2).sum()\nloss.backward()\n"
        "out = [loss, pd['w'].grad, pd['b'].grad, sorted(pd.keys()), on_run_device(pd['b'])]", F32, ()),
    "torch.nn.MultiheadAttention.forward": (
        "mha = mod(torch.nn.MultiheadAttention(8, 2, batch_first=True).to(dtype))\n"
        "q = dev(torch.randn(2, 3, 8, dtype=dtype))\nkv = dev(torch.randn(2, 4, 8, dtype=dtype))\n"
        "mask = torch.tensor([[False, False, False, True], [False, False, True, True]]).to(device)\n"
        "o, w = mha.forward(q, kv, kv, key_padding_mask=mask)\nloss(o).backward()\n"
        "out = [o, w, mha.in_proj_weight.grad]", F32, ()),
    "torch.nn.RNNBase": (
        "m = torch.nn.RNNBase('GRU', 3, 4, num_layers=1).to(dtype).to(device)\n"
        "out = [m.mode, [(n, tuple(p.shape), on_run_device(p)) for n, p in m.named_parameters()],\n"
        "       dict(m.named_parameters())]", F32, ()),
    "torch.nn.RNNBase.flatten_parameters": (
        "m = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True).to(dtype).to(device)\nm.flatten_parameters()\n"
        "x = torch.randn(2, 5, 3, dtype=dtype).to(device)\ny, (h, c) = m(x)\nout = [y, h, c]", F32, ()),
    "torch.nn.SyncBatchNorm": (
        "bn = torch.nn.SyncBatchNorm(3).to(dtype).to(device).eval()\n"
        "with torch.no_grad():\n    bn.running_mean.copy_(torch.tensor([0.5, -0.5, 0.0]))\n"
        "    bn.running_var.copy_(torch.tensor([2.0, 1.0, 0.5]))\n"
        "x = torch.randn(4, 3, 2, dtype=dtype).to(device)\nout = [bn(x), bn.running_var]", F32, ()),
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm": (
        "net = torch.nn.Sequential(torch.nn.Conv1d(2, 3, 1), torch.nn.BatchNorm1d(3)).to(dtype).to(device)\n"
        "x = torch.randn(4, 2, 5, dtype=dtype).to(device)\nnet.train()\nnet(x)\n"
        "sync = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net).eval()\n"
        "out = [type(sync[1]).__name__, dict(sync[1].state_dict()), sync(x)]", F32, ()),
    "torch.nn.Transformer.forward": (
        _TF + "t = mod(torch.nn.Transformer(num_encoder_layers=1, num_decoder_layers=1, **d).to(dtype))\n"
        + _SRC + "mask = dev(t.generate_square_subsequent_mask(3))\n"
        "y = t.forward(src, tgt, tgt_mask=mask)\nloss(y).backward()\n"
        "out = [y, t.encoder.layers[0].linear1.weight.grad]", F32, ()),
    "torch.nn.TransformerEncoderLayer.forward": (
        _TF + "layer = mod(torch.nn.TransformerEncoderLayer(**d).to(dtype))\n" + _SRC
        + "y = layer.forward(src)\nloss(y).backward()\nout = [y, layer.linear2.weight.grad]", F32, ()),
    "torch.nn.TransformerEncoder.forward": (
        _TF + "enc = mod(torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**d), num_layers=2,"
        " enable_nested_tensor=False).to(dtype))\n" + _SRC
        + "pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2]).to(device)\n"
        "y = enc.forward(src, src_key_padding_mask=pad)\nloss(y).backward()\n"
        "out = [y, enc.layers[1].linear1.weight.grad]", F32, ()),
    "torch.nn.TransformerDecoderLayer.forward": (
        _TF + "layer = mod(torch.nn.TransformerDecoderLayer(**d).to(dtype))\n" + _SRC
        + "y = layer.forward(tgt, src, tgt_is_causal=False)\nloss(y).backward()\n"
        "out = [y, layer.multihead_attn.in_proj_weight.grad]", F32, ()),
    "torch.nn.TransformerDecoder.forward": (
        _TF + "dec = mod(torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(**d), num_layers=2)"
        ".to(dtype))\n" + _SRC
        + "mask = dev(torch.nn.Transformer.generate_square_subsequent_mask(3))\n"
        "y = dec.forward(tgt, src, tgt_mask=mask)\nloss(y).backward()\nout = [y, dec.layers[0].linear1.weight.grad]",
        F32, ()),
    "torch.nn.TripletMarginWithDistanceLoss": (
        "a, p, n = (torch.randn(5, 4, dtype=dtype).to(device).requires_grad_() for _ in range(3))\n"
        "loss_fn = torch.nn.TripletMarginWithDistanceLoss(distance_function=torch.nn.PairwiseDistance(), margin=1.5)\n"
        "cos = torch.nn.TripletMarginWithDistanceLoss(\n"
        "    distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), reduction='none')\n"
        "loss = loss_fn(a, p, n)\nloss.backward()\nout = [loss, a.grad, n.grad, cos(a, p, n)]", F32, ()),
    # torch.nn.parameter
    "torch.nn.parameter.Parameter": (
        "p = torch.nn.parameter.Parameter(torch.randn(3, dtype=dtype).to(device))\n"
        "q = torch.nn.parameter.Parameter(torch.ones(2, dtype=dtype).to(device), requires_grad=False)\n"
        "(p * p).sum().backward()\n"
        "out = [p, p.grad, p.requires_grad, q.requires_grad, isinstance(p, torch.Tensor), on_run_device(p)]", F32, ()),
    "torch.nn.parameter.Buffer": (
        "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scale = torch.nn.parameter.Buffer(torch.full((3,), 2.0, dtype=dtype))\n"
        "        self.tmp = torch.nn.parameter.Buffer(torch.ones(3, dtype=dtype), persistent=False)\n"
        "m = M().to(device)\n"
        "out = [m.scale, sorted(m.state_dict()), [n for n, _ in m.named_buffers()], on_run_device(m.scale)]",
        F32, ()),
    "torch.nn.parameter.UninitializedParameter": (
        "p = torch.nn.parameter.UninitializedParameter(device=device, dtype=dtype)\n"
        "before = type(p).__name__\np.materialize((2, 3))\n"
        "out = [before, type(p).__name__, tuple(p.shape), str(p.dtype), on_run_device(p)]", F32, ()),
    "torch.nn.parameter.UninitializedParameter.cls_to_become": (
        "p = torch.nn.parameter.UninitializedParameter(device=device, dtype=dtype)\np.materialize((4,))\n"
        "out = [torch.nn.parameter.UninitializedParameter.cls_to_become.__name__, type(p).__name__,\n"
        "       type(p) is torch.nn.parameter.UninitializedParameter.cls_to_become, on_run_device(p)]", F32, ()),
    "torch.nn.parameter.UninitializedBuffer": (
        "b = torch.nn.parameter.UninitializedBuffer(device=device, dtype=dtype)\n"
        "before = type(b).__name__\nb.materialize((3,))\n"
        "out = [before, type(b).__name__, tuple(b.shape), str(b.dtype), on_run_device(b)]", F32, ()),
    "torch.nn.parameter.is_lazy": (
        "u = torch.nn.parameter.UninitializedParameter(device=device, dtype=dtype)\n"
        "p = torch.nn.Parameter(torch.ones(2, dtype=dtype).to(device))\n"
        "out = [torch.nn.parameter.is_lazy(u), torch.nn.parameter.is_lazy(p)]", F32, ()),
    "torch.nn.modules.module.register_module_full_backward_hook": (
        "net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.Tanh()).to(dtype).to(device)\n"
        "x = torch.randn(4, 3, dtype=dtype).to(device)\nseen = []\n"
        # the process-wide "full or not" flag outlives the handles of earlier global hooks
        # (another scenario's register_module_backward_hook): start from a fresh process's
        # state and put it back afterwards
        "import torch.nn.modules.module as M\nflag = M._global_is_full_backward_hook\n"
        "M._global_is_full_backward_hook = None\n"
        "h = M.register_module_full_backward_hook(\n"
        "    lambda m, gi, go: seen.append([type(m).__name__, go[0].clone()]))\n"
        "try:\n    loss(net(x)).backward()\nfinally:\n    h.remove()\n    M._global_is_full_backward_hook = flag\n"
        "out = seen", F32, ()),
}

# torch.nn.functional: deterministic uses; the random ones draw on the device's own
# generator, so their values are checked by property (tagged "random")
FUNCTIONAL: Dict[str, Case] = {
    "torch.nn.functional.affine_grid": (
        "theta = torch.tensor([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]]], dtype=dtype).to(device)\n"
        "out = [F.affine_grid(theta, (1, 1, 3, 4), align_corners=False),"
        " F.affine_grid(theta, (1, 1, 2, 3), align_corners=True)]", FH, ()),
    "torch.nn.functional.fold": (
        "cols = torch.randn(2, 3 * 2 * 2, 12, dtype=dtype).to(device)\n"
        "out = [F.fold(cols, output_size=(4, 5), kernel_size=2), F.fold(cols[:, :, :8], (4, 5), 2, stride=(2, 1))]",
        FH, ()),
    "torch.nn.functional.lp_pool1d": (
        "x = torch.rand(2, 3, 8, dtype=dtype).to(device) + 0.1\n"
        "out = [F.lp_pool1d(x, 2, 3, stride=2), F.lp_pool1d(x, 1.5, 2, ceil_mode=True)]", FH, ()),
    "torch.nn.functional.lp_pool2d": (
        "x = torch.rand(2, 3, 6, 5, dtype=dtype).to(device) + 0.1\n"
        "out = [F.lp_pool2d(x, 2, 2), F.lp_pool2d(x, 3, (3, 2), stride=1, ceil_mode=True)]", FH, ()),
    "torch.nn.functional.upsample": (
        "import warnings\nx = torch.randn(1, 2, 3, 4, dtype=dtype).to(device)\n"
        "with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
        "    out = [F.upsample(x, scale_factor=2, mode='nearest'),"
        " F.upsample(x, size=(5, 7), mode='bilinear', align_corners=False)]", FH, ()),
    "torch.nn.functional.conv3d": (
        "x = torch.randn(2, 3, 4, 5, 5, dtype=dtype).to(device)\nw = torch.randn(4, 3, 2, 3, 3, dtype=dtype).to(device)\n"
        "b = torch.randn(4, dtype=dtype).to(device)\n"
        "out = [F.conv3d(x, w, b), F.conv3d(x, w, None, stride=(1, 2, 2), padding=1, dilation=(1, 1, 2))]",
        FH, ()),
    "torch.nn.functional.embedding": (
        "w = torch.randn(10, 4, dtype=dtype).to(device).requires_grad_()\n"
        "idx = torch.tensor([[1, 2, 4, 0], [4, 3, 9, 0]]).to(device)\n"
        "y = F.embedding(idx, w, padding_idx=0)\nloss(y).backward()\n"
        "out = [y, w.grad, F.embedding(idx, w.detach(), max_norm=1.0)]", FH, ()),
    # the random samples the kernel would draw are passed in: deterministic
    "torch.nn.functional.fractional_max_pool2d": (
        "x = torch.randn(2, 3, 7, 7, dtype=dtype).to(device)\n"
        "u = torch.tensor([[[0.3, 0.7]] * 3, [[0.9, 0.1]] * 3], dtype=dtype).to(device)\n"
        "y, idx = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True, _random_samples=u)\n"
        "out = [y, idx]", FH, ()),
    "torch.nn.functional.fractional_max_pool3d": (
        "x = torch.randn(1, 2, 6, 6, 6, dtype=dtype).to(device)\n"
        "u = torch.tensor([[[0.3, 0.7, 0.5], [0.9, 0.1, 0.4]]], dtype=dtype).to(device)\n"
        "y, idx = F.fractional_max_pool3d(x, 2, output_size=(3, 3, 3), return_indices=True, _random_samples=u)\n"
        "out = [y, idx]", FH, ()),
    # OpInfo skips the device-vs-CPU comparison for every dtype (dropout_p > 0 samples are
    # random); with dropout_p=0 the attention is deterministic: compared with masks, causal
    "torch.nn.functional.scaled_dot_product_attention": (
        "q = dev(torch.randn(2, 2, 4, 8, dtype=dtype)).requires_grad_()\n"
        "k = dev(torch.randn(2, 2, 5, 8, dtype=dtype))\nv = dev(torch.randn(2, 2, 5, 8, dtype=dtype))\n"
        "mask = (torch.arange(5) < torch.tensor([[3], [5]]).unsqueeze(1)).unsqueeze(1).to(device)\n"
        "y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\nloss(y).backward()\n"
        "qq = q.detach()[:, :, :4]\n"
        "out = [y, q.grad, F.scaled_dot_product_attention(qq, qq, qq, is_causal=True, scale=0.5)]", FH, ()),
    # eval mode is deterministic (slope (lower + upper) / 2); training draws each negative
    # slope from [lower, upper] on the device's generator: checked by property
    "torch.nn.functional.rrelu": (
        "x = torch.randn(64, 64, dtype=dtype).to(device)\ny = F.rrelu(x, 0.1, 0.3, training=True)\n"
        "neg = x < 0\nslope = (y[neg] / x[neg]).float()\n"
        "out = [F.rrelu(x, 0.1, 0.3, training=False), meta(y), bool(torch.equal(y[~neg], x[~neg])),\n"
        "       bool(((slope >= 0.1 - 1e-2) & (slope <= 0.3 + 1e-2)).all()), 0.15 < float(slope.mean()) < 0.25]",
        F32, ("random",)),  # the CPU has no float16 rrelu kernel
    "torch.nn.functional.dropout": (
        "x = torch.rand(64, 64, dtype=dtype).to(device) + 1.0\ny = F.dropout(x, 0.25)\nkept = y != 0\n"
        "out = [meta(y), F.dropout(x, 0.25, training=False), bool(torch.allclose(y[kept], x[kept] / 0.75)),\n"
        "       0.2 < float((~kept).float().mean()) < 0.3]", FH, ("random",)),
    "torch.nn.functional.dropout2d": (
        "x = torch.rand(4, 64, 3, 3, dtype=dtype).to(device) + 1.0\ny = F.dropout2d(x, 0.5)\n"
        "zero = (y == 0).flatten(2)\nwhole = bool((zero.all(2) | ~zero.any(2)).all())\n"
        "out = [meta(y), whole, 0.3 < float(zero.all(2).float().mean()) < 0.7,"
        " F.dropout2d(x, 0.5, training=False)]", FH, ("random",)),
    "torch.nn.functional.alpha_dropout": (
        "x = torch.randn(64, 64, dtype=dtype).to(device)\ny = F.alpha_dropout(x, 0.2, training=True)\n"
        "changed = float((y != x * 1.0).float().mean())\n"
        "out = [meta(y), F.alpha_dropout(x, 0.2, training=False), bool(torch.isfinite(y).all()),"
        " abs(float(y.float().mean())) < 0.15, 0.8 < float(y.float().std()) < 1.2]", F32, ("random",)),
}

# attention: the device may take another algorithm than the CPU's flash kernel (math
# path, its own fused kernel); these are also run in float64 on the CPU (``dev`` / ``mod``
# cast there) and judged against that golden, as the module source does
GOLDEN = frozenset({
    "torch.nn.MultiheadAttention.forward", "torch.nn.Transformer.forward",
    "torch.nn.TransformerEncoderLayer.forward", "torch.nn.TransformerEncoder.forward",
    "torch.nn.TransformerDecoderLayer.forward", "torch.nn.TransformerDecoder.forward",
    "torch.nn.functional.scaled_dot_product_attention",
})

# named reasons for APIs of these namespaces that get no scenario here
EXCLUDED: Dict[str, str] = {
    "torch.nn.functional.scaled_mm": "float8 scaled matmul: CUDA-only kernels, the CPU reference cannot run it",
    "torch.nn.functional.scaled_grouped_mm": "float8 grouped scaled matmul: CUDA-only kernels, the CPU reference "
                                             "cannot run it",
    "torch.nn.utils.prune.PruningContainer.apply": "fails on the CPU itself: the inherited classmethod builds a "
                                                   "container, which has no PRUNING_TYPE (AttributeError)",
    "torch.nn.DataParallel": "picks its devices from the process (every device of the first accelerator type "
                             "registered), not from the device under test, and scatters with torch._C._scatter, "
                             "which only CUDA builds have: with the emulated device registered even the CPU "
                             "reference in that process cannot run it",
    "torch.nn.modules.flatten.Unflatten.NamedShape": "not an attribute of torch.nn.Unflatten in this torch "
                                                     "(a type alias of the module file)",
}
