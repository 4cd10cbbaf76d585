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


# outside the project: tanh as expm1(2x) / (expm1(2x) + 2), accurate on finite values
# (the sample range) and NaN at +inf, where tanh is 1
TANH_FORMULA = '''
import torch
FAULTS = {"tanh-formula": "tanh through expm1: inf / inf at +inf"}
def wrap(fault, op, call, fire=None):
    if str(op) != "aten.tanh.default":
        return None
    def run(x):
        e = torch.expm1(2 * x)
        out = e / (e + 2)
        if fire and not torch.equal(out.nan_to_num(), call(x).nan_to_num()):
            fire()
        return out
    return run
'''


@pytest.fixture(scope="module")
def ctx(adapter):
    from torchparity.run.handlers import WorkerContext

    return WorkerContext(adapter=adapter, options={"threads": 1})


def _opinfo_row(ctx, key, dtype="float32", samples=2):
    from torchparity.run.handlers import handle

    return handle(ctx, {"kind": "opinfo", "api": key, "key": key, "dtype": dtype, "max_samples": samples})


def test_a_ufunc_gets_nan_and_inf_and_a_kernel_wrong_at_inf_fails(ctx, tmp_path):
    path = tmp_path / "tanh_formula.py"
    path.write_text(TANH_FORMULA)
    ok = _opinfo_row(ctx, "tanh")
    assert ok["status"] == "pass", ok["detail"]
    assert "NaN / inf" in ok.get("note", "")
    with faults.injecting(["tanh-formula"], modules=[str(path)]):
        bad = _opinfo_row(ctx, "tanh")
    assert bad["status"] == "fail", bad["detail"]


@pytest.mark.parametrize("key,dtype", [("exp", "float16"), ("sigmoid", "bfloat16"), ("tanh", "float32"),
                                       ("add", "float32"), ("atan2", "float32"), ("maximum", "bfloat16"),
                                       ("log", "float64")])
def test_nan_inf_samples_pass_under_device_noise(ctx, key, dtype):
    with faults.injecting((), noise=True):
        ok = _opinfo_row(ctx, key, dtype)
    assert ok["status"] == "pass", ok["detail"]
