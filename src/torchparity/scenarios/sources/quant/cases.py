"""The cases of the ``quant`` source: one real function per torch.ao API, and the table.

Every body ``f(device, dtype)`` uses its API on the device under test and returns its
answer (compared with the same body run on the CPU): observers and fake-quantize modules
fed device tensors, QAT / intrinsic modules run forward and backward on the device, eager
and FX prepare flows on a model moved to the device, config objects used in such a flow.
Flows that end in quantized tensors (``convert``) stay on the device too: quantized
kernels exist for CPU backends (fbgemm/x86, qnnpack), and what the device answers
(a refusal, or a pass) is the verdict.

:class:`On` holds what most bodies share: the inputs ``x``, ``w`` made on the CPU and
moved to the device, and the helpers that run an observer, a module's forward and
backward, or an eager / FX prepare there. The helpers, models and bodies all live in this
one file: the footprint recorder tells scenario code from the API's by file. A body's
snippet is its source with the helpers it uses (``Case.snippet``).
"""

from __future__ import annotations

import functools

import torch
import torch.ao.nn.intrinsic as nni
import torch.ao.nn.intrinsic.qat as nniqat
import torch.ao.nn.qat as nnqat
import torch.ao.quantization as Q
from torch.ao.quantization import quantize_fx
from torch.ao.quantization.backend_config import (
    BackendConfig,
    BackendPatternConfig,
    DTypeConfig,
    DTypeWithConstraints,
    ObservationType,
)
from torch.ao.quantization.fx.custom_config import (
    ConvertCustomConfig,
    FuseCustomConfig,
    PrepareCustomConfig,
    StandaloneModuleConfigEntry,
)
from torch.ao.quantization.qconfig_mapping import QConfigMapping

from ..base import Case

F32 = ("float32",)
FLOATS = ("float32", "float64")

P = "torch.ao.quantization."
BC = P + "backend_config."
CC = P + "fx.custom_config."
OB = P + "observer."
FQ = P + "fake_quantize."
QC = P + "qconfig."
QM = P + "qconfig_mapping."


def qparams(obs):
    return list(obs.calculate_qparams())


def _cheap(qc):
    """``qc`` with a HistogramObserver activation made a MinMaxObserver (same range)"""
    if qc is None or not isinstance(qc.activation(), Q.HistogramObserver):
        return qc
    return Q.QConfig(activation=Q.MinMaxObserver.with_args(reduce_range=True), weight=qc.weight)


def scaffold_qmap() -> QConfigMapping:
    """The x86 default qconfig mapping, its HistogramObserver activations made MinMaxObserver
    ones: the mapping is scaffolding of the FX flows around the configs under test. A
    histogram's parameter search is ~56,000 small ops and as many ``.item()`` calls per
    calibration, work none of those APIs asks for (``HistogramObserver`` has its own case,
    and ``get_default_qconfig_mapping`` answers with the real mapping)."""
    real = Q.get_default_qconfig_mapping("x86")
    m = QConfigMapping().set_global(_cheap(real.global_qconfig))
    for kind, qc in real.object_type_qconfigs.items():
        m.set_object_type(kind, _cheap(qc))
    return m


def flat(tree):
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [t for s in tree for t in flat(s)]
    return []


def observers(model):
    """qparams of every observer / fake-quant in a prepared model, by module name"""
    out = {}
    for name, mod in model.named_modules():
        if isinstance(mod, (Q.ObserverBase, Q.FakeQuantizeBase)):
            try:
                out[name] = [type(mod).__name__] + qparams(mod)
            except Exception as exc:  # placeholder observers have no qparams
                out[name] = [type(mod).__name__, type(exc).__name__]
    return out


def linear_pattern(observation=None):
    """a backend pattern config for nn.Linear (quint8 activations, qint8 weights)"""
    dc = DTypeConfig(input_dtype=torch.quint8, output_dtype=torch.quint8,
                     weight_dtype=torch.qint8, bias_dtype=torch.float)
    c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)
    return c.set_observation_type(observation or ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT)


class Tiny(torch.nn.Module):
    """eager-mode model: QuantStub -> Linear -> ReLU -> DeQuantStub"""
    def __init__(self):
        super().__init__()
        self.quant = Q.QuantStub()
        self.fc = torch.nn.Linear(8, 4)
        self.relu = torch.nn.ReLU()
        self.dequant = Q.DeQuantStub()

    def forward(self, t):
        return self.dequant(self.relu(self.fc(self.quant(t))))


class Plain(torch.nn.Module):
    """FX-mode model: Linear -> ReLU -> Linear"""
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 6)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(6, 4)

    def forward(self, t):
        return self.fc2(self.relu(self.fc1(t)))


class CustomFloat(torch.nn.Module):
    """a user module the FX flow swaps through the custom configs"""
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, t):
        return self.fc(t)


class ObservedCustom(CustomFloat):
    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        o = cls()
        o.fc, o.qconfig = mod.fc, mod.qconfig
        return o


class QuantizedCustom(CustomFloat):
    @classmethod
    def from_observed(cls, mod):
        o = cls()
        o.fc = mod.fc
        return o

    def forward(self, t):
        return self.fc(t.dequantize())


class Holder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.custom = CustomFloat()
        self.relu = torch.nn.ReLU()

    def forward(self, t):
        return self.relu(self.custom(t))


class Branchy(torch.nn.Module):
    """data-dependent control flow: FX cannot trace it"""
    def forward(self, t):
        return t * 2 if bool(t.sum() > 0) else t - 1


class WithBranch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.branch = Branchy()
        self.sub = Plain()

    def forward(self, t):
        return self.sub(self.branch(self.fc(t)))


class AbsMax(Q.ObserverBase):
    """a user observer built on ObserverBase: symmetric qparams from the largest |value|"""
    def __init__(self, dtype=torch.quint8, **kwargs):
        super().__init__(dtype=dtype, **kwargs)
        self.register_buffer("amax", torch.tensor(0.0))

    def forward(self, t):
        self.amax = torch.maximum(self.amax, t.detach().abs().amax().to(self.amax.dtype))
        return t

    def calculate_qparams(self):
        return self.amax / 127.5, torch.zeros((), dtype=torch.int64, device=self.amax.device) + 128


def tagged(model):
    model.tag = 7
    return model


def edges(t, device):
    """``t`` (on the CPU) with its last element made the largest and the smallest value,
    each moved to ``device``: the boundary inputs of :class:`On`."""
    edge = 4 * t.abs().max()
    hi, lo = t.clone(), t.clone()
    hi[-1, -1], lo[-1, -1] = edge, -edge
    return hi.to(device), lo.to(device)


