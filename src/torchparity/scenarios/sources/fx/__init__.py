"""``torch.fx`` as a scenario source: trace, edit and run a small model on the device.

One :class:`~..base.Case` per API (``fx.cases``: a real function; Graph, GraphModule,
Node and the module-level helpers; Interpreter, Transformer, Tracer, Proxy;
``torch.fx.experimental.proxy_tensor`` and ``symbolic_shapes``). Every body builds a small
``nn.Module`` and its input on the CPU, moves them to the device under test, and really
uses its API on them: it traces, builds or edits a graph, interprets or transforms it,
runs the resulting ``GraphModule``, or makes the device tensor's sizes symbolic. It
returns what the API produced (the generated code and node list with device names and
addresses normalised, flags, symbolic expressions as text, the run's output tensors),
compared with the same body on the CPU. The body's source (with the helpers it reads) is
the snippet a report shows.

The body runs once on the CPU when the scenarios are made (``base.probed``): a CPU
``NotImplementedError`` becomes an expected raise; anything else the CPU raises leaves the
API without a scenario. APIs of ``torch.fx`` that cannot run here are ``Excluded`` rows
with the reason (``Graph.print_tabular`` needs the optional package ``tabulate``, a
dependency of torchparity: where it is missing, it is excluded too).
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Sequence

from ...registry import Scenario
from ..base import BlockSource, Case, Row

NAME = "fx"
ORDER = 62

PREFIX = "torch.fx."


class FxSource(BlockSource):
    name, order = NAME, ORDER
    prefixes = (PREFIX,)
    outside = "not a torch.fx API"
    no_case = "no case here for this torch.fx API"
    cpu_cannot = "the CPU itself cannot run this case (it raises there), so it says nothing about the device"

    def table(self) -> Sequence[Row]:
        from . import cases

        return cases.rows()

    def make(self, api: str, case: Case) -> List[Scenario]:
        # the scenario id is the API's name below torch.fx (an alias gets its own)
        return super().make(api, dataclasses.replace(case, id=api[len(PREFIX):]))

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        short = api[len(PREFIX):]
        return dict(en=f"torch.fx {short}: traced / edited / run on the device as on the CPU",
                    zh=f"torch.fx {short}：在设备上追踪、编辑、运行，结果与 CPU 相同",
                    expect_en="the same graph and outputs as the CPU", expect_zh="图与输出与 CPU 一致")


SOURCE = FxSource()


# the source's hooks as module functions (callers and tests use fx.scenarios(...))
scenarios, why_not, owns, members = SOURCE.scenarios, SOURCE.why_not, SOURCE.owns, SOURCE.members

__all__ = ["NAME", "ORDER", "SOURCE", "scenarios", "why_not", "owns", "members"]
