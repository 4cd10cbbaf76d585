"""The cases of the ``quant`` source: one code block per torch.ao API.

Each block runs after ``quant.prelude.PRELUDE`` with ``torch``, ``device``, ``dtype`` in
scope and leaves its answer in ``out``; the block is both the scenario and its snippet.
Every block uses its API on the device under test: observers and fake-quantize modules fed
device tensors, QAT / intrinsic modules run forward and backward on the device, eager and
FX prepare flows on a model moved to the device, config objects used in such a flow.
Flows that end in quantized tensors (``convert``) stay on the device too: quantized
kernels exist for CPU backends (fbgemm/x86, qnnpack), and what the device answers
(a refusal, or a pass) is the verdict.

``EXCLUDED`` names the listed APIs that get no case, with the reason.
"""

from __future__ import annotations

from typing import Dict, Tuple

F32 = ("float32",)
FLOATS = ("float32", "float64")

P = "torch.ao.quantization."
BC = P + "backend_config."
CC = P + "fx.custom_config."
OB = P + "observer."
FQ = P + "fake_quantize."
QC = P + "qconfig."
QM = P + "qconfig_mapping."

_CONV_IN = "inp = torch.randn(2, 2, 6, dtype=dtype).to(device)\n"
_CONV2_IN = "inp = torch.randn(2, 2, 5, 5, dtype=dtype).to(device)\n"
_QAT = "qc = Q.get_default_qat_qconfig('x86')\n"

# qconfig helpers: the activation and weight observers it makes, fed device tensors, and
# an eager prepare of a tiny model on the device with it
_QCONFIG = ("act = observe(qc.activation())\nwt = observe(qc.weight(), w)\n"
            "p, res = eager_prepare(qc)\n"
            "out = {'act': observers(act) or [act(x)], 'weight': observers(wt) or [wt(w)], **res}")


def _qconfig(expr: str) -> str:
    return f"qc = {expr}\n" + _QCONFIG


def _observer(make: str, *, feed: str = "x, x * 2") -> str:
    return f"obs = observe({make}, {feed})\nout = {{'qparams': qparams(obs), 'state': obs.state_dict()}}"


def _bn_stats(fn: str) -> str:
    return (_QAT + _CONV_IN + "m = nniqat.ConvBn1d(2, 3, 3, qconfig=qc).to(device).train()\n"
            + ("m.apply(nniqat.freeze_bn_stats)\n" if fn == "update_bn_stats" else "")
            + f"m.apply(nniqat.{fn})\n"
            "before = m.bn.running_mean.clone()\ny = m(inp)\n"
            "out = {'freeze_bn': m.freeze_bn, 'output': y, 'before': before, 'after': m.bn.running_mean}")


