"""The "footprint" case kind needs a device that traces the ops reaching it.

Its traces on the emulated device are tested through ``predict(trace="emulated")`` in
tests/app/test_sweep_emulated.py (workers on emu:allow-all).
"""

from torchparity.devices import get_adapter
from torchparity.run.handlers import WorkerContext, handle


def test_a_device_without_op_tracing_is_a_harness_error():
    ctx = WorkerContext(adapter=get_adapter("cpu"))
    out = handle(ctx, {"kind": "footprint", "api": "torch.dot", "key": "dot", "dtype": "float32"})
    assert "cannot trace" in out["harness_error"]
