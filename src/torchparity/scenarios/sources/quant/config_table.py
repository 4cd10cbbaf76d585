"""The ``quant`` source's cases for the FX configuration objects (see ``quant.table``):
``fx.custom_config`` and ``qconfig_mapping``, each used in an FX fuse / prepare / convert
of a small model on the device, calibrated on device tensors."""

from __future__ import annotations

from typing import Dict, Tuple

from .table import CC, F32, QM

MODELS = '''\
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

def tagged(model):
    model.tag = 7
    return model

qmap = Q.get_default_qconfig_mapping("x86")
'''

_CONVERT = ("p, res = fx_prepare(model=tagged(Plain()))\n"
            "c = quantize_fx.convert_fx(p, convert_custom_config=ccc)\n"
            "out = {'converted': c(x), 'tag': getattr(c, 'tag', None), **res}")

_FUSE = ("m = tagged(Plain()).to(device).eval()\nf = quantize_fx.fuse_fx(m, fuse_custom_config=fcc)\n"
         "out = {'output': f(x), 'tag': getattr(f, 'tag', None),"
         " 'modules': sorted(type(mod).__name__ for mod in f.modules())}")

_PREPARE = ("p, res = fx_prepare(model=tagged(WithBranch()), prepare_custom_config=pcc)\n"
            "out = {'tag': getattr(p, 'tag', None), **res}")

_BRANCH = "PrepareCustomConfig().set_non_traceable_module_classes([Branchy])"

