"""``torch.nn.Module`` members, the container classes' members, the global module hooks
and ``torch.nn.init`` for the ``member`` source: one code block each, as in
``member.table`` (the block leaves its answer in ``out``; it is also the snippet).

``net`` is a small model (PReLU, BatchNorm1d, Tanh, LayerNorm: parameters, buffers and
no matrix product, so a device's matmul limits are not blamed on a Module member) built on
the CPU in the run's dtype and moved with ``.to(device)``; ``x`` its input. Initialisers that draw random
numbers are compared by shape, dtype and summary statistics of 4,096 draws within wide
bounds (the device has its own generator).
"""

from __future__ import annotations

from typing import Dict, Tuple

NN_PRELUDE = '''\
def on_run_device(obj):
    return obj.device.type == torch.device(device).type

def build():
    return torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.BatchNorm1d(3), torch.nn.Tanh(),
                               torch.nn.LayerNorm(3)).to(dtype).to(device)

net = build()
x = torch.randn(5, 3, dtype=dtype).to(device)
'''

# a Module member's behaviour is not a question of dtype: one dtype (the conversions,
# double() / half() / to(dtype), are cases of their own); initialisers run per dtype
F32 = ("float32",)
FB = ("float32", "float64")
STEP = "net(x).sum().backward()\n"

MODULE: Dict[str, str] = {
    "add_module": "net.add_module('extra', torch.nn.Tanh())\nout = net(x)",
    "register_module": "net.register_module('extra', torch.nn.Tanh())\nout = net(x)",
    "apply": ("net.apply(lambda m: torch.nn.init.constant_(m.weight, 0.5) "
              "if isinstance(m, torch.nn.PReLU) else None)\nout = net(x)"),
    "bfloat16": "out = dict(net.bfloat16().named_parameters())",
    "half": "out = dict(net.half().named_parameters())",
    "float": "out = dict(net.float().named_parameters())",
    "double": "out = dict(net.double().named_parameters())",
    "buffers": "net(x)\nout = list(net.buffers())",
    "children": "out = [type(c).__name__ for c in net.children()]",
    "modules": "out = [type(c).__name__ for c in net.modules()]",
    "named_children": "out = [n for n, _ in net.named_children()]",
    "named_modules": "out = [n for n, _ in net.named_modules()]",
    "named_buffers": "net(x)\nout = dict(net.named_buffers())",
    "named_parameters": "out = dict(net.named_parameters())",
    "parameters": "out = list(net.parameters())",
    "compile": "net.compile(backend='eager')\nout = net(x)",
    "cpu": "m = net.cpu()\nout = [sorted({p.device.type for p in m.parameters()}), m(x.cpu()).tolist()]",
    "eval": "m = net.eval()\nout = [m.training, m[1].training, m(x)]",
    "train": "m = net.train()\nout = [m.training, m(x), m[1].running_mean, m.train(False).training]",
    "extra_repr": "out = [m.extra_repr() for m in net]",
    "forward": "out = net.forward(x)",
    "get_buffer": "net(x)\nout = net.get_buffer('1.running_var')",
    "get_parameter": "out = net.get_parameter('3.weight')",
    "get_submodule": "out = [type(net.get_submodule('1')).__name__, net.get_submodule('0')(x)]",
    "set_submodule": "net.set_submodule('2', torch.nn.Tanh())\nout = net(x)",
    "get_extra_state": ("try:\n    out = net.get_extra_state()\nexcept RuntimeError as exc:\n"
                        "    out = str(exc).split('.')[0]"),
    "set_extra_state": ("try:\n    net.set_extra_state({})\n    out = 'set'\nexcept RuntimeError as exc:\n"
                        "    out = str(exc).split('.')[0]"),
    "load_state_dict": ("sd = {k: v.cpu() for k, v in net.state_dict().items()}\nfresh = build()\n"
                        "result = fresh.load_state_dict(sd)\n"
                        "out = [list(result.missing_keys), fresh(x), dict(fresh.named_parameters())]"),
    "state_dict": "net(x)\nout = dict(net.state_dict())",
    "register_buffer": ("net[0].register_buffer('scale', torch.full((3,), 2.0, dtype=dtype))\nnet.to(device)\n"
                        "out = [net[0].scale, on_run_device(net[0].scale)]"),
    "register_parameter": ("net[0].register_parameter('extra', torch.nn.Parameter(torch.ones(2, dtype=dtype)"
                           ".to(device)))\nout = dict(net.named_parameters())"),
    "register_forward_hook": "net[0].register_forward_hook(lambda m, i, o: o * 2)\nout = net(x)",
    "register_forward_pre_hook": "net[0].register_forward_pre_hook(lambda m, i: (i[0] + 1,))\nout = net(x)",
    "register_backward_hook": ("seen = []\nimport warnings\nwith warnings.catch_warnings():\n"
                               "    warnings.simplefilter('ignore')\n"
                               "    net[3].register_backward_hook(lambda m, gi, go: seen.append(go[0].clone()))\n"
                               + STEP + "out = seen"),
    "register_full_backward_hook": ("seen = []\nnet[3].register_full_backward_hook("
                                    "lambda m, gi, go: seen.append([g.clone() for g in gi]))\n"
                                    + STEP + "out = seen"),
    "register_full_backward_pre_hook": ("seen = []\nnet[3].register_full_backward_pre_hook("
                                        "lambda m, go: seen.append(go[0].clone()))\n" + STEP + "out = seen"),
    "register_load_state_dict_post_hook": (
        "seen = []\nnet.register_load_state_dict_post_hook(lambda m, keys: seen.append(len(keys.missing_keys)))\n"
        "net.load_state_dict(net.state_dict())\nout = [seen, net(x)]"),
    "register_state_dict_pre_hook": ("seen = []\nnet.register_state_dict_pre_hook("
                                     "lambda m, prefix, keep_vars: seen.append(prefix))\n"
                                     "out = [seen, sorted(net.state_dict()), seen]"),
    "requires_grad_": "net.requires_grad_(False)\nout = [[p.requires_grad for p in net.parameters()], net(x).requires_grad]",
    "share_memory": "out = net.share_memory()(x)",
    "to": "m = net.cpu().to(device=device, dtype=dtype)\nout = [dict(m.named_parameters()), m(x)]",
    "to_empty": ("m = net.to_empty(device=device)\n"
                 "out = [(n, tuple(p.shape), str(p.dtype), on_run_device(p)) for n, p in m.named_parameters()]"),
    "type": "m = net.type(dtype)\nout = [dict(m.named_parameters()), m(x)]",
    "zero_grad": (STEP + "net.zero_grad()\nout = [p.grad is None for p in net.parameters()]"),
}
MODULE_DTYPES: Dict[str, Tuple[str, ...]] = {}

