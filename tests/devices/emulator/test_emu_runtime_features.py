"""Runtime features a real torch_npu has and the emulator provides on the host (issue 20):
``UntypedStorage.resize_`` on a device storage, ``torch.Generator(device=<emu>)``,
``caching_allocator_alloc/delete``. Each behaves as the CPU's counterpart does, and the
injected faults still act on what goes through it."""

from __future__ import annotations

import pickle

import pytest
import torch

from torchparity.devices.emulator import faults


def _storage_bytes(s: torch.UntypedStorage) -> bytes:
    return bytes(s.cpu().tolist()) if s.device.type != "cpu" else bytes(s.tolist())


def test_storage_resize_keeps_bytes_like_the_cpu(dev):
    host = torch.arange(12, dtype=torch.float32)
    d = host.to(dev)
    cs, ds = host.clone().untyped_storage(), d.untyped_storage()
    kept = 48
    for size in (20, 16, 64, 8, 0, 12):
        cs.resize_(size)
        assert ds.resize_(size) is ds
        assert ds.nbytes() == cs.nbytes() == size
        kept = min(kept, size)  # the bytes every step so far kept
        assert _storage_bytes(ds)[:kept] == _storage_bytes(cs)[:kept]
    assert kept == 0 and d.untyped_storage().nbytes() == 12  # the tensor's storage is resized
    assert _storage_bytes(host.to(dev).untyped_storage()) == _storage_bytes(host.untyped_storage())


def test_storage_resize_frees_and_reallocates_under_live_tensors(dev):
    # what FSDP's fully_shard does to an unsharded parameter: free it (resize_(0)), then
    # allocate again and copy the gathered values in, while the tensor object lives on
    p = torch.zeros(256, device=dev)
    storage = p.untyped_storage()
    before = torch.get_device_module(dev).memory_allocated()
    storage.resize_(0)
    assert torch.get_device_module(dev).memory_allocated() == before - 1024
    assert p.untyped_storage().nbytes() == 0
    storage.resize_(1024)
    assert torch.get_device_module(dev).memory_allocated() == before
    p.copy_(torch.arange(256.0))
    torch.testing.assert_close(p.cpu(), torch.arange(256.0))
    torch.testing.assert_close((p * 2).sum().cpu(), torch.tensor(65280.0))
    with pytest.raises(RuntimeError):
        storage.resize_(-1)


def test_storage_resize_result_still_sees_numeric_faults(dev):
    p = torch.ones(4, device=dev)
    p.untyped_storage().resize_(0)
    p.untyped_storage().resize_(16)
    p.fill_(1.0)
    with faults.injecting(["numeric-1e-2"]):
        out = (p + p).cpu()
    assert not torch.equal(out, torch.full((4,), 2.0))


RANDOM = [
    ("rand", lambda g, d: torch.rand(5, generator=g, device=d)),
    ("randn", lambda g, d: torch.randn(5, generator=g, device=d)),
    ("normal_", lambda g, d: torch.empty(5, device=d).normal_(generator=g)),
    ("bernoulli", lambda g, d: torch.bernoulli(torch.full((6,), 0.5, device=d), generator=g)),
    ("randperm", lambda g, d: torch.randperm(7, generator=g, device=d)),
    ("multinomial", lambda g, d: torch.multinomial(torch.ones(5, device=d), 3, generator=g)),
]


@pytest.mark.parametrize("name,draw", RANDOM, ids=[r[0] for r in RANDOM])
def test_device_generator_draws_as_the_cpu_generator(dev, name, draw):
    g = torch.Generator(device=dev)
    assert isinstance(g, torch.Generator) and g.device == torch.device(dev, 0)
    g.manual_seed(7)
    assert g.initial_seed() == 7
    device_draw = draw(g, dev)
    assert device_draw.device.type == dev
    torch.testing.assert_close(device_draw.cpu(), draw(torch.Generator().manual_seed(7), "cpu"))


def test_device_generator_state_round_trips(dev):
    g = torch.Generator(device=dev).manual_seed(3)
    state = g.get_state()
    a = torch.randn(4, generator=g, device=dev).cpu()
    assert not torch.equal(a, torch.randn(4, generator=g, device=dev).cpu())  # it advances
    g.set_state(state)
    assert torch.equal(a, torch.randn(4, generator=g, device=dev).cpu())
    g.set_state(state)
    twin = pickle.loads(pickle.dumps(g))
    assert twin.device == g.device
    assert torch.equal(torch.rand(3, generator=twin, device=dev).cpu(),
                       torch.rand(3, generator=g, device=dev).cpu())
    assert g.clone_state().device == g.device
    assert torch.Generator().device.type == "cpu"  # the CPU's generator is untouched
    with pytest.raises(RuntimeError, match="index 0"):
        torch.Generator(device=f"{dev}:1")


def test_device_generator_is_ignored_under_rng_unseeded(dev):
    with faults.injecting(["rng-unseeded"]):
        a = torch.randn(8, generator=torch.Generator(device=dev).manual_seed(1), device=dev)
        b = torch.randn(8, generator=torch.Generator(device=dev).manual_seed(1), device=dev)
    assert not torch.equal(a.cpu(), b.cpu())


def test_caching_allocator_alloc_is_counted_until_deleted(dev):
    mod = torch.get_device_module(dev)
    before = mod.memory_allocated()
    ptr = mod.caching_allocator_alloc(4096)
    assert isinstance(ptr, int) and ptr != 0
    assert mod.memory_allocated() == before + 4096
    mod.caching_allocator_alloc(0, device=0, stream=mod.current_stream())
    mod.caching_allocator_delete(ptr)
    assert mod.memory_allocated() == before
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        mod.caching_allocator_delete(ptr)
    with pytest.raises(TypeError):
        mod.caching_allocator_alloc(8, stream="s")


def test_caching_allocator_counts_under_memstat_zero(dev):
    mod = torch.get_device_module(dev)
    with faults.injecting(["memstat-zero"]):
        ptr = mod.caching_allocator_alloc(1024)
        assert mod.memory_allocated() == 0  # the fault's device bug
        mod.caching_allocator_delete(ptr)
