"""Tensors on the emulated device: factories, transfers, memory sharing, storages."""

from __future__ import annotations

import pytest
import torch

from torchparity.results.error_rules import classify_exception


def same(device_tensor: torch.Tensor, cpu_tensor: torch.Tensor) -> bool:
    return (device_tensor.dtype == cpu_tensor.dtype
            and torch.equal(device_tensor.cpu(), cpu_tensor))


def test_factories(dev):
    assert same(torch.ones(2, 3, device=dev), torch.ones(2, 3))
    assert same(torch.zeros(4, dtype=torch.int32, device=dev), torch.zeros(4, dtype=torch.int32))
    assert same(torch.full((2,), 7.5, device=dev), torch.full((2,), 7.5))
    assert same(torch.arange(10, device=dev), torch.arange(10))
    assert same(torch.eye(3, dtype=torch.float64, device=dev), torch.eye(3, dtype=torch.float64))
    assert same(torch.tensor([1.0, 2.0], device=dev), torch.tensor([1.0, 2.0]))
    e = torch.empty(3, 4, device=dev)
    assert e.device.type == dev and e.shape == (3, 4)
    assert same(torch.zeros_like(e), torch.zeros(3, 4))
    assert same(e.new_ones(2), torch.ones(2))


def test_transfers(dev):
    x = torch.randn(3, 4)
    d = x.to(dev)
    assert d.device == torch.device(dev, 0) and not d.is_cpu
    assert torch.equal(d.cpu(), x) and torch.equal(d.to("cpu"), x)
    assert torch.equal(x.to(dev, non_blocking=True).to("cpu", non_blocking=True), x)
    assert torch.equal(getattr(x, dev)().cpu(), x)
    assert same(d.to(torch.float64), x.to(torch.float64))
    assert same(d.to(dev, torch.int64), x.to(torch.int64))
    assert d.to(dev) is d
    nc = x.t().to(dev)
    assert nc.stride() == x.t().stride() and torch.equal(nc.cpu(), x.t())


def test_views_and_inplace_share_memory_as_on_the_cpu(dev):
    def program(device):
        x = torch.arange(24.0).reshape(4, 6).to(device)
        v = x.view(24)
        v[0] = 100
        x.t()[1, 0] += 1
        x.detach()[3, 5] = -1
        x[2].mul_(2)
        x[:, 1].zero_()
        x.diagonal().add_(0.5)
        x.unfold(1, 2, 2)[0, 0].fill_(9)
        x.as_strided((2, 2), (6, 1), 7).neg_()
        row = x.select(0, 3)
        row += 10
        r = x.reshape(2, 12)
        r[1, 11] = 42
        return x, v, row, r

    cpu = program("cpu")
    out = program(dev)
    for a, b in zip(out, cpu):
        assert same(a, b)
    x, v, row, r = out
    assert v.data_ptr() == x.data_ptr() and r.data_ptr() == x.data_ptr()
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert row.data_ptr() == x.data_ptr() + 18 * 4


def test_complex_views(dev):
    c = torch.randn(3, dtype=torch.complex64)
    d = c.to(dev)
    real = torch.view_as_real(d)
    real[0, 0] = 5.0
    c_ref = c.clone()
    torch.view_as_real(c_ref)[0, 0] = 5.0
    assert same(d, c_ref)
    assert same(torch.view_as_complex(real), c_ref)


def test_out_variants_resize_like_the_cpu(dev):
    a = torch.randn(3, 4)
    out = torch.empty(0, device=dev)
    res = torch.add(a.to(dev), a.to(dev), out=out)
    assert res is out and same(out, a + a)
    same_size = torch.empty(3, 4, device=dev)
    ptr = same_size.data_ptr()
    torch.mul(a.to(dev), 2, out=same_size)
    assert same_size.data_ptr() == ptr and same(same_size, a * 2)
    values, indices = torch.empty(0, device=dev), torch.empty(0, dtype=torch.long, device=dev)
    torch.max(a.to(dev), 1, out=(values, indices))
    ref = torch.max(a, 1)
    assert same(values, ref.values) and same(indices, ref.indices)


def test_a_mutated_argument_the_cpu_kernel_resizes_is_resized_on_the_device(dev):
    # per-channel fused observer + fake-quant: the CPU kernel grows scale / zero_point
    # (given with one element) to one per channel; the device tensors must follow
    x = torch.randn(4, 3)

    def run(device):
        t = [x.to(device), torch.tensor([1], dtype=torch.long).to(device),
             torch.tensor([1], dtype=torch.long).to(device)]
        t += [torch.empty(0).to(device), torch.empty(0).to(device)]  # running min / max
        scale, zp = torch.tensor([1.0]).to(device), torch.tensor([0], dtype=torch.int32).to(device)
        y = torch.fused_moving_avg_obs_fake_quant(*t, scale, zp, 0.01, 0, 255, 0, True, False)
        return y, scale, zp

    y, scale, zp = run(dev)
    ref_y, ref_scale, ref_zp = run("cpu")
    assert scale.device.type == dev and scale.shape == ref_scale.shape == (4,)
    assert same(scale, ref_scale) and same(zp, ref_zp) and same(y, ref_y)