class On:
    """The device under test and the inputs made there: ``x`` and ``w`` (4 x 8, drawn on
    the CPU in ``dtype``, moved to ``device``), and the helpers that use them. Models are
    moved in ``dtype`` too (``place``: a float16 / bfloat16 model, as a user trains one);
    observers and fake-quant modules keep their own buffers and are fed ``dtype`` inputs.

    ``hi`` and ``lo`` (``w_hi`` and ``w_lo`` for ``w``) are ``x`` with its last element (the
    last of every row, column and of the whole tensor) made the largest and the smallest value: a boundary input, so that
    a min / max that misses an edge element of its reduction shows in the range observed."""

    def __init__(self, device, dtype):
        self.device = device
        self.dtype = dtype
        x = torch.randn(4, 8, dtype=dtype)
        w = torch.randn(4, 8, dtype=dtype)
        self.x, self.w = x.to(device), w.to(device)
        self.hi, self.lo = edges(x, device)
        self.w_hi, self.w_lo = edges(w, device)  # the same boundary for a weight observer

    @functools.cached_property
    def qmap(self):
        """the scaffolding qconfig mapping (a fresh one per case)"""
        return scaffold_qmap()

    def place(self, m):
        """a model on the device, its floating parameters and buffers in the case's dtype"""
        return m.to(device=self.device, dtype=self.dtype)

    def observe(self, obs, *inputs):
        """the observer on the device, fed device tensors"""
        obs = obs.to(self.device)
        for t in inputs or (self.x,):
            obs(t)
        return obs

    def fwd_bwd(self, m, *inputs):
        """forward and backward of a module on the device: output, input and parameter grads"""
        m = self.place(m)
        ins = [t.detach().clone().requires_grad_() for t in (inputs or (self.x,))]
        y = m(*ins)
        sum(t.sum() for t in flat(y)).backward()
        return {"output": y, "input_grads": [t.grad for t in ins],
                "param_grads": {n: p.grad for n, p in m.named_parameters()}}

    def eager_prepare(self, qconfig, model=None):
        """eager prepare of a model on the device with ``qconfig``, calibrated on ``x``"""
        m = self.place(model or Tiny()).eval()
        m.qconfig = qconfig
        p = Q.prepare(m)
        y = p(self.x)
        return p, {"output": y, "observers": observers(p)}

    def fx_prepare(self, mapping=None, model=None, **kw):
        """FX prepare of a model on the device, calibrated on ``x``"""
        m = self.place(model or Plain()).eval()
        p = quantize_fx.prepare_fx(m, mapping or scaffold_qmap(), (self.x,), **kw)
        y = p(self.x)
        return p, {"output": y, "observers": observers(p),
                   "modules": sorted(type(mod).__name__ for mod in p.modules())}


# --- shared answers: one function, the variant as its parameters ---------------------------

def observed(on, obs, *feed):
    """an observer fed device tensors (``x, x * 2`` and the boundary inputs ``hi``, ``lo``
    by default): its qparams and state"""
    obs = on.observe(obs, *(feed or (on.x, on.x * 2, on.hi, on.lo)))
    return {"qparams": qparams(obs), "state": obs.state_dict()}


def qconfig_answer(on, qc):
    """a qconfig's activation and weight observers fed device tensors (each with the
    boundary inputs too), and an eager prepare of a tiny model on the device with it"""
    act = on.observe(qc.activation(), on.x, on.hi, on.lo)
    wt = on.observe(qc.weight(), on.w, on.w_hi, on.w_lo)
    p, res = on.eager_prepare(qc)
    return {"act": observers(act) or [act(on.x)], "weight": observers(wt) or [wt(on.w)], **res}


def converted(on, ccc):
    """an FX prepare and convert on the device with the convert custom config ``ccc``"""
    p, res = on.fx_prepare(model=tagged(Plain()))
    c = quantize_fx.convert_fx(p, convert_custom_config=ccc)
    return {"converted": c(on.x), "tag": getattr(c, "tag", None), **res}


def fused(on, fcc):
    """an FX fuse on the device with the fuse custom config ``fcc``"""
    m = on.place(tagged(Plain())).eval()
    f = quantize_fx.fuse_fx(m, fuse_custom_config=fcc)
    return {"output": f(on.x), "tag": getattr(f, "tag", None),
            "modules": sorted(type(mod).__name__ for mod in f.modules())}


def prepared_custom(on, pcc):
    """an FX prepare on the device of a model FX cannot trace whole, with ``pcc``"""
    p, res = on.fx_prepare(model=tagged(WithBranch()), prepare_custom_config=pcc)
    return {"tag": getattr(p, "tag", None), **res}


def non_traceable_branch():
    return PrepareCustomConfig().set_non_traceable_module_classes([Branchy])


# --- the bodies -----------------------------------------------------------------------------


def nn_intrinsic_LinearReLU(device, dtype):
    on = On(device, dtype)
    return on.fwd_bwd(nni.LinearReLU(torch.nn.Linear(8, 4), torch.nn.ReLU()))


def nn_intrinsic_qat_ConvBn1d(device, dtype):
    on = On(device, dtype)
    qc = Q.get_default_qat_qconfig('x86')
    inp = torch.randn(2, 2, 6, dtype=dtype).to(device)
    return on.fwd_bwd(nniqat.ConvBn1d(2, 3, 3, qconfig=qc).train(), inp)


def nn_intrinsic_qat_ConvBnReLU1d(device, dtype):
    on = On(device, dtype)
    qc = Q.get_default_qat_qconfig('x86')
    inp = torch.randn(2, 2, 6, dtype=dtype).to(device)
    return on.fwd_bwd(nniqat.ConvBnReLU1d(2, 3, 3, qconfig=qc).train(), inp)


def nn_intrinsic_qat_ConvBnReLU2d(device, dtype):
    on = On(device, dtype)
    qc = Q.get_default_qat_qconfig('x86')
    inp = torch.randn(2, 2, 5, 5, dtype=dtype).to(device)
    return on.fwd_bwd(nniqat.ConvBnReLU2d(2, 3, 3, qconfig=qc).train(), inp)


def nn_intrinsic_qat_LinearReLU(device, dtype):
    on = On(device, dtype)
    qc = Q.get_default_qat_qconfig('x86')
    return on.fwd_bwd(nniqat.LinearReLU(8, 4, qconfig=qc))


def nn_intrinsic_qat_bn_stats(device, dtype, api):
    """freeze_bn_stats / update_bn_stats (``api``) applied to a QAT ConvBn1d on the device"""
    fn = getattr(nniqat, api.rsplit(".", 1)[1])
    qc = Q.get_default_qat_qconfig("x86")
    inp = torch.randn(2, 2, 6, dtype=dtype).to(device)
    m = nniqat.ConvBn1d(2, 3, 3, qconfig=qc).to(device=device, dtype=dtype).train()
    if fn is nniqat.update_bn_stats:
        m.apply(nniqat.freeze_bn_stats)
    m.apply(fn)
    before = m.bn.running_mean.clone()
    y = m(inp)
    return {"freeze_bn": m.freeze_bn, "output": y, "before": before, "after": m.bn.running_mean}


def nn_qat_Linear(device, dtype):
    on = On(device, dtype)
    qc = Q.get_default_qat_qconfig('x86')
    return on.fwd_bwd(nnqat.Linear(8, 4, qconfig=qc))


