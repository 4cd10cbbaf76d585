"""A ``torch_npu`` stand-in for the emulated device, so that Ascend's own tests run unchanged.

Ascend/pytorch's ``test/npu/*.py`` import ``torch_npu`` and ``torch_npu.testing`` (its
``TestCase`` with ``prec=`` and ``assertRtolEqual``, ``run_tests``, ``create_common_tensor``,
``SupportedDevices``, ...). The folder ``site/`` holds a package named ``torch_npu`` that
provides those names over the emulated device ``emu:<profile>``: ``torch_npu.npu`` is the
emulated ``torch.npu``, whose name, properties and SoC version are the profile's chip's
(``devices/profiles/chips/identity.yaml``), so ``SupportedDevices(["Ascend910B"])`` runs a
test on ``emu:ascend-a2`` as it would on an Ascend910B3.

It is never active by accident: it needs both ``site/`` on ``sys.path`` and
``TORCHPARITY_TORCH_NPU=emu:<profile>`` (``environ()`` gives both), and it refuses to load
where a real torch_npu is importable. ``python -m torchparity.npu_testing FILE.py`` runs one
test file under it.

What the emulator does not emulate (graph capture, private formats, torch_npu's own fused
operators, ...) is named in ``NOT_EMULATED``: a test that reaches one fails with "not
emulated by torchparity's emulated device (<feature>)", an emulator limit; a name the
adapter lacks otherwise fails with "torchparity's torch_npu adapter does not provide",
an adapter gap. ``benchmarks/ascend_tests.py`` counts both apart.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

SITE = Path(__file__).resolve().parent / "site"
ENV_VAR = "TORCHPARITY_TORCH_NPU"
GAP = "torchparity's torch_npu adapter does not provide"
LIMIT = "not emulated by torchparity's emulated device"

# (name prefix under torch_npu, the emulator feature it needs). A name is matched by its
# dotted path ("torch_npu.npu_format_cast", "torch_npu.npu._graph_tree.X"); the first
# matching prefix wins. Each feature is one the emulator's documentation lists as not
# emulated (devices/emulator/__init__.py: graph capture, IPC handles, asynchronous streams,
# torch.compile backends) or that no Python backend over CPU tensors has: torch_npu's
# own operators (torch.ops.npu), private storage formats, CANN/driver tooling.
NOT_EMULATED: Tuple[Tuple[str, str], ...] = (
    ("torch_npu.npu_format_cast", "private storage formats (FRACTAL_NZ, NC1HWC0, ...)"),
    ("torch_npu.get_npu_format", "private storage formats (FRACTAL_NZ, NC1HWC0, ...)"),
    ("torch_npu.empty_with_format", "private storage formats (FRACTAL_NZ, NC1HWC0, ...)"),
    ("torch_npu.Format", "private storage formats (FRACTAL_NZ, NC1HWC0, ...)"),
    ("torch_npu.get_storage_size", "private storage formats (FRACTAL_NZ, NC1HWC0, ...)"),
    ("torch_npu.npu.config", "private storage formats (FRACTAL_NZ, NC1HWC0, ...)"),
    ("torch_npu.HiFloat8Tensor", "torch_npu's own operators (torch.ops.npu)"),
    ("torch_npu.npu_", "torch_npu's own operators (torch.ops.npu)"),
    ("torch_npu._npu_", "torch_npu's own operators (torch.ops.npu)"),
    ("torch_npu.fast_gelu", "torch_npu's own operators (torch.ops.npu)"),
    ("torch_npu.empty_with_swapped_memory", "torch_npu's own operators (torch.ops.npu)"),
    ("torch_npu.npu.graphs", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu.NPUGraph", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu._graph_tree", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu._npugraph_", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu._aclgraph_", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.print_npugraph_tensor", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu._launch_host_func", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu._subscribe_report", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu._unsubscribe_report", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu.super_kernel_scope_", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu.graph_task_", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu.npugraph_ex", "graph capture (NPUGraph / aclgraph)"),
    ("torch_npu.npu.ExternalStream", "ACL runtime handles (external streams and events, npurt)"),
    ("torch_npu.npu.ExternalEvent", "ACL runtime handles (external streams and events, npurt)"),
    ("torch_npu.npu.npurt", "ACL runtime handles (external streams and events, npurt)"),
    ("torch_npu.npu._sleep", "asynchronous streams (the stream sanitizer)"),
    ("torch_npu.erase_stream", "asynchronous streams (the stream sanitizer)"),
    ("torch_npu.npu.set_option", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.set_compile_mode", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.is_jit_compile_false", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu._get_deterministic_level",
     "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.set_deterministic_level",
     "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.set_op_timeout_ms", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.set_device_limit", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.get_device_limit", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.set_stream_limit", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.get_stream_limit", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.reset_stream_limit", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.use_compatible_impl", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.are_compatible_impl_enabled",
     "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.aclnn", "CANN runtime options (op modes, limits, timeouts)"),
    ("torch_npu.npu.set_aoe", "CANN tooling (msTX, profiler, AOE, kernel checks)"),
    ("torch_npu.npu.empty_virt_addr_cache", "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu.npu.memory._set_allocator_settings",
     "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu._inductor", "torch.compile backends (inductor / torchair)"),
    ("torch_npu.dynamo", "torch.compile backends (inductor / torchair)"),
    ("torch_npu.utils._dynamo", "torch.compile backends (inductor / torchair)"),
    ("torch_npu.jit", "torch.compile backends (inductor / torchair)"),
    ("torch_npu.npu._sanitizer", "asynchronous streams (the stream sanitizer)"),
    ("torch_npu.utils._npu_trace", "asynchronous streams (the stream sanitizer)"),
    ("torch_npu.npu._stream_check", "asynchronous streams (the stream sanitizer)"),
    ("torch_npu.npu.mstx", "CANN tooling (msTX, profiler, AOE, kernel checks)"),
    ("torch_npu._C._mstx", "CANN tooling (msTX, profiler, AOE, kernel checks)"),
    ("torch_npu.profiler", "CANN tooling (msTX, profiler, AOE, kernel checks)"),
    ("torch_npu.utils.profiler", "CANN tooling (msTX, profiler, AOE, kernel checks)"),
    ("torch_npu.npu._kernel_check", "CANN tooling (msTX, profiler, AOE, kernel checks)"),
    ("torch_npu.npu._memory_viz", "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu.npu.memory._record_memory_history",
     "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu._C._npu_getCheckpointState", "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu._C._npu_setCheckpointPoolState",
     "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu._C._npu_checkPoolLiveAllocations",
     "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu._C._npu_releasePool", "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu._C._npu_endAllocateToPool", "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu._C._npu_isHistoryEnabled", "the caching allocator (segments, pools, snapshots)"),
    ("torch_npu.npu._recovery", "device fault recovery (UCE, stop/restart device)"),
    ("torch_npu.npu.stop_device", "device fault recovery (UCE, stop/restart device)"),
    ("torch_npu.npu.restart_device", "device fault recovery (UCE, stop/restart device)"),
    ("torch_npu.npu.check_uce_in_memory", "device fault recovery (UCE, stop/restart device)"),
)


def not_emulated(name: str) -> Optional[str]:
    """The emulator feature a torch_npu name needs, if ``NOT_EMULATED`` lists it."""
    for prefix, feature in NOT_EMULATED:
        if name == prefix or name.startswith(prefix + ".") or (
                prefix.endswith("_") and name.startswith(prefix)):
            return feature
    return None


def missing(name: str) -> str:
    """The message for a torch_npu name the adapter lacks: an emulator limit or a gap."""
    feature = not_emulated(name)
    if feature:
        return f"{name}: {LIMIT} ({feature})"
    return f"{name}: {GAP} it"


def real_torch_npu(path: Optional[List[str]] = None) -> Optional[str]:
    """Where a real torch_npu is importable from (any sys.path entry but ``site/``), or None."""
    entries = [p for p in (sys.path if path is None else path)
               if p and Path(p).resolve() != SITE]
    spec = importlib.machinery.PathFinder.find_spec("torch_npu", entries)
    if spec is None:
        return None
    return str(spec.origin or (list(spec.submodule_search_locations or []) or ["?"])[0])


def activation_problem() -> Optional[str]:
    """None when the adapter may stand in for torch_npu in this process, else one line."""
    spec = os.environ.get(ENV_VAR, "")
    if not spec.startswith("emu:"):
        return (f"torchparity's torch_npu adapter is active only when {ENV_VAR}=emu:<profile> "
                "is set (python -m torchparity.npu_testing FILE.py sets it); "
                f"{ENV_VAR}={spec!r}")
    real = real_torch_npu()
    if real:
        return (f"a real torch_npu is installed ({real}); torchparity's adapter stands in "
                "only where there is none")
    return None


def environ(spec: str = "emu:ascend-a2", base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment in which a child process imports the adapter as ``torch_npu``."""
    env = dict(os.environ if base is None else base)
    src = str(Path(__file__).resolve().parents[2])
    parts = [str(SITE), src] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    env[ENV_VAR] = spec
    # as with torch_npu installed, ``import torch`` alone brings the device (the entry point
    # in site/*.dist-info): Ascend's tests start child processes that rely on it
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "1"
    return env


