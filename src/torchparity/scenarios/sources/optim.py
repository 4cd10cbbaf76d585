"""``torch.optim`` as a scenario source: optimizers from ``optim_db`` and LR schedulers.

An optimizer class (``torch.optim.Adam``) gets, per configuration of its OptimizerInfo
(``optim_inputs_func("cpu")``, the first ``CONFIGS``), a few steps on parameters that live
on the device against the same steps on the CPU: the parameters and the optimizer state
after them are compared. Its methods get their own scenarios on the default
configuration: ``step``, ``zero_grad`` (both ``set_to_none`` ways), ``state_dict``,
``load_state_dict`` (state of one optimizer loaded into another, then one more step),
``add_param_group`` and the eight ``register_*_hook`` members (the hook runs, sees the
device-resident optimizer, and what it returns takes effect). ``torch.optim.Optimizer.X``
runs on ``SGD`` and ``Adam``.

An optimizer whose ``foreach`` a configuration leaves open takes it as torch picks it for
the device under test (``path_kwargs``), on the CPU reference too: torch defaults to the
foreach kernels on an accelerator and to the per-tensor loop on the CPU, two
implementations whose float64 results differ in the last bits (ASGD) — the reference must
run the path the device runs, or the row blames the device for torch's default.

State tensors are compared where the parameters live (``.to(device)``): an optimizer
keeps ``step`` on the CPU unless ``capturable``, on either device alike.

LR schedulers (``torch.optim.lr_scheduler.*``): a device-resident SGD with momentum,
six epochs of step + ``scheduler.step()``; the learning-rate sequence and the parameters
are compared; ``get_last_lr``, ``get_lr``, ``state_dict`` / ``load_state_dict`` and
``step`` likewise. No database describes scheduler constructors, so their arguments are
listed in ``SCHEDULERS`` (one line each).

OptimizerInfo's skips and expected failures are not read: none of them is for a test
that compares a device with the CPU (they mark CUDA-only, compile and fused variants).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Dict, List, Optional, Tuple

import torch

from ..registry import Scenario, scaffold, under_test
from .base import FLOATS, ModuleSource, probed, reproducer, resolve_quiet, split_member

NAME = "optim"
ORDER = 30
DTYPES = FLOATS
# the loss's activation is scaffolding, not the optimizer: the first the device under test
# runs (forward and backward) in the dtype under test (tanh is refused in float64 on A2)
ACTIVATIONS = (("tanh", torch.tanh), ("sigmoid", torch.sigmoid), ("square", torch.square))
CONFIGS = 3
STEPS = 3
HOOKS = ("register_step_pre_hook", "register_step_post_hook", "register_state_dict_pre_hook",
         "register_state_dict_post_hook", "register_load_state_dict_pre_hook",
         "register_load_state_dict_post_hook")
METHODS = ("step", "zero_grad", "state_dict", "load_state_dict", "add_param_group") + HOOKS
REPRESENTATIVES = ("SGD", "Adam")


@functools.lru_cache(maxsize=1)
def _infos() -> Dict[str, Any]:
    from torch.testing._internal.common_optimizers import optim_db

    return {info.optim_cls.__name__: info for info in optim_db}


def to_device(tree: Any, device: str) -> Any:
    """Every tensor of a (nested) optimizer state moved to ``device``: where the state
    lives is the optimizer's business; its values are compared."""
    if isinstance(tree, torch.Tensor):
        return tree.detach().to(device)
    if isinstance(tree, dict):
        return {k: to_device(v, device) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [to_device(v, device) for v in tree]
    return tree


# -- one optimizer run -------------------------------------------------------------------

class _Run:
    """Parameters made on the CPU (seeded by the runner), moved, and a loss over them
    (elementwise ops and sums only: a device's matmul limits are not the optimizer's)."""

    def __init__(self, info, device: str, dtype: torch.dtype, compute: Optional[torch.dtype] = None):
        # compute: the float64 golden makes its inputs in ``dtype`` and computes in float64
        self.sparse = bool(info.only_supports_sparse_grads)
        self.device = device
        c = compute or dtype
        w = torch.randn(4, 3, dtype=dtype).to(c)
        b = torch.randn(4, dtype=dtype).to(c)
        self.x = torch.randn(4, 3, dtype=dtype).to(c).to(device)
        self.idx = torch.tensor([0, 2, 3]).to(device)
        self.w = torch.nn.Parameter(w.to(device))
        self.b = torch.nn.Parameter((w.flip(0) if self.sparse else b).to(device))
        self.params = [self.w, self.b]
        self.act = scaffold(device, dtype, ACTIVATIONS)  # chosen for the dtype under test

    def loss(self):
        if self.sparse:  # SparseAdam takes sparse gradients only: two embedding tables
            emb = torch.nn.functional.embedding
            return (emb(self.idx, self.w, sparse=True) ** 2).sum() + emb(self.idx, self.b, sparse=True).sum()
        return (self.act((self.w * self.x).sum(1) + self.b) ** 2).sum()

    def closure(self, opt):
        def closure():
            opt.zero_grad()
            loss = self.loss()
            loss.backward()
            return loss
        return closure

    def steps(self, opt, n: int = STEPS):
        for _ in range(n):
            opt.step(self.closure(opt))


def path_kwargs(info, kwargs: dict, device: str) -> dict:
    """``kwargs`` with ``foreach`` made explicit as torch picks it for the device under
    test (``torch.optim``'s own default rule), where the configuration leaves it open and
    the optimizer has a foreach implementation."""
    if "foreach" not in info.supported_impls or kwargs.get("foreach") is not None or kwargs.get("fused"):
        return kwargs
    from torch.optim.optimizer import _default_to_fused_or_foreach

    probe = torch.nn.Parameter(torch.empty(0, device=under_test(device)))
    _, foreach = _default_to_fused_or_foreach([probe], bool(kwargs.get("differentiable")), use_fused=False)
    return {**kwargs, "foreach": foreach}


def _make(info, kwargs, params):
    return info.optim_cls(params, **path_kwargs(info, kwargs, params[0].device.type))


def run_member(name: str, kwargs: dict, member: str, device: str, dtype: torch.dtype,
               compute: Optional[torch.dtype] = None) -> Any:
    info = _infos()[name]
    r = _Run(info, device, dtype, compute)
    if member == "add_param_group":
        opt = _make(info, kwargs, [r.w])
        opt.add_param_group({"params": [r.b]})
        if not info.step_requires_closure:  # LBFGS steps a single group only (it asserts)
            r.steps(opt)
        return {"params": r.params, "groups": len(opt.param_groups),
                "state": to_device(opt.state_dict()["state"], device)}
    opt = _make(info, kwargs, r.params)
    if member in ("step", "config"):
        r.steps(opt)
        return {"params": r.params, "state": to_device(opt.state_dict()["state"], device)}
    if member == "zero_grad":
        r.steps(opt, 1)
        opt.zero_grad(set_to_none=False)
        kept = [p.grad for p in r.params]
        opt.zero_grad()
        return {"zeroed": kept, "none": [p.grad is None for p in r.params]}
    if member == "state_dict":
        r.steps(opt, 2)
        return to_device(opt.state_dict(), device)
    if member == "load_state_dict":
        r.steps(opt, 2)
        r2 = _Run(info, device, dtype, compute)
        opt2 = _make(info, kwargs, r2.params)
        for g in opt2.param_groups:  # hyperparameters the load must bring back: a new
            # optimizer's own would leave a state without steps equal to the default one
            if "lr" in g:
                g["lr"] = g["lr"] * 0.5
        opt2.load_state_dict(opt.state_dict())
        r2.steps(opt2, 1)
        return {"params": r2.params, "state": to_device(opt2.state_dict()["state"], device),
                "lr": [g.get("lr") for g in opt2.param_groups]}
    if member in HOOKS:
        return _hook(member, opt, r, device)
    raise KeyError(member)


def _hook(member: str, opt, r: _Run, device: str) -> Any:
    seen: List[Any] = []
    if member == "register_step_pre_hook":
        opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(
            [p.device.type == torch.device(device).type for g in o.param_groups for p in g["params"]]))
        r.steps(opt, 2)
    elif member == "register_step_post_hook":
        opt.register_step_post_hook(lambda o, args, kwargs: seen.append(len(o.state)))
        r.steps(opt, 2)
    elif member == "register_state_dict_pre_hook":
        opt.register_state_dict_pre_hook(lambda o: seen.append(len(o.state)))
        r.steps(opt, 1)
        opt.state_dict()
    elif member == "register_state_dict_post_hook":
        def post(o, sd):
            sd["seen_by_hook"] = len(sd["state"])
            return sd
        opt.register_state_dict_post_hook(post)
        r.steps(opt, 1)
        seen.append(opt.state_dict()["seen_by_hook"])
    elif member == "register_load_state_dict_pre_hook":
        r.steps(opt, 1)
        sd = opt.state_dict()
        opt.register_load_state_dict_pre_hook(lambda o, s: seen.append(sorted(s)))
        opt.load_state_dict(sd)
    elif member == "register_load_state_dict_post_hook":
        r.steps(opt, 1)
        sd = opt.state_dict()
        opt.register_load_state_dict_post_hook(lambda o: seen.append(len(o.state)))
        opt.load_state_dict(sd)
        r.steps(opt, 1)
    return {"seen": seen, "params": r.params}