def nn_quantizable_LSTM(device, dtype):
    on = On(device, dtype)
    import torch.ao.nn.quantizable as nnqa
    return on.fwd_bwd(nnqa.LSTM(8, 5, num_layers=2), on.x.reshape(2, 2, 8))


def nn_quantized_dynamic_Linear(device, dtype):
    on = On(device, dtype)
    import torch.ao.nn.quantized.dynamic as nnqd
    fl = torch.nn.Linear(8, 4)
    fl.qconfig = Q.default_dynamic_qconfig
    m = nnqd.Linear.from_float(fl).to(device)
    return {'output': m(on.x), 'weight_dtype': m.weight().dtype}


def ns_fx_utils_compute_sqnr(device, dtype):
    on = On(device, dtype)
    from torch.ao.ns.fx.utils import compute_sqnr
    return [compute_sqnr(on.x, on.x + 0.01 * on.w), compute_sqnr(on.x, on.x)]


def quantization_QuantStub(device, dtype):
    on = On(device, dtype)
    stub = Q.QuantStub().to(device)
    plain = stub(on.x)
    p, res = on.eager_prepare(Q.default_qconfig)
    return {'plain': plain, 'stub': observers(p.quant), **res}


def quantization_DeQuantStub(device, dtype):
    on = On(device, dtype)
    d = Q.DeQuantStub().to(device)
    p, res = on.eager_prepare(Q.default_qconfig)
    return {'plain': d(on.x), 'dequant': type(p.dequant).__name__, **res}


def quantization_QuantWrapper(device, dtype):
    on = On(device, dtype)
    m = Q.QuantWrapper(torch.nn.Linear(8, 4))
    p, res = on.eager_prepare(Q.default_qconfig, m)
    return res


def quantization_convert(device, dtype):
    on = On(device, dtype)
    p, res = on.eager_prepare(Q.default_qconfig)
    c = Q.convert(p)
    return {'converted': c(on.x), 'modules': [type(c.fc).__name__, type(c.quant).__name__]}


def quantization_prepare_qat(device, dtype):
    on = On(device, dtype)
    m = Tiny().to(device=device, dtype=dtype).train()
    m.qconfig = Q.get_default_qat_qconfig('x86')
    p = Q.prepare_qat(m)
    return {'run': on.fwd_bwd(p), 'fake_quants': observers(p)}


def quantization_backend_config_BackendConfig(device, dtype):
    on = On(device, dtype)
    bc = BackendConfig('tiny').set_backend_pattern_config(linear_pattern())
    p, out = on.fx_prepare(backend_config=bc)
    return out


def quantization_backend_config_BackendConfig_configs(device, dtype):
    on = On(device, dtype)
    bc = BackendConfig('tiny').set_backend_pattern_config(linear_pattern())
    p, res = on.fx_prepare(backend_config=bc)
    return {'patterns': [str(c.pattern) for c in bc.configs], **res}


def quantization_backend_config_BackendConfig_from_dict(device, dtype):
    on = On(device, dtype)
    d = {'name': 'tiny', 'configs': [linear_pattern().to_dict()]}
    bc = BackendConfig.from_dict(d)
    p, out = on.fx_prepare(backend_config=bc)
    return out


def quantization_backend_config_BackendConfig_set_backend_pattern_config(device, dtype):
    on = On(device, dtype)
    bc = BackendConfig().set_backend_pattern_config(linear_pattern())
    p, out = on.fx_prepare(backend_config=bc)
    return out


def quantization_backend_config_BackendConfig_set_backend_pattern_configs(device, dtype):
    on = On(device, dtype)
    relu = BackendPatternConfig(torch.nn.ReLU).set_observation_type(ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT).set_dtype_configs(linear_pattern().dtype_configs)
    bc = BackendConfig().set_backend_pattern_configs([linear_pattern(), relu])
    p, out = on.fx_prepare(backend_config=bc)
    return out


def quantization_backend_config_BackendConfig_set_name(device, dtype):
    on = On(device, dtype)
    bc = BackendConfig().set_name('tiny').set_backend_pattern_config(linear_pattern())
    p, res = on.fx_prepare(backend_config=bc)
    return {'name': bc.name, **res}


def quantization_backend_config_BackendConfig_to_dict(device, dtype):
    on = On(device, dtype)
    d = BackendConfig('tiny').set_backend_pattern_config(linear_pattern()).to_dict()
    p, res = on.fx_prepare(backend_config=BackendConfig.from_dict(d))
    return {'keys': sorted(d), 'n': len(d['configs']), **res}


def quantization_backend_config_BackendPatternConfig(device, dtype):
    on = On(device, dtype)
    bc = BackendConfig().set_backend_pattern_config(linear_pattern())
    p, out = on.fx_prepare(backend_config=bc)
    return out


def quantization_backend_config_BackendPatternConfig_add_dtype_config(device, dtype):
    on = On(device, dtype)
    dc = DTypeConfig(input_dtype=torch.quint8, output_dtype=torch.quint8, weight_dtype=torch.qint8, bias_dtype=torch.float)
    c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_BackendPatternConfig_from_dict(device, dtype):
    on = On(device, dtype)
    c = BackendPatternConfig.from_dict(linear_pattern().to_dict())
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_BackendPatternConfig_set_dtype_configs(device, dtype):
    on = On(device, dtype)
    c = BackendPatternConfig(torch.nn.Linear).set_dtype_configs(linear_pattern().dtype_configs)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_BackendPatternConfig_set_fused_module(device, dtype):
    on = On(device, dtype)
    def fuser(is_qat, linear, relu):
        return nni.LinearReLU(linear, relu)
    fuse = BackendPatternConfig((torch.nn.Linear, torch.nn.ReLU)).set_fused_module(nni.LinearReLU).set_fuser_method(fuser)
    bc = BackendConfig().set_backend_pattern_configs([fuse, linear_pattern()])
    p, out = on.fx_prepare(backend_config=bc)
    return out


def quantization_backend_config_BackendPatternConfig_set_fuser_method(device, dtype):
    on = On(device, dtype)
    calls = []
    def fuser(is_qat, linear, relu):
        calls.append(type(linear).__name__)
        return nni.LinearReLU(linear, relu)
    fuse = BackendPatternConfig((torch.nn.Linear, torch.nn.ReLU)).set_fused_module(nni.LinearReLU).set_fuser_method(fuser)
    bc = BackendConfig().set_backend_pattern_configs([fuse, linear_pattern()])
    p, res = on.fx_prepare(backend_config=bc)
    return {'fused': calls, **res}


