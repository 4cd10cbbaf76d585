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
            assert a.device == b.device and a.size() == b.size() and a.stride() == b.stride()
            assert a.storage_offset() == b.storage_offset()
            assert _equal(a.cpu(), b.cpu())
            if not a.is_cpu:
                assert st.cpu_view(a).size() == a.size()


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


# -- factories and pure views --------------------------------------------------------------
# Each call runs with every cached plan's fast flags on, then off (the general path), on
# fresh inputs, optionally under injected faults / device noise. What must agree: value
# (where defined), dtype, device, sizes, strides, storage offset, aliasing with the inputs,
# the bytes the memory counters count for the result, the trace, refusals.

_FLAGS = ("fast", "inplace", "factory", "view")


class _AllGeneral:
    """Every plan built so far takes the general path while open."""

    def __enter__(self):
        self.saved = [(p, [getattr(p, f) for f in _FLAGS]) for p in dispatch._PLANS.values()]
        for p, _ in self.saved:
            for f in _FLAGS:
                setattr(p, f, False)

    def __exit__(self, *exc):
        for p, flags in self.saved:
            for f, v in zip(_FLAGS, flags):
                setattr(p, f, v)


def _geometry(fn, make, values):
    from torchparity.devices.emulator import memstats

    args = make()
    before = memstats.current()
    with trace_ops() as seen:
        try:
            out = fn(*args)
        except RuntimeError as exc:
            return ("raised", str(exc).splitlines()[0], sorted(seen))
    grown = memstats.current() - before
    ins = [a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)]
    alias = [out.untyped_storage().data_ptr() == p for p in ins]
    same = [out is a for a in args]
    value = out.cpu() if values else None
    return ("ok", out.dtype, out.device.type, tuple(out.size()), tuple(out.stride()),
            out.storage_offset(), alias, same, grown, value, sorted(seen))


def _same_geometry(x, y):
    return len(x) == len(y) and all(
        (a is None and b is None) or _equal(a, b) if isinstance(a, (torch.Tensor, type(None)))
        else a == b for a, b in zip(x, y))


def _c(d):
    return torch.arange(24.).view(2, 3, 4).to(d)


FACTORY_VIEW_CASES = [
    # (name, call, args maker, values defined)
    ("empty_strided", lambda s, t, d: aten.empty_strided(s, t, dtype=torch.float32, device=d),
     lambda d: ((2, 3), (1, 2), torch.device(d, 0)), False),
    ("empty_strided no index", lambda s, t, d: aten.empty_strided(s, t, device=d),
     lambda d: ((2, 3), (1, 2), torch.device(d)), False),
    ("empty_strided str device", lambda s, t, d: aten.empty_strided(s, t, device=d),
     lambda d: ((2, 3), (3, 1), d), False),
    ("empty_strided index 1", lambda s, t, d: aten.empty_strided(s, t, device=d),
     lambda d: ((2,), (1,), torch.device(d, 1)), False),
    ("empty_strided pinned", lambda s, t, d: aten.empty_strided(s, t, device=d, pin_memory=True),
     lambda d: ((2,), (1,), torch.device(d, 0)), False),
    ("empty_strided sparse", lambda s, t, d: aten.empty_strided(s, t, device=d, layout=torch.sparse_coo),
     lambda d: ((2,), (1,), torch.device(d, 0)), False),
    ("empty channels_last", lambda s, d: aten.empty.memory_format(
        s, dtype=torch.float16, device=d, memory_format=torch.channels_last),
     lambda d: ((2, 3, 4, 5), torch.device(d, 0)), False),
    ("empty 0 elements", lambda s, d: aten.empty.memory_format(s, device=d),
     lambda d: ((0, 3), torch.device(d, 0)), False),
    ("zeros", lambda s, d: torch.zeros(s, device=d), lambda d: ((3, 2), d), True),
    ("ones int", lambda s, d: torch.ones(s, dtype=torch.int32, device=d), lambda d: ((5,), d), True),
    ("full", lambda s, d: torch.full(s, 2.5, device=d), lambda d: ((2, 2), d), True),
    ("ones_like transposed", lambda x: torch.ones_like(x), lambda d: (torch.zeros(3, 2).to(d).t(),), True),
    ("zeros_like", lambda x: torch.zeros_like(x), lambda d: (_c(d),), True),
    ("full_like", lambda x: torch.full_like(x, 7), lambda d: (_c(d)[:, 1],), True),
    ("empty_like", lambda x: torch.empty_like(x), lambda d: (_c(d).permute(2, 0, 1),), False),
    ("new_zeros", lambda x: x.new_zeros((2, 2)), lambda d: (_c(d),), True),
    ("as_strided", lambda x: aten.as_strided(x, (2, 2), (1, 3), 2), lambda d: (_c(d),), True),
    # past the storage's end: not refused on either path (the Meta kernel checks no bounds;
    # the CPU's does), so only the geometry is compared
    ("as_strided out of bounds", lambda x: aten.as_strided(x, (30,), (1,), 0), lambda d: (_c(d),), False),
    ("as_strided conj", lambda x: x.conj().as_strided((2,), (2,), 1),
     lambda d: ((torch.arange(6.) * 1j).to(d),), True),
    ("view", lambda x: x.view(6, 4), lambda d: (_c(d),), True),
    ("view not viewable", lambda x: x.view(-1), lambda d: (_c(d).transpose(0, 2),), True),
    ("select", lambda x: x[1], lambda d: (_c(d),), True),
    ("expand", lambda x: x.expand(3, 4), lambda d: (torch.arange(4.).to(d),), True),
    ("unfold", lambda x: x.unfold(0, 2, 1), lambda d: (torch.arange(5.).to(d),), True),
    ("view_as_real", lambda x: torch.view_as_real(x), lambda d: ((torch.arange(3.) * 1j).to(d),), True),
    ("view_as_complex", lambda x: torch.view_as_complex(x), lambda d: (torch.arange(6.).view(3, 2).to(d),),
     True),
]