def _code(name: str, kwargs: dict, member: str) -> str:
    return ("import torch\nfrom torch import tensor  # noqa: F401 (tensor-valued options)\n"
            "device, dtype = {device}, {dtype}\ntorch.manual_seed(0)\n"
            "w = torch.nn.Parameter(torch.randn(4, 3, dtype=dtype).to(device))\n"
            "b = torch.nn.Parameter(torch.randn(4, dtype=dtype).to(device))\n"
            "x = torch.randn(4, 3, dtype=dtype).to(device)\n"
            f"opt = torch.optim.{name}([w, b], **{kwargs!r})\n"
            "act = torch.tanh  # scaffolding: the first of tanh, sigmoid, square the device runs in dtype\n"
            "def closure():\n    opt.zero_grad()\n    loss = (act((w * x).sum(1) + b) ** 2).sum()\n"
            "    loss.backward()\n    return loss\n"
            f"for _ in range({STEPS}):\n    opt.step(closure)\n"
            f"# member under test: {member}\nprint(w, b, opt.state_dict())\n")


# ``step``'s learning rate at least: an update of a parameter of magnitude ~1 by less than
# its dtype's resolution is rounded away (bfloat16 keeps 8 bits: SGD's default lr 1e-3
# moves no parameter), so a step that did nothing would read the same as one that did
STEP_LR = 0.1