def quantization_backend_config_BackendPatternConfig_set_observation_type(device, dtype):
    on = On(device, dtype)
    c = linear_pattern().set_observation_type(ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_BackendPatternConfig_set_pattern(device, dtype):
    on = On(device, dtype)
    c = BackendPatternConfig().set_pattern(torch.nn.Linear).set_dtype_configs(linear_pattern().dtype_configs)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_BackendPatternConfig_set_qat_module(device, dtype):
    on = On(device, dtype)
    c = linear_pattern().set_root_module(torch.nn.Linear).set_qat_module(nnqat.Linear)
    m = Plain().to(device=device, dtype=dtype).train()
    p = quantize_fx.prepare_qat_fx(m, Q.get_default_qat_qconfig_mapping('x86'), (on.x,), backend_config=BackendConfig().set_backend_pattern_config(c))
    return {'run': on.fwd_bwd(p), 'modules': sorted(type(mod).__name__ for mod in p.modules())}


def quantization_backend_config_BackendPatternConfig_set_reference_quantized_module(device, dtype):
    on = On(device, dtype)
    import torch.ao.nn.quantized.reference as nnqr
    c = linear_pattern().set_root_module(torch.nn.Linear).set_reference_quantized_module(nnqr.Linear)
    bc = BackendConfig().set_backend_pattern_config(c)
    p, res = on.fx_prepare(backend_config=bc)
    r = quantize_fx.convert_to_reference_fx(p, backend_config=bc)
    return {'reference': r(on.x), **res}


def quantization_backend_config_BackendPatternConfig_set_root_module(device, dtype):
    on = On(device, dtype)
    c = linear_pattern().set_root_module(torch.nn.Linear)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_BackendPatternConfig_to_dict(device, dtype):
    on = On(device, dtype)
    d = linear_pattern().to_dict()
    p, res = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(BackendPatternConfig.from_dict(d)))
    return {'keys': sorted(d), **res}


def quantization_backend_config_DTypeConfig_from_dict(device, dtype):
    on = On(device, dtype)
    dc = DTypeConfig.from_dict({'input_dtype': torch.quint8, 'output_dtype': torch.quint8, 'weight_dtype': torch.qint8, 'bias_dtype': torch.float})
    c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_DTypeConfig_to_dict(device, dtype):
    on = On(device, dtype)
    d = linear_pattern().dtype_configs[0].to_dict()
    c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(DTypeConfig.from_dict(d))
    p, res = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return {'dict': {k: str(v) for k, v in d.items()}, **res}


def quantization_backend_config_DTypeWithConstraints(device, dtype):
    on = On(device, dtype)
    act = DTypeWithConstraints(dtype=torch.quint8, quant_min_lower_bound=0, quant_max_upper_bound=255)
    dc = DTypeConfig(input_dtype=act, output_dtype=act, weight_dtype=torch.qint8, bias_dtype=torch.float)
    c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_ObservationType(device, dtype):
    on = On(device, dtype)
    c = linear_pattern(ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT)
    p, res = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return {'members': [t.name for t in ObservationType], **res}


def quantization_backend_config_ObservationType_INPUT_OUTPUT_NOT_OBSERVED(device, dtype):
    on = On(device, dtype)
    c = linear_pattern(ObservationType.INPUT_OUTPUT_NOT_OBSERVED)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_ObservationType_OUTPUT_SHARE_OBSERVER_WITH_INPUT(device, dtype):
    on = On(device, dtype)
    c = linear_pattern(ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_backend_config_ObservationType_OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT(device, dtype):
    on = On(device, dtype)
    c = linear_pattern(ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT)
    p, out = on.fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))
    return out


def quantization_fake_quantize_FakeQuantize(device, dtype):
    on = On(device, dtype)
    fq = Q.FakeQuantize()
    return {'run': on.fwd_bwd(fq), 'edges': [on.fwd_bwd(fq, on.hi), on.fwd_bwd(fq, on.lo)],
            'qparams': qparams(fq)}


def quantization_fake_quantize_FixedQParamsFakeQuantize(device, dtype):
    on = On(device, dtype)
    fq = Q.FixedQParamsFakeQuantize(Q.default_fixed_qparams_range_0to1_observer)
    return {'run': on.fwd_bwd(fq, on.x.sigmoid()), 'qparams': qparams(fq)}


def quantization_fake_quantize_FusedMovingAvgObsFakeQuantize(device, dtype):
    on = On(device, dtype)
    fq = Q.FusedMovingAvgObsFakeQuantize()
    first = on.fwd_bwd(fq)
    return {'first': first, 'second': on.fwd_bwd(fq, on.x * 3), 'qparams': qparams(fq)}


def fake_quantize_switch(device, dtype, api):
    """a fake-quant / observer switch (``api``) applied to a FakeQuantize on the device (an
    enable after the matching disable)"""
    switch = api.rsplit(".", 1)[1]
    on = On(device, dtype)
    fq = Q.FakeQuantize().to(device)
    if switch.startswith("enable"):
        fq.apply(getattr(Q.fake_quantize, switch.replace("enable", "disable")))
    fq.apply(getattr(Q.fake_quantize, switch))
    y = fq(on.x)
    return {"output": y, "flags": [int(fq.fake_quant_enabled), int(fq.observer_enabled)],
            "min_max": [fq.activation_post_process.min_val, fq.activation_post_process.max_val]}


def quantization_observer_HistogramObserver(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.HistogramObserver(bins=64))


def quantization_observer_MinMaxObserver(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.MinMaxObserver())


def quantization_observer_MinMaxObserver_calculate_qparams(device, dtype):
    on = On(device, dtype)
    obs = on.observe(Q.MinMaxObserver(qscheme=torch.per_tensor_symmetric, dtype=torch.qint8))
    return qparams(obs)


def quantization_observer_MinMaxObserver_forward(device, dtype):
    on = On(device, dtype)
    obs = Q.MinMaxObserver().to(device)
    return [obs.forward(on.x), obs.forward(on.x * 2), obs.min_val, obs.max_val]


def quantization_observer_MinMaxObserver_reset_min_max_vals(device, dtype):
    on = On(device, dtype)
    obs = on.observe(Q.MinMaxObserver(), on.x * 10)
    obs.reset_min_max_vals()
    obs(on.x)
    return {'qparams': qparams(obs), 'min': obs.min_val, 'max': obs.max_val}


def quantization_observer_MovingAverageMinMaxObserver(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.MovingAverageMinMaxObserver(averaging_constant=0.5))


def quantization_observer_MovingAveragePerChannelMinMaxObserver(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.MovingAveragePerChannelMinMaxObserver(averaging_constant=0.5, ch_axis=1))


def quantization_observer_NoopObserver(device, dtype):
    on = On(device, dtype)
    obs = Q.NoopObserver(dtype=torch.float16).to(device)
    return [obs(on.x), str(obs.dtype)]


def quantization_observer_ObserverBase(device, dtype):
    on = On(device, dtype)
    obs = on.observe(AbsMax(), on.x, on.x * 2)
    p, res = on.eager_prepare(Q.QConfig(activation=AbsMax, weight=Q.default_weight_observer))
    return {'qparams': qparams(obs), **res}


