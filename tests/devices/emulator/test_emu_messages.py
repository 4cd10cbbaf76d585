"""The NPU's own words: an emulated refusal raises the message the NPU raises, with the
lines it comes from (devices/profiles/chips/messages.yaml; issue 44, item 2)."""

from __future__ import annotations

from types import SimpleNamespace

from torchparity.devices.emulator.checks import aclnn_dtype_name, wording_for
from torchparity.devices.profiles import load_profile, vendor_messages
from torchparity.results.error_rules import classify_exception, refused_kernels

from .helpers import run_python


def test_every_wording_carries_its_sources():
    words = vendor_messages("Ascend")
    assert words.aclnn_failure.sources and words.aclnn_dtype_check.sources
    assert all(f.source for f in words.kernel_form.values())
    assert all(c.sources and c.replaces for checks in words.arg_checks.values() for c in checks)
    assert any("op_error_check.h:108" in s for s in words.aclnn_dtype_check.sources)
    assert vendor_messages(None) is None and vendor_messages("nobody") is None


def test_which_words_a_refusal_takes():
    prof = load_profile("ascend-a2")
    kernel = SimpleNamespace(source="kernel aclnnIsClose: hicann/ops-math x.cpp:56@b6031bda9848",
                             dtypes=["float16", "float32"])
    text = wording_for(prof, "aten::isclose", "default", kernel).format(dt=aclnn_dtype_name("complex64"))
    assert text.startswith("isclose: NPU function error: call aclnnIsClose failed, error code is 161002")
    assert "Tensor self not implemented for DT_COMPLEX64, should be in dtype support list [DT_FLOAT16,DT_FLOAT]." in text
    # the fact's own message (op-plugin's text, where the extraction found one) comes first
    own = SimpleNamespace(source=kernel.source, dtypes=["float32"], message="upsample only supports float32")
    assert wording_for(prof, "aten::isclose", "default", own) == "upsample only supports float32"
    # op-plugin's own check in c10's form
    form = wording_for(prof, "aten::round", "decimals", SimpleNamespace(source=kernel.source, dtypes=["float32"]))
    assert form.format(dtype="Bool") == "\"round_npu\" not implemented for 'Bool'"
    # no kernel cited (a docs fact) or a profile of no known vendor: the profile's template
    assert wording_for(prof, "aten::isclose", "default", SimpleNamespace(source="docs: torch.isclose", dtypes=[])) is None
    assert wording_for(SimpleNamespace(vendor=None), "aten::isclose", "default", kernel) is None


def test_the_npus_words_are_read_back_as_the_refusal_they_are():
    msg = ("isclose: NPU function error: call aclnnIsClose failed, error code is 161002\n"
           "[ERROR] ERR00100 PTA call acl api failed.\n"
           "AclNN_Parameter_Error(EZ1001): Tensor self not implemented for DT_COMPLEX64, should be in dtype "
           "support list [DT_FLOAT].")
    assert refused_kernels(msg) == [("isclose", "ComplexFloat", "aclnnIsClose")]
    assert refused_kernels("\"dot_npu\" not implemented for 'Double'") == [("dot", "Double", None)]
    assert classify_exception("RuntimeError", msg)[1].value == "dtype_limit"


def test_the_emulated_a2_raises_the_npus_words(tmp_path):
    """isclose in complex64 (aclnn's check), round(decimals) of a bool (op-plugin's own
    check), nll_loss with a weight for the wrong number of classes (aclnnNLLLoss's check,
    where op-plugin runs none of torch's): the NPU's words, never the CPU kernel's; the
    CPU itself keeps its own."""
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        get_adapter("emu:ascend-a2").setup()

        def said(fn):
            try:
                fn()
                return "ok"
            except RuntimeError as exc:
                return str(exc).replace("\\n", " | ")

        c = torch.ones(2, dtype=torch.complex64, device="npu")
        print(said(lambda: torch.isclose(c, c)))
        print(said(lambda: torch.round(torch.ones(2, dtype=torch.bool, device="npu"), decimals=1)))
        x = torch.randn(10, 3, device="npu")
        t = torch.zeros(10, dtype=torch.int64, device="npu")
        print(said(lambda: torch.nn.functional.nll_loss(x, t, weight=torch.randn(4, device="npu"))))
        print(said(lambda: torch.nn.functional.nll_loss(x, t, weight=torch.ones(3, device="npu"))))
        print(said(lambda: torch.nn.functional.nll_loss(x.cpu(), t.cpu(), weight=torch.randn(4))))
        """, tmp_path)
    isclose, rnd, nll, nll_ok, cpu = out.splitlines()
    assert isclose.startswith("isclose: NPU function error: call aclnnIsClose failed, error code is 161002 | ")
    assert "AclNN_Parameter_Error(EZ1001): Tensor self not implemented for DT_COMPLEX64" in isclose
    assert rnd == "\"round_npu\" not implemented for 'Bool'"
    assert nll == ("nll_loss_forward: NPU function error: call aclnnNLLLoss failed, error code is 161002 | "
                   "[ERROR] ERR00100 PTA call acl api failed. | AclNN_Parameter_Error(EZ1001): Weight tensor "
                   "should be defined for all 3 classes but got weight tensor of shape: [4]")
    assert nll_ok == "ok"
    assert cpu.startswith("weight tensor should be defined either for all 3 classes or no classes")
