"""``torch.nn`` module classes from ``module_db`` (ModuleInfo) as a scenario source.

What upstream's ``TestModule.test_cpu_gpu_parity`` does, per dtype (the CPU-claimed dtypes
among float32/float64/float16/bfloat16), for the first ``INPUTS`` module inputs of
``module_inputs_func`` and, per module, up to ``REACH`` more: the first input that brings a
form the chosen ones lack (a mask or padding argument given, ``batch_first`` either way,
a padding index), so ``MultiheadAttention`` gets its ``attn_mask`` and ``key_padding_mask``
inputs and an RNN its batch-first one (:func:`chosen_inputs`), in training and (where ModuleInfo says they differ) eval mode:
the module is built on the CPU, deep-copied and moved with ``.to(device)`` (parameters
and buffers), its inputs are made on the CPU and moved as leaves; forward, then backward
with a gradient made on the CPU. Compared: the forward output, the input gradients, the
parameter gradients and the buffers (BatchNorm's running statistics).

A module that draws random numbers in this mode (dropout with ``p > 0``, ``RReLU`` in
training, fractional max pooling) is compared by shapes and dtypes only: the device has
its own generator.

ModuleInfo's own skips and expected failures of ``test_cpu_gpu_parity`` that apply to every
device (no ``device_type``) drop that dtype; CUDA-/XPU-only ones are not read.
"""

from __future__ import annotations

import copy
import functools
import inspect
from typing import Any, Dict, List, Optional, Tuple

import torch

from ..registry import Scenario
from .base import ModuleSource, dtype_names_of, probed, resolve_quiet, summary, widened

NAME = "module"
ORDER = 20
INPUTS = 2
REACH = 3  # inputs past the first INPUTS, each bringing a mask / padding / batch-first form
PARITY_TEST = ("TestModule", "test_cpu_gpu_parity")


@functools.lru_cache(maxsize=1)
def _infos() -> Dict[type, Any]:
    from torch.testing._internal.common_modules import module_db

    out: Dict[type, Any] = {}
    for info in module_db:
        out.setdefault(info.module_cls, info)  # the first entry of a class (no variants)
    return out


def info_for(obj: Any):
    if not inspect.isclass(obj):
        return None
    return _infos().get(obj)


def upstream_skip(info, dtype: torch.dtype) -> Optional[str]:
    from torch.testing._internal.opinfo.core import DecorateInfo

    from ..opinfo import decorator_skip as _decorator_skip

    for di in info.decorators:
        if not isinstance(di, DecorateInfo) or di.device_type is not None:
            continue
        try:
            active = di.is_active(*PARITY_TEST, None, dtype, {})
        except Exception:
            active = False
        if not active:
            continue
        for dec in di.decorators:
            why = _decorator_skip(dec, "")
            if why:
                return f"ModuleInfo '{info.name}' marks {PARITY_TEST[1]} for {dtype}: {why}"
    return None


def is_random(m: torch.nn.Module) -> bool:
    from torch.nn.modules.dropout import _DropoutNd

    for sub in m.modules():
        if isinstance(sub, _DropoutNd) and sub.p > 0 and sub.training:
            return True
        if isinstance(sub, torch.nn.RReLU) and sub.training:
            return True
        if isinstance(sub, (torch.nn.FractionalMaxPool2d, torch.nn.FractionalMaxPool3d)) \
                and getattr(sub, "_random_samples", None) is None:
            return True
        if isinstance(sub, torch.nn.MultiheadAttention) and sub.dropout > 0 and sub.training:
            return True
    return False


def _forms(mi) -> set:
    """The forms of one ModuleInput the first ``INPUTS`` may lack: a forward keyword
    argument naming a mask or padding that is given (not None), ``batch_first`` either
    way, a constructor argument naming padding that is given."""
    out = set()
    for k, v in mi.forward_input.kwargs.items():
        if v is not None and ("mask" in k or "padding" in k):
            out.add(f"forward:{k}")
    for k, v in mi.constructor_input.kwargs.items():
        if k == "batch_first":
            out.add(f"batch_first={bool(v)}")
        elif "padding" in k and v is not None:
            out.add(f"init:{k}")
    return out