def visible_step(info, kwargs: dict) -> dict:
    """``kwargs`` with a float ``lr`` (given or the optimizer's default) raised to
    ``STEP_LR``: the ``step`` row must compare parameters the step moved, in every dtype."""
    lr = kwargs.get("lr", inspect.signature(info.optim_cls.__init__).parameters.get("lr"))
    if isinstance(lr, inspect.Parameter):
        lr = lr.default
    if isinstance(lr, float) and not isinstance(lr, bool) and lr < STEP_LR:
        return {**kwargs, "lr": STEP_LR}
    return kwargs


def _optimizer_scenarios(api: str, name: str, member: Optional[str], prefix: str = "") -> List[Scenario]:
    info = _infos().get(name)
    if info is None:
        return []
    configs = list(info.optim_inputs_func("cpu"))
    if not configs:
        return []
    out: List[Scenario] = []
    if member is None:
        todo = [(f"config[{c.desc}]", dict(c.kwargs), "config") for c in configs[:CONFIGS]]
    elif member in METHODS:
        kwargs = dict(configs[0].kwargs)
        todo = [(member, visible_step(info, kwargs) if member == "step" else kwargs, member)]
    else:
        return []
    for sid, kwargs, m in todo:
        def fn(device, dtype, _n=name, _k=kwargs, _m=m):
            return run_member(_n, _k, _m, device, dtype)

        def golden(dtype, _n=name, _k=kwargs, _m=m):
            return run_member(_n, _k, _m, "cpu", dtype, torch.float64)
        what = f"{name}({kwargs})" if m == "config" else f"{name}.{m}"
        out.extend(probed(prefix + sid, api, NAME, fn, DTYPES,
                          en=f"{what}: {STEPS} steps with device-resident parameters, same parameters "
                             "and state as on the CPU",
                          zh=f"{what}：参数在设备上，{STEPS} 步后参数与状态与 CPU 一致",
                          expect_en="the same parameters and state as the CPU",
                          expect_zh="参数与状态与 CPU 一致",
                          code=reproducer(NAME, api, prefix + sid) if info.only_supports_sparse_grads
                          else _code(name, kwargs, m),
                          expected=(NotImplementedError, ValueError), golden=golden))
    return out


