"""``torch.nn`` utilities, containers and leftovers, ``torch.utils.data`` and
``torch.utils.checkpoint`` as a scenario source: "the same answer on the device".

One code block per API, as in the ``member`` source: gradient clipping of a device
model, parametrizations of a device ``Linear``, every pruning method and its members,
packed sequences of device tensors, ``skip_init``, ``functional_call``; the container and
base classes (``Module``, ``Sequential``, ``ModuleList``/``Dict``,
``ParameterList``/``Dict``, ``LazyLinear``, ``RNNBase``, ``AdaptiveLogSoftmaxWithLoss``,
Transformer ``forward``\\ s); ``torch.nn.parameter``; ``torch.nn.functional`` entries whose
OpInfo rows do not compare values (``conv3d`` and ``embedding``: OpInfo skips the
device-vs-CPU test for them, for CI time and flakiness; ``fractional_max_pool*`` given
their random samples; the dropout family by property, tagged "random"); datasets,
samplers and loaders over device tensors; checkpointed blocks with their gradients.

Each block builds its inputs on the CPU (seeded by the runner), moves them to
``device``, leaves its answer in ``out`` and is also the scenario's snippet; it runs once
on the CPU at planning (``base.probed``): the CPU's own ``NotImplementedError`` becomes
an expected raise, any other CPU failure leaves the dtype out. APIs that cannot be
exercised here get no scenario and a named reason (``EXCLUDED``).
"""

from __future__ import annotations

import functools
from typing import Any, List, Optional, Tuple

import torch

from ...registry import Scenario
from ..base import ModuleSource, block_fn, probed
from . import data as D
from . import nn as N
from . import utils as U

NAME = "nnutil"
ORDER = 74
PREFIXES = ("torch.nn.", "torch.utils.data", "torch.utils.checkpoint")
PRUNE = "torch.nn.utils.prune."

PRELUDE = '''\
import torch.nn.functional as F

def on_run_device(obj):
    return obj.device.type == torch.device(device).type

def dev(t):
    # a floating tensor to the device under test (for the float64 golden: the CPU, float64)
    return t.to(device) if COMPUTE is None else t.to(device, COMPUTE)

def mod(m):
    return m.to(device) if COMPUTE is None else m.to(device, COMPUTE)

def loss(y):
    # a fixed weighting: a plain sum of a LayerNorm output has (nearly) zero gradients
    g = torch.linspace(-1, 2, y.numel(), dtype=y.dtype).reshape(y.shape).to(y.device)
    return (y * g).sum()

def meta(t):
    # shape, dtype and "on the device under test" (a raw device type is not comparable)
    return [tuple(t.shape), str(t.dtype), on_run_device(t)]
'''

TABLE = {**N.NN, **N.FUNCTIONAL, **U.UTILS, **D.DATA}


def _prune_case(api: str) -> Optional[N.Case]:
    rest = api[len(PRUNE):]
    cls, _, method = rest.partition(".")
    if cls in U.PRUNE_CLASSES:
        if method and method not in U.PRUNE_METHODS:
            return None
        if method == "add_pruning_method" and cls != "PruningContainer":
            return None
        if cls == "PruningContainer" and method not in U.CONTAINER:
            return None
        block, random_ = U.prune_block(cls, method)
    elif cls in U.PRUNE_FUNCS and not method:
        block, random_ = U.prune_func_block(cls)
    else:
        return None
    return block, N.F32, ("random",) if random_ else ()


def case_of(api: str) -> Optional[N.Case]:
    """(block, dtypes, tags) of ``api``, or None."""
    if api in TABLE:
        return TABLE[api]
    if api.startswith(PRUNE):
        return _prune_case(api)
    return None


def _make_fn(code, compute: Optional[torch.dtype] = None):
    return block_fn(code, {"COMPUTE": compute})


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    if not api.startswith(PREFIXES):
        return ()
    found = case_of(api)
    if found is None:
        return ()
    block, dtypes, tags = found
    short = api.rsplit(".", 2)[-2:] if api.count(".") > 2 else [api]
    label = ".".join(short)
    # compiled under this file's name, as the member source does (the footprint recorder
    # tells scenario code from the API by file)
    compiled = compile(PRELUDE + block, __file__, "exec")
    fn = _make_fn(compiled)
    golden = None
    if api in N.GOLDEN:
        run64 = _make_fn(compiled, torch.float64)

        def golden(dtype):
            return run64("cpu", dtype)
    code = ("import torch\n\ndevice, dtype = {device}, {dtype}\nCOMPUTE = None\n"
            + PRELUDE + block + "\nprint(out)\n")
    return tuple(probed(
        "use", api, NAME, fn, dtypes, code=code, tags=tags, golden=golden,
        en=f"{label}: used on the device, the same answer as on the CPU",
        zh=f"{label}：在设备上使用，结果与 CPU 相同",
        expect_en="the same answer as the CPU" + (" (random parts by property)" if tags else ""),
        expect_zh="与 CPU 结果一致" + ("（随机部分按性质比较）" if tags else "")))


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return list(_cached(api))


def owns(api: str) -> bool:
    return api.startswith(PREFIXES) and (api in N.EXCLUDED or case_of(api) is not None)


def why_not(api: str, obj: Any) -> str:
    if not api.startswith(PREFIXES):
        return "not torch.nn, torch.utils.data or torch.utils.checkpoint"
    if api in N.EXCLUDED:
        return N.EXCLUDED[api]
    if case_of(api) is not None:
        return "the CPU itself cannot run this case"
    return "no case here"


def members() -> List[str]:
    """Every API name this source has a case for (for coverage counts and tests)."""
    out = list(TABLE)
    for cls in U.PRUNE_CLASSES:
        out.append(PRUNE + cls)
        out += [f"{PRUNE}{cls}.{m}" for m in U.PRUNE_METHODS if _prune_case(f"{PRUNE}{cls}.{m}")]
    out += [PRUNE + f for f in U.PRUNE_FUNCS]
    return out


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=members)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "members", "case_of"]