CASES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    # torch.ao.nn.*: fused, QAT and quantizable modules, forward and backward on the device
    "torch.ao.nn.intrinsic.LinearReLU": (
        "out = fwd_bwd(nni.LinearReLU(torch.nn.Linear(8, 4), torch.nn.ReLU()))", FLOATS),
    "torch.ao.nn.intrinsic.qat.ConvBn1d": (
        _QAT + _CONV_IN + "out = fwd_bwd(nniqat.ConvBn1d(2, 3, 3, qconfig=qc).train(), inp)", F32),
    "torch.ao.nn.intrinsic.qat.ConvBnReLU1d": (
        _QAT + _CONV_IN + "out = fwd_bwd(nniqat.ConvBnReLU1d(2, 3, 3, qconfig=qc).train(), inp)", F32),
    "torch.ao.nn.intrinsic.qat.ConvBnReLU2d": (
        _QAT + _CONV2_IN + "out = fwd_bwd(nniqat.ConvBnReLU2d(2, 3, 3, qconfig=qc).train(), inp)", F32),
    "torch.ao.nn.intrinsic.qat.LinearReLU": (
        _QAT + "out = fwd_bwd(nniqat.LinearReLU(8, 4, qconfig=qc))", F32),
    "torch.ao.nn.intrinsic.qat.freeze_bn_stats": (_bn_stats("freeze_bn_stats"), F32),
    "torch.ao.nn.intrinsic.qat.update_bn_stats": (_bn_stats("update_bn_stats"), F32),
    "torch.ao.nn.qat.Linear": (_QAT + "out = fwd_bwd(nnqat.Linear(8, 4, qconfig=qc))", F32),
    "torch.ao.nn.quantizable.LSTM": (
        "import torch.ao.nn.quantizable as nnqa\n"
        "out = fwd_bwd(nnqa.LSTM(8, 5, num_layers=2), x.reshape(2, 2, 8))", F32),
    "torch.ao.nn.quantized.dynamic.Linear": (
        "import torch.ao.nn.quantized.dynamic as nnqd\n"
        "fl = torch.nn.Linear(8, 4)\nfl.qconfig = Q.default_dynamic_qconfig\n"
        "m = nnqd.Linear.from_float(fl).to(device)\nout = {'output': m(x), 'weight_dtype': m.weight().dtype}", F32),
    "torch.ao.ns.fx.utils.compute_sqnr": (
        "from torch.ao.ns.fx.utils import compute_sqnr\n"
        "out = [compute_sqnr(x, x + 0.01 * w), compute_sqnr(x, x)]", FLOATS),

    # eager flow
    P + "QuantStub": (
        "stub = Q.QuantStub().to(device)\nplain = stub(x)\np, res = eager_prepare(Q.default_qconfig)\n"
        "out = {'plain': plain, 'stub': observers(p.quant), **res}", F32),
    P + "DeQuantStub": (
        "d = Q.DeQuantStub().to(device)\np, res = eager_prepare(Q.default_qconfig)\n"
        "out = {'plain': d(x), 'dequant': type(p.dequant).__name__, **res}", F32),
    P + "QuantWrapper": (
        "m = Q.QuantWrapper(torch.nn.Linear(8, 4))\np, res = eager_prepare(Q.default_qconfig, m)\n"
        "out = res", F32),
    P + "convert": (
        "p, res = eager_prepare(Q.default_qconfig)\nc = Q.convert(p)\n"
        "out = {'converted': c(x), 'modules': [type(c.fc).__name__, type(c.quant).__name__]}", F32),
    P + "prepare_qat": (
        "m = Tiny().to(device).train()\nm.qconfig = Q.get_default_qat_qconfig('x86')\n"
        "p = Q.prepare_qat(m)\nout = {'run': fwd_bwd(p), 'fake_quants': observers(p)}", F32),

    # backend_config: a backend config used in an FX prepare on the device
    BC + "BackendConfig": (
        "bc = BackendConfig('tiny').set_backend_pattern_config(linear_pattern())\n"
        "p, out = fx_prepare(backend_config=bc)", F32),
    BC + "BackendConfig.configs": (
        "bc = BackendConfig('tiny').set_backend_pattern_config(linear_pattern())\n"
        "p, res = fx_prepare(backend_config=bc)\n"
        "out = {'patterns': [str(c.pattern) for c in bc.configs], **res}", F32),
    BC + "BackendConfig.from_dict": (
        "d = {'name': 'tiny', 'configs': [linear_pattern().to_dict()]}\nbc = BackendConfig.from_dict(d)\n"
        "p, out = fx_prepare(backend_config=bc)", F32),
    BC + "BackendConfig.set_backend_pattern_config": (
        "bc = BackendConfig().set_backend_pattern_config(linear_pattern())\n"
        "p, out = fx_prepare(backend_config=bc)", F32),
    BC + "BackendConfig.set_backend_pattern_configs": (
        "relu = BackendPatternConfig(torch.nn.ReLU).set_observation_type("
        "ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT).set_dtype_configs(linear_pattern().dtype_configs)\n"
        "bc = BackendConfig().set_backend_pattern_configs([linear_pattern(), relu])\n"
        "p, out = fx_prepare(backend_config=bc)", F32),
    BC + "BackendConfig.set_name": (
        "bc = BackendConfig().set_name('tiny').set_backend_pattern_config(linear_pattern())\n"
        "p, res = fx_prepare(backend_config=bc)\nout = {'name': bc.name, **res}", F32),
    BC + "BackendConfig.to_dict": (
        "d = BackendConfig('tiny').set_backend_pattern_config(linear_pattern()).to_dict()\n"
        "p, res = fx_prepare(backend_config=BackendConfig.from_dict(d))\n"
        "out = {'keys': sorted(d), 'n': len(d['configs']), **res}", F32),
    BC + "BackendPatternConfig": (
        "bc = BackendConfig().set_backend_pattern_config(linear_pattern())\n"
        "p, out = fx_prepare(backend_config=bc)", F32),
    BC + "BackendPatternConfig.add_dtype_config": (
        "dc = DTypeConfig(input_dtype=torch.quint8, output_dtype=torch.quint8, weight_dtype=torch.qint8,"
        " bias_dtype=torch.float)\nc = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "BackendPatternConfig.from_dict": (
        "c = BackendPatternConfig.from_dict(linear_pattern().to_dict())\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "BackendPatternConfig.set_dtype_configs": (
        "c = BackendPatternConfig(torch.nn.Linear).set_dtype_configs(linear_pattern().dtype_configs)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "BackendPatternConfig.set_fused_module": (
        "def fuser(is_qat, linear, relu):\n    return nni.LinearReLU(linear, relu)\n"
        "fuse = BackendPatternConfig((torch.nn.Linear, torch.nn.ReLU)).set_fused_module(nni.LinearReLU)"
        ".set_fuser_method(fuser)\n"
        "bc = BackendConfig().set_backend_pattern_configs([fuse, linear_pattern()])\n"
        "p, out = fx_prepare(backend_config=bc)", F32),
    BC + "BackendPatternConfig.set_fuser_method": (
        "calls = []\n"
        "def fuser(is_qat, linear, relu):\n"
        "    calls.append(type(linear).__name__)\n"
        "    return nni.LinearReLU(linear, relu)\n"
        "fuse = BackendPatternConfig((torch.nn.Linear, torch.nn.ReLU)).set_fused_module(nni.LinearReLU)"
        ".set_fuser_method(fuser)\n"
        "bc = BackendConfig().set_backend_pattern_configs([fuse, linear_pattern()])\n"
        "p, res = fx_prepare(backend_config=bc)\nout = {'fused': calls, **res}", F32),
    BC + "BackendPatternConfig.set_observation_type": (
        "c = linear_pattern().set_observation_type(ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "BackendPatternConfig.set_pattern": (
        "c = BackendPatternConfig().set_pattern(torch.nn.Linear).set_dtype_configs(linear_pattern().dtype_configs)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "BackendPatternConfig.set_qat_module": (
        "c = linear_pattern().set_root_module(torch.nn.Linear).set_qat_module(nnqat.Linear)\n"
        "m = Plain().to(device).train()\n"
        "p = quantize_fx.prepare_qat_fx(m, Q.get_default_qat_qconfig_mapping('x86'), (x,),"
        " backend_config=BackendConfig().set_backend_pattern_config(c))\n"
        "out = {'run': fwd_bwd(p), 'modules': sorted(type(mod).__name__ for mod in p.modules())}", F32),
    BC + "BackendPatternConfig.set_reference_quantized_module": (
        "import torch.ao.nn.quantized.reference as nnqr\n"
        "c = linear_pattern().set_root_module(torch.nn.Linear).set_reference_quantized_module(nnqr.Linear)\n"
        "bc = BackendConfig().set_backend_pattern_config(c)\n"
        "p, res = fx_prepare(backend_config=bc)\n"
        "r = quantize_fx.convert_to_reference_fx(p, backend_config=bc)\n"
        "out = {'reference': r(x), **res}", F32),
    BC + "BackendPatternConfig.set_root_module": (
        "c = linear_pattern().set_root_module(torch.nn.Linear)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "BackendPatternConfig.to_dict": (
        "d = linear_pattern().to_dict()\n"
        "p, res = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config("
        "BackendPatternConfig.from_dict(d)))\n"
        "out = {'keys': sorted(d), **res}", F32),
    BC + "DTypeConfig.from_dict": (
        "dc = DTypeConfig.from_dict({'input_dtype': torch.quint8, 'output_dtype': torch.quint8,"
        " 'weight_dtype': torch.qint8, 'bias_dtype': torch.float})\n"
        "c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "DTypeConfig.to_dict": (
        "d = linear_pattern().dtype_configs[0].to_dict()\n"
        "c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(DTypeConfig.from_dict(d))\n"
        "p, res = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))\n"
        "out = {'dict': {k: str(v) for k, v in d.items()}, **res}", F32),
    BC + "DTypeWithConstraints": (
        "act = DTypeWithConstraints(dtype=torch.quint8, quant_min_lower_bound=0, quant_max_upper_bound=255)\n"
        "dc = DTypeConfig(input_dtype=act, output_dtype=act, weight_dtype=torch.qint8, bias_dtype=torch.float)\n"
        "c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "ObservationType": (
        "c = linear_pattern(ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT)\n"
        "p, res = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))\n"
        "out = {'members': [t.name for t in ObservationType], **res}", F32),
    BC + "ObservationType.INPUT_OUTPUT_NOT_OBSERVED": (
        "c = linear_pattern(ObservationType.INPUT_OUTPUT_NOT_OBSERVED)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT": (
        "c = linear_pattern(ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),
    BC + "ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT": (
        "c = linear_pattern(ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT)\n"
        "p, out = fx_prepare(backend_config=BackendConfig().set_backend_pattern_config(c))", F32),

    # fake_quantize: forward and backward on the device
    FQ + "FakeQuantize": (
        "fq = Q.FakeQuantize()\nout = {'run': fwd_bwd(fq), 'qparams': qparams(fq)}", F32),
    FQ + "FixedQParamsFakeQuantize": (
        "fq = Q.FixedQParamsFakeQuantize(Q.default_fixed_qparams_range_0to1_observer)\n"
        "out = {'run': fwd_bwd(fq, x.sigmoid()), 'qparams': qparams(fq)}", F32),
    FQ + "FusedMovingAvgObsFakeQuantize": (
        "fq = Q.FusedMovingAvgObsFakeQuantize()\nfirst = fwd_bwd(fq)\n"
        "out = {'first': first, 'second': fwd_bwd(fq, x * 3), 'qparams': qparams(fq)}", F32),
}

for _fn in ("disable_fake_quant", "disable_observer", "enable_fake_quant", "enable_observer"):
    _pre = ("" if _fn.startswith("disable") else
            f"fq.apply(Q.fake_quantize.{_fn.replace('enable', 'disable')})\n")
    CASES[FQ + _fn] = (
        "fq = Q.FakeQuantize().to(device)\n" + _pre + f"fq.apply(Q.fake_quantize.{_fn})\n"
        "y = fq(x)\nout = {'output': y, 'flags': [int(fq.fake_quant_enabled), int(fq.observer_enabled)],"
        " 'min_max': [fq.activation_post_process.min_val, fq.activation_post_process.max_val]}", F32)


# public names of the helpers other modules use
observer = _observer
qconfig = _qconfig