# -- schedulers ---------------------------------------------------------------------------

SCHEDULERS: Dict[str, str] = {
    "LambdaLR": "S.LambdaLR(opt, lr_lambda=lambda e: 0.95 ** e)",
    "MultiplicativeLR": "S.MultiplicativeLR(opt, lr_lambda=lambda e: 0.9)",
    "StepLR": "S.StepLR(opt, step_size=2, gamma=0.5)",
    "MultiStepLR": "S.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)",
    "ConstantLR": "S.ConstantLR(opt, factor=0.5, total_iters=3)",
    "LinearLR": "S.LinearLR(opt, start_factor=0.25, total_iters=4)",
    "ExponentialLR": "S.ExponentialLR(opt, gamma=0.8)",
    "PolynomialLR": "S.PolynomialLR(opt, total_iters=4, power=2.0)",
    "CosineAnnealingLR": "S.CosineAnnealingLR(opt, T_max=4)",
    "ChainedScheduler": "S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2), "
                        "S.ExponentialLR(opt, gamma=0.9)])",
    "SequentialLR": "S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=2), "
                    "S.ExponentialLR(opt, gamma=0.9)], milestones=[2])",
    "ReduceLROnPlateau": "S.ReduceLROnPlateau(opt, patience=0, factor=0.5)",
    "CyclicLR": "S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2)",
    "OneCycleLR": "S.OneCycleLR(opt, max_lr=0.1, total_steps=10)",
    "CosineAnnealingWarmRestarts": "S.CosineAnnealingWarmRestarts(opt, T_0=2)",
    "LRScheduler": "S.StepLR(opt, step_size=2, gamma=0.5)",  # the base: a subclass that inherits it
}
SCHED_MEMBERS = ("step", "get_last_lr", "get_lr", "state_dict", "load_state_dict")
EPOCHS = 6

_SCHED_BODY = """\
import torch
from torch.optim import lr_scheduler as S
device, dtype = {device}, {dtype}
torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(4, 3, dtype=dtype).to(device))
x = torch.randn(4, 3, dtype=dtype).to(device)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
sched = %s
lrs = []
act = scaffold(device, dtype, ACTIVATIONS)  # the loss's activation: scaffolding, not the API
for epoch in range(%d):
    opt.zero_grad()
    loss = (act((w * x).sum(1)) ** 2).sum()
    loss.backward()
    opt.step()
    sched.step(loss.item()) if isinstance(sched, S.ReduceLROnPlateau) else sched.step()
    lrs.append([g["lr"] for g in opt.param_groups])
"""

_SCHED_TAIL = {
    "step": "out = {'lrs': lrs, 'w': w}",
    "get_last_lr": "out = {'last': sched.get_last_lr(), 'lrs': lrs}",
    "get_lr": "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
              "    out = {'lr': sched.get_lr(), 'lrs': lrs}",
    "state_dict": "sd = sched.state_dict()\n"
                  "out = {k: v for k, v in sd.items() if isinstance(v, (int, float, str, bool, list, tuple))}",
    # the loaded state is EPOCHS epochs on, not the state a new scheduler starts in (which
    # loading nothing would leave equal): what follows the load is compared, its epoch
    # count and the learning rates and parameters of the epochs after it
    "load_state_dict": "opt2 = torch.optim.SGD([torch.nn.Parameter(w.detach().clone())], lr=0.1, momentum=0.9)\n"
                       "opt2.load_state_dict(opt.state_dict())\nsched2 = %s\n"
                       "sched2.load_state_dict(sched.state_dict())\n"
                       "w2, after = opt2.param_groups[0]['params'][0], []\n"
                       "for epoch in range(3):\n"
                       "    opt2.zero_grad()\n"
                       "    loss = (act((w2 * x).sum(1)) ** 2).sum()\n"
                       "    loss.backward()\n"
                       "    opt2.step()\n"
                       "    sched2.step(loss.item()) if isinstance(sched2, S.ReduceLROnPlateau) else sched2.step()\n"
                       "    after.append([g['lr'] for g in opt2.param_groups])\n"
                       "out = {'last_epoch': getattr(sched2, 'last_epoch', None), 'last': sched2.get_last_lr(),\n"
                       "       'after': after, 'w': w2, 'lrs': lrs}",
}


