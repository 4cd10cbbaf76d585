"""Memory stays flat: host memory is freed with the last alias, the fallback makes no
reference cycles (a cycle would keep buffers alive until the garbage collector runs)."""

from __future__ import annotations

import gc
import os

import torch


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _churn(dev: str, n: int) -> None:
    for _ in range(n):
        a = torch.empty(64, device=dev)
        b = a.view(8, 8)[1]
        b.add_(1)
        del a, b


def test_no_memory_growth_over_100k_small_allocations(dev):
    _churn(dev, 5000)  # warm up: plan caches, allocator pools
    gc.collect()
    before = _rss_bytes()
    _churn(dev, 100_000)
    gc.collect()
    growth = _rss_bytes() - before
    assert growth < 16 * 2 ** 20, f"RSS grew by {growth / 2 ** 20:.1f} MiB"


def test_the_fallback_creates_no_reference_cycles(dev):
    x = torch.randn(16, 16).to(dev).requires_grad_()
    for _ in range(3):  # warm up
        (x * x).sum().backward()
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            y = torch.mm(x, x).relu()[0].sum()
            y.backward()
            torch.add(x.detach(), 1, out=torch.empty(0, device=dev))
            del y
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0


def test_host_memory_is_freed_with_the_last_alias(dev):
    big = 32 * 2 ** 20
    gc.collect()
    base = _rss_bytes()
    x = torch.ones(big // 4, device=dev)
    view = x[10:].detach()
    del x
    assert _rss_bytes() - base > big // 2  # still held by the view
    assert view[0].item() == 1.0
    del view
    gc.collect()
    assert _rss_bytes() - base < big // 4