FAULT_SETS = [(), ("strides",), ("memstat-zero",), ("noise",)]


@pytest.mark.parametrize("faultset", FAULT_SETS, ids=lambda f: "+".join(f) or "none")
@pytest.mark.parametrize("name,fn,make,values", FACTORY_VIEW_CASES, ids=[c[0] for c in FACTORY_VIEW_CASES])
def test_factory_and_view_fast_paths_match_general(dev, name, fn, make, values, faultset):
    from torchparity.devices.emulator import faults

    names = [f for f in faultset if f != "noise"]
    with faults.injecting(names, noise="noise" in faultset):
        _geometry(fn, lambda: make(dev), values)  # builds every plan the call needs
        fast = _geometry(fn, lambda: make(dev), values)
        with _AllGeneral():
            general = _geometry(fn, lambda: make(dev), values)
    assert fast[0] == general[0], (fast, general)
    assert _same_geometry(fast, general), (fast, general)
    if "strides" in faultset and name == "empty_strided":
        assert fast[4] == (3, 1), fast  # the fault reaches the fast path as well
    if "memstat-zero" in faultset and fast[0] == "ok":
        assert fast[8] == 0


def test_factories_and_views_take_their_fast_paths(dev, monkeypatch):
    """ones_like, zeros, select, expand and a backward reach the device only through the
    fast paths: the general path is never entered."""
    general = []
    real = dispatch._run_general
    monkeypatch.setattr(dispatch, "_run_general", lambda p, a, k: general.append(p.name) or real(p, a, k))
    x = torch.rand(4, 4).to(dev).requires_grad_()
    (x * x).sum().backward()
    torch.ones_like(x)
    torch.zeros(2, device=dev)
    x[0].expand(2, 4)
    assert general == []
    assert dispatch.plan_for(aten.empty_strided.default).factory
    assert dispatch.plan_for(aten.as_strided.default).view
    assert torch.equal(x.grad.cpu(), 2 * x.detach().cpu())


