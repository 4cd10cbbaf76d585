"""Registration: support_problem, activate (once per process), the torch.<device> module."""

from __future__ import annotations

import pytest
import torch

from torchparity.devices.emulator import activate, active_profile, is_active, support_problem
from torchparity.devices.profiles import Profile, load_profile

from .helpers import run_python


def test_support_problem_is_none_on_this_torch(dev):
    assert support_problem() is None


def test_support_problem_names_a_missing_torch_feature(dev, monkeypatch):
    monkeypatch.delattr(torch._C, "_construct_storage_from_data_pointer")
    problem = support_problem()
    assert problem is not None and "_construct_storage_from_data_pointer" in problem
    assert "\n" not in problem


def test_activate_is_idempotent_and_refuses_a_second_profile(dev):
    assert is_active() and active_profile().name == "allow-all"
    activate(load_profile("allow-all"))  # same profile: nothing happens
    other = Profile(name="other", device_type="npu", ops={"aten.dot": {"dtypes": ["float32"]}})
    with pytest.raises(RuntimeError, match="already active with profile 'allow-all'"):
        activate(other)
    assert active_profile().name == "allow-all"
    assert "already hosts the emulated device with profile 'allow-all'" in support_problem(other)
    assert support_problem(load_profile("allow-all")) is None


def test_device_module(dev):
    mod = getattr(torch, dev)
    assert mod.is_available() and mod.is_initialized()
    assert mod.device_count() == 1 and mod.current_device() == 0
    assert mod.synchronize() is None
    assert "allow-all" in mod.get_device_name()
    with mod.device(0):
        t = torch.ones(2, device=dev)
    assert t.device == torch.device(dev, 0)
    with pytest.raises(RuntimeError, match="one device"):
        mod.set_device(1)
    with pytest.raises(RuntimeError, match="index 0"):
        torch.ones(2, device=f"{dev}:1")
    assert torch.ones(1).to(dev).is_npu if dev == "npu" else True
    assert torch.accelerator.current_accelerator().type == dev
    assert torch.accelerator.device_count() == 1
    assert torch.accelerator.synchronize() is None
    assert torch.get_device_module(dev) is mod


def test_manual_seed_seeds_the_device_like_the_cpu(dev):
    torch.manual_seed(7)
    on_device = torch.rand(5, device=dev)
    torch.manual_seed(7)
    on_cpu = torch.rand(5)
    assert torch.equal(on_device.cpu(), on_cpu)
    getattr(torch, dev).manual_seed(3)
    a = torch.randn(4, device=dev)
    state = getattr(torch, dev).get_rng_state()
    b = torch.randn(4, device=dev)
    getattr(torch, dev).set_rng_state(state)
    assert torch.equal(torch.randn(4, device=dev).cpu(), b.cpu())
    assert not torch.equal(a.cpu(), b.cpu())


def test_nothing_is_registered_until_a_device_is_asked_for(tmp_path):
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        adapter = get_adapter("emu:allow-all")
        assert adapter.unavailable_reason() is None
        print(torch._C._get_privateuse1_backend_name(), hasattr(torch, "npu"))
        adapter.setup()
        adapter.setup()
        print(torch._C._get_privateuse1_backend_name(), torch.npu.is_available(),
              torch.ones(2, device=adapter.torch_device).device)
        """, tmp_path)
    assert out.split("\n")[:2] == ["privateuseone False", "npu True npu:0"]


def test_refuses_to_coexist_with_torch_npu(tmp_path):
    out = run_python("""
        import sys, types
        sys.modules["torch_npu"] = types.ModuleType("torch_npu")
        from torchparity.devices.emulator import activate
        from torchparity.devices.profiles import load_profile
        try:
            activate(load_profile("allow-all"))
        except RuntimeError as exc:
            print(exc)
        import torch
        print(torch._C._get_privateuse1_backend_name())
        """, tmp_path)
    assert "torch_npu is loaded" in out and out.strip().endswith("privateuseone")


def test_activation_after_a_backward_is_one_clear_error(tmp_path):
    from .helpers import run_python

    code = (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True); (x * 2).sum().backward()\n"
        "from torchparity.devices import get_adapter\n"
        "try:\n"
        "    get_adapter('emu:allow-all').setup()\n"
        "except RuntimeError as exc:\n"
        "    print('ERR', exc)\n"
    )
    out = run_python(code, tmp_path)
    assert "ERR emu: an autograd backward ran in this process before" in out
