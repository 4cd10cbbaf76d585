"""Tooling APIs as a scenario source: "the tool works the same with the device in play".

torch.package, the profilers (``torch.profiler``, ``torch.autograd.profiler``, ITT),
``torch.monitor``, ``torch.utils.benchmark``, ``torch.compiler``, ``torch.export``,
``torch.hub`` (a local hubconf, ``file://`` checkpoints), ``torch.library``,
``torch.overrides``, ``torch.testing``, what of ``torch.onnx`` runs without the onnx
package, ``torch.utils`` helpers and ``torch.__config__``. One :class:`~..base.Case` per
API (``tooling.cases``: a real function, its snippet its source; APIs answered by the
same code are one case with aliases): the tool is applied to tensors and modules on the
device (a package holding a device model, a profile of device work, an export of a device
module, ...) and the body returns what the tool produced, compared with the same body run
on the CPU. Profiler output is reduced to the labels and listed ops that ran, timings are
never compared. A host-side tool (torch.monitor, ITT ranges, name lookups, build and
config queries) does no device work: its rows are host-only evidence.

APIs that cannot run here (tensorboard, onnx, a C++ build, CUDA-only tools) get no
scenario and a named reason (``Excluded`` rows).
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Sequence

from ...registry import Scenario
from ..base import BlockSource, Case, Row

NAME = "tooling"
ORDER = 72

PREFIXES = ("torch.package.", "torch.profiler.", "torch.autograd.profiler.", "torch.monitor.", "torch.utils.",
            "torch.onnx.", "torch.export.", "torch.hub.", "torch.compiler.", "torch.overrides.", "torch.testing.",
            "torch.__config__.", "torch.library.")


class ToolingSource(BlockSource):
    name, order = NAME, ORDER
    prefixes = PREFIXES
    # each case is asked in the dtypes its row names, unprobed: a probe at planning would run
    # the CPU under the emulated device's build (no ITT on an A2) and drop the very rows
    # whose answer is the build's
    probe = False
    outside = "not a tooling API (package, profiler, monitor, utils, onnx, export, hub, compiler, ...)"
    no_case = "no case here for this tooling API"

    def table(self) -> Sequence[Row]:
        from . import cases

        return cases.ROWS

    def owns(self, api: str) -> bool:
        # its namespaces hold APIs other sources answer (torch.utils.checkpoint, data, ...):
        # it owns only those it has a row for
        return api.startswith(PREFIXES) and (self.case_of(api) is not None or api in self.excluded())

    def why_not(self, api, obj) -> str:
        if not api.startswith(PREFIXES):
            return self.outside
        if self.case_of(api) is not None:
            return self.cpu_cannot
        return self.excluded().get(api, self.no_case)

    def make(self, api: str, case: Case) -> List[Scenario]:
        # the scenario id names the API's last part, whichever alias asks
        return super().make(api, dataclasses.replace(case, id=api.rsplit(".", 1)[-1]))

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        return dict(en=f"{api} applied to device tensors/modules: the same answer as on the CPU",
                    zh=f"{api} 作用于设备上的张量/模块：结果与 CPU 相同",
                    expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致")


SOURCE = ToolingSource()


# the source's hooks as module functions (callers and tests use tooling.scenarios(...))
scenarios, why_not, members = SOURCE.scenarios, SOURCE.why_not, SOURCE.members

__all__ = ["NAME", "ORDER", "SOURCE", "PREFIXES", "scenarios", "why_not", "members"]
