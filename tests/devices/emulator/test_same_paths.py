"""The CPU reference takes the implementation the device takes where torch picks one per
device: the emulated device composes attention from math ops (no fused choice is
registered for it), so its CPU reference must not run the CPU's fused flash kernel."""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from torchparity.devices import get_adapter
from torchparity.devices.paths import attention_is_math, forget_probes, same_paths


class _Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.add(func.__name__)
        return func(*args, **(kwargs or {}))


def _cpu_attention_ops():
    q = torch.ones(1, 1, 4, 4)
    with _Ops() as ops:
        torch.nn.functional.scaled_dot_product_attention(q, q, q)
    return ops.names


def test_emulated_attention_is_the_math_path(dev):
    forget_probes()
    assert attention_is_math(dev)
    assert any("flash_attention_for_cpu" in n for n in _cpu_attention_ops())  # the CPU's own choice


def test_the_reference_of_an_emulated_device_runs_the_math_attention(dev):
    adapter = get_adapter("emu:allow-all")
    adapter.setup()
    with adapter.reference():
        names = _cpu_attention_ops()
    assert not any("attention" in n for n in names), sorted(names)
    assert "bmm" in " ".join(names)
    with same_paths("cpu"):  # a CPU under test keeps its own path
        assert any("flash_attention_for_cpu" in n for n in _cpu_attention_ops())


def test_the_probe_draws_no_random_number(dev):
    forget_probes()
    torch.manual_seed(0)
    attention_is_math(dev)
    after = torch.randn(4)
    torch.manual_seed(0)
    assert torch.equal(after, torch.randn(4))
