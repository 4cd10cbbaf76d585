"""Tooling APIs as a scenario source: "the tool works the same with the device in play".

torch.package, the profilers (``torch.profiler``, ``torch.autograd.profiler``, ITT),
``torch.monitor``, ``torch.utils.benchmark``, ``torch.compiler``, ``torch.export``,
``torch.hub`` (a local hubconf, ``file://`` checkpoints), ``torch.library``,
``torch.overrides``, ``torch.testing``, what of ``torch.onnx`` runs without the onnx
package, ``torch.utils`` helpers and ``torch.__config__``. One code block per API
(``tooling.prof``, ``tooling.misc``): the tool is applied to tensors and modules on the
device (a package holding a device model, a profile of device work, an export of a device
module, ...) and the block returns what the tool produced, compared with the same block
run on the CPU. Device names are normalised (``y.device.type == DEV``), profiler output is
reduced to the labels and listed ops that ran (``ran``), timings are never compared.

APIs that cannot run here (tensorboard, onnx, a C++ build, CUDA-only tools) get no
scenario and a named reason (``tooling.misc.WHY_NOT``).
"""

from __future__ import annotations

import functools
from typing import Any, List, Tuple

from ....results.models import Text
from ...registry import Scenario
from ..base import ModuleSource, block_fn, block_snippet
from . import misc as M
from . import prof as P

NAME = "tooling"
ORDER = 72

PREFIXES = ("torch.package.", "torch.profiler.", "torch.autograd.profiler.", "torch.monitor.", "torch.utils.",
            "torch.onnx.", "torch.export.", "torch.hub.", "torch.compiler.", "torch.overrides.", "torch.testing.",
            "torch.__config__.", "torch.library.")

PRELUDE = '''\
import io, json, os, re, tempfile
DEV = torch.device(device).type

def vals(t):
    return t.detach().cpu().tolist()

def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()).to(device=device, dtype=dtype)

x = torch.linspace(-1, 1, 12, dtype=dtype).reshape(4, 3).to(device)

LISTED = ("tp.block", "aten::mm", "aten::relu", "aten::sum")

def ran(names):
    """The listed labels and ops that ran (an accelerator may run more ops)."""
    names = set(names)
    return [n for n in LISTED if n in names]

def work():
    with torch.profiler.record_function("tp.block"):
        return (x @ x.T).relu().sum()

def chrome_trace(prof):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)
'''

CASES = {**P.CASES, **M.CASES}


def _mine(api: str) -> bool:
    return api.startswith(PREFIXES)


def _make_fn(code):
    return block_fn(code, name="tooling_case")


def snippet(api: str) -> str:
    return block_snippet(PRELUDE, CASES[api][0])


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    if not _mine(api) or api not in CASES:
        return ()
    block, dtypes = CASES[api]
    # compiled under this file's name: the footprint recorder tells scenario code from the API by file
    fn = _make_fn(compile(PRELUDE + block, __file__, "exec"))
    short = api.rsplit(".", 1)[-1]
    return (Scenario(
        id=short, api=api, fn=fn,
        description=Text(en=f"{api} applied to device tensors/modules: the same answer as on the CPU",
                         zh=f"{api} 作用于设备上的张量/模块：结果与 CPU 相同"),
        expected=Text(en="the same answer as the CPU", zh="与 CPU 结果一致"),
        dtypes=tuple(dtypes), module=__name__, source=NAME, code=snippet(api)),)


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return list(_cached(api))


def owns(api: str) -> bool:
    return _mine(api) and (api in CASES or api in M.WHY_NOT)


def why_not(api: str, obj: Any) -> str:
    if not _mine(api):
        return "not a tooling API (package, profiler, monitor, utils, onnx, export, hub, compiler, ...)"
    if api in M.WHY_NOT:
        return M.WHY_NOT[api]
    return "no case here for this tooling API"


def members() -> List[str]:
    """Every API name this source has a case for."""
    return sorted(CASES)


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=members)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "owns", "members", "snippet", "PREFIXES"]