def test_factory_and_view_fast_paths_refuse_a_dtype_the_profile_lacks(tmp_path):
    from .helpers import run_python

    out = run_python("""
        from torchparity.devices.emulator import dispatch
        x = torch.ones(4, dtype=torch.float64).to("npu")
        for op, call in ((torch.ops.aten.empty_strided.default,
                          lambda: torch.empty_strided((2,), (1,), dtype=torch.float64, device="npu:0")),
                         (torch.ops.aten.as_strided.default, lambda: x.as_strided((2,), (1,)))):
            plan = dispatch.plan_for(op)
            try:
                call()
                print("ran")
            except RuntimeError as exc:
                print(plan.factory or plan.view, str(exc).splitlines()[0])
        y = torch.empty_strided((2,), (1,), device="npu:0")
        print(y.dtype, y.as_strided((1,), (1,)).shape)
        """, tmp_path, profile_yaml="""
        name: tiny
        description: empty_strided and as_strided for float32 only
        device_type: npu
        device_name: tiny (emulated)
        default: allow
        ops:
          aten.empty_strided:
            supported: true
            dtypes: [float32]
          aten.as_strided:
            supported: true
            dtypes: [float32]
        """)
    lines = out.splitlines()
    assert len(lines) == 3 and lines[-1] == "torch.float32 torch.Size([1])", lines
    for line in lines[:2]:
        assert line.startswith("True ") and "'Double'" in line, lines


@pytest.mark.parametrize("change", ["transpose", "grow", "none"])
def test_in_place_path_follows_a_kernel_that_changes_self(dev, change):
    """A CPU kernel that re-shapes or reallocates ``self``'s view (in-place view ops, a
    growing resize; the ones torch has run above the fallback, so a stand-in kernel here):
    the in-place path gives the device tensor the view's geometry and memory, as the
    general path does."""
    def kernel(self, value):
        if change == "transpose":
            self.t_()
        elif change == "grow":
            self.resize_(4, 4)
        return self.fill_(value)

    plan = dispatch.Plan(aten.fill_.Scalar, kernel)
    assert plan.inplace
    got = []
    for inplace in (True, False):
        plan.inplace = inplace
        x = torch.zeros(2, 3).to(dev)
        x.add_(0)  # x's CPU view remembered
        out = dispatch.run(plan, (x, 5.0), {})
        assert out is x
        got.append((tuple(x.size()), tuple(x.stride()), x.storage_offset(), x.cpu(),
                    tuple(st.cpu_view(x).size())))
    assert _equal(list(got[0]), list(got[1])), got
    assert got[0][0] == {"transpose": (3, 2), "grow": (4, 4), "none": (2, 3)}[change]
    assert bool((got[0][3] == 5).all())


def test_a_result_at_the_address_a_reallocated_argument_had_is_no_alias_of_it(dev):
    """A kernel that reallocates a mutated argument frees its memory, and the allocator may
    hand that address to a result (it did, now and then, under the fused observer): the
    result is fresh device memory, not an alias of the argument's old device storage (which
    is smaller: aliasing it failed with "Trying to resize storage that is not resizable").
    The stand-in kernel re-points ``running_mean``'s view at new memory and returns a result
    over the address it had, claiming more bytes (never read)."""
    def kernel(input, weight, bias, running_mean, running_var, training, momentum, eps):
        old = running_mean.untyped_storage().data_ptr()
        running_mean.set_(torch.full((4,), 5.0))
        over = torch._C._construct_storage_from_data_pointer(old, torch.device("cpu"), 64)
        return torch.empty(0).set_(over, 0, (16,), (1,)), input.sum(0), input.sum(0)

    plan = dispatch.Plan(aten._native_batch_norm_legit.default, kernel)
    assert plan.write_pos and not plan.fast and not plan.inplace
    x = torch.ones(2, 1).to(dev)
    mean, var = torch.zeros(1).to(dev), torch.ones(1).to(dev)
    old_storage = mean.untyped_storage()
    out = dispatch.run(plan, (x, None, None, mean, var, True, 0.1, 1e-5), {})
    assert mean.shape == (4,) and bool((mean.cpu() == 5).all())
    assert out[0].device == x.device and out[0].shape == (16,)
    assert out[0].untyped_storage().nbytes() == 64 and old_storage.nbytes() == 4