def quantization_observer_ObserverBase_with_args(device, dtype):
    on = On(device, dtype)
    make = Q.MinMaxObserver.with_args(quant_min=0, quant_max=127)
    obs = on.observe(make())
    return {'qparams': qparams(obs), 'range': [obs.quant_min, obs.quant_max]}


def quantization_observer_ObserverBase_with_callable_args(device, dtype):
    on = On(device, dtype)
    made = []
    def eps():
        made.append(1)
        return 0.25
    make = Q.MinMaxObserver.with_callable_args(eps=eps)
    obs = on.observe(make(), on.x * 1e-3)
    return {'qparams': qparams(obs), 'calls': len(made)}


def quantization_observer_PerChannelMinMaxObserver(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.PerChannelMinMaxObserver(ch_axis=0))


def quantization_observer_PerChannelMinMaxObserver_reset_min_max_vals(device, dtype):
    on = On(device, dtype)
    obs = on.observe(Q.PerChannelMinMaxObserver(ch_axis=1), on.x * 10)
    obs.reset_min_max_vals()
    obs(on.x)
    return {'qparams': qparams(obs), 'min': obs.min_val, 'max': obs.max_val}


def quantization_observer_PlaceholderObserver(device, dtype):
    on = On(device, dtype)
    obs = Q.PlaceholderObserver(dtype=torch.float16).to(device)
    return [obs(on.x), str(obs.dtype)]


def quantization_observer_RecordingObserver(device, dtype):
    on = On(device, dtype)
    obs = on.observe(Q.RecordingObserver(), on.x, on.x * 2)
    return obs.get_tensor_value()


def quantization_observer_default_debug_observer(device, dtype):
    on = On(device, dtype)
    obs = on.observe(Q.default_debug_observer(), on.x, on.w)
    return obs.get_tensor_value()


def quantization_observer_default_dynamic_quant_observer(device, dtype):
    on = On(device, dtype)
    obs = Q.default_dynamic_quant_observer().to(device)
    return [obs(on.x), str(obs.dtype), obs.is_dynamic]


def quantization_observer_default_float_qparams_observer(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.default_float_qparams_observer(), on.w)


def quantization_observer_default_histogram_observer(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.default_histogram_observer())


def quantization_observer_default_observer(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.default_observer())


def quantization_observer_default_per_channel_weight_observer(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.default_per_channel_weight_observer(), on.w)


def quantization_observer_default_placeholder_observer(device, dtype):
    on = On(device, dtype)
    obs = Q.default_placeholder_observer().to(device)
    return [obs(on.x), str(obs.dtype)]


def quantization_observer_default_weight_observer(device, dtype):
    on = On(device, dtype)
    return observed(on, Q.default_weight_observer(), on.w)


def quantization_observer_get_observer_state_dict(device, dtype):
    on = On(device, dtype)
    p, res = on.eager_prepare(Q.default_qconfig)
    sd = Q.observer.get_observer_state_dict(p)
    return {'state': dict(sd), **res}


def quantization_observer_load_observer_state_dict(device, dtype):
    on = On(device, dtype)
    p, res = on.eager_prepare(Q.default_qconfig)
    sd = Q.observer.get_observer_state_dict(p)
    fresh = Tiny().to(device=device, dtype=dtype).eval()
    fresh.qconfig = Q.default_qconfig
    fresh = Q.prepare(fresh)
    Q.observer.load_observer_state_dict(fresh, sd)
    return {'loaded': observers(fresh), 'source': res['observers']}


def quantization_qconfig_QConfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.QConfig(activation=Q.MinMaxObserver.with_args(reduce_range=True), weight=Q.default_per_channel_weight_observer))


def quantization_qconfig_default_activation_only_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.default_activation_only_qconfig)


def quantization_qconfig_default_debug_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.default_debug_qconfig)


def quantization_qconfig_default_dynamic_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.default_dynamic_qconfig)


def quantization_qconfig_default_per_channel_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.default_per_channel_qconfig)


def quantization_qconfig_default_qat_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.default_qat_qconfig)


def quantization_qconfig_default_qat_qconfig_v2(device, dtype):
    return qconfig_answer(On(device, dtype), Q.qconfig.default_qat_qconfig_v2)


def quantization_qconfig_default_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.default_qconfig)


def quantization_qconfig_default_weight_only_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.default_weight_only_qconfig)


def quantization_qconfig_float16_dynamic_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.float16_dynamic_qconfig)


def quantization_qconfig_float16_static_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.float16_static_qconfig)


def quantization_qconfig_float_qparams_weight_only_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.float_qparams_weight_only_qconfig)


def quantization_qconfig_per_channel_dynamic_qconfig(device, dtype):
    return qconfig_answer(On(device, dtype), Q.per_channel_dynamic_qconfig)


def quantization_fx_custom_config_ConvertCustomConfig(device, dtype):
    on = On(device, dtype)
    ccc = ConvertCustomConfig()
    return converted(on, ccc)


def quantization_fx_custom_config_ConvertCustomConfig_from_dict(device, dtype):
    on = On(device, dtype)
    ccc = ConvertCustomConfig.from_dict({'preserved_attributes': ['tag']})
    return converted(on, ccc)


def quantization_fx_custom_config_ConvertCustomConfig_set_observed_to_quantized_mapping(device, dtype):
    on = On(device, dtype)
    pcc = PrepareCustomConfig().set_float_to_observed_mapping(CustomFloat, ObservedCustom)
    ccc = ConvertCustomConfig().set_observed_to_quantized_mapping(ObservedCustom, QuantizedCustom)
    p, res = on.fx_prepare(model=Holder(), prepare_custom_config=pcc)
    c = quantize_fx.convert_fx(p, convert_custom_config=ccc)
    return {'converted': c(on.x), 'custom': type(c.custom).__name__, **res}


def quantization_fx_custom_config_ConvertCustomConfig_set_preserved_attributes(device, dtype):
    on = On(device, dtype)
    ccc = ConvertCustomConfig().set_preserved_attributes(['tag'])
    return converted(on, ccc)


def quantization_fx_custom_config_ConvertCustomConfig_to_dict(device, dtype):
    on = On(device, dtype)
    d = ConvertCustomConfig().set_preserved_attributes(['tag']).to_dict()
    ccc = ConvertCustomConfig.from_dict(d)
    return converted(on, ccc)


def quantization_fx_custom_config_FuseCustomConfig(device, dtype):
    on = On(device, dtype)
    fcc = FuseCustomConfig()
    return fused(on, fcc)


def quantization_fx_custom_config_FuseCustomConfig_from_dict(device, dtype):
    on = On(device, dtype)
    fcc = FuseCustomConfig.from_dict({'preserved_attributes': ['tag']})
    return fused(on, fcc)


def quantization_fx_custom_config_FuseCustomConfig_set_preserved_attributes(device, dtype):
    on = On(device, dtype)
    fcc = FuseCustomConfig().set_preserved_attributes(['tag'])
    return fused(on, fcc)


