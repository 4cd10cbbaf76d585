"""Memory stays flat: host memory is freed with the last alias, the fallback makes no
reference cycles (a cycle would keep buffers alive until the garbage collector runs)."""

from __future__ import annotations

import gc
import os

import pytest
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


@pytest.mark.slow  # 7-13 s: run by .ci/run in the slow suite, keeping the default run under 10 min
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


def test_memory_counters_count_allocations_and_free_with_the_last_alias(dev):
    mod = torch.get_device_module(dev)
    gc.collect()
    base = mod.memory_allocated()
    blocks = mod.memory_stats()["allocation.all.current"]
    x = torch.zeros(1024, device=dev)
    assert mod.memory_allocated() == base + 4096
    assert mod.memory_stats()["allocation.all.current"] == blocks + 1
    view = x[10:].detach()
    del x
    assert mod.memory_allocated() == base + 4096  # the view keeps the storage
    assert (view + 1).sum().item() == (view.cpu() + 1).sum().item()  # results come and go
    del view
    assert mod.memory_allocated() == base
    assert mod.memory_stats()["allocation.all.current"] == blocks
    mod.reset_peak_memory_stats()
    assert mod.max_memory_allocated() == base
    y = torch.ones(256, device=dev)
    del y
    assert mod.max_memory_allocated() >= base + 1024
    assert mod.memory_allocated() == base


def test_a_storage_slice_of_device_memory_reads_the_same_bytes(dev):
    x = torch.arange(8, dtype=torch.float32, device=dev)
    part = x.untyped_storage()[0:16]  # made by C++ over the device pointer (at::from_blob)
    back = torch.empty(0, device=dev).set_(part, 0, [4], [1])
    assert back.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
