"""torch.ao quantization APIs as a scenario source: "the same answer on the device".

Observers fed device tensors (``calculate_qparams``, state dicts), fake-quantize modules
forward and backward on the device, QAT / fused / quantizable modules of ``torch.ao.nn``
forward and backward on the device, the eager flow (``QuantStub``, ``prepare``,
``prepare_qat``, ``convert``) and the FX flow (``prepare_fx`` / ``fuse_fx`` /
``convert_fx`` with backend configs, custom configs and qconfig mappings) on a small model
moved to the device and calibrated on device tensors. One :class:`~..base.Case` per API
(``quant.cases``: a real function, its snippet its source); its answer is compared with
the same function run on the CPU.

Flows that end in quantized tensors (``convert``, ``convert_fx``, the reference model)
run on the device as well: PyTorch's quantized kernels are CPU backends (fbgemm / x86,
qnnpack), and what the device answers (a refusal or a pass) is the verdict. The CPU's own
refusals go through :func:`~.base.probed` as in the other generated sources.
"""

from __future__ import annotations

from typing import Dict, Sequence

from ..base import BlockSource, Case, Row

NAME = "quant"
ORDER = 70

PREFIX = "torch.ao."


class QuantSource(BlockSource):
    name, order = NAME, ORDER
    prefixes = (PREFIX,)
    quiet = True  # torch.ao's deprecation notices, per call
    outside = "not a torch.ao API"
    no_case = "no case for this torch.ao API here"

    def table(self) -> Sequence[Row]:
        from . import cases

        return cases.CASES

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        short = api[len(PREFIX):]
        return dict(
            en=f"{short} used on the device (observers, fake-quant, QAT modules or a prepare/convert "
               "flow fed device tensors): the same answer as on the CPU",
            zh=f"{short} 在设备上使用（观察器、伪量化、QAT 模块或 prepare/convert 流程，输入为设备张量）："
               "结果与 CPU 相同",
            expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致")


SOURCE = QuantSource()


# the source's hooks as module functions (callers and tests use quant.scenarios(...))
scenarios, why_not, members = SOURCE.scenarios, SOURCE.why_not, SOURCE.members

__all__ = ["NAME", "ORDER", "SOURCE", "scenarios", "why_not", "members"]
