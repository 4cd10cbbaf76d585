"""Issue 45, second round, item 4: the runtime case of ``torch.autograd.grad`` has broadcast
operands (a kernel that does not sum a broadcast operand's gradient back over every
broadcast dimension fails it); OpInfo rows of ops that define NaN / inf get the project's
own sample holding them."""

from __future__ import annotations

import pytest

from torchparity.devices.emulator import faults

# outside the project: a reduction back to a broadcast operand's shape (``sum`` over the
# broadcast dims, kept) that keeps the first slice instead of the sum
FIRST_SLICE = '''
FAULTS = {"sum-to-first": "sum over kept broadcast dims returns the first slice"}
def wrap(fault, op, call, fire=None):
    if str(op) != "aten.sum.dim_IntList":
        return None
    def run(x, dim, keepdim=False, dtype=None):
        out = call(x, dim, keepdim, dtype=dtype)
        if keepdim and dim and x.dim():
            first = x
            for d in sorted(dim):
                first = first.narrow(d, 0, 1)
            if first.shape == out.shape and not bool((first == out).all()):
                if fire:
                    fire()
                return first.to(out.dtype).clone()
        return out
    return run
'''


@pytest.fixture(scope="module")
def adapter(dev):
    from torchparity.devices import get_adapter

    a = get_adapter("emu:allow-all")
    a.setup()
    return a


def test_autograd_grad_sees_a_broadcast_gradient_bug(adapter, tmp_path):
    from torchparity.run.execute import execute
    from torchparity.scenarios.sources import source

    path = tmp_path / "first_slice.py"
    path.write_text(FIRST_SLICE)
    (sc,) = source("runtime").scenarios("torch.autograd.grad", None)
    assert execute(sc, "float32", adapter)[0].status == "pass"
    with faults.injecting(["sum-to-first"], modules=[str(path)]):
        bad = execute(sc, "float32", adapter)[0]
    assert bad.status == "fail", bad.detail
