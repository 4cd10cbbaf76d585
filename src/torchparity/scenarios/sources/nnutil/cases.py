"""The cases of the ``nnutil`` source: one real function per API, and the table.

``torch.nn`` classes, containers and leftovers, ``torch.nn.parameter``, ``torch.nn.functional``
entries whose OpInfo rows do not compare values, ``torch.nn.utils`` (gradient clipping,
parametrizations, pruning, packed sequences, ``skip_init``, ``functional_call``),
``torch.utils.data`` and ``torch.utils.checkpoint``. Every body ``f(device, dtype)`` builds
its modules and inputs on the CPU (seeded by the runner, so both runs start from the same
weights), moves them to ``device`` and returns its answer, compared with the same body run
on the CPU. :class:`On` holds the device (``on_run_device``, ``meta``) and, for the bodies
judged against a float64 golden (``GOLDEN``), the dtype ``dev`` / ``mod`` cast to there.

Datasets hold tensors that live on the device; loaders run in the main process
(``num_workers=0``). Samplers that shuffle are given a seeded CPU ``torch.Generator``.
The random pruning methods and the dropout family draw on the device's own generator:
their answers are compared by property, tagged ``random``. The pruning members are one
body per method (``torch.nn.utils.prune.<class>.<method>``), told the class by its ``api``
parameter (``PRUNE_ARGS``). Helpers and bodies live in this one file: the footprint
recorder tells scenario code from the API's by file.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import torch.nn.utils.prune as prune

from ..base import Case, Excluded

F32 = ("float32",)
FH = ("float32", "float16")
FB = ("float32", "float64")
RANDOM = ("random",)
PRUNE = "torch.nn.utils.prune."


class On:
    """The device under test; ``compute``: the dtype ``dev`` and ``mod`` cast floating
    tensors to (for the float64 golden: the CPU, float64), None: their own."""

    def __init__(self, device, compute=None):
        self.device, self.compute = device, compute

    def on_run_device(self, obj):
        return obj.device.type == torch.device(self.device).type

    def dev(self, t):
        # a floating tensor to the device under test
        return t.to(self.device) if self.compute is None else t.to(self.device, self.compute)

    def mod(self, m):
        return m.to(self.device) if self.compute is None else m.to(self.device, self.compute)

    def meta(self, t):
        # shape, dtype and "on the device under test" (a raw device type is not comparable)
        return [tuple(t.shape), str(t.dtype), self.on_run_device(t)]


def loss(y):
    # a fixed weighting: a plain sum of a LayerNorm output has (nearly) zero gradients
    g = torch.linspace(-1, 2, y.numel(), dtype=y.dtype).reshape(y.shape).to(y.device)
    return (y * g).sum()


# --- the bodies -----------------------------------------------------------------------------


def nn_AdaptiveLogSoftmaxWithLoss(device, dtype):
    m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]).to(dtype).to(device)
    inp = torch.randn(6, 8, dtype=dtype).to(device)
    tgt = torch.tensor([0, 3, 5, 9, 4, 8]).to(device)
    r = m(inp, tgt)
    r.loss.backward()
    return [r.output, r.loss, m.head.weight.grad]


def nn_AdaptiveLogSoftmaxWithLoss_log_prob(device, dtype):
    m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]).to(dtype).to(device)
    inp = torch.randn(6, 8, dtype=dtype).to(device)
    return m.log_prob(inp)


def nn_AdaptiveLogSoftmaxWithLoss_predict(device, dtype):
    m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]).to(dtype).to(device)
    inp = torch.randn(6, 8, dtype=dtype).to(device)
    return m.predict(inp)


def nn_EmbeddingBag(device, dtype):
    eb = torch.nn.EmbeddingBag(10, 3, mode='sum').to(dtype).to(device)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]).to(device)
    offsets = torch.tensor([0, 4]).to(device)
    y = eb(idx, offsets)
    loss(y).backward()
    return [y, eb.weight.grad]


def nn_EmbeddingBag_forward(device, dtype):
    eb = torch.nn.EmbeddingBag(10, 3, mode='sum').to(dtype).to(device)
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]]).to(device)
    w = torch.tensor([[1.0, 0.5, 2.0], [0.25, 1.0, 1.0]], dtype=dtype).to(device)
    return [eb.forward(idx, per_sample_weights=w), eb.forward(idx)]


def nn_LazyLinear(device, dtype):
    on = On(device)
    ref = torch.nn.Linear(3, 4, dtype=dtype)
    m = torch.nn.LazyLinear(4, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    pending = m.has_uninitialized_params()
    m(x)
    made = [(n, tuple(p.shape), str(p.dtype), on.on_run_device(p)) for n, p in m.named_parameters()]
    with torch.no_grad():
        m.weight.copy_(ref.weight.to(device))
        m.bias.copy_(ref.bias.to(device))
    return [pending, type(m).__name__, made, m(x)]


def nn_modules_lazy_LazyModuleMixin_has_uninitialized_params(device, dtype):
    on = On(device)
    ref = torch.nn.Linear(3, 4, dtype=dtype)  # noqa: F841  (drawn all the same: later draws keep their values)
    m = torch.nn.LazyLinear(4, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    pending = m.has_uninitialized_params()
    m.initialize_parameters(x)
    after = m.has_uninitialized_params()
    return [pending, after, tuple(m.weight.shape), str(m.weight.dtype), on.on_run_device(m.weight)]


def nn_modules_lazy_LazyModuleMixin_initialize_parameters(device, dtype):
    on = On(device)
    ref = torch.nn.Linear(3, 4, dtype=dtype)
    m = torch.nn.LazyLinear(4, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    pending = m.has_uninitialized_params()
    m.initialize_parameters(x)
    made = [(n, tuple(p.shape), str(p.dtype), on.on_run_device(p)) for n, p in m.named_parameters()]
    with torch.no_grad():
        m.weight.copy_(ref.weight.to(device))
        m.bias.copy_(ref.bias.to(device))
    return [pending, m.has_uninitialized_params(), made, m(x)]


def nn_MaxUnpool2d(device, dtype):
    pool = torch.nn.MaxPool2d(2, stride=2, return_indices=True)
    unpool = torch.nn.MaxUnpool2d(2, stride=2)
    x = torch.arange(32, dtype=dtype).reshape(1, 2, 4, 4).flip(-1).to(device)
    y, ind = pool(x)
    return [unpool(y, ind), unpool(y, ind, output_size=(1, 2, 5, 5))]


def nn_Module(device, dtype):
    on = On(device)
    class Scale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.linspace(-1, 1, 3, dtype=dtype))
            self.register_buffer('b', torch.full((3,), 0.5, dtype=dtype))
        def forward(self, x):
            return torch.tanh(x * self.w + self.b)
    m = Scale().to(device)
    x = torch.randn(4, 3, dtype=dtype).to(device)
    y = m(x)
    loss(y).backward()
    return [y, m.w.grad, dict(m.state_dict()), on.on_run_device(m.b)]


def nn_Sequential(device, dtype):
    s = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3), torch.nn.Tanh()).to(dtype).to(device)
    x = torch.randn(4, 3, dtype=dtype).to(device)
    y = s(x)
    loss(y).backward()
    return [y, s[0].weight.grad, len(s), s[1:](x)]


def nn_ModuleList(device, dtype):
    ml = torch.nn.ModuleList([torch.nn.PReLU(3), torch.nn.LayerNorm(3)]).to(dtype).to(device)
    x = torch.randn(4, 3, dtype=dtype).to(device)
    y = x
    for m in ml:
        y = m(y)
    # the input is returned too: a layer that wrote its result into its input (a kernel
    # aliasing its output to it) leaves the chain's answer right and the input clobbered
    return [y, x, len(ml), [type(m).__name__ for m in ml], ml[1].weight]


def nn_ModuleDict(device, dtype):
    md = torch.nn.ModuleDict({'act': torch.nn.PReLU(3), 'norm': torch.nn.LayerNorm(3)}).to(dtype).to(device)
    x = torch.randn(4, 3, dtype=dtype).to(device)
    # the input is returned too (as in nn_ModuleList): a layer writing into it shows
    return [md['norm'](md['act'](x)), x, sorted(md.keys()), 'act' in md]


def nn_ParameterList(device, dtype):
    on = On(device)
    pl = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(3, dtype=dtype)) for _ in range(2)]).to(device)
    x = torch.randn(3, dtype=dtype).to(device)
    loss = (pl[0] * x + pl[1]).pow(2).sum()
    loss.backward()
    return [loss, [p.grad for p in pl], on.on_run_device(pl[0])]


def nn_ParameterDict(device, dtype):
    on = On(device)
    pd = torch.nn.ParameterDict({'w': torch.nn.Parameter(torch.randn(3, dtype=dtype)),
                                 'b': torch.nn.Parameter(torch.zeros(3, dtype=dtype))}).to(device)
    x = torch.randn(3, dtype=dtype).to(device)
    loss = (pd['w'] * x + pd['b']).pow(2).sum()
    loss.backward()
    return [loss, pd['w'].grad, pd['b'].grad, sorted(pd.keys()), on.on_run_device(pd['b'])]


def nn_MultiheadAttention_forward(device, dtype, compute=None):
    on = On(device, compute)
    mha = on.mod(torch.nn.MultiheadAttention(8, 2, batch_first=True).to(dtype))
    q = on.dev(torch.randn(2, 3, 8, dtype=dtype))
    kv = on.dev(torch.randn(2, 4, 8, dtype=dtype))
    mask = torch.tensor([[False, False, False, True], [False, False, True, True]]).to(device)
    o, w = mha.forward(q, kv, kv, key_padding_mask=mask)
    loss(o).backward()
    return [o, w, mha.in_proj_weight.grad]


def nn_RNNBase(device, dtype):
    on = On(device)
    m = torch.nn.RNNBase('GRU', 3, 4, num_layers=1).to(dtype).to(device)
    return [m.mode, [(n, tuple(p.shape), on.on_run_device(p)) for n, p in m.named_parameters()],
            dict(m.named_parameters())]


def nn_RNNBase_flatten_parameters(device, dtype):
    m = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True).to(dtype).to(device)
    m.flatten_parameters()
    x = torch.randn(2, 5, 3, dtype=dtype).to(device)
    y, (h, c) = m(x)
    return [y, h, c]


def nn_SyncBatchNorm(device, dtype):
    bn = torch.nn.SyncBatchNorm(3).to(dtype).to(device).eval()
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor([0.5, -0.5, 0.0]))
        bn.running_var.copy_(torch.tensor([2.0, 1.0, 0.5]))
    x = torch.randn(4, 3, 2, dtype=dtype).to(device)
    return [bn(x), bn.running_var]


def nn_SyncBatchNorm_convert_sync_batchnorm(device, dtype):
    net = torch.nn.Sequential(torch.nn.Conv1d(2, 3, 1), torch.nn.BatchNorm1d(3)).to(dtype).to(device)
    x = torch.randn(4, 2, 5, dtype=dtype).to(device)
    net.train()
    net(x)
    sync = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net).eval()
    return [type(sync[1]).__name__, dict(sync[1].state_dict()), sync(x)]


def nn_Transformer_forward(device, dtype, compute=None):
    on = On(device, compute)
    d = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    t = on.mod(torch.nn.Transformer(num_encoder_layers=1, num_decoder_layers=1, **d).to(dtype))
    src = on.dev(torch.randn(2, 5, 8, dtype=dtype))
    tgt = on.dev(torch.randn(2, 3, 8, dtype=dtype))
    mask = on.dev(t.generate_square_subsequent_mask(3))
    y = t.forward(src, tgt, tgt_mask=mask)
    loss(y).backward()
    return [y, t.encoder.layers[0].linear1.weight.grad]


def nn_TransformerEncoderLayer_forward(device, dtype, compute=None):
    on = On(device, compute)
    d = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    layer = on.mod(torch.nn.TransformerEncoderLayer(**d).to(dtype))
    src = on.dev(torch.randn(2, 5, 8, dtype=dtype))
    tgt = on.dev(torch.randn(2, 3, 8, dtype=dtype))  # noqa: F841  (drawn all the same: later draws keep their values)
    y = layer.forward(src)
    loss(y).backward()
    return [y, layer.linear2.weight.grad]


def nn_TransformerEncoder_forward(device, dtype, compute=None):
    on = On(device, compute)
    d = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    enc = on.mod(torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**d), num_layers=2, enable_nested_tensor=False).to(dtype))
    src = on.dev(torch.randn(2, 5, 8, dtype=dtype))
    tgt = on.dev(torch.randn(2, 3, 8, dtype=dtype))  # noqa: F841  (drawn all the same: later draws keep their values)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2]).to(device)
    y = enc.forward(src, src_key_padding_mask=pad)
    loss(y).backward()
    return [y, enc.layers[1].linear1.weight.grad]


def nn_TransformerDecoderLayer_forward(device, dtype, compute=None):
    on = On(device, compute)
    d = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    layer = on.mod(torch.nn.TransformerDecoderLayer(**d).to(dtype))
    src = on.dev(torch.randn(2, 5, 8, dtype=dtype))
    tgt = on.dev(torch.randn(2, 3, 8, dtype=dtype))
    y = layer.forward(tgt, src, tgt_is_causal=False)
    loss(y).backward()
    return [y, layer.multihead_attn.in_proj_weight.grad]


def nn_TransformerDecoder_forward(device, dtype, compute=None):
    on = On(device, compute)
    d = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    dec = on.mod(torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(**d), num_layers=2).to(dtype))
    src = on.dev(torch.randn(2, 5, 8, dtype=dtype))
    tgt = on.dev(torch.randn(2, 3, 8, dtype=dtype))
    mask = on.dev(torch.nn.Transformer.generate_square_subsequent_mask(3))
    y = dec.forward(tgt, src, tgt_mask=mask)
    loss(y).backward()
    return [y, dec.layers[0].linear1.weight.grad]


def nn_TripletMarginWithDistanceLoss(device, dtype):
    a, p, n = (torch.randn(5, 4, dtype=dtype).to(device).requires_grad_() for _ in range(3))
    loss_fn = torch.nn.TripletMarginWithDistanceLoss(distance_function=torch.nn.PairwiseDistance(), margin=1.5)
    cos = torch.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), reduction='none')
    loss = loss_fn(a, p, n)
    loss.backward()
    return [loss, a.grad, n.grad, cos(a, p, n)]


def nn_parameter_Parameter(device, dtype):
    on = On(device)
    p = torch.nn.parameter.Parameter(torch.randn(3, dtype=dtype).to(device))
    q = torch.nn.parameter.Parameter(torch.ones(2, dtype=dtype).to(device), requires_grad=False)
    (p * p).sum().backward()
    return [p, p.grad, p.requires_grad, q.requires_grad, isinstance(p, torch.Tensor), on.on_run_device(p)]


def nn_parameter_Buffer(device, dtype):
    on = On(device)
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.parameter.Buffer(torch.full((3,), 2.0, dtype=dtype))
            self.tmp = torch.nn.parameter.Buffer(torch.ones(3, dtype=dtype), persistent=False)
    m = M().to(device)
    return [m.scale, sorted(m.state_dict()), [n for n, _ in m.named_buffers()], on.on_run_device(m.scale)]


def nn_parameter_UninitializedParameter(device, dtype):
    on = On(device)
    p = torch.nn.parameter.UninitializedParameter(device=device, dtype=dtype)
    before = type(p).__name__
    p.materialize((2, 3))
    return [before, type(p).__name__, tuple(p.shape), str(p.dtype), on.on_run_device(p)]


def nn_parameter_UninitializedParameter_cls_to_become(device, dtype):
    on = On(device)
    p = torch.nn.parameter.UninitializedParameter(device=device, dtype=dtype)
    p.materialize((4,))
    return [torch.nn.parameter.UninitializedParameter.cls_to_become.__name__, type(p).__name__,
            type(p) is torch.nn.parameter.UninitializedParameter.cls_to_become, on.on_run_device(p)]


def nn_parameter_UninitializedBuffer(device, dtype):
    on = On(device)
    b = torch.nn.parameter.UninitializedBuffer(device=device, dtype=dtype)
    before = type(b).__name__
    b.materialize((3,))
    return [before, type(b).__name__, tuple(b.shape), str(b.dtype), on.on_run_device(b)]


def nn_parameter_is_lazy(device, dtype):
    u = torch.nn.parameter.UninitializedParameter(device=device, dtype=dtype)
    p = torch.nn.Parameter(torch.ones(2, dtype=dtype).to(device))
    return [torch.nn.parameter.is_lazy(u), torch.nn.parameter.is_lazy(p)]


def nn_modules_module_register_module_full_backward_hook(device, dtype):
    net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.Tanh()).to(dtype).to(device)
    x = torch.randn(4, 3, dtype=dtype).to(device)
    seen = []
    import torch.nn.modules.module as M
    flag = M._global_is_full_backward_hook
    M._global_is_full_backward_hook = None
    h = M.register_module_full_backward_hook(
        lambda m, gi, go: seen.append([type(m).__name__, go[0].clone()]))
    try:
        loss(net(x)).backward()
    finally:
        h.remove()
        M._global_is_full_backward_hook = flag
    return seen


def nn_functional_affine_grid(device, dtype):
    theta = torch.tensor([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]]], dtype=dtype).to(device)
    return [F.affine_grid(theta, (1, 1, 3, 4), align_corners=False), F.affine_grid(theta, (1, 1, 2, 3), align_corners=True)]


def nn_functional_fold(device, dtype):
    cols = torch.randn(2, 3 * 2 * 2, 12, dtype=dtype).to(device)
    return [F.fold(cols, output_size=(4, 5), kernel_size=2), F.fold(cols[:, :, :8], (4, 5), 2, stride=(2, 1))]


def nn_functional_lp_pool1d(device, dtype):
    x = torch.rand(2, 3, 8, dtype=dtype).to(device) + 0.1
    return [F.lp_pool1d(x, 2, 3, stride=2), F.lp_pool1d(x, 1.5, 2, ceil_mode=True)]


def nn_functional_lp_pool2d(device, dtype):
    x = torch.rand(2, 3, 6, 5, dtype=dtype).to(device) + 0.1
    return [F.lp_pool2d(x, 2, 2), F.lp_pool2d(x, 3, (3, 2), stride=1, ceil_mode=True)]


def nn_functional_upsample(device, dtype):
    import warnings
    x = torch.randn(1, 2, 3, 4, dtype=dtype).to(device)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out = [F.upsample(x, scale_factor=2, mode='nearest'), F.upsample(x, size=(5, 7), mode='bilinear', align_corners=False)]
    return out


def nn_functional_conv3d(device, dtype):
    x = torch.randn(2, 3, 4, 5, 5, dtype=dtype).to(device)
    w = torch.randn(4, 3, 2, 3, 3, dtype=dtype).to(device)
    b = torch.randn(4, dtype=dtype).to(device)
    return [F.conv3d(x, w, b), F.conv3d(x, w, None, stride=(1, 2, 2), padding=1, dilation=(1, 1, 2))]


def nn_functional_embedding(device, dtype):
    w = torch.randn(10, 4, dtype=dtype).to(device).requires_grad_()
    idx = torch.tensor([[1, 2, 4, 0], [4, 3, 9, 0]]).to(device)
    y = F.embedding(idx, w, padding_idx=0)
    loss(y).backward()
    return [y, w.grad, F.embedding(idx, w.detach(), max_norm=1.0)]


def nn_functional_fractional_max_pool2d(device, dtype):
    x = torch.randn(2, 3, 7, 7, dtype=dtype).to(device)
    u = torch.tensor([[[0.3, 0.7]] * 3, [[0.9, 0.1]] * 3], dtype=dtype).to(device)
    y, idx = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True, _random_samples=u)
    return [y, idx]


def nn_functional_fractional_max_pool3d(device, dtype):
    x = torch.randn(1, 2, 6, 6, 6, dtype=dtype).to(device)
    u = torch.tensor([[[0.3, 0.7, 0.5], [0.9, 0.1, 0.4]]], dtype=dtype).to(device)
    y, idx = F.fractional_max_pool3d(x, 2, output_size=(3, 3, 3), return_indices=True, _random_samples=u)
    return [y, idx]


def nn_functional_scaled_dot_product_attention(device, dtype, compute=None):
    on = On(device, compute)
    q = on.dev(torch.randn(2, 2, 4, 8, dtype=dtype)).requires_grad_()
    k = on.dev(torch.randn(2, 2, 5, 8, dtype=dtype))
    v = on.dev(torch.randn(2, 2, 5, 8, dtype=dtype))
    mask = (torch.arange(5) < torch.tensor([[3], [5]]).unsqueeze(1)).unsqueeze(1).to(device)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    loss(y).backward()
    qq = q.detach()[:, :, :4]
    return [y, q.grad, F.scaled_dot_product_attention(qq, qq, qq, is_causal=True, scale=0.5)]


def repeats(draw, seed=1234):
    # a seeded random API draws the same values twice under one seed (every generator)
    torch.manual_seed(seed)
    a = draw()
    torch.manual_seed(seed)
    return bool(torch.equal(a, draw()))


def nn_functional_rrelu(device, dtype):
    on = On(device)
    x = torch.randn(64, 64, dtype=dtype).to(device)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    neg = x < 0
    slope = (y[neg] / x[neg]).float()
    return [F.rrelu(x, 0.1, 0.3, training=False), on.meta(y), bool(torch.equal(y[~neg], x[~neg])),
            bool(((slope >= 0.1 - 1e-2) & (slope <= 0.3 + 1e-2)).all()), 0.15 < float(slope.mean()) < 0.25,
            repeats(lambda: F.rrelu(x, 0.1, 0.3, training=True))]


def nn_functional_dropout(device, dtype):
    on = On(device)
    x = torch.rand(64, 64, dtype=dtype).to(device) + 1.0
    y = F.dropout(x, 0.25)
    kept = y != 0
    return [on.meta(y), F.dropout(x, 0.25, training=False), bool(torch.allclose(y[kept], x[kept] / 0.75)),
            0.2 < float((~kept).float().mean()) < 0.3, repeats(lambda: F.dropout(x, 0.25))]


def nn_functional_dropout2d(device, dtype):
    on = On(device)
    x = torch.rand(4, 64, 3, 3, dtype=dtype).to(device) + 1.0
    y = F.dropout2d(x, 0.5)
    zero = (y == 0).flatten(2)
    whole = bool((zero.all(2) | ~zero.any(2)).all())
    return [on.meta(y), whole, 0.3 < float(zero.all(2).float().mean()) < 0.7, F.dropout2d(x, 0.5, training=False),
            repeats(lambda: F.dropout2d(x, 0.5))]


def nn_functional_alpha_dropout(device, dtype):
    # alpha dropout sets a dropped element to a*alpha' + b and a kept one to a*x + b, with
    # alpha' = -scale*alpha of SELU, a = ((1-p)(1+p*alpha'^2))^-1/2 and b = -a*alpha'*p
    on = On(device)
    p, alpha = 0.2, -1.7580993408473766
    a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
    b = -a * alpha * p
    x = torch.randn(64, 64, dtype=dtype).to(device)
    y = F.alpha_dropout(x, p, training=True)
    tol = {torch.float16: 4e-3, torch.bfloat16: 3e-2}.get(dtype, 1e-4)  # a few ulps
    dropped = torch.isclose(y.float(), torch.tensor(a * alpha + b, device=device), rtol=tol, atol=tol)
    kept = y.float()[~dropped]
    return [on.meta(y), F.alpha_dropout(x, p, training=False), bool(torch.isfinite(y).all()),
            0.15 < float(dropped.float().mean()) < 0.25,
            bool(torch.allclose(kept, a * x.float()[~dropped] + b, rtol=tol, atol=tol)),
            repeats(lambda: F.alpha_dropout(x, p, training=True))]


def nn_utils_clip_grad_norm_(device, dtype):
    on = On(device)
    net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)
    x = torch.randn(6, 3, dtype=dtype).to(device)
    (7 * loss(net(x))).backward()
    total = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    inf = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5, norm_type='inf')
    return [total, inf, [p.grad for p in net.parameters()], on.on_run_device(total)]


def nn_utils_clip_grad_norm(device, dtype):
    import warnings
    net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)
    x = torch.randn(6, 3, dtype=dtype).to(device)
    (7 * loss(net(x))).backward()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        total = torch.nn.utils.clip_grad_norm(net.parameters(), max_norm=1.0, norm_type=1.0)
    return [total, [p.grad for p in net.parameters()]]


def nn_utils_clip_grad_value_(device, dtype):
    net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)
    x = torch.randn(6, 3, dtype=dtype).to(device)
    (7 * loss(net(x))).backward()
    torch.nn.utils.clip_grad_value_(net.parameters(), clip_value=0.5)
    return [p.grad for p in net.parameters()]


def nn_utils_vector_to_parameters(device, dtype):
    net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)
    n = sum(p.numel() for p in net.parameters())
    vec = torch.linspace(-1, 1, n, dtype=dtype).to(device)
    torch.nn.utils.vector_to_parameters(vec, net.parameters())
    return [dict(net.named_parameters()), torch.nn.utils.parameters_to_vector(net.parameters())]


def nn_utils_skip_init(device, dtype):
    on = On(device)
    m = torch.nn.utils.skip_init(torch.nn.Linear, 3, 4, device=device, dtype=dtype)
    shapes = [(n, tuple(p.shape), str(p.dtype), on.on_run_device(p)) for n, p in m.named_parameters()]
    with torch.no_grad():
        m.weight.fill_(0.5)
        m.bias.fill_(-1.0)
    return [shapes, m(torch.ones(2, 3, dtype=dtype).to(device))]


def nn_utils_stateless_functional_call(device, dtype):
    from torch.nn.utils.stateless import functional_call
    net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)
    x = torch.randn(4, 3, dtype=dtype).to(device)
    w = torch.full((3,), 0.1, dtype=dtype).to(device).requires_grad_()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        y = functional_call(net, {'0.weight': w}, (x,))
    loss(y).backward()
    return [y, w.grad, net[0].weight, net(x)]


def nn_utils_parametrize_is_parametrized(device, dtype):
    import torch.nn.utils.parametrize as P
    class Sym(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    lin = torch.nn.Linear(3, 3, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    before = P.is_parametrized(lin)
    P.register_parametrization(lin, 'weight', Sym())
    return [before, P.is_parametrized(lin), P.is_parametrized(lin, 'weight'), P.is_parametrized(lin, 'bias'), lin(x)]


def nn_utils_parametrize_remove_parametrizations(device, dtype):
    import torch.nn.utils.parametrize as P
    class Sym(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    lin = torch.nn.Linear(3, 3, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    P.register_parametrization(lin, 'weight', Sym())
    sym = lin.weight.detach().clone()
    P.remove_parametrizations(lin, 'weight', leave_parametrized=True)
    return [sym, lin.weight, type(lin.weight).__name__, P.is_parametrized(lin), lin(x)]


def nn_utils_parametrize_cached(device, dtype):
    import torch.nn.utils.parametrize as P
    class Sym(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    lin = torch.nn.Linear(3, 3, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    P.register_parametrization(lin, 'weight', Sym())
    with P.cached():
        a = lin.weight
        same = a is lin.weight
        y = lin(x) + lin(x)
    loss(y).backward()
    return [same, y, lin.parametrizations.weight.original.grad]


def nn_utils_parametrize_ParametrizationList(device, dtype):
    on = On(device)
    import torch.nn.utils.parametrize as P
    class Sym(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    lin = torch.nn.Linear(3, 3, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    P.register_parametrization(lin, 'weight', Sym())
    plist = lin.parametrizations.weight
    lin(x).sum().backward()
    return [type(plist).__name__, isinstance(plist, P.ParametrizationList), len(plist), plist(), plist.original.grad, on.on_run_device(plist.original)]


def nn_utils_parametrize_ParametrizationList_right_inverse(device, dtype):
    import torch.nn.utils.parametrize as P
    class Sym(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    lin = torch.nn.Linear(3, 3, dtype=dtype).to(device)
    x = torch.randn(2, 3, dtype=dtype).to(device)
    P.register_parametrization(lin, 'weight', Sym())
    plist = lin.parametrizations.weight
    A = torch.randn(3, 3, dtype=dtype).to(device)
    plist.right_inverse(A + A.T)
    return [plist.original, lin.weight, lin(x)]


def nn_utils_rnn_pack_padded_sequence(device, dtype):
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    sorted_ = pack_padded_sequence(x[[1, 0, 2]], torch.tensor([4, 2, 1]), batch_first=True)
    back, lens = pad_packed_sequence(packed, batch_first=True)
    return [packed.data, packed.batch_sizes.tolist(), packed.sorted_indices, sorted_.data, back, lens.tolist(), packed.batch_sizes.device.type]


def nn_utils_rnn_pack_sequence(device, dtype):
    on = On(device)
    from torch.nn.utils.rnn import pack_sequence
    seqs = [torch.randn(n, 2, dtype=dtype).to(device) for n in (4, 2, 3)]
    p = pack_sequence(seqs, enforce_sorted=False)
    return [p.data, p.batch_sizes.tolist(), p.sorted_indices, on.on_run_device(p.data)]


def nn_utils_rnn_unpack_sequence(device, dtype):
    from torch.nn.utils.rnn import pack_sequence, unpack_sequence
    seqs = [torch.randn(n, 2, dtype=dtype).to(device) for n in (4, 2, 3)]
    return unpack_sequence(pack_sequence(seqs, enforce_sorted=False))


def nn_utils_rnn_PackedSequence(device, dtype):
    from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    again = PackedSequence(packed.data * 2, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    rnn = torch.nn.GRU(2, 3, batch_first=True).to(dtype).to(device)
    y, h = rnn(again)
    return [isinstance(y, PackedSequence), y.data, h, pad_packed_sequence(again, batch_first=True)[0]]


def nn_utils_rnn_PackedSequence_data(device, dtype):
    on = On(device)
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return [packed.data, on.on_run_device(packed.data)]


def nn_utils_rnn_PackedSequence_batch_sizes(device, dtype):
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    # documented to stay on the CPU: compared as values and where it lives
    return [packed.batch_sizes.tolist(), packed.batch_sizes.device.type]


def nn_utils_rnn_PackedSequence_sorted_indices(device, dtype):
    on = On(device)
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return [packed.sorted_indices, on.on_run_device(packed.sorted_indices)]


def nn_utils_rnn_PackedSequence_unsorted_indices(device, dtype):
    on = On(device)
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return [packed.unsorted_indices, on.on_run_device(packed.unsorted_indices)]


def nn_utils_rnn_PackedSequence_count(device, dtype):
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    plain = pack_padded_sequence(x[[1, 0, 2]], torch.tensor([4, 2, 1]), batch_first=True)
    return [packed.count(None), plain.count(None), packed.data]


def nn_utils_rnn_PackedSequence_index(device, dtype):
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    plain = pack_padded_sequence(x[[1, 0, 2]], torch.tensor([4, 2, 1]), batch_first=True)
    return [packed.index(packed.data), plain.index(None), plain.sorted_indices]


def nn_utils_rnn_PackedSequence_is_cuda(device, dtype):
    on = On(device)
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return [packed.is_cuda, packed.data.is_cuda, on.on_run_device(packed.data)]


def nn_utils_rnn_PackedSequence_is_pinned(device, dtype):
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return [packed.is_pinned(), packed.data]


def nn_utils_rnn_PackedSequence_to(device, dtype):
    on = On(device)
    from torch.nn.utils.rnn import pack_padded_sequence
    x = torch.randn(3, 4, 2, dtype=dtype).to(device)
    lengths = torch.tensor([2, 4, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    d = packed.to(torch.float64)
    c = packed.cpu().to(device)
    return [d.data, str(d.data.dtype), c.data, on.on_run_device(c.data), c.sorted_indices]


def utils_data_TensorDataset(device, dtype):
    on = On(device)
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    return [len(ds), ds[2], ds[5][1], on.on_run_device(ds[0][0])]


def utils_data_Dataset(device, dtype):
    on = On(device)
    import torch.utils.data as D
    class Squares(D.Dataset):
        def __init__(self, t):
            self.t = t
        def __len__(self):
            return len(self.t)
        def __getitem__(self, i):
            return self.t[i] ** 2
    sq = Squares(torch.randn(5, 2, dtype=dtype).to(device))
    both = sq + sq
    return [len(sq), sq[3], len(both), both[7], on.on_run_device(sq[0])]


def utils_data_DataLoader(device, dtype):
    on = On(device)
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    dl = D.DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(3))
    batches = list(dl)
    last = list(D.DataLoader(ds, batch_size=4, drop_last=True))
    return [len(dl), batches, len(last), on.on_run_device(batches[0][0])]


def utils_data_ConcatDataset(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    more = D.TensorDataset(torch.ones(2, 3, dtype=dtype).to(device), torch.tensor([7, 8]).to(device))
    cat = D.ConcatDataset([ds, more])
    return [len(cat), cat[6], cat[-1], cat.cumulative_sizes, list(D.DataLoader(cat, batch_size=8))]


def utils_data_Subset(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    sub = D.Subset(ds, [4, 0, 2])
    return [len(sub), sub[0], list(D.DataLoader(sub, batch_size=3))]


def utils_data_StackDataset(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)  # noqa: F841  (drawn all the same: later draws keep their values)
    st = D.StackDataset(feat=D.TensorDataset(xs), label=D.TensorDataset(ys))
    return [len(st), st[1], list(D.DataLoader(st, batch_size=6))]


def utils_data_IterableDataset(device, dtype):
    import torch.utils.data as D
    class Windows(D.IterableDataset):
        def __init__(self, t):
            self.t = t
        def __iter__(self):
            for i in range(len(self.t) - 1):
                yield self.t[i:i + 2].sum(0)
    src = torch.randn(5, 3, dtype=dtype).to(device)
    return [list(Windows(src)), list(D.DataLoader(Windows(src), batch_size=2))]


def utils_data_ChainDataset(device, dtype):
    import torch.utils.data as D
    class Rows(D.IterableDataset):
        def __init__(self, t):
            self.t = t
        def __iter__(self):
            return iter(self.t)
    a = torch.randn(2, 3, dtype=dtype).to(device)
    b = torch.randn(3, 3, dtype=dtype).to(device)
    chain = D.ChainDataset([Rows(a), Rows(b)])
    return [list(chain), list(D.DataLoader(chain, batch_size=5))]


def utils_data_Sampler(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    class Reverse(D.Sampler):
        def __init__(self, n):
            self.n = n
        def __iter__(self):
            return iter(range(self.n - 1, -1, -1))
        def __len__(self):
            return self.n
    return [list(Reverse(6)), list(D.DataLoader(ds, batch_size=3, sampler=Reverse(6)))]


def utils_data_SequentialSampler(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    s = D.SequentialSampler(ds)
    return [list(s), [ds[i] for i in s], list(D.DataLoader(ds, sampler=s, batch_size=4))]


def utils_data_RandomSampler(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    s = D.RandomSampler(ds, generator=torch.Generator().manual_seed(5))
    r = D.RandomSampler(ds, replacement=True, num_samples=4, generator=torch.Generator().manual_seed(5))
    order = list(s)
    return [sorted(order), order, list(r), list(D.DataLoader(ds, sampler=s, batch_size=3))]


def utils_data_SubsetRandomSampler(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    s = D.SubsetRandomSampler([1, 3, 5], generator=torch.Generator().manual_seed(2))
    order = list(s)
    return [sorted(order), order, list(D.DataLoader(ds, sampler=s, batch_size=3))]


def utils_data_distributed_DistributedSampler(device, dtype):
    import torch.utils.data as D
    xs = torch.randn(6, 3, dtype=dtype).to(device)
    ys = torch.arange(6).to(device)
    ds = D.TensorDataset(xs, ys)
    from torch.utils.data.distributed import DistributedSampler
    shards = []
    for rank in range(2):
        s = DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=True, seed=4)
        s.set_epoch(1)
        shards.append([list(s), list(D.DataLoader(ds, sampler=s, batch_size=3))])
    return shards


def utils_data_default_collate(device, dtype):
    on = On(device)
    import collections

    from torch.utils.data import default_collate
    Pt = collections.namedtuple('Pt', 'x y')
    items = [{'a': torch.randn(2, dtype=dtype).to(device), 'p': Pt(torch.tensor(i).to(device), 1.5 * i), 'n': i} for i in range(3)]
    b = default_collate(items)
    # numbers become new CPU tensors (the collate's documented answer): compared with where they live
    return [b['a'], b['p'].x, b['p'].y.tolist(), b['n'].tolist(), on.on_run_device(b['a']), b['n'].device.type, type(b['p']).__name__]


def utils_data_default_convert(device, dtype):
    on = On(device)
    import collections

    import numpy as np
    from torch.utils.data import default_convert
    Pt = collections.namedtuple('Pt', 'x y')
    t = torch.randn(3, dtype=dtype).to(device)
    c = default_convert([Pt(t, np.arange(3)), {'k': t * 2}])
    return [c[0].x, c[0].y.tolist(), c[0].y.device.type, c[1]['k'], type(c[0]).__name__, on.on_run_device(c[0].x), c[0].x.data_ptr() == t.data_ptr()]


def utils_data_get_worker_info(device, dtype):
    import torch.utils.data as D
    class Tagged(D.Dataset):
        def __init__(self, t):
            self.t = t
        def __len__(self):
            return len(self.t)
        def __getitem__(self, i):
            info = D.get_worker_info()
            return self.t[i], 'main' if info is None else info.id
    src = torch.randn(4, 2, dtype=dtype).to(device)
    return [D.get_worker_info(), list(D.DataLoader(Tagged(src), batch_size=2, num_workers=0))]


def utils_data_IterDataPipe(device, dtype):
    import torch.utils.data as D
    from torch.utils.data.datapipes.iter import IterableWrapper
    t = torch.randn(4, 3, dtype=dtype).to(device)
    dp = IterableWrapper(list(t)).map(lambda r: r * 2).filter(lambda r: bool(r.sum() > -100))
    return [isinstance(dp, D.IterDataPipe), list(dp), list(dp.batch(3))]


def utils_data_MapDataPipe(device, dtype):
    import torch.utils.data as D
    from torch.utils.data.datapipes.map import SequenceWrapper
    t = torch.randn(4, 3, dtype=dtype).to(device)
    dp = SequenceWrapper(list(t)).map(lambda r: r.cumsum(0))
    return [isinstance(dp, D.MapDataPipe), len(dp), dp[2], list(dp)]


def utils_data_graph_settings_apply_sharding(device, dtype):
    from torch.utils.data import graph_settings
    from torch.utils.data.datapipes.iter import IterableWrapper
    t = torch.randn(6, 2, dtype=dtype).to(device)
    shards = []
    for i in range(2):
        dp = IterableWrapper(list(t)).sharding_filter().map(lambda r: r + 1)
        graph_settings.apply_sharding(dp, 2, i)
        shards.append(list(dp))
    return shards


def utils_data_graph_settings_get_all_graph_pipes(device, dtype):
    from torch.utils.data import graph_settings
    from torch.utils.data.datapipes.iter import IterableWrapper
    from torch.utils.data.graph import traverse_dps
    t = torch.randn(3, 2, dtype=dtype).to(device)
    dp = IterableWrapper(list(t)).map(lambda r: r * 3).batch(2)
    pipes = graph_settings.get_all_graph_pipes(traverse_dps(dp))
    return [sorted(type(p).__name__ for p in pipes), list(dp)]


def utils_checkpoint_checkpoint(device, dtype):
    import torch.utils.checkpoint as C
    lin = torch.nn.Linear(4, 4, dtype=dtype).to(device)
    def block(x):
        return torch.tanh(lin(x)).sin() * x
    x = torch.randn(3, 4, dtype=dtype).to(device).requires_grad_()
    y = C.checkpoint(block, x, use_reentrant=False)
    loss(y).backward()
    x2 = x.detach().clone().requires_grad_()
    y2 = C.checkpoint(block, x2, use_reentrant=True)
    loss(y2).backward()
    return [y, x.grad, lin.weight.grad, y2, x2.grad]


def utils_checkpoint_checkpoint_sequential(device, dtype):
    import torch.utils.checkpoint as C
    seq = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 4), torch.nn.Sigmoid()).to(dtype).to(device)
    x = torch.randn(3, 4, dtype=dtype).to(device).requires_grad_()
    y = C.checkpoint_sequential(seq, 2, x, use_reentrant=False)
    loss(y).backward()
    return [y, x.grad, seq[0].weight.grad, seq[2].bias.grad]


def utils_checkpoint_CheckpointPolicy(device, dtype):
    import torch.utils.checkpoint as C
    lin = torch.nn.Linear(4, 4, dtype=dtype).to(device)
    def block(x):
        return torch.tanh(lin(x)).sin() * x
    x = torch.randn(3, 4, dtype=dtype).to(device).requires_grad_()
    import functools
    seen = []
    def policy(ctx, op, *args, **kwargs):
        seen.append((str(op), ctx.is_recompute))
        return C.CheckpointPolicy.MUST_SAVE if op == torch.ops.aten.tanh.default else C.CheckpointPolicy.PREFER_RECOMPUTE
    ctx_fn = functools.partial(C.create_selective_checkpoint_contexts, policy)
    y = C.checkpoint(block, x, use_reentrant=False, context_fn=ctx_fn)
    loss(y).backward()
    return [y, x.grad, lin.weight.grad, sorted({s for s in seen}), [p.name for p in C.CheckpointPolicy]]


def utils_checkpoint_SelectiveCheckpointContext(device, dtype):
    import torch.utils.checkpoint as C
    lin = torch.nn.Linear(4, 4, dtype=dtype).to(device)
    def block(x):
        return torch.tanh(lin(x)).sin() * x
    x = torch.randn(3, 4, dtype=dtype).to(device).requires_grad_()
    import functools
    ctxs = []
    def policy(ctx, op, *args, **kwargs):
        ctxs.append([isinstance(ctx, C.SelectiveCheckpointContext), ctx.is_recompute])
        return C.CheckpointPolicy.PREFER_SAVE
    y = C.checkpoint(block, x, use_reentrant=False,
                     context_fn=functools.partial(C.create_selective_checkpoint_contexts, policy))
    loss(y).backward()
    return [y, x.grad, sorted({tuple(c) for c in ctxs})]


def utils_checkpoint_set_checkpoint_debug_enabled(device, dtype):
    import torch.utils.checkpoint as C
    lin = torch.nn.Linear(4, 4, dtype=dtype).to(device)
    def block(x):
        return torch.tanh(lin(x)).sin() * x
    x = torch.randn(3, 4, dtype=dtype).to(device).requires_grad_()
    with C.set_checkpoint_debug_enabled(True):
        y = C.checkpoint(block, x, use_reentrant=False)
        loss(y).backward()
    return [y, x.grad, lin.weight.grad]


# --- pruning --------------------------------------------------------------------------------


def pruned_linear(device, dtype):
    """A device Linear(4, 6) to prune, its input ``x``, a copy of its weight ``w`` and a
    fixed mask (every third entry pruned)."""
    lin = torch.nn.Linear(4, 6, dtype=dtype).to(device)
    x = torch.randn(3, 4, dtype=dtype).to(device)
    w = lin.weight.detach().clone()
    mask = (torch.arange(24).reshape(6, 4) % 3 != 0).to(dtype).to(device)
    return lin, x, w, mask


class Half(prune.BasePruningMethod):
    # BasePruningMethod is abstract: a subclass that keeps every other entry
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        m = default_mask.clone()
        m.view(-1)[::2] = 0
        return m


# class -> its arguments (the constructor's, and apply()'s after (module, name)), given the mask
PRUNE_ARGS = {
    "CustomFromMask": lambda mask: {"mask": mask},
    "Identity": lambda mask: {},
    "L1Unstructured": lambda mask: {"amount": 0.5},
    "LnStructured": lambda mask: {"amount": 0.5, "n": 2, "dim": 0},
    "RandomUnstructured": lambda mask: {"amount": 0.5},
    "RandomStructured": lambda mask: {"amount": 0.5, "dim": 0},
    "BasePruningMethod": lambda mask: {},
}
# the random methods (their masks are judged by facts) and those whose facts count whole rows
# (a structured one prunes whole rows; an unstructured one zeroes a row only by chance)
DRAWN = ("RandomUnstructured", "RandomStructured")
ROWS = ("RandomStructured",)


def facts(on, m, structured):
    """What the mask ``m`` of a random method is judged by: how many entries are zero; for
    a structured method, how many whole rows are zero and whether every row is all kept or
    all pruned; the mask holds only 0 and 1."""
    rows = ((m == 0).all(1) | (m == 1).all(1)).all() if structured else True
    return [on.meta(m), int((m == 0).sum()), int((m == 0).all(1).sum()) if structured else None,
            bool(rows), bool(((m == 0) | (m == 1)).all())]


def pruning(api, mask):
    """``torch.nn.utils.prune.<class>[.<method>]`` -> (class name, the class, its arguments)."""
    name = api[len(PRUNE):].split(".")[0]
    cls = Half if name == "BasePruningMethod" else getattr(prune, name)
    return name, cls, PRUNE_ARGS[name](mask)


def pruning_method(device, dtype, api):
    on = On(device)
    lin, x, w, mask = pruned_linear(device, dtype)
    name, cls, args = pruning(api, mask)
    pm = cls(**args)
    m = pm.compute_mask(w, default_mask=torch.ones_like(w))
    if name in DRAWN:
        return [type(pm).__name__, pm.PRUNING_TYPE, facts(on, m, name in ROWS)]
    return [type(pm).__name__, pm.PRUNING_TYPE, m, pm.prune(w)]


def pruning_method_apply(device, dtype, api):
    on = On(device)
    lin, x, w, mask = pruned_linear(device, dtype)
    name, cls, args = pruning(api, mask)
    method = cls.apply(lin, "weight", **args)
    kept = [sorted(n for n, _ in lin.named_buffers()), sorted(n for n, _ in lin.named_parameters())]
    if name in DRAWN:
        return [type(method).__name__, facts(on, lin.weight_mask, name in ROWS)] + kept
    return [type(method).__name__, lin.weight_mask] + kept + [lin.weight, lin(x)]


def pruning_method_apply_mask(device, dtype, api):
    lin, x, w, mask = pruned_linear(device, dtype)
    name, cls, args = pruning(api, mask)
    method = cls.apply(lin, "weight", **args)
    pruned = method.apply_mask(lin)
    if name in DRAWN:
        return [bool(torch.equal(pruned, lin.weight_orig * lin.weight_mask)), int((pruned == 0).sum()) >= 12]
    return pruned


def pruning_method_compute_mask(device, dtype, api):
    on = On(device)
    lin, x, w, mask = pruned_linear(device, dtype)
    name, cls, args = pruning(api, mask)
    pm = cls(**args)
    if name in DRAWN:
        return facts(on, pm.compute_mask(w, default_mask=torch.ones_like(w)), name in ROWS)
    return pm.compute_mask(w, default_mask=mask)


def pruning_method_prune(device, dtype, api):
    on = On(device)
    lin, x, w, mask = pruned_linear(device, dtype)
    name, cls, args = pruning(api, mask)
    p = cls(**args).prune(w)
    if name in DRAWN:
        return [on.meta(p), int((p == 0).sum())]
    return p


def pruning_method_remove(device, dtype, api):
    # the method's own remove() makes the pruning permanent; the forward pre-hook stays
    # registered (prune.remove drops it), so the forward is taken by hand
    lin, x, w, mask = pruned_linear(device, dtype)
    name, cls, args = pruning(api, mask)
    method = cls.apply(lin, "weight", **args)
    method.remove(lin)
    kept = [sorted(n for n, _ in lin.named_buffers()), sorted(n for n, _ in lin.named_parameters())]
    if name in DRAWN:
        return kept + [int((lin.weight == 0).sum())]
    return kept + [lin.weight, F.linear(x, lin.weight, lin.bias)]


def container(device, dtype):
    """A container arises from pruning one parameter twice; its apply() takes methods that
    already know their parameter (``other``: made by apply() on another Linear)."""
    lin, x, w, mask = pruned_linear(device, dtype)
    prune.l1_unstructured(lin, "weight", amount=0.25)
    prune.ln_structured(lin, "weight", amount=0.5, n=1, dim=0)
    pc = next(h for h in lin._forward_pre_hooks.values() if isinstance(h, prune.PruningContainer))
    other = prune.LnStructured.apply(torch.nn.Linear(4, 6, dtype=dtype).to(device), "weight",
                                     amount=0.25, n=1, dim=1)
    return lin, x, w, mask, pc, other


def PruningContainer(device, dtype):
    lin, x, w, mask, pc, other = container(device, dtype)
    return [[type(m).__name__ for m in pc], len(pc), lin.weight_mask, lin(x)]


def PruningContainer_apply_mask(device, dtype):
    lin, x, w, mask, pc, other = container(device, dtype)
    return pc.apply_mask(lin)


def PruningContainer_compute_mask(device, dtype):
    lin, x, w, mask, pc, other = container(device, dtype)
    return [pc.compute_mask(w, default_mask=mask), pc.compute_mask(w, torch.ones_like(w))]


def PruningContainer_prune(device, dtype):
    lin, x, w, mask, pc, other = container(device, dtype)
    return pc.prune(w)


def PruningContainer_remove(device, dtype):
    lin, x, w, mask, pc, other = container(device, dtype)
    pc.remove(lin)
    return [sorted(n for n, _ in lin.named_buffers()), lin.weight, F.linear(x, lin.weight, lin.bias)]


def PruningContainer_add_pruning_method(device, dtype):
    lin, x, w, mask, pc, other = container(device, dtype)
    pc.add_pruning_method(other)
    return [[type(m).__name__ for m in pc], pc.compute_mask(w, torch.ones_like(w))]


def l1_then_remove(lin, mask):
    prune.l1_unstructured(lin, "weight", amount=0.5)
    prune.remove(lin, "weight")


# the functional forms: prune.identity(module, name), ...
PRUNE_CALLS = {
    "identity": lambda lin, mask: prune.identity(lin, "weight"),
    "l1_unstructured": lambda lin, mask: prune.l1_unstructured(lin, "weight", amount=0.5),
    "random_structured": lambda lin, mask: prune.random_structured(lin, "weight", amount=0.5, dim=0),
    "random_unstructured": lambda lin, mask: prune.random_unstructured(lin, "weight", amount=0.25),
    "ln_structured": lambda lin, mask: prune.ln_structured(lin, "weight", amount=0.5, n=2, dim=0),
    "global_unstructured": lambda lin, mask: prune.global_unstructured(
        [(lin, "weight")], pruning_method=prune.L1Unstructured, amount=10),
    "custom_from_mask": lambda lin, mask: prune.custom_from_mask(lin, "weight", mask),
    "remove": l1_then_remove,
}


def pruning_function(device, dtype, api):
    lin, x, w, mask = pruned_linear(device, dtype)
    PRUNE_CALLS[api.rsplit(".", 1)[-1]](lin, mask)
    return [lin.weight, sorted(n for n, _ in lin.named_buffers()), lin(x)]


def random_pruning_function(device, dtype, api):
    on = On(device)
    lin, x, w, mask = pruned_linear(device, dtype)
    name = api.rsplit(".", 1)[-1]
    PRUNE_CALLS[name](lin, mask)
    return [facts(on, lin.weight_mask, name == "random_structured"),
            bool(torch.equal(lin.weight, lin.weight_orig * lin.weight_mask))]


def is_pruned(device, dtype):
    lin, x, w, mask = pruned_linear(device, dtype)
    before = prune.is_pruned(lin)
    prune.identity(lin, "bias")
    return [[before, prune.is_pruned(lin)], lin(x)]


def pruning_cases(suffix, body):
    """The cases of ``<class><suffix>`` for every pruning class but the container: one for
    the deterministic classes, one for the random ones (tagged ``random``)."""
    kept = [c for c in PRUNE_ARGS if c not in DRAWN]
    return (Case(PRUNE + kept[0] + suffix, body, F32, aliases=tuple(PRUNE + c + suffix for c in kept[1:])),
            Case(PRUNE + DRAWN[0] + suffix, body, F32, tags=RANDOM,
                 aliases=tuple(PRUNE + c + suffix for c in DRAWN[1:])))



# --- the table ----------------------------------------------------------------------------

CASES = (
    Case("torch.nn.AdaptiveLogSoftmaxWithLoss", nn_AdaptiveLogSoftmaxWithLoss, F32),
    Case("torch.nn.AdaptiveLogSoftmaxWithLoss.log_prob", nn_AdaptiveLogSoftmaxWithLoss_log_prob, F32),
    Case("torch.nn.AdaptiveLogSoftmaxWithLoss.predict", nn_AdaptiveLogSoftmaxWithLoss_predict, F32),
    Case("torch.nn.EmbeddingBag", nn_EmbeddingBag, FH),
    Case("torch.nn.EmbeddingBag.forward", nn_EmbeddingBag_forward, FH),
    Case("torch.nn.LazyLinear", nn_LazyLinear, F32),
    Case("torch.nn.modules.lazy.LazyModuleMixin.has_uninitialized_params", nn_modules_lazy_LazyModuleMixin_has_uninitialized_params, F32),
    Case("torch.nn.modules.lazy.LazyModuleMixin.initialize_parameters", nn_modules_lazy_LazyModuleMixin_initialize_parameters, F32),
    Case("torch.nn.MaxUnpool2d", nn_MaxUnpool2d, FH),
    Case("torch.nn.Module", nn_Module, F32),
    Case("torch.nn.Sequential", nn_Sequential, F32),
    Case("torch.nn.ModuleList", nn_ModuleList, F32),
    Case("torch.nn.ModuleDict", nn_ModuleDict, F32),
    Case("torch.nn.ParameterList", nn_ParameterList, F32),
    Case("torch.nn.ParameterDict", nn_ParameterDict, F32),
    Case("torch.nn.MultiheadAttention.forward", nn_MultiheadAttention_forward, F32),
    Case("torch.nn.RNNBase", nn_RNNBase, F32),
    Case("torch.nn.RNNBase.flatten_parameters", nn_RNNBase_flatten_parameters, F32),
    Case("torch.nn.SyncBatchNorm", nn_SyncBatchNorm, F32),
    Case("torch.nn.SyncBatchNorm.convert_sync_batchnorm", nn_SyncBatchNorm_convert_sync_batchnorm, F32),
    Case("torch.nn.Transformer.forward", nn_Transformer_forward, F32),
    Case("torch.nn.TransformerEncoderLayer.forward", nn_TransformerEncoderLayer_forward, F32),
    Case("torch.nn.TransformerEncoder.forward", nn_TransformerEncoder_forward, F32),
    Case("torch.nn.TransformerDecoderLayer.forward", nn_TransformerDecoderLayer_forward, F32),
    Case("torch.nn.TransformerDecoder.forward", nn_TransformerDecoder_forward, F32),
    Case("torch.nn.TripletMarginWithDistanceLoss", nn_TripletMarginWithDistanceLoss, F32),
    Case("torch.nn.parameter.Parameter", nn_parameter_Parameter, F32),
    Case("torch.nn.parameter.Buffer", nn_parameter_Buffer, F32),
    Case("torch.nn.parameter.UninitializedParameter", nn_parameter_UninitializedParameter, F32),
    Case("torch.nn.parameter.UninitializedParameter.cls_to_become", nn_parameter_UninitializedParameter_cls_to_become, F32),
    Case("torch.nn.parameter.UninitializedBuffer", nn_parameter_UninitializedBuffer, F32),
    Case("torch.nn.parameter.is_lazy", nn_parameter_is_lazy, F32),
    Case("torch.nn.modules.module.register_module_full_backward_hook", nn_modules_module_register_module_full_backward_hook, F32),
    Case("torch.nn.functional.affine_grid", nn_functional_affine_grid, FH),
    Case("torch.nn.functional.fold", nn_functional_fold, FH),
    Case("torch.nn.functional.lp_pool1d", nn_functional_lp_pool1d, FH),
    Case("torch.nn.functional.lp_pool2d", nn_functional_lp_pool2d, FH),
    Case("torch.nn.functional.upsample", nn_functional_upsample, FH),
    Case("torch.nn.functional.conv3d", nn_functional_conv3d, FH),
    Case("torch.nn.functional.embedding", nn_functional_embedding, FH),
    Case("torch.nn.functional.fractional_max_pool2d", nn_functional_fractional_max_pool2d, FH),
    Case("torch.nn.functional.fractional_max_pool3d", nn_functional_fractional_max_pool3d, FH),
    Case("torch.nn.functional.scaled_dot_product_attention", nn_functional_scaled_dot_product_attention, FH),
    Case("torch.nn.functional.rrelu", nn_functional_rrelu, F32, tags=RANDOM),
    Case("torch.nn.functional.dropout", nn_functional_dropout, FH, tags=RANDOM),
    Case("torch.nn.functional.dropout2d", nn_functional_dropout2d, FH, tags=RANDOM),
    Case("torch.nn.functional.alpha_dropout", nn_functional_alpha_dropout, FH, tags=RANDOM),
    Case("torch.nn.utils.clip_grad_norm_", nn_utils_clip_grad_norm_, FB),
    Case("torch.nn.utils.clip_grad_norm", nn_utils_clip_grad_norm, FB),
    Case("torch.nn.utils.clip_grad_value_", nn_utils_clip_grad_value_, FB),
    Case("torch.nn.utils.vector_to_parameters", nn_utils_vector_to_parameters, FB),
    Case("torch.nn.utils.skip_init", nn_utils_skip_init, F32),
    Case("torch.nn.utils.stateless.functional_call", nn_utils_stateless_functional_call, F32),
    Case("torch.nn.utils.parametrize.is_parametrized", nn_utils_parametrize_is_parametrized, F32),
    Case("torch.nn.utils.parametrize.remove_parametrizations", nn_utils_parametrize_remove_parametrizations, F32),
    Case("torch.nn.utils.parametrize.cached", nn_utils_parametrize_cached, F32),
    Case("torch.nn.utils.parametrize.ParametrizationList", nn_utils_parametrize_ParametrizationList, F32),
    Case("torch.nn.utils.parametrize.ParametrizationList.right_inverse", nn_utils_parametrize_ParametrizationList_right_inverse, F32),
    Case("torch.nn.utils.rnn.pack_padded_sequence", nn_utils_rnn_pack_padded_sequence, FB),
    Case("torch.nn.utils.rnn.pack_sequence", nn_utils_rnn_pack_sequence, F32),
    Case("torch.nn.utils.rnn.unpack_sequence", nn_utils_rnn_unpack_sequence, F32),
    Case("torch.nn.utils.rnn.PackedSequence", nn_utils_rnn_PackedSequence, F32),
    Case("torch.nn.utils.rnn.PackedSequence.data", nn_utils_rnn_PackedSequence_data, FB),
    Case("torch.nn.utils.rnn.PackedSequence.batch_sizes", nn_utils_rnn_PackedSequence_batch_sizes, F32),
    Case("torch.nn.utils.rnn.PackedSequence.sorted_indices", nn_utils_rnn_PackedSequence_sorted_indices, F32),
    Case("torch.nn.utils.rnn.PackedSequence.unsorted_indices", nn_utils_rnn_PackedSequence_unsorted_indices, F32),
    Case("torch.nn.utils.rnn.PackedSequence.count", nn_utils_rnn_PackedSequence_count, F32),
    Case("torch.nn.utils.rnn.PackedSequence.index", nn_utils_rnn_PackedSequence_index, F32),
    Case("torch.nn.utils.rnn.PackedSequence.is_cuda", nn_utils_rnn_PackedSequence_is_cuda, F32),
    Case("torch.nn.utils.rnn.PackedSequence.is_pinned", nn_utils_rnn_PackedSequence_is_pinned, F32),
    Case("torch.nn.utils.rnn.PackedSequence.to", nn_utils_rnn_PackedSequence_to, F32),
    Case("torch.utils.data.TensorDataset", utils_data_TensorDataset, F32),
    Case("torch.utils.data.Dataset", utils_data_Dataset, F32),
    Case("torch.utils.data.DataLoader", utils_data_DataLoader, F32),
    Case("torch.utils.data.ConcatDataset", utils_data_ConcatDataset, F32),
    Case("torch.utils.data.Subset", utils_data_Subset, F32),
    Case("torch.utils.data.StackDataset", utils_data_StackDataset, F32),
    Case("torch.utils.data.IterableDataset", utils_data_IterableDataset, F32),
    Case("torch.utils.data.ChainDataset", utils_data_ChainDataset, F32),
    Case("torch.utils.data.Sampler", utils_data_Sampler, F32),
    Case("torch.utils.data.SequentialSampler", utils_data_SequentialSampler, F32),
    Case("torch.utils.data.RandomSampler", utils_data_RandomSampler, F32),
    Case("torch.utils.data.SubsetRandomSampler", utils_data_SubsetRandomSampler, F32),
    Case("torch.utils.data.distributed.DistributedSampler", utils_data_distributed_DistributedSampler, F32),
    Case("torch.utils.data.default_collate", utils_data_default_collate, F32),
    Case("torch.utils.data.default_convert", utils_data_default_convert, F32),
    Case("torch.utils.data.get_worker_info", utils_data_get_worker_info, F32),
    Case("torch.utils.data.IterDataPipe", utils_data_IterDataPipe, F32),
    Case("torch.utils.data.MapDataPipe", utils_data_MapDataPipe, F32),
    Case("torch.utils.data.graph_settings.apply_sharding", utils_data_graph_settings_apply_sharding, F32),
    Case("torch.utils.data.graph_settings.get_all_graph_pipes", utils_data_graph_settings_get_all_graph_pipes, F32),
    Case("torch.utils.checkpoint.checkpoint", utils_checkpoint_checkpoint, F32),
    Case("torch.utils.checkpoint.checkpoint_sequential", utils_checkpoint_checkpoint_sequential, F32),
    Case("torch.utils.checkpoint.CheckpointPolicy", utils_checkpoint_CheckpointPolicy, F32),
    Case("torch.utils.checkpoint.SelectiveCheckpointContext", utils_checkpoint_SelectiveCheckpointContext, F32),
    Case("torch.utils.checkpoint.set_checkpoint_debug_enabled", utils_checkpoint_set_checkpoint_debug_enabled, F32),
    *pruning_cases("", pruning_method),
    *pruning_cases(".apply", pruning_method_apply),
    *pruning_cases(".apply_mask", pruning_method_apply_mask),
    *pruning_cases(".compute_mask", pruning_method_compute_mask),
    *pruning_cases(".prune", pruning_method_prune),
    *pruning_cases(".remove", pruning_method_remove),
    Case(PRUNE + "PruningContainer", PruningContainer, F32),
    Case(PRUNE + "PruningContainer.apply_mask", PruningContainer_apply_mask, F32),
    Case(PRUNE + "PruningContainer.compute_mask", PruningContainer_compute_mask, F32),
    Case(PRUNE + "PruningContainer.prune", PruningContainer_prune, F32),
    Case(PRUNE + "PruningContainer.remove", PruningContainer_remove, F32),
    Case(PRUNE + "PruningContainer.add_pruning_method", PruningContainer_add_pruning_method, F32),
    Case(PRUNE + "identity", pruning_function, F32, aliases=tuple(
        PRUNE + f for f in PRUNE_CALLS if not f.startswith("random_") and f != "identity")),
    Case(PRUNE + "random_structured", random_pruning_function, F32, tags=RANDOM,
         aliases=(PRUNE + "random_unstructured",)),
    Case(PRUNE + "is_pruned", is_pruned, F32),
)

# attention: the device may take another algorithm than the CPU's flash kernel (math
# path, its own fused kernel); these are also run in float64 on the CPU (``On.dev`` /
# ``On.mod`` cast there) and judged against that golden, as the module source does
GOLDEN = frozenset({
    "torch.nn.MultiheadAttention.forward", "torch.nn.Transformer.forward",
    "torch.nn.TransformerEncoderLayer.forward", "torch.nn.TransformerEncoder.forward",
    "torch.nn.TransformerDecoderLayer.forward", "torch.nn.TransformerDecoder.forward",
    "torch.nn.functional.scaled_dot_product_attention",
})

# named reasons for APIs of these namespaces that get no scenario here
EXCLUDED = (
    Excluded('torch.nn.functional.scaled_mm', 'float8 scaled matmul: CUDA-only kernels, the CPU reference cannot run it'),
    Excluded('torch.nn.functional.scaled_grouped_mm', 'float8 grouped scaled matmul: CUDA-only kernels, the CPU reference cannot run it'),
    Excluded('torch.nn.utils.prune.PruningContainer.apply', 'fails on the CPU itself: the inherited classmethod builds a container, which has no PRUNING_TYPE (AttributeError)'),
    Excluded('torch.nn.DataParallel', 'picks its devices from the process (every device of the first accelerator type registered), not from the device under test, and scatters with torch._C._scatter, which only CUDA builds have: with the emulated device registered even the CPU reference in that process cannot run it'),
    Excluded('torch.nn.modules.flatten.Unflatten.NamedShape', 'not an attribute of torch.nn.Unflatten in this torch (a type alias of the module file)'),
)
