"""torch.ao quantization APIs as a scenario source: "the same answer on the device".

Observers fed device tensors (``calculate_qparams``, state dicts), fake-quantize modules
forward and backward on the device, QAT / fused / quantizable modules of ``torch.ao.nn``
forward and backward on the device, the eager flow (``QuantStub``, ``prepare``,
``prepare_qat``, ``convert``) and the FX flow (``prepare_fx`` / ``fuse_fx`` /
``convert_fx`` with backend configs, custom configs and qconfig mappings) on a small model
moved to the device and calibrated on device tensors. One code block per API (tables
``quant.table``, ``quant.observer_table``, ``quant.config_table``) is both the scenario
and its snippet; its outputs are compared with the same block run on the CPU.

Flows that end in quantized tensors (``convert``, ``convert_fx``, the reference model)
run on the device as well: PyTorch's quantized kernels are CPU backends (fbgemm / x86,
qnnpack), and what the device answers (a refusal or a pass) is the verdict. The CPU's own
refusals go through :func:`~.base.probed` as in the other generated sources.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Tuple

from ...registry import Scenario
from ..base import ModuleSource, block_fn, block_snippet, probed

NAME = "quant"
ORDER = 70

PREFIX = "torch.ao."

# listed torch.ao APIs this source leaves out, with the reason
EXCLUDED: Dict[str, str] = {}


@functools.lru_cache(maxsize=1)
def _tables() -> Tuple[Dict[str, Tuple[str, Tuple[str, ...]]], str]:
    from . import config_table as C
    from . import observer_table as O
    from . import prelude as P
    from . import table as T

    cases: Dict[str, Tuple[str, Tuple[str, ...]]] = {}
    cases.update(T.CASES)
    cases.update(O.CASES)
    cases.update({k: (C.MODELS + block, d) for k, (block, d) in C.CASES.items()})
    return cases, P.PRELUDE


def _make_fn(code):
    return block_fn(code, name="quant_case", quiet=True)  # torch.ao's deprecation notices, per call


_snippet = block_snippet


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    if not api.startswith(PREFIX):
        return ()
    cases, prelude = _tables()
    if api not in cases:
        return ()
    block, dtypes = cases[api]
    # compiled under this file's name: the footprint recorder tells scenario code apart
    # from the API by file
    fn = _make_fn(compile(prelude + block, __file__, "exec"))
    short = api[len(PREFIX):]
    return tuple(probed(
        "case", api, NAME, fn, dtypes, code=_snippet(prelude, block),
        en=f"{short} used on the device (observers, fake-quant, QAT modules or a prepare/convert "
           "flow fed device tensors): the same answer as on the CPU",
        zh=f"{short} 在设备上使用（观察器、伪量化、QAT 模块或 prepare/convert 流程，输入为设备张量）："
           "结果与 CPU 相同",
        expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致"))


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return list(_cached(api))


def owns(api: str) -> bool:
    return api.startswith(PREFIX)


def why_not(api: str, obj: Any) -> str:
    if not api.startswith(PREFIX):
        return "not a torch.ao API"
    if api in EXCLUDED:
        return EXCLUDED[api]
    if api in _tables()[0]:
        return "the CPU itself cannot run this case"
    return "no case for this torch.ao API here"


def members() -> List[str]:
    """Every API name this source has a case for (for coverage counts and tests)."""
    return sorted(_tables()[0])


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=members)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "members"]