CONTAINERS: Dict[str, str] = {
    "Sequential.append": "net.append(torch.nn.Tanh().to(device))\nout = net(x)",
    "ModuleList.append": ("ml = torch.nn.ModuleList([torch.nn.PReLU(3)]).to(dtype).to(device)\n"
                          "ml.append(torch.nn.LayerNorm(3).to(dtype).to(device))\nout = [m(x) for m in ml]"),
    "ModuleList.extend": ("ml = torch.nn.ModuleList().to(device)\n"
                          "ml.extend([torch.nn.PReLU(3).to(dtype).to(device), torch.nn.Tanh()])\n"
                          "out = [len(ml), ml[1](ml[0](x))]"),
    "ModuleList.insert": ("ml = torch.nn.ModuleList([torch.nn.Tanh()])\n"
                          "ml.insert(0, torch.nn.PReLU(3).to(dtype).to(device))\nout = ml[1](ml[0](x))"),
    "ModuleDict.clear": "md = torch.nn.ModuleDict({'a': net})\nmd.clear()\nout = len(md)",
    "ModuleDict.items": "md = torch.nn.ModuleDict({'a': net[0], 'b': net[3]})\nout = {k: v.weight for k, v in md.items()}",
    "ModuleDict.keys": "md = torch.nn.ModuleDict({'b': net[3], 'a': net[0]})\nout = list(md.keys())",
    "ModuleDict.values": "md = torch.nn.ModuleDict({'a': net[0]})\nout = [m(x) for m in md.values()]",
    "ModuleDict.pop": "md = torch.nn.ModuleDict({'a': net[0], 'b': net[3]})\nout = [md.pop('a')(x), list(md)]",
    "ModuleDict.update": "md = torch.nn.ModuleDict({'a': net[0]})\nmd.update({'b': net[2]})\nout = md['b'](md['a'](x))",
    "ParameterList.append": ("pl = torch.nn.ParameterList([net[0].weight])\n"
                             "pl.append(torch.nn.Parameter(torch.ones(2, dtype=dtype).to(device)))\nout = list(pl)"),
    "ParameterList.extend": ("pl = torch.nn.ParameterList()\npl.extend([net[0].weight, net[3].bias])\n"
                             "out = [list(pl), on_run_device(pl[0])]"),
}
_PD = "pd = torch.nn.ParameterDict({'w': net[0].weight, 'b': net[3].bias})\n"
CONTAINERS.update({
    "ParameterDict.clear": _PD + "pd.clear()\nout = len(pd)",
    "ParameterDict.copy": _PD + "c = pd.copy()\nout = dict(c.items())",
    "ParameterDict.fromkeys": _PD + "out = dict(pd.fromkeys(['u', 'v'], net[3].bias).items())",
    "ParameterDict.get": _PD + "out = [pd.get('w'), pd.get('missing')]",
    "ParameterDict.items": _PD + "out = dict(pd.items())",
    "ParameterDict.keys": _PD + "out = list(pd.keys())",
    "ParameterDict.values": _PD + "out = list(pd.values())",
    "ParameterDict.pop": _PD + "out = [pd.pop('w'), list(pd)]",
    "ParameterDict.popitem": _PD + "k, v = pd.popitem()\nout = [k, v, list(pd)]",
    "ParameterDict.setdefault": _PD + "out = [pd.setdefault('w'), pd.setdefault('z', net[3].bias), list(pd)]",
    "ParameterDict.update": _PD + "pd.update({'z': net[3].bias})\nout = dict(pd.items())",
})

