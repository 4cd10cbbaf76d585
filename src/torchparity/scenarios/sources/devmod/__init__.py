"""The device module and the runtime APIs around it, as a scenario source: ``devmod``.

``torch.cuda.X`` (and ``torch.cpu.X``) is asked of the device module of the device under
test (``torch.get_device_module``: ``torch.npu`` with torch_npu, the emulator's module on
``emu:*``); ``torch.accelerator.*``, ``torch.backends.*`` flags, ``torch.random.*``,
``torch.Generator`` and ``torch.default_generator`` are called directly. One
:class:`~..base.Case` per API (``devmod.cases``: a real function, its snippet its source);
``torch.cpu.X`` is an alias of the ``torch.cuda.X`` case. A body's device work flows
through its API (a computation inside a stream context, events around it, RNG state saved
and restored, a device allocation the memory counters must see, autocast on the device, a
flag set around a device computation that reads it); a host-side query (a build flag, the
CPU generator, a CPU library's flag) does none, and its rows are host-only evidence.

The CPU run is the reference: torch.cpu's own member where it has one, the CPU
generator's functions for RNG members, and otherwise the property the API promises (the
scenario text says which). A device module lacking the member raises "the device module
torch.<type> has no member ...", judged unsupported (feature limit).
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Sequence

from ...registry import Scenario
from ..base import BlockSource, Case, Row

NAME = "devmod"
ORDER = 66

PREFIXES = ("torch.cuda.", "torch.cpu.", "torch.accelerator.", "torch.backends.", "torch.random.",
            "torch.Generator", "torch.default_generator")

_REF_ZH = {
    "torch.cpu runs the same code": "torch.cpu 运行同一段代码",
    "the CPU generator (torch.random) runs the same code": "CPU 生成器（torch.random）运行同一段代码",
    "the same flag set around the same computation on the CPU": "CPU 上在同一计算外设置同一开关",
    "the same computation on the CPU": "CPU 上的同一计算",
    "the same code run on the CPU": "CPU 上运行的同一段代码",
    "the same build answers on the CPU": "CPU 上同一构建给出的回答（构建查询：仅主机侧）",
}


class DevmodSource(BlockSource):
    name, order = NAME, ORDER
    prefixes = PREFIXES
    outside = "not a device-module, accelerator, backends or RNG API"
    no_case = "no device-module case for this member"

    def table(self) -> Sequence[Row]:
        from . import cases

        return cases.CASES

    def make(self, api: str, case: Case) -> List[Scenario]:
        # the scenario id names the member (devmod_<last part>), whichever alias asks
        return super().make(api, dataclasses.replace(case, id="devmod_" + api.rsplit(".", 1)[-1]))

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        ref = case.reference
        member = api.split(".", 2)[2] if api.startswith(("torch.cuda.", "torch.cpu.")) else ""
        via = f"the device module's counterpart (torch.<device>.{member})" if member else api
        via_zh = f"设备模块中的对应成员（torch.<device>.{member}）" if member else api
        ref_zh = _REF_ZH.get(ref, "API 承诺的性质（" + ref + "）")
        return dict(en=f"{via} asked with the device under test; reference: {ref}",
                    zh=f"{via_zh}，在被测设备上询问；参照：{ref_zh}",
                    expect_en="the same values and facts as the reference",
                    expect_zh="与参照相同的数值与性质")


SOURCE = DevmodSource()


# the source's hooks as module functions (callers and tests use devmod.scenarios(...))
scenarios, why_not, members = SOURCE.scenarios, SOURCE.why_not, SOURCE.members

__all__ = ["NAME", "ORDER", "SOURCE", "scenarios", "why_not", "members"]
