"""Runtime APIs that are not ops, as a scenario source: "the same answer on the device".

Global state (``torch.set_num_threads``, the deterministic-algorithm switches,
``set_float32_matmul_precision``, the random generators), dtype / device / layout
objects, numpy interop, ``torch.save`` / ``torch.load`` (a temporary folder), autocast,
``torch.compile`` (the ``eager`` backend) and the symbolic-shape helpers
(``runtime.torch_ns``); ``torch.autograd`` (``backward``, ``grad``, custom ``Function``\\ s
and their context, graph nodes, grad modes, anomaly mode, forward AD), ``torch.func``,
``torch.futures`` and a few framework classes (``runtime.autograd``).

Each API has one code block that does device work under the API — a scatter_add under
the deterministic switch, ``autograd.grad`` of a device graph, a Future chain carrying
device tensors — and is both the scenario and its snippet; its outputs are compared with
the same block run on the CPU. Blocks that change process-wide state restore it. Random
draws on the device are compared through what the seed guarantees (the same draws twice,
shape, dtype, place), tagged ``random``. ``base.probed`` runs each block once on the
CPU at planning: the CPU's own NotImplementedError becomes an expected raise, any other
CPU failure leaves the dtype out.

APIs of these namespaces that cannot be exercised with a device here get no scenario
and a named reason (``REASONS``).
"""

from __future__ import annotations

import functools
from typing import Any, List, Tuple

from ...registry import Scenario
from ..base import ModuleSource, block_fn, block_snippet, probed
from . import autograd as A
from . import torch_ns as T

NAME = "runtime"
ORDER = 65

CASES = {**T.CASES, **A.CASES}
REASONS = dict(T.REASONS)


def _compile(block: str):
    # compiled under this file's name: the footprint recorder tells scenario code apart
    # from the API by file, as it does for hand suites
    return compile(T.PRELUDE + block, __file__, "exec")


def _make_fn(code):
    return block_fn(code)


def _snippet(block: str) -> str:
    return block_snippet(T.PRELUDE, block)


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    case = CASES.get(api)
    if case is None:
        return ()
    block, dtypes, random_ = case
    short = api.rsplit(".", 1)[-1]
    fn = _make_fn(_compile(block))
    return tuple(probed(
        "runtime", api, NAME, fn, dtypes, code=_snippet(block), tags=("random",) if random_ else (),
        en=f"{api}: device work under the API gives the same answer as on the CPU",
        zh=f"{short}：在该 API 下进行的设备计算与 CPU 结果一致",
        expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致"))


def scenarios(api: str, obj: Any) -> List[Scenario]:
    if api not in CASES:  # a name lookup before anything heavy
        return []
    return list(_cached(api))


def owns(api: str) -> bool:
    return api in CASES or api in REASONS


def why_not(api: str, obj: Any) -> str:
    if api in REASONS:
        return REASONS[api]
    if api in CASES:
        return f"{api}: the CPU itself cannot run its case"
    return "not one of the runtime APIs (global state, autograd, func, futures) this source has a case for"


def apis() -> List[str]:
    """Every API name this source has a case for (for coverage counts and tests)."""
    return sorted(CASES)


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=apis)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "apis"]
