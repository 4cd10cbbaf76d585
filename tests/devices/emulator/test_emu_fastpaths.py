"""The fast (functional) and in-place paths of the dispatcher give the general path's outcome.

Each call runs twice on fresh device tensors: once as planned, once with the plan's
``fast``/``inplace`` flags off (the general path). Results, returned identities, the
mutated tensors, refusals, traces and memory counters must agree.
"""

from __future__ import annotations

import pytest
import torch

from torchparity.devices.emulator import dispatch, trace_ops
from torchparity.devices.emulator import storage as st

aten = torch.ops.aten


def _general(plan):
    class Off:
        def __enter__(self):
            self.saved = plan.fast, plan.inplace
            plan.fast = plan.inplace = False

        def __exit__(self, *exc):
            plan.fast, plan.inplace = self.saved
    return Off()


def _outcome(fn, make):
    args = make()
    with trace_ops() as seen:
        try:
            out = fn(*args)
        except RuntimeError as exc:
            return ("raised", str(exc), sorted(seen)), args
    same = [out is a for a in args]
    value = out.cpu() if isinstance(out, torch.Tensor) else out
    dev = out.device.type if isinstance(out, torch.Tensor) else None
    return ("ok", value, dev, same, sorted(seen)), args


def _equal(x, y):
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and x.dtype == y.dtype and torch.equal(x, y)
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(_equal(a, b) for a, b in zip(x, y))
    return x == y


CASES = [
    # (op, call, args maker): functional ops take the fast path, in-place ones the in-place path
    ("add", aten.add.Tensor, lambda d: (torch.arange(6.).view(2, 3).to(d), torch.ones(2, 3).to(d))),
    ("add alias", aten.add.Tensor, lambda d: ((lambda x: (x, x))(torch.arange(4.).to(d)))),
    ("mul 0-dim cpu", aten.mul.Tensor, lambda d: (torch.arange(4.).to(d), torch.tensor(3.))),
    ("mul mixed", aten.mul.Tensor, lambda d: (torch.arange(4.).to(d), torch.ones(4))),
    ("add number", aten.add.Tensor, lambda d: (torch.arange(4).to(d), 2.5)),
    ("sum", aten.sum.dim_IntList, lambda d: (torch.arange(6.).view(2, 3).t().to(d), [0])),
    ("add_", aten.add_.Tensor, lambda d: (torch.arange(4.).to(d), torch.ones(4).to(d))),
    ("add_ 0-dim cpu", aten.add_.Tensor, lambda d: (torch.arange(4.).to(d), torch.tensor(2.))),
    ("add_ mixed", aten.add_.Tensor, lambda d: (torch.arange(4.).to(d), torch.ones(4))),
    ("add_ cpu self", aten.add_.Tensor, lambda d: (torch.arange(4.), torch.tensor(2.).to(d))),
    ("mul_ int by float", aten.mul_.Tensor, lambda d: (torch.arange(4).to(d), torch.ones(4).to(d))),
    ("fill_", aten.fill_.Scalar, lambda d: (torch.zeros(2, 2).to(d).t(), 7.0)),
    ("fill_ conj", aten.fill_.Scalar, lambda d: (torch.zeros(2, dtype=torch.complex64).to(d).conj(), 1j)),
]


@pytest.mark.parametrize("name,op,make", CASES, ids=[c[0] for c in CASES])
def test_fast_path_matches_general(dev, name, op, make):
    plan = dispatch.plan_for(op)
    assert plan.fast or plan.inplace, f"{op} was expected to take a fast path"
    fast, fast_args = _outcome(op, lambda: make(dev))
    with _general(plan):
        general, general_args = _outcome(op, lambda: make(dev))
    assert fast[0] == general[0], (fast, general)
    assert _equal(list(fast[1:]), list(general[1:])), (fast, general)
    for a, b in zip(fast_args, general_args):  # what was mutated, mutated alike
        if isinstance(a, torch.Tensor):
            assert a.device == b.device and _equal(a.cpu(), b.cpu())


def test_remembered_view_follows_in_place_geometry_change(dev):
    """The fast paths reuse a device tensor's remembered CPU view only while its geometry,
    dtype and conj/neg bits are those the view was made for."""
    x = torch.arange(6.).to(dev)
    y = x + 0  # remembered view of y: the CPU kernel's result
    assert torch.equal((y * 2).cpu(), torch.arange(6.) * 2)
    y.resize_(2, 3)
    assert torch.equal((y * 2).cpu(), (torch.arange(6.) * 2).view(2, 3))
    y.t_()
    assert torch.equal((y + 0).cpu(), torch.arange(6.).view(2, 3).t())
    y.add_(1)
    assert torch.equal(y.cpu(), torch.arange(6.).view(2, 3).t() + 1)
    z = (torch.arange(3.) * 1j).to(dev)
    zc = z + 0
    torch._C._set_conj(zc, True)
    assert torch.equal((zc * 1).cpu(), (torch.arange(3.) * 1j).conj())
    assert st.cpu_view(zc).is_conj()


def test_fast_and_in_place_paths_refuse_a_dtype_the_profile_lacks(tmp_path):
    from .helpers import run_python

    out = run_python("""
        from torchparity.devices.emulator import dispatch
        aten = torch.ops.aten
        x = torch.ones(2, dtype=torch.float64).to("npu")
        for op, call in ((aten.add_.Tensor, lambda: x.add_(x)), (aten.add.Tensor, lambda: x + x)):
            try:
                call()
                print("ran")
            except RuntimeError as exc:
                plan = dispatch.plan_for(op)
                print(plan.fast or plan.inplace, str(exc).splitlines()[0])
        print((torch.ones(2).to("npu").add_(1).cpu() == 2).all().item())
        """, tmp_path, profile_yaml="""
        name: tiny
        description: add for float32 only
        device_type: npu
        device_name: tiny (emulated)
        default: allow
        ops:
          aten.add:
            supported: true
            dtypes: [float32]
          aten.add_:
            supported: true
            dtypes: [float32]
        """)
    lines = out.splitlines()
    assert len(lines) == 3 and lines[-1] == "True", lines
    for line in lines[:2]:
        assert line.startswith("True ") and "'Double'" in line, lines
