"""``torch.nn`` utilities, containers and leftovers, ``torch.utils.data`` and
``torch.utils.checkpoint`` as a scenario source: "the same answer on the device".

One :class:`~..base.Case` per API (``nnutil.cases``: a real function): gradient clipping
of a device model, parametrizations of a device ``Linear``, every pruning method and its
members (one body per method, the class a parameter), packed sequences of device tensors,
``skip_init``, ``functional_call``; the container and base classes (``Module``,
``Sequential``, ``ModuleList``/``Dict``, ``ParameterList``/``Dict``, ``LazyLinear``,
``RNNBase``, ``AdaptiveLogSoftmaxWithLoss``, Transformer ``forward``\\ s);
``torch.nn.parameter``; ``torch.nn.functional`` entries whose OpInfo rows do not compare
values (``conv3d`` and ``embedding``: OpInfo skips the device-vs-CPU test for them, for CI
time and flakiness; ``fractional_max_pool*`` given their random samples; the dropout
family by property, tagged "random"); datasets, samplers and loaders over device tensors;
checkpointed blocks with their gradients.

Each body builds its inputs on the CPU (seeded by the runner), moves them to ``device``
and returns its answer; its source (with the helpers it reads) is the scenario's snippet.
It runs once on the CPU at planning (``base.probed``): the CPU's own
``NotImplementedError`` becomes an expected raise, any other CPU failure leaves the dtype
out. The attention cases (``cases.GOLDEN``) are also run in float64 on the CPU and judged
against that golden. APIs that cannot be exercised here get no scenario and a named
reason (``Excluded`` rows).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Sequence

import torch

from ...registry import Scenario
from ..base import BlockSource, Case, Row, probed

NAME = "nnutil"
ORDER = 74
PREFIXES = ("torch.nn.", "torch.utils.data", "torch.utils.checkpoint")


class NnutilSource(BlockSource):
    name, order = NAME, ORDER
    prefixes = PREFIXES
    scenario_id = "use"
    outside = "not torch.nn, torch.utils.data or torch.utils.checkpoint"
    no_case = "no case here"
    cpu_cannot = "the CPU itself cannot run this case"

    def table(self) -> Sequence[Row]:
        from . import cases

        return cases.CASES + cases.EXCLUDED

    def owns(self, api: str) -> bool:
        return api.startswith(PREFIXES) and (api in self.excluded() or self.case_of(api) is not None)

    def why_not(self, api: str, obj: Any) -> str:
        if not api.startswith(PREFIXES):
            return self.outside
        return super().why_not(api, obj) if self.owns(api) else self.no_case

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        label = ".".join(api.rsplit(".", 2)[-2:] if api.count(".") > 2 else [api])
        return dict(en=f"{label}: used on the device, the same answer as on the CPU",
                    zh=f"{label}：在设备上使用，结果与 CPU 相同",
                    expect_en="the same answer as the CPU" + (" (random parts by property)" if case.tags else ""),
                    expect_zh="与 CPU 结果一致" + ("（随机部分按性质比较）" if case.tags else ""))

    def make(self, api: str, case: Case) -> List[Scenario]:
        from . import cases

        if api not in cases.GOLDEN:
            return super().make(api, case)
        # the same body on the CPU with its floating tensors cast to float64: the golden
        run64 = dataclasses.replace(case, params={**case.params, "compute": torch.float64}).fn(api)

        def golden(dtype):
            return run64("cpu", dtype)
        return probed(case.id or self.scenario_id, api, self.name, case.fn(api), case.dtypes,
                      code=case.snippet(api), tags=case.tags, golden=golden, **self.describe(api, case))


SOURCE = NnutilSource()


# the source's hooks as module functions (callers and tests use nnutil.scenarios(...))
scenarios, why_not, owns, members = SOURCE.scenarios, SOURCE.why_not, SOURCE.owns, SOURCE.members

__all__ = ["NAME", "ORDER", "SOURCE", "scenarios", "why_not", "owns", "members"]