def chosen_inputs(inputs: List[Any]) -> List[int]:
    """The indices of the ModuleInputs run: the first ``INPUTS``, then, in ModuleInfo's
    order, each input that brings a form (:func:`_forms`) none chosen so far has, at most
    ``REACH`` of them (ModuleInfo's inputs 0-1 of ``MultiheadAttention`` have no mask: a
    device wrong on masked attention passed)."""
    chosen = list(range(min(len(inputs), INPUTS)))
    seen = set().union(*(_forms(inputs[i]) for i in chosen)) if chosen else set()
    for i in range(len(chosen), len(inputs)):
        if len(chosen) >= INPUTS + REACH:
            break
        new = _forms(inputs[i]) - seen
        if new:
            chosen.append(i)
            seen |= new
    return chosen


def _leaf(t: Any, device: str, compute: Optional[torch.dtype] = None) -> Any:
    if isinstance(t, torch.Tensor):
        moved = t.detach().to(device)
        if compute is not None and moved.is_floating_point():
            moved = moved.to(compute)
        return moved.requires_grad_() if t.requires_grad and moved.is_floating_point() else moved
    if isinstance(t, (list, tuple)) and not hasattr(t, "_fields"):
        return type(t)(_leaf(v, device, compute) for v in t)
    if isinstance(t, dict):
        return {k: _leaf(v, device, compute) for k, v in t.items()}
    return t


def _is_lazy(m: torch.nn.Module) -> bool:
    from torch.nn.modules.lazy import LazyModuleMixin

    return any(isinstance(sub, LazyModuleMixin) and sub.has_uninitialized_params()
               for sub in m.modules())


def _tensors(tree: Any) -> List[torch.Tensor]:
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [t for v in tree for t in _tensors(v)]
    if isinstance(tree, dict):
        return [t for v in tree.values() for t in _tensors(v)]
    return []


def run_module(cls: type, index: int, training: bool, device: str, dtype: torch.dtype,
               compute: Optional[torch.dtype] = None) -> Any:
    """One case: the module and its inputs made on the CPU in ``dtype`` (the same random
    draws whatever ``compute`` is), then run on ``device``; with ``compute`` (the float64
    golden) every floating tensor is cast to it first, the output gradient included."""
    info = _infos()[cls]
    inputs = info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=True,
                                     training=training)
    mi = inputs[index]
    ci, fi = mi.constructor_input, mi.forward_input
    cpu_module = cls(*ci.args, **ci.kwargs)
    cpu_module.to(dtype)
    cpu_module.train(training)
    if _is_lazy(cpu_module):
        # a lazy module draws its weights at its first forward, from the generator of the
        # device it runs on (the device has its own): materialise it on the CPU first, so
        # both runs (and the golden) compute with the same weights
        with torch.no_grad():
            cpu_module(*_leaf(list(fi.args), "cpu"), **_leaf(dict(fi.kwargs), "cpu"))
    m = copy.deepcopy(cpu_module).to(device)
    if compute is not None:
        m.to(compute)
    args, kwargs = _leaf(list(fi.args), device, compute), _leaf(dict(fi.kwargs), device, compute)
    out = m(*args, **kwargs)
    random_ = is_random(m)
    leaves = [t for t in _tensors([args, kwargs]) if t.requires_grad]
    outs = [t for t in _tensors(out) if t.requires_grad and t.is_floating_point()]
    if outs:
        grads = [torch.randn(o.shape, dtype=o.dtype if compute is None else dtype).to(device, o.dtype)
                 for o in outs]
        torch.autograd.backward(outs, grads)
    result = {
        "output": out,
        "input_grads": [t.grad for t in leaves],
        "param_grads": {n: p.grad for n, p in m.named_parameters()},
        "buffers": dict(m.named_buffers()),
    }
    return summary(result) if random_ else result