def test_resize_and_set(dev):
    t = torch.arange(4.0).to(dev)
    t.resize_(2, 3)
    assert t.shape == (2, 3) and torch.equal(t.cpu().flatten()[:4], torch.arange(4.0))
    base = torch.arange(6.0).to(dev)
    s = torch.empty(0, device=dev).set_(base.untyped_storage(), 1, (2, 2), (2, 1))
    assert same(s, torch.arange(6.0).as_strided((2, 2), (2, 1), 1))
    s[0, 0] = -1
    assert base[1].item() == -1
    u = torch.empty(0, device=dev).set_(base)
    assert u.data_ptr() == base.data_ptr() and u.shape == base.shape
    assert torch.empty(3, device=dev).set_().shape == (0,)
    with pytest.raises(RuntimeError, match="different device"):
        torch.empty(0, device=dev).set_(torch.ones(2))


def test_storages(dev):
    s = torch.UntypedStorage(16, device=dev)
    assert s.device.type == dev and s.nbytes() == 16
    t = torch.empty(0, device=dev).set_(s, 0, (4,), (1,))
    t.fill_(2.0)
    assert torch.equal(t.cpu(), torch.full((4,), 2.0))
    typed = torch.TypedStorage(3, dtype=torch.float64, device=dev)
    assert typed.device.type == dev and typed.size() == 3
    cpu_storage = torch.arange(3.0).untyped_storage()
    moved = getattr(cpu_storage, dev)()
    assert moved.device.type == dev and bytes(moved.cpu()) == bytes(cpu_storage)


def test_null_data_and_zero_tensors_are_materialised(dev):
    z = torch._efficientzerotensor(3, device=dev)
    assert same(z, torch.zeros(3))
    n = torch._C._acc.create_empty_tensor([2, 3], torch.float32)  # null data pointer
    assert n.untyped_storage().data_ptr() == 0
    assert same(n + 1, torch.ones(2, 3))
    x = torch.randn(4).to(dev).requires_grad_()
    x[1].backward()  # the gradient of the other elements is zero-filled
    assert same(x.grad, torch.tensor([0.0, 1.0, 0.0, 0.0]))


def test_mixed_devices(dev):
    d = torch.ones(3, 4, device=dev)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        d + torch.ones(3, 4)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(d, torch.ones(4, 2))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.cat([d, torch.ones(3, 4)])
    assert same(d + torch.tensor(2.0), torch.full((3, 4), 3.0))  # CPU scalars are fine
    idx = torch.tensor([0, 2])
    assert same(d[idx], torch.ones(2, 4))  # so are CPU indices
    d[idx] = torch.zeros(2, 4, device=dev)
    assert d.sum().item() == 4.0
    d.copy_(torch.full((3, 4), 5.0))
    assert same(d, torch.full((3, 4), 5.0))


def test_wrapped_numbers_promote_like_on_the_cpu(dev):
    ints = torch.tensor([5, -7, 9], dtype=torch.int32)
    halfs = torch.tensor([1e-3, 2.0, -3.0], dtype=torch.float16)
    doubles = torch.tensor([0.1, 0.2], dtype=torch.float64)
    cases = [
        lambda t: torch.remainder(t, 2), lambda t: torch.remainder(t, 2.5),
        lambda t: torch.copysign(t, -1.0), lambda t: t + 2.5, lambda t: t * 3,
        lambda t: torch.pow(t, 2), lambda t: torch.eq(t, 2), lambda t: t / 3,
        lambda t: torch.where(t > 0, t, 7),
    ]
    for case in cases:
        for t in (ints, halfs, doubles):
            assert same(case(t.to(dev)), case(t))


def test_conj_and_neg_bits(dev):
    c = torch.randn(8, dtype=torch.complex64)
    d = c.to(dev)
    assert d.conj().is_conj() and same(d.conj(), c.conj())
    assert same(d.conj().resolve_conj(), c.conj().resolve_conj())
    assert same(torch.fft.ifft(d), torch.fft.ifft(c))
    assert same(torch.fft.hfft(d), torch.fft.hfft(c))
    assert same(torch.fft.ihfft(d.real), torch.fft.ihfft(c.real))
    neg = d.conj().imag
    assert neg.is_neg() and same(neg.resolve_neg(), c.conj().imag.resolve_neg())
    target = torch.empty(8, dtype=torch.complex64, device=dev)
    target.copy_(d.conj())
    assert same(target, c.conj().resolve_conj())
    assert same(d.conj().cpu(), c.conj())


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_forward_and_backward(dev, transposed):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 7)
    w = torch.randn(3, 4, 3, 3) if transposed else torch.randn(4, 3, 3, 3)
    b = torch.randn(4)
    conv = torch.nn.functional.conv_transpose2d if transposed else torch.nn.functional.conv2d

    def run(device):
        xs = [t.to(device).requires_grad_() for t in (x, w, b)]
        out = conv(*xs, stride=2, padding=1)
        out.square().sum().backward()
        return [out] + [t.grad for t in xs]

    for a, b_ in zip(run(dev), run("cpu")):
        torch.testing.assert_close(a.cpu(), b_)


