"""Profile enforcement, build options and numerics, each in a process of its own."""

from __future__ import annotations

import pytest
import torch

from torchparity.devices.emulator.checks import rule_for
from torchparity.devices.emulator.numerics import round_mantissa
from torchparity.devices.profiles import Profile

from .helpers import run_python

RESTRICTED = """\
name: test-restricted
device_type: npu
ops:
  aten.dot: {dtypes: [float16, bfloat16, float32]}
  aten.linalg_vector_norm: {dtypes: [float16, bfloat16, float32]}
  aten.hypot.default: {dtypes: [float32]}
  aten.empty:  # everything but complex128
    dtypes: [bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
             complex64]
  aten.mm: {supported: false}
features:
  itt: false
  autocast: false
"""


def test_restricted_profile(tmp_path):
    out = run_python("""
        import torch
        from torch.autograd.profiler import emit_itt
        from torchparity.results.error_rules import classify_exception

        def outcome(fn):
            try:
                fn()
                return "ok"
            except Exception as exc:
                verdict = classify_exception(type(exc).__name__, str(exc))
                cause = verdict[1].value if verdict else "unclassified"
                return f"{cause}: {exc}".splitlines()[0]

        d64 = torch.rand(4, dtype=torch.float64).to("npu")
        d32 = torch.rand(4).to("npu")
        print(outcome(lambda: torch.dot(d64, d64)))
        print(outcome(lambda: torch.dot(d32, d32)))
        print(outcome(lambda: torch.linalg.vector_norm(d64)))
        print(outcome(lambda: torch.mm(d32.view(2, 2), d32.view(2, 2))))
        print(outcome(lambda: torch.hypot(d64, d64)))
        print(outcome(lambda: d64.clone().hypot_(d64)))
        print(outcome(lambda: torch.empty(3, dtype=torch.complex128, device="npu")))
        print(outcome(lambda: torch.empty(3, dtype=torch.complex64, device="npu")))
        print(outcome(lambda: torch.dot(d64.cpu(), d64.cpu())))
        print(torch.profiler.itt.is_available())
        print(outcome(lambda: emit_itt(enabled=True).__enter__()))
        with emit_itt(enabled=False):
            print(outcome(lambda: d32 * 2))
        print(outcome(lambda: torch.autocast("npu", dtype=torch.float16).__enter__()))
        x = torch.rand(10, dtype=torch.float64).to("npu").requires_grad_()
        print(torch.autograd.gradcheck(lambda x: x.mul(5), (x,), fast_mode=False))
        print(outcome(lambda: torch.autograd.gradcheck(lambda x: x.mul(5), (x,),
                                                       fast_mode=True)))
        from torchparity.devices.emulator import activate
        from torchparity.devices.profiles import load_profile
        print(outcome(lambda: activate(load_profile("allow-all"))))
        """, tmp_path, RESTRICTED)
    lines = out.splitlines()
    assert lines == [
        "dtype_limit: \"dot_npu\" not implemented for 'Double'",
        "ok",
        "dtype_limit: \"linalg_vector_norm_npu\" not implemented for 'Double'",
        "no_kernel: Could not run 'aten::mm' with arguments from the 'PrivateUse1' backend. "
        "This could be because the operator doesn't exist for this backend",
        "dtype_limit: \"hypot_npu\" not implemented for 'Double'",
        "ok",  # aten.hypot_ is another op than aten.hypot.default
        "dtype_limit: \"empty_npu\" not implemented for 'ComplexDouble'",  # result dtype
        "ok",
        "ok",  # the CPU is never restricted
        "False",
        "build_config: Can't use ITT profiler - PyTorch was compiled without ITT",
        "ok",
        "feature_limit: autocast on 'npu' is not supported by the emulated device "
        "(profile 'test-restricted')",
        "True",
        # fast mode's own vector norm in float64 is refused first
        "dtype_limit: \"linalg_vector_norm_npu\" not implemented for 'Double'",
        "unclassified: emu: the emulated device is already active with profile "
        "'test-restricted' (device 'npu'); a process can host one profile, so run 'allow-all' "
        "in another process",
    ]


