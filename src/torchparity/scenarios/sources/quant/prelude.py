"""The shared prelude of the ``quant`` source's code blocks (see ``quant.table``).

It runs before every block with ``torch``, ``device`` and ``dtype`` in scope: imports, the
input ``x`` made on the CPU and moved to ``device``, two tiny models (``Tiny`` for the
eager flow with Quant/DeQuant stubs, ``Plain`` for the FX flow) and helpers that run an
observer, a module's forward and backward, or an FX prepare on the device and return what
the API produced (outputs, gradients, qparams) for the judge to compare with the CPU run.
"""

PRELUDE = '''\
import torch.ao.quantization as Q
import torch.ao.nn.intrinsic as nni
import torch.ao.nn.intrinsic.qat as nniqat
import torch.ao.nn.qat as nnqat
from torch.ao.quantization import quantize_fx
from torch.ao.quantization.backend_config import (
    BackendConfig, BackendPatternConfig, DTypeConfig, DTypeWithConstraints, ObservationType)
from torch.ao.quantization.fx.custom_config import (
    ConvertCustomConfig, FuseCustomConfig, PrepareCustomConfig, StandaloneModuleConfigEntry)
from torch.ao.quantization.qconfig_mapping import QConfigMapping

x = torch.randn(4, 8, dtype=dtype).to(device)
w = torch.randn(4, 8, dtype=dtype).to(device)

def observe(obs, *inputs):
    """the observer on the device, fed device tensors"""
    obs = obs.to(device)
    for t in inputs or (x,):
        obs(t)
    return obs

def qparams(obs):
    return list(obs.calculate_qparams())

def flat(tree):
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [t for s in tree for t in flat(s)]
    return []

def fwd_bwd(m, *inputs):
    """forward and backward of a module on the device: output, input and parameter grads"""
    m = m.to(device)
    ins = [t.detach().clone().requires_grad_() for t in (inputs or (x,))]
    y = m(*ins)
    sum(t.sum() for t in flat(y)).backward()
    return {"output": y, "input_grads": [t.grad for t in ins],
            "param_grads": {n: p.grad for n, p in m.named_parameters()}}

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

def eager_prepare(qconfig, model=None):
    """eager prepare of a model on the device with ``qconfig``, calibrated on ``x``"""
    m = (model or Tiny()).to(device).eval()
    m.qconfig = qconfig
    p = Q.prepare(m)
    y = p(x)
    return p, {"output": y, "observers": observers(p)}

def fx_prepare(mapping=None, model=None, **kw):
    """FX prepare of a model on the device, calibrated on ``x``"""
    m = (model or Plain()).to(device).eval()
    p = quantize_fx.prepare_fx(m, mapping or Q.get_default_qconfig_mapping("x86"), (x,), **kw)
    y = p(x)
    return p, {"output": y, "observers": observers(p),
               "modules": sorted(type(mod).__name__ for mod in p.modules())}

def linear_pattern(observation=None):
    """a backend pattern config for nn.Linear (quint8 activations, qint8 weights)"""
    dc = DTypeConfig(input_dtype=torch.quint8, output_dtype=torch.quint8,
                     weight_dtype=torch.qint8, bias_dtype=torch.float)
    c = BackendPatternConfig(torch.nn.Linear).add_dtype_config(dc)
    return c.set_observation_type(observation or ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT)
'''