def quantization_fx_custom_config_FuseCustomConfig_to_dict(device, dtype):
    on = On(device, dtype)
    d = FuseCustomConfig().set_preserved_attributes(['tag']).to_dict()
    fcc = FuseCustomConfig.from_dict(d)
    return fused(on, fcc)


def quantization_fx_custom_config_PrepareCustomConfig(device, dtype):
    on = On(device, dtype)
    pcc = PrepareCustomConfig()
    p, out = on.fx_prepare(prepare_custom_config=pcc)
    return out


def quantization_fx_custom_config_PrepareCustomConfig_from_dict(device, dtype):
    on = On(device, dtype)
    pcc = PrepareCustomConfig.from_dict({'non_traceable_module_class': [Branchy], 'preserved_attributes': ['tag']})
    return prepared_custom(on, pcc)


def quantization_fx_custom_config_PrepareCustomConfig_set_float_to_observed_mapping(device, dtype):
    on = On(device, dtype)
    pcc = PrepareCustomConfig().set_float_to_observed_mapping(CustomFloat, ObservedCustom)
    p, res = on.fx_prepare(model=Holder(), prepare_custom_config=pcc)
    return {'custom': type(p.custom).__name__, **res}


def quantization_fx_custom_config_PrepareCustomConfig_set_input_quantized_indexes(device, dtype):
    on = On(device, dtype)
    pcc = PrepareCustomConfig().set_input_quantized_indexes([0])
    p, out = on.fx_prepare(prepare_custom_config=pcc)
    return out


def quantization_fx_custom_config_PrepareCustomConfig_set_non_traceable_module_classes(device, dtype):
    on = On(device, dtype)
    pcc = non_traceable_branch()
    return prepared_custom(on, pcc)


def quantization_fx_custom_config_PrepareCustomConfig_set_non_traceable_module_names(device, dtype):
    on = On(device, dtype)
    pcc = PrepareCustomConfig().set_non_traceable_module_names(['branch'])
    return prepared_custom(on, pcc)


def quantization_fx_custom_config_PrepareCustomConfig_set_output_quantized_indexes(device, dtype):
    on = On(device, dtype)
    pcc = PrepareCustomConfig().set_output_quantized_indexes([0])
    p, out = on.fx_prepare(prepare_custom_config=pcc)
    return out


def quantization_fx_custom_config_PrepareCustomConfig_set_preserved_attributes(device, dtype):
    on = On(device, dtype)
    pcc = non_traceable_branch().set_preserved_attributes(['tag'])
    return prepared_custom(on, pcc)


def quantization_fx_custom_config_PrepareCustomConfig_set_standalone_module_class(device, dtype):
    on = On(device, dtype)
    pcc = non_traceable_branch().set_standalone_module_class(Plain, on.qmap, (on.x,), None, None)
    return prepared_custom(on, pcc)


def quantization_fx_custom_config_PrepareCustomConfig_set_standalone_module_name(device, dtype):
    on = On(device, dtype)
    pcc = non_traceable_branch().set_standalone_module_name('sub', on.qmap, (on.x,), None, None)
    return prepared_custom(on, pcc)


def quantization_fx_custom_config_PrepareCustomConfig_to_dict(device, dtype):
    on = On(device, dtype)
    d = non_traceable_branch().set_preserved_attributes(['tag']).to_dict()
    pcc = PrepareCustomConfig.from_dict(d)
    return prepared_custom(on, pcc)


def quantization_fx_custom_config_StandaloneModuleConfigEntry(device, dtype):
    on = On(device, dtype)
    pcc = non_traceable_branch()
    pcc.standalone_module_names['sub'] = StandaloneModuleConfigEntry(on.qmap, (on.x,), None, None)
    return prepared_custom(on, pcc)


def quantization_qconfig_mapping_QConfigMapping(device, dtype):
    on = On(device, dtype)
    p, out = on.fx_prepare(QConfigMapping().set_global(Q.default_qconfig))
    return out


def quantization_qconfig_mapping_QConfigMapping_from_dict(device, dtype):
    on = On(device, dtype)
    m = QConfigMapping.from_dict({'': Q.default_qconfig, 'object_type': [(torch.nn.ReLU, None)], 'module_name': [('fc2', Q.default_per_channel_qconfig)]})
    p, out = on.fx_prepare(m)
    return out


def quantization_qconfig_mapping_QConfigMapping_set_global(device, dtype):
    on = On(device, dtype)
    p, out = on.fx_prepare(QConfigMapping().set_global(Q.default_per_channel_qconfig))
    return out


def quantization_qconfig_mapping_QConfigMapping_set_module_name(device, dtype):
    on = On(device, dtype)
    p, out = on.fx_prepare(QConfigMapping().set_module_name('fc1', Q.default_qconfig))
    return out


def quantization_qconfig_mapping_QConfigMapping_set_module_name_object_type_order(device, dtype):
    on = On(device, dtype)
    m = QConfigMapping().set_module_name_object_type_order('', torch.nn.Linear, 1, Q.default_qconfig)
    p, out = on.fx_prepare(m)
    return out


def quantization_qconfig_mapping_QConfigMapping_set_module_name_regex(device, dtype):
    on = On(device, dtype)
    p, out = on.fx_prepare(QConfigMapping().set_module_name_regex('fc.*', Q.default_qconfig))
    return out


def quantization_qconfig_mapping_QConfigMapping_set_object_type(device, dtype):
    on = On(device, dtype)
    m = QConfigMapping().set_object_type(torch.nn.Linear, Q.default_qconfig).set_object_type(torch.nn.ReLU, Q.default_qconfig)
    p, out = on.fx_prepare(m)
    return out


def quantization_qconfig_mapping_QConfigMapping_to_dict(device, dtype):
    on = On(device, dtype)
    d = QConfigMapping().set_global(Q.default_qconfig).set_module_name('fc2', None).to_dict()
    p, res = on.fx_prepare(QConfigMapping.from_dict(d))
    return {'keys': sorted(d), **res}


def quantization_qconfig_mapping_get_default_qat_qconfig_mapping(device, dtype):
    on = On(device, dtype)
    m = Plain().to(device=device, dtype=dtype).train()
    p = quantize_fx.prepare_qat_fx(m, Q.get_default_qat_qconfig_mapping('x86'), (on.x,))
    return {'run': on.fwd_bwd(p), 'fake_quants': observers(p)}


def quantization_qconfig_mapping_get_default_qconfig_mapping(device, dtype):
    on = On(device, dtype)
    p, out = on.fx_prepare(Q.get_default_qconfig_mapping('qnnpack'))
    return out


# --- the table ----------------------------------------------------------------------------

