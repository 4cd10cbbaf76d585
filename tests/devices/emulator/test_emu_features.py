"""Features around kernels with the allow-all profile: autocast, ITT built in."""

from __future__ import annotations

import torch


def test_autocast_policies(dev):
    torch.manual_seed(0)
    a, b = torch.randn(4, 8), torch.randn(8, 3)
    for dtype in (torch.float16, torch.bfloat16):
        with torch.autocast(dev, dtype=dtype):
            mm = a.to(dev) @ b.to(dev)
            lin = torch.nn.functional.linear(a.to(dev), b.t().to(dev))
            soft = torch.softmax(mm, dim=1)
            added = mm + 1  # not listed: keeps its input dtype
            promoted = torch.cat([mm, a.to(dev)[:, :3]])
            double = a.double().to(dev) @ b.double().to(dev)  # float64 is never cast
        assert mm.dtype == dtype and lin.dtype == dtype
        assert soft.dtype == torch.float32 and added.dtype == dtype
        assert promoted.dtype == torch.float32 and double.dtype == torch.float64
        torch.testing.assert_close(mm.cpu(), a.to(dtype) @ b.to(dtype))
        assert torch.is_autocast_enabled(dev) is False


def test_autocast_backward(dev):
    w = torch.randn(3, 3).to(dev).requires_grad_()
    with torch.autocast(dev, dtype=torch.bfloat16):
        loss = (torch.ones(2, 3, device=dev) @ w).float().sum()
    loss.backward()
    assert w.grad.dtype == torch.float32 and w.grad.device.type == dev


def test_itt_built_in_with_allow_all(dev):
    from torch.autograd.profiler import emit_itt

    assert torch.profiler.itt.is_available() == torch._C._itt.is_available()
    a = torch.ones(3, device=dev, requires_grad=True)
    if torch._C._itt.is_available():
        with emit_itt(enabled=True, record_shapes=True):
            (a * 2).sum().backward()
        assert a.grad.sum().item() == 6.0


def test_grad_scaler(dev):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(dev, init_scale=1024.0)
    before = model.weight.detach().cpu().clone()
    with torch.autocast(dev, dtype=torch.float16):
        loss = model(torch.ones(2, 3, device=dev)).float().sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0
    assert torch.allclose(model.weight.detach().cpu(), before - 0.2, atol=1e-3)