# removing a global backward hook's handle does not reset torch's process-wide "full or
# not" flag (set by register_module_backward_hook / ..._full_backward_hook): without the
# restore, every later register_module_full_backward_hook in the process (a planning probe,
# a worker) raises "Cannot use both regular backward hooks and full backward hooks"
_GLOBAL = ("import torch.nn.modules.module as M\nflag = M._global_is_full_backward_hook\n"
           "seen = []\nhandle = M.{fn}({hook})\ntry:\n    {body}\n"
           "finally:\n    handle.remove()\n    M._global_is_full_backward_hook = flag\nout = seen")
GLOBAL_HOOKS: Dict[str, str] = {
    "register_module_forward_pre_hook": _GLOBAL.format(
        fn="register_module_forward_pre_hook", hook="lambda m, i: seen.append(type(m).__name__)", body="net(x)"),
    "register_module_forward_hook": _GLOBAL.format(
        fn="register_module_forward_hook", hook="lambda m, i, o: seen.append(o.clone())", body="net(x)"),
    "register_module_backward_hook": _GLOBAL.format(
        fn="register_module_backward_hook", hook="lambda m, gi, go: seen.append(type(m).__name__)",
        body="net(x).sum().backward()"),
    "register_module_full_backward_pre_hook": _GLOBAL.format(
        fn="register_module_full_backward_pre_hook", hook="lambda m, go: seen.append(go[0].clone())",
        body="net(x).sum().backward()"),
    "register_module_full_backward_hook": _GLOBAL.format(
        fn="register_module_full_backward_hook", hook="lambda m, gi, go: seen.append(go[0].clone())",
        body="net(x).sum().backward()"),
    "register_module_buffer_registration_hook": _GLOBAL.format(
        fn="register_module_buffer_registration_hook", hook="lambda m, n, b: seen.append([n, b])",
        body="net[0].register_buffer('extra', torch.ones(2, dtype=dtype).to(device))"),
    "register_module_module_registration_hook": _GLOBAL.format(
        fn="register_module_module_registration_hook", hook="lambda m, n, s: seen.append(n)",
        body="net.add_module('tail', torch.nn.Tanh())"),
    "register_module_parameter_registration_hook": _GLOBAL.format(
        fn="register_module_parameter_registration_hook", hook="lambda m, n, p: seen.append([n, p])",
        body="net[0].register_parameter('extra', torch.nn.Parameter(torch.ones(2, dtype=dtype).to(device)))"),
}

