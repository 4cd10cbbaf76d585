"""Runtime APIs that are not ops, as a scenario source: "the same answer on the device".

Global state (``torch.set_num_threads``, the deterministic-algorithm switches,
``set_float32_matmul_precision``, the random generators), dtype / device / layout
objects, numpy interop, ``torch.save`` / ``torch.load`` (a temporary folder), autocast,
``torch.compile`` (the ``eager`` backend) and the symbolic-shape helpers
; ``torch.autograd`` (``backward``, ``grad``, custom ``Function``\\ s
and their context, graph nodes, grad modes, anomaly mode, forward AD), ``torch.func``,
``torch.futures`` and a few framework classes.

Each API has one :class:`~..base.Case` (``runtime.cases``: a real function) that does device work under the API — a scatter_add under
the deterministic switch, ``autograd.grad`` of a device graph, a Future chain carrying
device tensors — and whose source is its snippet; its outputs are compared with
the same block run on the CPU. Blocks that change process-wide state restore it. Random
draws on the device are compared through what the seed guarantees (the same draws twice,
shape, dtype, place), tagged ``random``. ``base.probed`` runs each case once on the
CPU at planning: the CPU's own NotImplementedError becomes an expected raise, any other
CPU failure leaves the dtype out.

APIs of these namespaces that cannot be exercised with a device here get no scenario
and a named reason (``Excluded`` rows).
"""

from __future__ import annotations

from typing import Dict, Sequence

from ..base import BlockSource, Case, Row

NAME = "runtime"
ORDER = 65


class RuntimeSource(BlockSource):
    name, order = NAME, ORDER
    scenario_id = "runtime"
    no_case = "not one of the runtime APIs (global state, autograd, func, futures) this source has a case for"

    def table(self) -> Sequence[Row]:
        from . import cases

        return cases.CASES

    def owns(self, api: str) -> bool:
        return self.case_of(api) is not None or api in self.excluded()

    def why_not(self, api, obj) -> str:
        if self.case_of(api) is not None:
            return f"{api}: the CPU itself cannot run its case"
        return self.excluded().get(api, self.no_case)

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        short = api.rsplit(".", 1)[-1]
        return dict(en=f"{api}: device work under the API gives the same answer as on the CPU",
                    zh=f"{short}：在该 API 下进行的设备计算与 CPU 结果一致",
                    expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致")


SOURCE = RuntimeSource()


# the source's hooks as module functions (callers and tests use runtime.scenarios(...))
scenarios, why_not, apis = SOURCE.scenarios, SOURCE.why_not, SOURCE.members

__all__ = ["NAME", "ORDER", "SOURCE", "scenarios", "why_not", "apis"]