def test_scalars_and_repr(dev):
    d = torch.tensor([1.5, 2.5], device=dev)
    assert d.sum().item() == 4.0 and d.tolist() == [1.5, 2.5]
    assert bool(d.max() > 2) and int(d[0]) == 1
    assert "device='npu:0'" in repr(d) if dev == "npu" else True


def test_features_python_cannot_emulate_fail_clearly(dev):
    cases = [
        lambda: torch.randn(3).pin_memory(),
        lambda: torch.ones(3, device=dev).to_sparse(),
        lambda: torch.sparse_coo_tensor(torch.tensor([[0]]), torch.tensor([1.0]), (2,),
                                        device=dev),
        lambda: torch.ones(2, 2).to(dev, dtype=torch.float32).to_sparse_csr(),
    ]
    for case in cases:
        with pytest.raises(RuntimeError, match="not supported by the emulated device") as info:
            case()
        assert classify_exception(type(info.value).__name__, str(info.value))[1].value == \
            "emulator_limit"  # the emulator's own gap, not the chip's (issue 18)
    assert isinstance(torch.Generator(), torch.Generator)
    assert isinstance(torch.default_generator, torch.Generator)
    g = torch.Generator().manual_seed(1)
    assert torch.rand(2, generator=g).shape == (2,)


def test_pinned_factory_is_classified_by_the_adapter(dev):
    from torchparity.devices.emulated import EmulatedAdapter

    with pytest.raises(Exception) as info:
        torch.empty(3, pin_memory=True)
    rows = EmulatedAdapter("emu:allow-all", "allow-all").error_patterns()
    status, cause = classify_exception(type(info.value).__name__, str(info.value), rows)
    assert (status.value, cause.value) == ("skip", "emulator_limit")


def test_default_device_context(dev):
    # the emulator's own CPU scratch tensors must not follow the default device
    with torch.device(dev):
        x = torch.ones(3) + 1
        rem = torch.remainder(torch.arange(5), 2)
        out = torch.empty(0)
        torch.add(x, x, out=out)
        grown = torch.ones(2).resize_(10)
        y = torch.rand(4, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(torch.sin, (y,), fast_mode=True)
    assert x.device.type == dev and same(x, torch.full((3,), 2.0))
    assert same(rem, torch.tensor([0, 1, 0, 1, 0]))
    assert same(out, torch.full((3,), 4.0))
    assert grown.shape == (10,) and grown.device.type == dev and y.device.type == dev


def test_a_cpu_result_in_an_input_s_memory_becomes_an_alias(dev):
    from torchparity.devices.emulator.dispatch import fallback

    x = torch.arange(6.0).to(dev)
    for op, args in [(torch.ops.aten.alias.default, ()),
                     (torch.ops.aten.select.int, (0, 2)),
                     (torch.ops.aten.split.Tensor, (2,))]:
        out = fallback(op, x, *args)
        first = out[1] if isinstance(out, list) else out
        assert first.untyped_storage()._cdata == x.untyped_storage()._cdata  # one storage
        first.add_(100)
    assert same(x, torch.tensor([100.0, 101.0, 302.0, 203.0, 104.0, 105.0]))


@pytest.mark.parametrize("fast_view", [True, False], ids=["view kernel", "general path"])
def test_out_of_bounds_as_strided_is_refused_as_the_cpu_refuses_it(dev, fast_view):
    """A strided view past the storage is refused with the CPU's message (the Meta kernel
    alone made it, and reading it read host memory that was not the tensor's); views
    within the storage, offsets included, still work."""
    from torchparity.devices.emulator import dispatch

    plans = [dispatch.plan_for(op) for op in (torch.ops.aten.as_strided.default,
                                                torch.ops.aten._reshape_alias.default)]
    saved = [p.view for p in plans]
    for p in plans:
        p.view = fast_view
    try:
        base = torch.arange(16.0)
        x = base.to(dev)
        for args in [((10, 10), (10, 1)), ((4, 4), (4, 1), 1), ((2,), (1,), 15)]:
            with pytest.raises(RuntimeError) as cpu_exc:
                torch.as_strided(base, *args)
            with pytest.raises(RuntimeError) as dev_exc:
                torch.as_strided(x, *args)
            assert str(dev_exc.value) == str(cpu_exc.value)
            assert "out of bounds for storage of size 64" in str(dev_exc.value)
        with pytest.raises(RuntimeError, match="out of bounds"):
            torch.ops.aten._reshape_alias(x, (5, 4), (4, 1))
        for args in [((2, 2), (1, 4)), ((2,), (1,), 14), ((0,), (1,), 100), ((4, 4), (4, 1), 0)]:
            assert same(torch.as_strided(x, *args), torch.as_strided(base, *args))
        assert same(torch.as_strided(x[1:], (4,), (1,)), torch.as_strided(base[1:], (4,), (1,)))
    finally:
        for p, v in zip(plans, saved):
            p.view = v
