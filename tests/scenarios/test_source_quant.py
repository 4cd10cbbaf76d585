"""The ``quant`` source (torch.ao quantization) on real APIs: the CPU against itself, and
emu:ascend-a2 in a subprocess (a process hosts one emulator profile)."""

from __future__ import annotations

import warnings

import pytest

from tests.devices.emulator.helpers import run_python
from torchparity.run.execute import execute
from torchparity.scenarios.sources import offer, quant

P = "torch.ao.quantization."


@pytest.mark.parametrize("api", [
    P + "observer.MinMaxObserver",
    P + "fake_quantize.FakeQuantize",
    P + "prepare_qat",
    P + "qconfig_mapping.QConfigMapping.set_object_type",
    "torch.ao.nn.intrinsic.qat.ConvBnReLU2d",
])
def test_real_api_passes_cpu_against_cpu(api, cpu):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scs = quant.scenarios(api, None)
        rows = [(sc.id, dt, execute(sc, dt, cpu)[0]) for sc in scs for dt in sc.dtypes]
    assert scs and all(sc.source == "quant" and sc.api == api for sc in scs)
    assert [(i, dt, r.status, r.detail) for i, dt, r in rows if r.status != "pass"] == []


def test_the_block_uses_the_device_and_returns_what_the_api_computed():
    sc = quant.scenarios(P + "observer.MinMaxObserver.calculate_qparams", None)[0]
    assert "observe(Q.MinMaxObserver(" in sc.code and ".to(device)" in sc.code
    import torch

    torch.manual_seed(0)
    scale, zero_point = sc.fn("cpu", torch.float32)
    torch.manual_seed(0)
    x = torch.randn(4, 8)  # the block's input
    assert float(scale) == pytest.approx(float(x.abs().max()) / 127.5, rel=1e-6)
    assert int(zero_point) == 0


def test_other_apis_get_nothing_and_a_reason():
    assert quant.scenarios("torch.add", None) == []
    assert quant.why_not("torch.add", None) == "not a torch.ao API"
    assert quant.why_not("torch.ao.quantization.quantize_fx.no_such", None).startswith("no case")
    found = offer(P + "observer.MinMaxObserver", None)
    assert found.tried["quant"] == "1 scenario(s)"


def test_on_the_emulated_ascend_a2(tmp_path):
    """Observers and QAT pass on the device; float64 histograms are refused as the A2
    kernel list says (histc); a convert to quantized tensors meets the emulator's limit;
    PerChannelMinMaxObserver.reset_min_max_vals leaves its buffers on the CPU (torch), so
    calculate_qparams mixes devices."""
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.scenarios.sources import quant
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        P = "torch.ao.quantization."
        for api, dt in [(P + "observer.MinMaxObserver", "float32"), (P + "prepare_qat", "float32"),
                        (P + "observer.HistogramObserver", "float64"), (P + "convert", "float32"),
                        (P + "observer.PerChannelMinMaxObserver.reset_min_max_vals", "float32")]:
            (sc,) = quant.scenarios(api, None)
            r, _ = execute(sc, dt, adapter)
            print(api.rsplit(".", 1)[-1], dt, r.status, r.cause, r.emulated, r.detail.splitlines()[0][:160])
        """, tmp_path, timeout=400)
    lines = {ln.split()[0] + " " + ln.split()[1]: ln for ln in out.splitlines() if ln.strip()}
    assert "pass None True" in lines["MinMaxObserver float32"]
    assert "pass None True" in lines["prepare_qat float32"]
    assert "unsupported dtype_limit True" in lines["HistogramObserver float64"]
    # the NPU's words (chips/messages.yaml): aclnnHistc's dtype check as torch_npu raises it
    assert "histc: NPU function error: call aclnnHistc failed" in lines["HistogramObserver float64"]
    assert "skip emulator_limit True" in lines["convert float32"]  # the emulator's gap, no answer
    assert "quantized tensor is not supported by the emulated device" in lines["convert float32"]
    assert "error device_error True" in lines["reset_min_max_vals float32"]


def test_every_case_is_a_listed_api_of_the_shipped_docs():
    # a key mistyped in a table would be a case no listed API ever asks for
    from pathlib import Path

    from torchparity.evidence.vendor_docs import load_vendor_docs

    docs = Path(__file__).resolve().parents[1] / "data" / "ascend-native-api-docs"
    listed = {e.name for e in load_vendor_docs(str(docs), "2.13.0").entries if e.name.startswith("torch.ao.")}
    assert set(quant.members()) <= listed
    assert len(quant.members()) >= 118


def test_flows_are_asked_in_float16_and_bfloat16_where_torch_ao_takes_them():
    """Issue 20: a prepare flow moves its model in the case's dtype (before, the model
    stayed float32 and the CPU refused every low-precision flow with a dtype mismatch of
    the scenario's own making); torch.ao's own float32-only kernels (the fused fake-quant
    op of QAT) stay float32-only, as the CPU says."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flow = quant.scenarios(P + "qconfig_mapping.get_default_qconfig_mapping", None)
        qat = quant.scenarios(P + "prepare_qat", None)
    assert {"float16", "bfloat16", "float32"} <= {d for sc in flow for d in sc.dtypes}
    assert all(sc.raises is None and sc.golden is not None for sc in flow)
    assert [sc.dtypes for sc in qat] == [("float32",)]


def test_the_fx_flows_scaffolding_mapping_runs_no_histogram_search():
    # a histogram's parameter search is tens of thousands of small ops per calibration:
    # the FX flows around configs under test calibrate with min/max observers instead,
    # on the x86 mapping's own object types and weight observers
    import torch.ao.quantization as Q

    from torchparity.scenarios.sources.quant.cases import scaffold_qmap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real, cheap = Q.get_default_qconfig_mapping("x86"), scaffold_qmap()
        assert list(cheap.object_type_qconfigs) == list(real.object_type_qconfigs)
        pairs = [(real.global_qconfig, cheap.global_qconfig)] + [
            (real.object_type_qconfigs[k], cheap.object_type_qconfigs[k]) for k in real.object_type_qconfigs]
        for r, c in pairs:
            assert not isinstance(c.activation(), Q.HistogramObserver)
            assert type(c.weight()) is type(r.weight())
            if not isinstance(r.activation(), Q.HistogramObserver):
                assert repr(c) == repr(r)
        assert isinstance(real.global_qconfig.activation(), Q.HistogramObserver)  # still the API's answer