CASES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    CC + "ConvertCustomConfig": ("ccc = ConvertCustomConfig()\n" + _CONVERT, F32),
    CC + "ConvertCustomConfig.from_dict": (
        "ccc = ConvertCustomConfig.from_dict({'preserved_attributes': ['tag']})\n" + _CONVERT, F32),
    CC + "ConvertCustomConfig.set_observed_to_quantized_mapping": (
        "pcc = PrepareCustomConfig().set_float_to_observed_mapping(CustomFloat, ObservedCustom)\n"
        "ccc = ConvertCustomConfig().set_observed_to_quantized_mapping(ObservedCustom, QuantizedCustom)\n"
        "p, res = fx_prepare(model=Holder(), prepare_custom_config=pcc)\n"
        "c = quantize_fx.convert_fx(p, convert_custom_config=ccc)\n"
        "out = {'converted': c(x), 'custom': type(c.custom).__name__, **res}", F32),
    CC + "ConvertCustomConfig.set_preserved_attributes": (
        "ccc = ConvertCustomConfig().set_preserved_attributes(['tag'])\n" + _CONVERT, F32),
    CC + "ConvertCustomConfig.to_dict": (
        "d = ConvertCustomConfig().set_preserved_attributes(['tag']).to_dict()\n"
        "ccc = ConvertCustomConfig.from_dict(d)\n" + _CONVERT, F32),
    CC + "FuseCustomConfig": ("fcc = FuseCustomConfig()\n" + _FUSE, F32),
    CC + "FuseCustomConfig.from_dict": (
        "fcc = FuseCustomConfig.from_dict({'preserved_attributes': ['tag']})\n" + _FUSE, F32),
    CC + "FuseCustomConfig.set_preserved_attributes": (
        "fcc = FuseCustomConfig().set_preserved_attributes(['tag'])\n" + _FUSE, F32),
    CC + "FuseCustomConfig.to_dict": (
        "d = FuseCustomConfig().set_preserved_attributes(['tag']).to_dict()\n"
        "fcc = FuseCustomConfig.from_dict(d)\n" + _FUSE, F32),
    CC + "PrepareCustomConfig": (
        "pcc = PrepareCustomConfig()\np, out = fx_prepare(prepare_custom_config=pcc)", F32),
    CC + "PrepareCustomConfig.from_dict": (
        "pcc = PrepareCustomConfig.from_dict({'non_traceable_module_class': [Branchy],"
        " 'preserved_attributes': ['tag']})\n" + _PREPARE, F32),
    CC + "PrepareCustomConfig.set_float_to_observed_mapping": (
        "pcc = PrepareCustomConfig().set_float_to_observed_mapping(CustomFloat, ObservedCustom)\n"
        "p, res = fx_prepare(model=Holder(), prepare_custom_config=pcc)\n"
        "out = {'custom': type(p.custom).__name__, **res}", F32),
    CC + "PrepareCustomConfig.set_input_quantized_indexes": (
        "pcc = PrepareCustomConfig().set_input_quantized_indexes([0])\n"
        "p, out = fx_prepare(prepare_custom_config=pcc)", F32),
    CC + "PrepareCustomConfig.set_non_traceable_module_classes": ("pcc = " + _BRANCH + "\n" + _PREPARE, F32),
    CC + "PrepareCustomConfig.set_non_traceable_module_names": (
        "pcc = PrepareCustomConfig().set_non_traceable_module_names(['branch'])\n" + _PREPARE, F32),
    CC + "PrepareCustomConfig.set_output_quantized_indexes": (
        "pcc = PrepareCustomConfig().set_output_quantized_indexes([0])\n"
        "p, out = fx_prepare(prepare_custom_config=pcc)", F32),
    CC + "PrepareCustomConfig.set_preserved_attributes": (
        "pcc = " + _BRANCH + ".set_preserved_attributes(['tag'])\n" + _PREPARE, F32),
    CC + "PrepareCustomConfig.set_standalone_module_class": (
        "pcc = " + _BRANCH + ".set_standalone_module_class(Plain, qmap, (x,), None, None)\n" + _PREPARE, F32),
    CC + "PrepareCustomConfig.set_standalone_module_name": (
        "pcc = " + _BRANCH + ".set_standalone_module_name('sub', qmap, (x,), None, None)\n" + _PREPARE, F32),
    CC + "PrepareCustomConfig.to_dict": (
        "d = " + _BRANCH + ".set_preserved_attributes(['tag']).to_dict()\n"
        "pcc = PrepareCustomConfig.from_dict(d)\n" + _PREPARE, F32),
    CC + "StandaloneModuleConfigEntry": (
        "pcc = " + _BRANCH + "\n"
        "pcc.standalone_module_names['sub'] = StandaloneModuleConfigEntry(qmap, (x,), None, None)\n"
        + _PREPARE, F32),

    # qconfig_mapping
    QM + "QConfigMapping": (
        "p, out = fx_prepare(QConfigMapping().set_global(Q.default_qconfig))", F32),
    QM + "QConfigMapping.from_dict": (
        "m = QConfigMapping.from_dict({'': Q.default_qconfig,"
        " 'object_type': [(torch.nn.ReLU, None)], 'module_name': [('fc2', Q.default_per_channel_qconfig)]})\n"
        "p, out = fx_prepare(m)", F32),
    QM + "QConfigMapping.set_global": (
        "p, out = fx_prepare(QConfigMapping().set_global(Q.default_per_channel_qconfig))", F32),
    QM + "QConfigMapping.set_module_name": (
        "p, out = fx_prepare(QConfigMapping().set_module_name('fc1', Q.default_qconfig))", F32),
    QM + "QConfigMapping.set_module_name_object_type_order": (
        "m = QConfigMapping().set_module_name_object_type_order('', torch.nn.Linear, 1, Q.default_qconfig)\n"
        "p, out = fx_prepare(m)", F32),
    QM + "QConfigMapping.set_module_name_regex": (
        "p, out = fx_prepare(QConfigMapping().set_module_name_regex('fc.*', Q.default_qconfig))", F32),
    QM + "QConfigMapping.set_object_type": (
        "m = QConfigMapping().set_object_type(torch.nn.Linear, Q.default_qconfig)"
        ".set_object_type(torch.nn.ReLU, Q.default_qconfig)\np, out = fx_prepare(m)", F32),
    QM + "QConfigMapping.to_dict": (
        "d = QConfigMapping().set_global(Q.default_qconfig).set_module_name('fc2', None).to_dict()\n"
        "p, res = fx_prepare(QConfigMapping.from_dict(d))\nout = {'keys': sorted(d), **res}", F32),
    QM + "get_default_qat_qconfig_mapping": (
        "m = Plain().to(device).train()\n"
        "p = quantize_fx.prepare_qat_fx(m, Q.get_default_qat_qconfig_mapping('x86'), (x,))\n"
        "out = {'run': fwd_bwd(p), 'fake_quants': observers(p)}", F32),
    QM + "get_default_qconfig_mapping": (
        "p, out = fx_prepare(Q.get_default_qconfig_mapping('qnnpack'))", F32),
}