def test_default_deny_keeps_the_plumbing(tmp_path):
    out = run_python("""
        import torch
        x = torch.arange(6.0).to("npu").view(2, 3)
        print(x.cpu().sum().item(), x.t().contiguous().shape if False else "view ok")
        try:
            x + x
        except RuntimeError as exc:
            print(str(exc).splitlines()[0])
        """, tmp_path, """\
        name: deny
        device_type: npu
        default: deny
        ops:
          aten.mul: {}
        """)
    assert out.splitlines() == [
        "15.0 view ok",
        "Could not run 'aten::add' with arguments from the 'PrivateUse1' backend. This could "
        "be because the operator doesn't exist for this backend"]


def test_reduced_precision_numerics(tmp_path):
    out = run_python("""
        import torch
        from torchparity.devices.emulator.numerics import round_mantissa
        torch.manual_seed(0)
        a, b = torch.randn(16, 32), torch.randn(32, 8)
        dev = (a.to("npu") @ b.to("npu")).cpu()
        expected = round_mantissa(a, 10) @ round_mantissa(b, 10)
        print(torch.equal(dev, expected), torch.equal(dev, a @ b))
        d = a.double()
        print(torch.equal((d.to("npu") @ d.t().to("npu")).cpu(), d @ d.t()))
        print(torch.equal((a.to("npu") + 1).cpu(), a + 1))
        """, tmp_path, """\
        name: hf32
        device_type: npu
        numerics:
          reduced_precision_ops: {aten.mm: [float32]}
          mantissa_bits: 10
        """)
    assert out.split() == ["True", "False", "True", "True"]


def test_rules_agree_with_profile_allows():
    profile = Profile.model_validate({
        "name": "p", "device_type": "npu",
        "ops": {"aten.dot": {"dtypes": ["float32"]}, "aten.add.Tensor": {"dtypes": ["int64"]},
                "aten.mm": {"supported": False}, "aten.sum": {}}})
    aten = torch.ops.aten
    cases = [(aten.dot.default, "aten.dot.default"), (aten.add.Tensor, "aten.add.Tensor"),
             (aten.add.Scalar, "aten.add.Scalar"), (aten.mm.default, "aten.mm.default"),
             (aten.sum.default, "aten.sum.default"), (aten.sin.default, "aten.sin.default")]
    for op, name in cases:
        rule = rule_for(profile, op, "npu")
        for dtype in (torch.float32, torch.float64, torch.int64):
            allowed = profile.allows(name, str(dtype)[6:])
            if rule is None:
                assert allowed, name
                continue
            try:
                rule.check(dtype)
                refused = False
            except RuntimeError:
                refused = True
            assert refused == (not allowed), (name, dtype)


@pytest.mark.parametrize("value,bits,expected", [
    (1.0 + 2.0 ** -11, 10, 1.0),  # below half an ulp: down
    (1.0 + 3 * 2.0 ** -11, 10, 1.0 + 2.0 ** -9),  # above: up
    (1.0 + 2.0 ** -10 + 2.0 ** -11, 10, 1.0 + 2.0 ** -9),  # tie, odd: to even (up)
    (1.0 + 2.0 ** -11 + 0.0, 10, 1.0),  # tie, even: stays
    (-(1.0 + 3 * 2.0 ** -11), 10, -(1.0 + 2.0 ** -9)),
    (float("inf"), 10, float("inf")),
])
def test_round_mantissa(value, bits, expected):
    t = torch.tensor([value], dtype=torch.float32)
    assert round_mantissa(t, bits).item() == expected
    assert torch.isnan(round_mantissa(torch.tensor([float("nan")]), bits)).all()


def test_trace_sees_the_ops_that_reach_the_device_after_decomposition(dev):
    from torchparity.devices.emulator import trace_ops

    x = torch.rand(3, dtype=torch.float64).to(dev)
    with trace_ops() as seen:
        torch.allclose(x, x)
    # allclose arrives decomposed: these are what a profile is asked about
    assert ("aten.ne", "float64") in seen and ("aten.isclose", "float64") not in seen
    with trace_ops() as factory:
        torch.eye(3, dtype=torch.float64, device=dev)
    # a factory with the dtype its check sees: that of its result
    assert ("aten.eye", "float64") in factory and ("aten.eye", "") not in factory
    with trace_ops() as later:
        pass
    assert later == set()  # nothing leaks from one trace to the next


def test_real_adapters_cannot_trace():
    from torchparity.devices import get_adapter

    with get_adapter("cpu").trace_ops() as seen:
        assert seen is None
