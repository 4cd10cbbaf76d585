"""Vendor-registered composites: torch_npu registers its own ``aten.logsumexp`` (a
CompositeExplicitAutograd op in aten), so the op's own kernel rule decides, not the rules
of the ops aten's composite is made of (issue 20, "Registered composites")."""

from __future__ import annotations

from .helpers import run_python


def test_registered_composite_is_judged_by_its_own_rule(tmp_path):
    out = run_python("""
        import torch
        from torchparity.devices.emulator import activate
        from torchparity.devices.profiles import load_profile
        from torchparity.results.error_rules import classify_exception
        activate(load_profile("ascend-a2"))

        def outcome(fn):
            try:
                return fn()
            except Exception as exc:
                verdict = classify_exception(type(exc).__name__, str(exc))
                return f"{verdict[1].value if verdict else 'unclassified'}: {exc}".splitlines()[0]

        torch.manual_seed(0)
        c = torch.randn(3, 4, dtype=torch.complex64)
        x = torch.randn(3, 4)
        print(outcome(lambda: torch.logsumexp(c.to("npu"), 1)))
        print(outcome(lambda: torch.equal(torch.logsumexp(x.to("npu"), 1).cpu(), torch.logsumexp(x, 1))))
        # an implicit composite the vendor registers (aten.isclose): its rule, then its parts
        print(outcome(lambda: torch.isclose(x.to("npu"), x.to("npu")).all().item()))
        # autograd flows through a checked composite
        xd = x.to("npu").requires_grad_()
        torch.logsumexp(xd, 1).sum().backward()
        xc = x.clone().requires_grad_()
        torch.logsumexp(xc, 1).sum().backward()
        print(torch.equal(xd.grad.cpu(), xc.grad))
        print(outcome(lambda: torch.logsumexp(c, 1).dtype))  # the CPU is never restricted
        """, tmp_path)
    assert out.splitlines() == [
        # the NPU's words: aclnnLogSumExp's dtype check as torch_npu raises it (chips/messages.yaml)
        "dtype_limit: logsumexp: NPU function error: call aclnnLogSumExp failed, error code is 161002",
        "True", "True", "True", "torch.complex64"]


def test_a_composite_refused_by_its_rule_is_seen_by_the_footprint(tmp_path):
    """The rule runs above the dispatch modes, so without being told the recorder never saw
    the refused op: a scenario's own ``x @ x.T`` refused in float64 (aten.matmul, a
    registered implicit composite) was blamed on the API it surrounds."""
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        from torchparity.results.models import Text
        from torchparity.run.execute import execute
        from torchparity.scenarios.registry import Scenario

        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()

        def around_future(device, dtype):  # the API is Future.set_result; the matmul is the scenario's
            x = torch.randn(4, 3, dtype=dtype).to(device)
            f = torch.futures.Future()
            f.set_result(x @ x.T)
            return f.wait()

        def api_refused(device, dtype):  # here the API itself is the registered composite
            x = torch.randn(4, 3, dtype=dtype).to(device)
            return torch.matmul(x, x.T)

        t = Text(en="x", zh="x")
        for fn, api in ((around_future, torch.futures.Future.set_result), (api_refused, torch.matmul)):
            sc = Scenario(id="s", api="x", fn=fn, description=t, expected=t)
            result, entries = execute(sc, "float64", adapter, footprint=True, api_obj=api)
            print(result.status, result.cause, [e.source for e in entries if e.op == "aten.matmul"])
        """, tmp_path)
    assert out.splitlines() == ["skip not_comparable ['scenario']", "unsupported dtype_limit ['api']"]


def test_a_vendor_kernel_with_a_cpu_kernel_is_run_whole(tmp_path):
    """``mish_backward`` has a CPU kernel and a composite for other backends; torch_npu
    registers its own (aclnnMishBackward). The device runs it whole, as the CPU does, not
    the composite's bfloat16 parts (a correct device failed Mish under device noise)."""
    out = run_python("""
        import torch
        from torchparity.devices.emulator import activate
        from torchparity.devices.profiles import load_profile
        from torch.utils._python_dispatch import TorchDispatchMode
        activate(load_profile("ascend-a2"))

        class Ops(TorchDispatchMode):
            def __init__(self):
                super().__init__(); self.seen = []
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.seen.append(str(func)); return func(*args, **(kwargs or {}))

        torch.manual_seed(0)
        x = torch.randn(64, dtype=torch.bfloat16)
        grads = []
        for dev in ("cpu", "npu"):
            t = x.detach().clone().to(dev).requires_grad_()
            with Ops() as ops:
                torch.nn.functional.mish(t).sum().backward()
            grads.append(t.grad.cpu())
            print(dev, "aten.mish_backward.default" in ops.seen)
        print(torch.equal(grads[0], grads[1]))
        """, tmp_path)
    assert out.splitlines() == ["cpu True", "npu True", "True"]
