"""The device module and the runtime APIs around it, as a scenario source: ``devmod``.

``torch.cuda.X`` (and ``torch.cpu.X``) is asked of the device module of the device under
test (``torch.get_device_module``: ``torch.npu`` with torch_npu, the emulator's module on
``emu:*``); ``torch.accelerator.*``, ``torch.backends.*`` flags, ``torch.random.*``,
``torch.Generator`` and ``torch.default_generator`` are called directly. Every block does
real work with device tensors (a computation inside a stream context, events around it,
RNG state saved and restored, a device allocation the memory counters must see, autocast
on the device, a flag set around a device computation) and returns values and facts.

The CPU run is the reference: torch.cpu's own member where it has one, the CPU
generator's functions for RNG members, and otherwise the property the API promises (the
scenario text says which). A device module lacking the member raises "the device module
torch.<type> has no member ...", judged unsupported (feature limit).
"""

from __future__ import annotations

import functools
import gc
import math
from typing import Any, Dict, List, Tuple

import torch

from ....results.models import Text
from ...registry import Scenario
from ..base import ModuleSource, block_fn, block_snippet
from . import cuda as C
from . import device as D
from . import misc as M
from .lib import NBYTES, Ctx, capture

NAME = "devmod"
ORDER = 66

PREFIXES = ("torch.cuda.", "torch.cpu.", "torch.accelerator.", "torch.backends.", "torch.random.",
            "torch.Generator", "torch.default_generator")

CUDA: Dict[str, Tuple[str, str]] = {**C.STREAMS, **C.MEMORY, **D.ALL}
# torch.cpu.X: the same question as torch.cuda.X (torch.cpu runs it as the reference)
CPU_MEMBERS = ("Stream", "StreamContext", "amp.autocast", "current_stream", "device_count",
               "is_available", "stream", "synchronize")

EXCLUDED = {
    "torch.cuda._sanitizer.enable_cuda_sanitizer":
        "installs a process-wide dispatch mode for the rest of the process and cannot be "
        "turned off: it would change every later case in the worker",
    "torch.cuda.CUDAPluggableAllocator":
        "needs an allocator compiled as a shared library (a C/C++ toolchain)",
    "torch.cuda.change_current_allocator":
        "needs an allocator compiled as a shared library (a C/C++ toolchain), and can only "
        "be called before the device's first allocation",
}

RANDOM_APIS = frozenset(["torch.random.seed", "torch.cuda.seed", "torch.cuda.seed_all",
                         "torch.Generator.seed"])


def _table(api: str) -> Tuple[str, str]:
    """(block, reference text) of ``api``, or ("", "")."""
    if api.startswith("torch.cuda."):
        return CUDA.get(api[len("torch.cuda."):], ("", ""))
    if api.startswith("torch.cpu."):
        member = api[len("torch.cpu."):]
        return CUDA[member] if member in CPU_MEMBERS else ("", "")
    if api.startswith("torch.accelerator."):
        return M.ACCELERATOR.get(api[len("torch.accelerator."):], ("", ""))
    if api.startswith("torch.backends."):
        return M.BACKENDS.get(api[len("torch.backends."):], ("", ""))
    return M.RANDOM.get(api, ("", ""))


_REF_ZH = {C.CPU: "torch.cpu 运行同一段代码", C.RNG: "CPU 生成器（torch.random）运行同一段代码",
           M.FLAG: "CPU 上在同一计算外设置同一开关",
           "the same computation on the CPU": "CPU 上的同一计算", M.SAME: "CPU 上运行的同一段代码"}

PRELUDE = "c = Ctx(device)\nx = c.tensor(dtype=dtype)\nacc_here = _acc_here(c)\n"


def _acc_here(c: Ctx) -> bool:
    acc = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    return acc is not None and acc.type == c.type


def _make_fn(code):
    return block_fn(code, {"Ctx": Ctx, "capture": capture, "NBYTES": NBYTES, "gc": gc,
                           "math": math, "_acc_here": _acc_here})


def _snippet(block: str) -> str:
    return block_snippet(PRELUDE, block, imports=(
        "import gc, math\nimport torch\nfrom torchparity.scenarios.sources.devmod.lib import "
        "NBYTES, Ctx, capture\nfrom torchparity.scenarios.sources.devmod import _acc_here\n"))


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    block, ref = _table(api)
    if not block:
        return ()
    code = compile(PRELUDE + block, __file__, "exec")
    short = api.rsplit(".", 1)[-1]
    member = api.split(".", 2)[2] if api.startswith(("torch.cuda.", "torch.cpu.")) else ""
    via = f"the device module's counterpart (torch.<device>.{member})" if member else api
    via_zh = f"设备模块中的对应成员（torch.<device>.{member}）" if member else api
    ref_zh = _REF_ZH.get(ref, "API 承诺的性质（" + ref + "）")
    return (Scenario(
        id=f"devmod_{short}", api=api, fn=_make_fn(code),
        description=Text(en=f"{via} with device tensors; reference: {ref}",
                         zh=f"{via_zh}，使用设备张量；参照：{ref_zh}"),
        expected=Text(en="the same values and facts as the reference",
                      zh="与参照相同的数值与性质"),
        dtypes=("float32",), tags=("random",) if api in RANDOM_APIS else (),
        compare="values", module=__name__, source=NAME, code=_snippet(block)),)


def scenarios(api: str, obj: Any) -> List[Scenario]:
    if not api.startswith(PREFIXES) or api in EXCLUDED:
        return []
    return list(_cached(api))


def owns(api: str) -> bool:
    return api in EXCLUDED or api.startswith(PREFIXES)


def why_not(api: str, obj: Any) -> str:
    if api in EXCLUDED:
        return EXCLUDED[api]
    if not api.startswith(PREFIXES):
        return "not a device-module, accelerator, backends or RNG API"
    return "no device-module case for this member"


def members() -> List[str]:
    """Every API name this source has a case for."""
    out = [f"torch.cuda.{m}" for m in CUDA] + [f"torch.cpu.{m}" for m in CPU_MEMBERS]
    out += [f"torch.accelerator.{m}" for m in M.ACCELERATOR]
    out += [f"torch.backends.{m}" for m in M.BACKENDS] + list(M.RANDOM)
    return out


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=members)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "members"]