CASES = (
    Case("torch.ao.nn.intrinsic.LinearReLU", nn_intrinsic_LinearReLU, FLOATS),
    Case("torch.ao.nn.intrinsic.qat.ConvBn1d", nn_intrinsic_qat_ConvBn1d, F32),
    Case("torch.ao.nn.intrinsic.qat.ConvBnReLU1d", nn_intrinsic_qat_ConvBnReLU1d, F32),
    Case("torch.ao.nn.intrinsic.qat.ConvBnReLU2d", nn_intrinsic_qat_ConvBnReLU2d, F32),
    Case("torch.ao.nn.intrinsic.qat.LinearReLU", nn_intrinsic_qat_LinearReLU, F32),
    Case("torch.ao.nn.intrinsic.qat.freeze_bn_stats", nn_intrinsic_qat_bn_stats, F32,
         aliases=("torch.ao.nn.intrinsic.qat.update_bn_stats",)),
    Case("torch.ao.nn.qat.Linear", nn_qat_Linear, F32),
    Case("torch.ao.nn.quantizable.LSTM", nn_quantizable_LSTM, F32),
    Case("torch.ao.nn.quantized.dynamic.Linear", nn_quantized_dynamic_Linear, F32),
    Case("torch.ao.ns.fx.utils.compute_sqnr", ns_fx_utils_compute_sqnr, FLOATS),
    Case(P + "QuantStub", quantization_QuantStub, F32),
    Case(P + "DeQuantStub", quantization_DeQuantStub, F32),
    Case(P + "QuantWrapper", quantization_QuantWrapper, F32),
    Case(P + "convert", quantization_convert, F32),
    Case(P + "prepare_qat", quantization_prepare_qat, F32),
    Case(BC + "BackendConfig", quantization_backend_config_BackendConfig, F32),
    Case(BC + "BackendConfig.configs", quantization_backend_config_BackendConfig_configs, F32),
    Case(BC + "BackendConfig.from_dict", quantization_backend_config_BackendConfig_from_dict, F32),
    Case(BC + "BackendConfig.set_backend_pattern_config", quantization_backend_config_BackendConfig_set_backend_pattern_config, F32),
    Case(BC + "BackendConfig.set_backend_pattern_configs", quantization_backend_config_BackendConfig_set_backend_pattern_configs, F32),
    Case(BC + "BackendConfig.set_name", quantization_backend_config_BackendConfig_set_name, F32),
    Case(BC + "BackendConfig.to_dict", quantization_backend_config_BackendConfig_to_dict, F32),
    Case(BC + "BackendPatternConfig", quantization_backend_config_BackendPatternConfig, F32),
    Case(BC + "BackendPatternConfig.add_dtype_config", quantization_backend_config_BackendPatternConfig_add_dtype_config, F32),
    Case(BC + "BackendPatternConfig.from_dict", quantization_backend_config_BackendPatternConfig_from_dict, F32),
    Case(BC + "BackendPatternConfig.set_dtype_configs", quantization_backend_config_BackendPatternConfig_set_dtype_configs, F32),
    Case(BC + "BackendPatternConfig.set_fused_module", quantization_backend_config_BackendPatternConfig_set_fused_module, F32),
    Case(BC + "BackendPatternConfig.set_fuser_method", quantization_backend_config_BackendPatternConfig_set_fuser_method, F32),
    Case(BC + "BackendPatternConfig.set_observation_type", quantization_backend_config_BackendPatternConfig_set_observation_type, F32),
    Case(BC + "BackendPatternConfig.set_pattern", quantization_backend_config_BackendPatternConfig_set_pattern, F32),
    Case(BC + "BackendPatternConfig.set_qat_module", quantization_backend_config_BackendPatternConfig_set_qat_module, F32),
    Case(BC + "BackendPatternConfig.set_reference_quantized_module", quantization_backend_config_BackendPatternConfig_set_reference_quantized_module, F32),
    Case(BC + "BackendPatternConfig.set_root_module", quantization_backend_config_BackendPatternConfig_set_root_module, F32),
    Case(BC + "BackendPatternConfig.to_dict", quantization_backend_config_BackendPatternConfig_to_dict, F32),
    Case(BC + "DTypeConfig.from_dict", quantization_backend_config_DTypeConfig_from_dict, F32),
    Case(BC + "DTypeConfig.to_dict", quantization_backend_config_DTypeConfig_to_dict, F32),
    Case(BC + "DTypeWithConstraints", quantization_backend_config_DTypeWithConstraints, F32),
    Case(BC + "ObservationType", quantization_backend_config_ObservationType, F32),
    Case(BC + "ObservationType.INPUT_OUTPUT_NOT_OBSERVED", quantization_backend_config_ObservationType_INPUT_OUTPUT_NOT_OBSERVED, F32),
    Case(BC + "ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT", quantization_backend_config_ObservationType_OUTPUT_SHARE_OBSERVER_WITH_INPUT, F32),
    Case(BC + "ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT", quantization_backend_config_ObservationType_OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT, F32),
    Case(FQ + "FakeQuantize", quantization_fake_quantize_FakeQuantize, F32),
    Case(FQ + "FixedQParamsFakeQuantize", quantization_fake_quantize_FixedQParamsFakeQuantize, F32),
    Case(FQ + "FusedMovingAvgObsFakeQuantize", quantization_fake_quantize_FusedMovingAvgObsFakeQuantize, F32),
    Case(FQ + "disable_fake_quant", fake_quantize_switch, F32,
         aliases=(FQ + "disable_observer", FQ + "enable_fake_quant", FQ + "enable_observer")),
    Case(OB + "HistogramObserver", quantization_observer_HistogramObserver, FLOATS),
    Case(OB + "MinMaxObserver", quantization_observer_MinMaxObserver, FLOATS),
    Case(OB + "MinMaxObserver.calculate_qparams", quantization_observer_MinMaxObserver_calculate_qparams, FLOATS),
    Case(OB + "MinMaxObserver.forward", quantization_observer_MinMaxObserver_forward, FLOATS),
    Case(OB + "MinMaxObserver.reset_min_max_vals", quantization_observer_MinMaxObserver_reset_min_max_vals, FLOATS),
    Case(OB + "MovingAverageMinMaxObserver", quantization_observer_MovingAverageMinMaxObserver, FLOATS),
    Case(OB + "MovingAveragePerChannelMinMaxObserver", quantization_observer_MovingAveragePerChannelMinMaxObserver, FLOATS),
    Case(OB + "NoopObserver", quantization_observer_NoopObserver, FLOATS),
    Case(OB + "ObserverBase", quantization_observer_ObserverBase, F32),
    Case(OB + "ObserverBase.with_args", quantization_observer_ObserverBase_with_args, FLOATS),
    Case(OB + "ObserverBase.with_callable_args", quantization_observer_ObserverBase_with_callable_args, FLOATS),
    Case(OB + "PerChannelMinMaxObserver", quantization_observer_PerChannelMinMaxObserver, FLOATS),
    Case(OB + "PerChannelMinMaxObserver.reset_min_max_vals", quantization_observer_PerChannelMinMaxObserver_reset_min_max_vals, FLOATS),
    Case(OB + "PlaceholderObserver", quantization_observer_PlaceholderObserver, FLOATS),
    Case(OB + "RecordingObserver", quantization_observer_RecordingObserver, FLOATS),
    Case(OB + "default_debug_observer", quantization_observer_default_debug_observer, F32),
    Case(OB + "default_dynamic_quant_observer", quantization_observer_default_dynamic_quant_observer, F32),
    Case(OB + "default_float_qparams_observer", quantization_observer_default_float_qparams_observer, F32),
    Case(OB + "default_histogram_observer", quantization_observer_default_histogram_observer, F32),
    Case(OB + "default_observer", quantization_observer_default_observer, F32),
    Case(OB + "default_per_channel_weight_observer", quantization_observer_default_per_channel_weight_observer, F32),
    Case(OB + "default_placeholder_observer", quantization_observer_default_placeholder_observer, F32),
    Case(OB + "default_weight_observer", quantization_observer_default_weight_observer, F32),
    Case(OB + "get_observer_state_dict", quantization_observer_get_observer_state_dict, F32),
    Case(OB + "load_observer_state_dict", quantization_observer_load_observer_state_dict, F32),
    Case(QC + "QConfig", quantization_qconfig_QConfig, F32),
    Case(QC + "default_activation_only_qconfig", quantization_qconfig_default_activation_only_qconfig, F32),
    Case(QC + "default_debug_qconfig", quantization_qconfig_default_debug_qconfig, F32),
    Case(QC + "default_dynamic_qconfig", quantization_qconfig_default_dynamic_qconfig, F32),
    Case(QC + "default_per_channel_qconfig", quantization_qconfig_default_per_channel_qconfig, F32),
    Case(QC + "default_qat_qconfig", quantization_qconfig_default_qat_qconfig, F32),
    Case(QC + "default_qat_qconfig_v2", quantization_qconfig_default_qat_qconfig_v2, F32),
    Case(QC + "default_qconfig", quantization_qconfig_default_qconfig, F32),
    Case(QC + "default_weight_only_qconfig", quantization_qconfig_default_weight_only_qconfig, F32),
    Case(QC + "float16_dynamic_qconfig", quantization_qconfig_float16_dynamic_qconfig, F32),
    Case(QC + "float16_static_qconfig", quantization_qconfig_float16_static_qconfig, F32),
    Case(QC + "float_qparams_weight_only_qconfig", quantization_qconfig_float_qparams_weight_only_qconfig, F32),
    Case(QC + "per_channel_dynamic_qconfig", quantization_qconfig_per_channel_dynamic_qconfig, F32),
    Case(CC + "ConvertCustomConfig", quantization_fx_custom_config_ConvertCustomConfig, F32),
    Case(CC + "ConvertCustomConfig.from_dict", quantization_fx_custom_config_ConvertCustomConfig_from_dict, F32),
    Case(CC + "ConvertCustomConfig.set_observed_to_quantized_mapping", quantization_fx_custom_config_ConvertCustomConfig_set_observed_to_quantized_mapping, F32),
    Case(CC + "ConvertCustomConfig.set_preserved_attributes", quantization_fx_custom_config_ConvertCustomConfig_set_preserved_attributes, F32),
    Case(CC + "ConvertCustomConfig.to_dict", quantization_fx_custom_config_ConvertCustomConfig_to_dict, F32),
    Case(CC + "FuseCustomConfig", quantization_fx_custom_config_FuseCustomConfig, F32),
    Case(CC + "FuseCustomConfig.from_dict", quantization_fx_custom_config_FuseCustomConfig_from_dict, F32),
    Case(CC + "FuseCustomConfig.set_preserved_attributes", quantization_fx_custom_config_FuseCustomConfig_set_preserved_attributes, F32),
    Case(CC + "FuseCustomConfig.to_dict", quantization_fx_custom_config_FuseCustomConfig_to_dict, F32),
    Case(CC + "PrepareCustomConfig", quantization_fx_custom_config_PrepareCustomConfig, F32),
    Case(CC + "PrepareCustomConfig.from_dict", quantization_fx_custom_config_PrepareCustomConfig_from_dict, F32),
    Case(CC + "PrepareCustomConfig.set_float_to_observed_mapping", quantization_fx_custom_config_PrepareCustomConfig_set_float_to_observed_mapping, F32),
    Case(CC + "PrepareCustomConfig.set_input_quantized_indexes", quantization_fx_custom_config_PrepareCustomConfig_set_input_quantized_indexes, F32),
    Case(CC + "PrepareCustomConfig.set_non_traceable_module_classes", quantization_fx_custom_config_PrepareCustomConfig_set_non_traceable_module_classes, F32),
    Case(CC + "PrepareCustomConfig.set_non_traceable_module_names", quantization_fx_custom_config_PrepareCustomConfig_set_non_traceable_module_names, F32),
    Case(CC + "PrepareCustomConfig.set_output_quantized_indexes", quantization_fx_custom_config_PrepareCustomConfig_set_output_quantized_indexes, F32),
    Case(CC + "PrepareCustomConfig.set_preserved_attributes", quantization_fx_custom_config_PrepareCustomConfig_set_preserved_attributes, F32),
    Case(CC + "PrepareCustomConfig.set_standalone_module_class", quantization_fx_custom_config_PrepareCustomConfig_set_standalone_module_class, F32),
    Case(CC + "PrepareCustomConfig.set_standalone_module_name", quantization_fx_custom_config_PrepareCustomConfig_set_standalone_module_name, F32),
    Case(CC + "PrepareCustomConfig.to_dict", quantization_fx_custom_config_PrepareCustomConfig_to_dict, F32),
    Case(CC + "StandaloneModuleConfigEntry", quantization_fx_custom_config_StandaloneModuleConfigEntry, F32),
    Case(QM + "QConfigMapping", quantization_qconfig_mapping_QConfigMapping, F32),
    Case(QM + "QConfigMapping.from_dict", quantization_qconfig_mapping_QConfigMapping_from_dict, F32),
    Case(QM + "QConfigMapping.set_global", quantization_qconfig_mapping_QConfigMapping_set_global, F32),
    Case(QM + "QConfigMapping.set_module_name", quantization_qconfig_mapping_QConfigMapping_set_module_name, F32),
    Case(QM + "QConfigMapping.set_module_name_object_type_order", quantization_qconfig_mapping_QConfigMapping_set_module_name_object_type_order, F32),
    Case(QM + "QConfigMapping.set_module_name_regex", quantization_qconfig_mapping_QConfigMapping_set_module_name_regex, F32),
    Case(QM + "QConfigMapping.set_object_type", quantization_qconfig_mapping_QConfigMapping_set_object_type, F32),
    Case(QM + "QConfigMapping.to_dict", quantization_qconfig_mapping_QConfigMapping_to_dict, F32),
    Case(QM + "get_default_qat_qconfig_mapping", quantization_qconfig_mapping_get_default_qat_qconfig_mapping, F32),
    Case(QM + "get_default_qconfig_mapping", quantization_qconfig_mapping_get_default_qconfig_mapping, F32),
)
