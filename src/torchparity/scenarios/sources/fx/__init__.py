"""``torch.fx`` as a scenario source: trace, edit and run a small model on the device.

One code block per API (``fx.table``: Graph, GraphModule, Node and the module-level
helpers; ``fx.run_table``: Interpreter, Transformer, Tracer, Proxy; ``fx.shapes_table``:
``torch.fx.experimental.proxy_tensor`` and ``symbolic_shapes``). Every block builds a small
``nn.Module`` and its input on the CPU, moves them to the device under test, and really
uses its API on them: it traces, builds or edits a graph, interprets or transforms it,
runs the resulting ``GraphModule``, or makes the device tensor's sizes symbolic. It
returns what the API produced (the generated code and node list with device names and
addresses normalised, flags, symbolic expressions as text, the run's output tensors),
compared with the same block on the CPU. The block is also the snippet a report shows.

The block runs once on the CPU when the scenarios are made (``base.probed``): a CPU
``NotImplementedError`` becomes an expected raise; anything else the CPU raises leaves the
API without a scenario. APIs of ``torch.fx`` that cannot run here are named, with the
reason, in ``fx.table.EXCLUDED`` (``Graph.print_tabular`` needs the optional package
``tabulate``, a dependency of torchparity: where it is missing, it is named there too).
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Any, Dict, List, Tuple

from ...registry import Scenario
from ..base import ModuleSource, block_fn, block_snippet, probed

NAME = "fx"
ORDER = 62

PREFIX = "torch.fx."
F32 = ("float32",)


@functools.lru_cache(maxsize=1)
def _tables() -> Tuple[Dict[str, Tuple[str, str]], Dict[str, str]]:
    """api -> (prelude, block); and the excluded APIs with their reasons."""
    from . import run_table as R
    from . import shapes_table as S
    from . import table as T

    cases: Dict[str, Tuple[str, str]] = {}
    for api, block in T.CASES.items():
        cases[api] = (T.PRELUDE, block)
    for api, block in R.CASES.items():
        cases[api] = (T.PRELUDE, block)
    for api, block in S.CASES.items():
        cases[api] = (T.PRELUDE + S.SHAPES_PRELUDE, block)
    excluded = dict(T.EXCLUDED)
    if importlib.util.find_spec("tabulate") is not None:
        cases.update({api: (T.PRELUDE, block) for api, block in T.TABULAR.items()})
    else:
        excluded.update(T.EXCLUDED_WITHOUT_TABULATE)
    return cases, excluded


def _make_fn(code):
    return block_fn(code, name="torchparity_fx_case")


_snippet = block_snippet


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    cases, _ = _tables()
    if api not in cases:
        return ()
    prelude, block = cases[api]
    # compiled under this file's name: the footprint recorder tells scenario code from the API
    fn = _make_fn(compile(prelude + block, __file__, "exec"))
    short = api[len(PREFIX):]
    desc = dict(en=f"torch.fx {short}: traced / edited / run on the device as on the CPU",
                zh=f"torch.fx {short}：在设备上追踪、编辑、运行，结果与 CPU 相同",
                expect_en="the same graph and outputs as the CPU", expect_zh="图与输出与 CPU 一致")
    return tuple(probed(short, api, NAME, fn, F32, code=_snippet(prelude, block), **desc))


def scenarios(api: str, obj: Any) -> List[Scenario]:
    if not api.startswith(PREFIX):
        return []
    return list(_cached(api))


def owns(api: str) -> bool:
    return api.startswith(PREFIX)


def why_not(api: str, obj: Any) -> str:
    if not api.startswith(PREFIX):
        return "not a torch.fx API"
    cases, excluded = _tables()
    if api in excluded:
        return excluded[api]
    if api in cases:
        return "the CPU itself cannot run this case (it raises there), so it says nothing about the device"
    return "no case here for this torch.fx API"


def members() -> List[str]:
    """Every API name this source has a case for (for coverage counts and tests)."""
    return sorted(_tables()[0])


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=members)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "members"]
