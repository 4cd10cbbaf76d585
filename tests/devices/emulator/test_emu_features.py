"""Features around kernels with the allow-all profile: autocast, ITT built in."""

from __future__ import annotations

import pytest
import torch

from .helpers import run_python


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


def test_nested_tensors_refused_cleanly_not_a_dead_process(tmp_path):
    """A device nested tensor (strided layout) that requires grad once killed the process
    at its first view: autograd asks ``_nested_tensor_size`` where an exception cannot
    propagate. Its metadata now answers, and its ops are refused as a feature limit; the
    jagged layout runs. In a subprocess: the old behaviour is SIGABRT."""
    out = run_python("""
        from torchparity.results.error_rules import classify_exception
        dev = PROFILE.device_type
        a, b = torch.arange(3.0), torch.arange(5.0)
        def made_on_device():
            return torch.nested.nested_tensor([a.to(dev), b.to(dev)], requires_grad=True)
        cases = [
            lambda: made_on_device().unbind(),
            lambda: torch.nested.nested_tensor([a, b], device=dev, requires_grad=True).unbind(),
            lambda: torch.nested.as_nested_tensor([a.to(dev), b.to(dev)]) + 1,
            lambda: torch.nested.nested_tensor([a, b], requires_grad=True).to(dev),
        ]
        nt = made_on_device()
        print("leaf", nt.is_leaf, nt.is_nested, nt.dim(), nt.size(0))
        for case in cases:
            try:
                case()
                print("ran")
            except RuntimeError as exc:
                print(type(exc).__name__, classify_exception(type(exc).__name__, str(exc))[1].value)
        j = torch.nested.nested_tensor([a.to(dev), b.to(dev)], layout=torch.jagged)
        print("jagged", j.values().device.type == dev, float(j.values().sum()))
        """, tmp_path, profile_yaml="""
        name: nested-test
        device_type: npu
        """)
    lines = out.splitlines()
    assert lines[0] == "leaf True True 2 2"
    assert lines[1:5] == ["EmulatorFeatureError emulator_limit"] * 4
    assert lines[5] == "jagged True 13.0"


def test_record_stream_is_accepted_also_inside_backward(tmp_path):
    """FSDP's hooks call ``Tensor.record_stream`` during backward. Without a kernel the CPU
    fallback refused it, and that refusal, raised on the autograd engine's thread, ended
    the process (SIGABRT). torch_npu accepts it; the emulated device (synchronous streams,
    no cache) has nothing to note. In a subprocess: the old behaviour is an abort."""
    out = run_python("""
        dev = PROFILE.device_type
        x = torch.ones(2).to(dev).requires_grad_()
        s = torch.get_device_module(dev).Stream()
        x.record_stream(s)
        def hook(g):
            x.record_stream(s)
            return g * 3
        y = x * 2
        y.register_hook(hook)
        y.sum().backward()
        print("grad", x.grad.cpu().tolist())
        """, tmp_path, profile_yaml="""
        name: stream-test
        device_type: npu
        """)
    assert out.strip() == "grad [6.0, 6.0]"


@pytest.mark.parametrize("dynamo_first", [False, True])  # dynamo loaded after / before the device
def test_compiled_modules_on_the_device_do_not_compile_the_emulators_own_frames(tmp_path, dynamo_first):
    """A real device's kernels are native code dynamo never sees; the emulator's are Python
    frames called while a compiled graph runs. Module.compile(backend="eager") of one Linear
    on the emulated device took 7 s (dynamo compiling 39 emulator frames) against 0.05 s on
    the CPU: the whole vendor list paid 45 s per dtype for torch.nn.Module.compile."""
    out = run_python(f"""
        import time, torch
        if {dynamo_first}:
            import torch._dynamo
        from torchparity.devices import get_adapter
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        def first_call(device):
            torch._dynamo.reset()
            torch.manual_seed(0)
            net = torch.nn.Sequential(torch.nn.Linear(4, 3)).to(device)
            x = torch.randn(5, 4).to(device)
            net.compile(backend="eager")
            start = time.perf_counter()
            y = net(x)
            return time.perf_counter() - start, y.cpu()
        cpu, y_cpu = first_call("cpu")
        dev, y_dev = first_call(adapter.torch_device)
        torch.testing.assert_close(y_dev, y_cpu)
        import torch._dynamo.trace_rules as rules
        print("skipped", any("emulator" in d for d in rules.SKIP_DIRS))
        print("ratio", cpu, dev)
        """, tmp_path, timeout=240)
    assert "skipped True" in out
    cpu, dev = map(float, out.split("ratio")[-1].split())
    assert dev < 5 * cpu + 0.5, out