def _sched_block(name: str, member: str) -> str:
    make = SCHEDULERS[name]
    tail = _SCHED_TAIL[member]
    if member == "load_state_dict":
        tail = tail % make.replace("opt", "opt2").replace("opt22", "opt2")
    return _SCHED_BODY % (make, EPOCHS) + tail + "\n"


def _scheduler_scenarios(api: str, name: str, member: Optional[str]) -> List[Scenario]:
    if name not in SCHEDULERS:
        return []
    m = member or "step"
    if m not in SCHED_MEMBERS:
        return []
    block = _sched_block(name, m)
    src = block.replace("device, dtype = {device}, {dtype}\n", "")
    code = compile(src, __file__, "exec")

    def fn(device, dtype):
        ns = {"device": device, "dtype": dtype, "scaffold": scaffold, "ACTIVATIONS": ACTIVATIONS}
        exec(code, ns)
        return ns["out"]
    return probed(m, api, NAME, fn, DTYPES,
                  en=f"lr_scheduler.{name}.{m}: a device-resident SGD for {EPOCHS} epochs, same learning "
                     "rates (and parameters) as on the CPU",
                  zh=f"lr_scheduler.{name}.{m}：优化器参数在设备上，{EPOCHS} 个 epoch 的学习率（及参数）与 CPU 一致",
                  expect_en="the same learning rates as the CPU", expect_zh="学习率与 CPU 一致",
                  code=block.replace("scaffold(device, dtype, ACTIVATIONS)", "torch.tanh") + "print(out)\n")


# -- API name -> what it is ---------------------------------------------------------------

def classify(api: str) -> Tuple[str, str, Optional[str]]:
    """(kind, class name, member): kind is optimizer | base | scheduler | none."""
    import inspect

    if not api.startswith("torch.optim"):
        return "none", "", None
    obj = resolve_quiet(api)
    owner_name, member = split_member(api)
    owner = resolve_quiet(owner_name)
    from torch.optim import Optimizer
    from torch.optim.lr_scheduler import LRScheduler, ReduceLROnPlateau

    for cand, mem in ((obj, None), (owner, member)):
        if not inspect.isclass(cand):
            continue
        if cand is Optimizer:
            return "base", "Optimizer", mem
        if issubclass(cand, Optimizer):
            return "optimizer", cand.__name__, mem
        if issubclass(cand, (LRScheduler, ReduceLROnPlateau)):
            return "scheduler", cand.__name__, mem
    return "none", "", None


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    kind, name, member = classify(api)
    if kind == "optimizer":
        return tuple(_optimizer_scenarios(api, name, member))
    if kind == "base":
        if member is None:
            return ()
        out: List[Scenario] = []
        for rep in REPRESENTATIVES:
            out.extend(_optimizer_scenarios(api, rep, member, prefix=f"{rep}."))
        return tuple(out)
    if kind == "scheduler":
        return tuple(_scheduler_scenarios(api, name, member))
    return ()


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return list(_cached(api))


def owns(api: str) -> bool:
    return api.startswith("torch.optim.") and classify(api)[0] != "none"


def why_not(api: str, obj: Any) -> str:
    kind, name, member = classify(api)
    if kind == "none":
        return "not a torch.optim optimizer, scheduler or one of their members"
    if kind == "optimizer" and name not in _infos():
        return f"{name} has no OptimizerInfo entry in optim_db"
    if kind == "base" and member is None:
        return "torch.optim.Optimizer is abstract: its members run on SGD and Adam"
    if kind == "scheduler" and name not in SCHEDULERS:
        return f"no constructor arguments listed for scheduler {name}"
    return f"{api}: a member this source has no case for, or the CPU itself cannot run it"


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns)
