"""Autograd on the emulated device: backward, forward AD, gradcheck, threads."""

from __future__ import annotations

import copy
import threading

import pytest
import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd import gradcheck, gradgradcheck


def test_backward_matches_the_cpu(dev):
    torch.manual_seed(0)
    x0, w0 = torch.randn(5, 4), torch.randn(4, 3)

    def run(device):
        x = x0.to(device).detach().requires_grad_()
        w = w0.to(device).requires_grad_()
        y = torch.tanh(x @ w).logsumexp(1).sum()
        y.backward(retain_graph=True)
        y.backward()  # gradients accumulate
        (gx,) = torch.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
        (ggx,) = torch.autograd.grad(gx.sum(), x)
        return y, x.grad, w.grad, ggx

    for a, b in zip(run(dev), run("cpu")):
        assert a.device.type == dev
        torch.testing.assert_close(a.cpu(), b)


def test_forward_ad(dev):
    p, t = torch.rand(4), torch.rand(4)
    with fwAD.dual_level():
        dual = fwAD.make_dual(p.to(dev), t.to(dev))
        out = fwAD.unpack_dual(dual.sin() * dual)
        plain = fwAD.unpack_dual(p.to(dev))
    assert out.primal.device.type == dev and out.tangent.device.type == dev
    torch.testing.assert_close(out.primal.cpu(), p.sin() * p)
    torch.testing.assert_close(out.tangent.cpu(), (p.cos() * p + p.sin()) * t)
    assert plain.tangent is None


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_and_gradgradcheck(dev, fast_mode):
    x = torch.rand(6, dtype=torch.float64).to(dev).requires_grad_()
    y = torch.rand(6, dtype=torch.float64).to(dev).requires_grad_()

    def f(a, b):
        return torch.sin(a) * b.exp(), (a * b).sum()

    assert gradcheck(f, (x, y), fast_mode=fast_mode)
    assert gradgradcheck(f, (x, y), fast_mode=fast_mode)


def test_gradcheck_options(dev):
    x = torch.rand(5, dtype=torch.float64).to(dev).requires_grad_()
    assert gradcheck(torch.sin, (x,), check_batched_grad=True, fast_mode=False)
    assert gradcheck(torch.exp, (x,), check_forward_ad=True, fast_mode=False)
    assert gradcheck(lambda a: (a * 2, a.sin()), (x,), check_undefined_grad=True)
    assert gradgradcheck(torch.exp, (x,), check_fwd_over_rev=True, fast_mode=False)

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    assert not gradcheck(Wrong.apply, (x,), raise_exception=False)


def test_threads_run_forward_and_backward_concurrently(dev):
    torch.manual_seed(0)
    inputs = [torch.randn(8, 8) for _ in range(6)]

    def work(x0):
        x = x0.to(dev).requires_grad_()
        y = (x @ x.t()).relu().sum()
        y.backward()
        return y.detach().cpu(), x.grad.cpu()

    expected = []
    for x0 in inputs:
        x = x0.clone().requires_grad_()
        y = (x @ x.t()).relu().sum()
        y.backward()
        expected.append((y.detach(), x.grad))
    results, errors = {}, []

    def thread(i):
        try:
            for _ in range(20):
                results[i] = work(inputs[i])
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=thread, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, (y, g) in enumerate(expected):
        torch.testing.assert_close(results[i][0], y)
        torch.testing.assert_close(results[i][1], g)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("bias", [True, False])
def test_recurrent_layers_use_the_fused_cells(dev, kind, bias):
    torch.manual_seed(0)
    layer = getattr(torch.nn, kind)(3, 4, num_layers=2, bias=bias, batch_first=True)
    x0 = torch.randn(2, 5, 3)

    def run(device, create_graph):
        net = copy.deepcopy(layer).to(device)
        x = x0.to(device).detach().requires_grad_()
        out, _ = net(x)
        loss = (out * out).sum()
        grads = torch.autograd.grad(loss, [x] + list(net.parameters()), create_graph=create_graph)
        if create_graph:  # the differentiable (non-fused) backward path
            grads = torch.autograd.grad(sum(g.sum() for g in grads), x)
        return [out] + list(grads)

    for create_graph in (False, True):
        for a, b in zip(run(dev, create_graph), run("cpu", create_graph)):
            assert a.device.type == dev
            torch.testing.assert_close(a.cpu(), b, atol=1e-5, rtol=1e-4)


@pytest.mark.skipif(not hasattr(torch.nn.functional, "linear_cross_entropy"),
                    reason="this torch has no torch.nn.functional.linear_cross_entropy")
def test_same_path_same_bits_other_path_other_bits(dev):
    """The emulated device computes what the CPU computes when an API takes the same path:
    linear_cross_entropy's gradients are bit-identical under one explicit policy and
    differ only under ``auto``, which picks the policy by device type."""
    from torch.nn import LinearCrossEntropyOptions as Options

    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(64, 16, generator=gen, dtype=torch.float64).half()
    w0 = torch.randn(200, 16, generator=gen, dtype=torch.float64).half()
    target = torch.randint(0, 200, (64,), generator=gen)

    def grad(device, options):
        x = x0.to(device).detach().requires_grad_()
        torch.nn.functional.linear_cross_entropy(x, w0.to(device), target.to(device), options=options).backward()
        return x.grad.cpu()

    for explicit in (Options(acc_policy="accurate", acc_dtype=torch.float32), Options(acc_policy="compact")):
        assert torch.equal(grad("cpu", explicit), grad(dev, explicit))
    assert not torch.equal(grad("cpu", Options()), grad(dev, Options()))