_DRAW = ("w = torch.empty(64, 64, dtype=dtype).to(device)\n{call}\n"
         "out = [tuple(w.shape), str(w.dtype), on_run_device(w), bool(torch.isfinite(w).all()), {check},\n"
         "       Draws(w)]")
INIT: Dict[str, str] = {
    "calculate_gain": "out = [torch.nn.init.calculate_gain(n) for n in ('linear', 'relu', 'tanh', 'selu')]",
    "constant_": "w = torch.empty(3, 4, dtype=dtype).to(device)\nout = torch.nn.init.constant_(w, 0.25)",
    "ones_": "w = torch.empty(3, 4, dtype=dtype).to(device)\nout = torch.nn.init.ones_(w)",
    "zeros_": "w = torch.empty(3, 4, dtype=dtype).to(device)\nout = torch.nn.init.zeros_(w)",
    "eye_": "w = torch.empty(3, 4, dtype=dtype).to(device)\nout = torch.nn.init.eye_(w)",
    "dirac_": "w = torch.empty(4, 2, 3, dtype=dtype).to(device)\nout = torch.nn.init.dirac_(w)",
    "uniform_": _DRAW.format(call="torch.nn.init.uniform_(w, -1, 1)",
                             check="bool(((w >= -1) & (w <= 1)).all()), abs(float(w.float().mean())) < 0.1"),
    "normal_": _DRAW.format(call="torch.nn.init.normal_(w, 0.0, 1.0)",
                            check="abs(float(w.float().mean())) < 0.1, 0.9 < float(w.float().std()) < 1.1"),
    "xavier_uniform_": _DRAW.format(call="torch.nn.init.xavier_uniform_(w)",
                                    check="bool((w.abs() <= (6 / 128) ** 0.5 + 1e-3).all())"),
    "xavier_normal_": _DRAW.format(call="torch.nn.init.xavier_normal_(w)",
                                   check="0.8 < float(w.float().std()) / (2 / 128) ** 0.5 < 1.2"),
    "kaiming_uniform_": _DRAW.format(call="torch.nn.init.kaiming_uniform_(w, nonlinearity='relu')",
                                     check="bool((w.abs() <= (6 / 64) ** 0.5 + 1e-3).all())"),
    "kaiming_normal_": _DRAW.format(call="torch.nn.init.kaiming_normal_(w, nonlinearity='relu')",
                                    check="0.8 < float(w.float().std()) / (2 / 64) ** 0.5 < 1.2"),
    "trunc_normal_": _DRAW.format(call="torch.nn.init.trunc_normal_(w, 0.0, 1.0, -2.0, 2.0)",
                                  check="bool((w.abs() <= 2).all())"),
    "orthogonal_": _DRAW.format(call="torch.nn.init.orthogonal_(w)",
                                check="bool(torch.allclose((w.float() @ w.float().t()).cpu(), torch.eye(64), "
                                      "atol=1e-2))"),
    "sparse_": _DRAW.format(call="torch.nn.init.sparse_(w, sparsity=0.5)",
                            check="int((w == 0).sum(0).min())"),
}
INIT_RANDOM = ("uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
               "kaiming_normal_", "trunc_normal_", "orthogonal_", "sparse_")

EXCLUDED_NN: Dict[str, str] = {
    "cuda": "moves to a CUDA device: not a question about another device",
    "xpu": "moves to an XPU device: not a question about another device",
    "ipu": "moves to an IPU device: not a question about another device",
    "npu": "added by torch_npu; the portable spelling is .to(device)",
}