_LAZY_LINE = ("with torch.no_grad():  # materialise the lazy weights on the CPU\n"
              "    m(*[a.detach() if isinstance(a, torch.Tensor) else a for a in mi.forward_input.args], "
              "**mi.forward_input.kwargs)\n")


def _lazy_mixin() -> type:
    from torch.nn.modules.lazy import LazyModuleMixin

    return LazyModuleMixin


def _code(cls: type, index: int, training: bool) -> str:
    path = f"{cls.__module__}.{cls.__qualname__}"
    return ("import copy\nimport torch\nfrom torch.testing._internal.common_modules import module_db\n"
            "device, dtype = {device}, {dtype}\ntorch.manual_seed(0)\n"
            f"info = next(i for i in module_db if i.module_cls is {path})\n"
            f"mi = info.module_inputs_func(info, device='cpu', dtype=dtype, requires_grad=True, "
            f"training={training})[{index}]\n"
            f"m = {path}(*mi.constructor_input.args, **mi.constructor_input.kwargs).to(dtype)"
            f".train({training})\n"
            + (_LAZY_LINE if issubclass(cls, _lazy_mixin()) else "")
            + "m = copy.deepcopy(m).to(device)\n"
            "args = [a.detach().to(device).requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) "
            "else a for a in mi.forward_input.args]\n"
            "out = m(*args, **mi.forward_input.kwargs)\nprint(out)\n")


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    cls = resolve_quiet(api)
    info = info_for(cls)
    if info is None:
        return ()
    # every float dtype, not only ModuleInfo's claim (float16 / bfloat16 are what an
    # Ascend user trains in): the CPU's probe keeps those the module runs
    dtypes = list(widened(dtype_names_of(info.supported_dtypes("cpu"))))
    dtypes = [d for d in dtypes if upstream_skip(info, getattr(torch, d)) is None]
    if not dtypes:
        return ()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            indices = chosen_inputs(info.module_inputs_func(
                info, device="cpu", dtype=torch.float32, requires_grad=True, training=True))
    except Exception:
        return ()
    modes = (True, False) if info.train_and_eval_differ else (True,)
    out: List[Scenario] = []
    for index in indices:
        for training in modes:
            mode = "train" if training else "eval"

            def fn(device, dtype, _c=cls, _i=index, _t=training):
                return run_module(_c, _i, _t, device, dtype)

            def golden(dtype, _c=cls, _i=index, _t=training):
                return run_module(_c, _i, _t, "cpu", dtype, torch.float64)
            out.extend(probed(
                f"input{index}.{mode}", api, NAME, fn, dtypes,
                en=f"{cls.__name__} ({mode}), ModuleInfo input {index}: forward output, input and "
                   "parameter gradients and buffers as on the CPU",
                zh=f"{cls.__name__}（{mode}）ModuleInfo 输入 {index}：前向输出、输入与参数梯度、buffer 与 CPU 一致",
                expect_en="the same outputs and gradients as the CPU", expect_zh="输出与梯度与 CPU 一致",
                code=_code(cls, index, training), golden=golden))
    return tuple(out)


def scenarios(api: str, obj: Any) -> List[Scenario]:
    if not api.startswith("torch.nn"):
        return []
    return list(_cached(api))


def owns(api: str) -> bool:
    cls = resolve_quiet(api) if api.startswith("torch.nn.") else None
    return inspect.isclass(cls) and issubclass(cls, torch.nn.Module)


def why_not(api: str, obj: Any) -> str:
    cls = resolve_quiet(api) if api.startswith("torch.nn") else None
    if not (inspect.isclass(cls) and issubclass(cls, torch.nn.Module)):
        return "not a torch.nn module class"
    info = info_for(cls)
    if info is None:
        return f"{cls.__name__} has no ModuleInfo entry in module_db"
    dtypes = dtype_names_of(info.supported_dtypes("cpu"))
    skips = [upstream_skip(info, getattr(torch, d)) for d in dtypes]
    if dtypes and all(skips):
        return skips[0]
    return f"{cls.__name__}: the CPU itself cannot run its ModuleInfo inputs"


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns)
