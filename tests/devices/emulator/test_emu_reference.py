"""The CPU reference never runs under the emulated build's process-wide switches.

A torch CPU build with ITT reports ``itt.is_available()`` True and runs
``emit_itt(enabled=True)``; the emulated Ascend profile (built without ITT) makes the
device side refuse it. The CPU reference of the same worker must still see plain CPU ITT.
"""

from __future__ import annotations

from .helpers import run_python

A2_WITHOUT_ITT = """
import torch
from torchparity.devices import get_adapter
from torchparity.run.execute import execute
from torchparity.scenarios.registry import find
import torchparity.scenarios.suites.autograd_profiler  # registers the emit_itt scenarios

adapter = get_adapter("emu:ascend-a2")
adapter.setup()
cpu_build = torch._C._itt.is_available()
with adapter.reference():
    in_reference = torch.profiler.itt.is_available()
    with torch.autograd.profiler.emit_itt(enabled=True):
        torch.ones(2).add(1)
print("cpu_build", cpu_build)
print("reference", in_reference)
print("device_side", torch.profiler.itt.is_available())
try:
    with torch.autograd.profiler.emit_itt(enabled=True):
        pass
    print("outside", "ran")
except RuntimeError as exc:
    print("outside", "refused")
sc = find("torch.autograd.profiler.emit_itt", "enabled")
result, _ = execute(sc, "float32", adapter)
print("status", result.status, result.cause)
print("detail", result.detail)
"""


def test_cpu_reference_sees_plain_cpu_itt(tmp_path):
    out = dict(line.split(" ", 1) for line in run_python(A2_WITHOUT_ITT, tmp_path).splitlines())
    assert out["device_side"] == "False" and out["outside"] == "refused"
    assert out["reference"] == out["cpu_build"]  # the switch did not reach the CPU reference
    assert out["status"] == "unsupported build_config"
    if out["cpu_build"] == "True":  # torch CPU wheels carry ITT: the CPU ran it
        assert "the CPU reference returned" in out["detail"]
        assert "raised" not in out["detail"].split("; the CPU reference", 1)[1]