def activate(spec: Optional[str] = None):
    """Stand the adapter in for ``torch_npu`` in this process and import it: what a
    ``conftest.py`` beside Ascend-style test files calls so that they run unchanged on the
    emulated device (``spec``, else ``$TORCHPARITY_TORCH_NPU``, else ``emu:ascend-a2``).
    Returns the imported ``torch_npu``. A real torch_npu installed: ImportError (one line)."""
    import importlib

    import torch  # noqa: F401  (first: its backend autoload must not meet site/ half-imported)

    os.environ[ENV_VAR] = spec or os.environ.get(ENV_VAR) or "emu:ascend-a2"
    if str(SITE) not in sys.path:
        sys.path.insert(0, str(SITE))
    problem = activation_problem()
    if problem:
        raise ImportError(problem)
    return importlib.import_module("torch_npu")


CONFTEST = """\
# conftest.py: run the npu test files here on torchparity's emulated device (a prediction,
# not a hardware result). Set TORCHPARITY_TORCH_NPU=emu:<profile> to pick another profile.
from torchparity import npu_testing

npu_testing.activate()
"""


__all__ = ["CONFTEST", "ENV_VAR", "activate", "GAP", "LIMIT", "NOT_EMULATED", "SITE", "activation_problem", "environ",
           "missing", "not_emulated", "real_torch_npu"]
