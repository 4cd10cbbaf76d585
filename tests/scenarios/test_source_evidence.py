"""Issue 20 item 5 / issue 18 item 3: a block whose device tensors do not flow through the
API is no device answer. Build queries and host-only tooling are host-only evidence and
device-independent (1.2①), not 1.1① thanks to a matmul beside them; a device-module
counter is device-state."""

import pytest

from torchparity.api.classify import code_objects
from torchparity.api.resolve import resolve
from torchparity.judge.evidence import row_evidence
from torchparity.judge.verdict import decide
from torchparity.results.models import Analysis
from torchparity.run.execute import execute
from torchparity.scenarios import sources


def _answer(api, adapter):
    obj = resolve(api).obj
    (sc,) = [s for s in sources.offer(api, obj).scenarios][:1]
    result, entries = execute(sc, sc.dtypes[0], adapter, footprint=True, api_obj=obj,
                              api_codes=code_objects(obj))
    result.evidence = row_evidence(result.status, result.cause, entries, own=result.own)
    return result, entries


@pytest.mark.parametrize("api", ["torch.backends.mkl.is_available",
                                 "torch.utils.cpp_extension.is_ninja_available",
                                 "torch.__config__.show", "torch.backends.cudnn.allow_tf32",
                                 # the CPU generator, a CUDA-only flag
                                 "torch.random.get_rng_state",
                                 "torch.backends.cuda.matmul.allow_tf32",
                                 # host-side tools: counters, name lookups, annotations
                                 "torch.monitor.Stat.add", "torch.overrides.resolve_name",
                                 "torch.utils.benchmark.FunctionCounts.filter",
                                 "torch.onnx.is_in_onnx_export",
                                 # issue 48: a hub repo's cached copy, an exporter's symbolics
                                 "torch.hub.list", "torch.onnx.unregister_custom_op_symbolic",
                                 "torch.utils.benchmark.CallgrindStats.delta"])
def test_host_only_apis_are_device_independent(emu, api):
    result, entries = _answer(api, emu)
    assert result.status == "pass", result.detail
    assert result.evidence == "host-only", [(e.op, e.source) for e in entries]
    assert "tensor(" not in result.detail  # no borrowed device result among the outputs
    facts = {"involvement": "indirect", "implementation": "python_function", "harness": False}
    v = decide(Analysis(qualified_name=api, kind="function", implementation="python_function"),
               [result], facts, "npu (emulated: allow-all)")
    assert (v.status, v.category, v.evidence) == ("device-independent", "1.2①", "host-only")


def test_a_switch_no_case_can_observe_is_hollow_not_device_independent(emu):
    """torch.backends.mkl.verbose turns a CPU library's log on: taken away, the case's
    outcome is the same, so its row cannot tell a wrong API (issue 48) — no answer, where
    the frames alone called it device-independent."""
    result, entries = _answer("torch.backends.mkl.verbose", emu)
    assert result.status == "skip" and "hollow" in result.tags, result.detail
    assert result.own.observes is False and result.evidence == "none"


def test_a_device_module_counter_is_device_state(emu):
    result, entries = _answer("torch.cuda.memory_allocated", emu)
    assert result.status == "pass" and result.evidence == "device-state"
    assert ("runtime.npu.memory_allocated", "api") in {(e.op, e.source) for e in entries}


@pytest.mark.parametrize("api", ["torch.cuda.init", "torch.cuda.ipc_collect", "torch.cuda.memory_cached"])
def test_a_device_module_member_is_the_apis_under_its_name_in_the_module(emu, api):
    # the emulated module's init / ipc_collect are lambdas and its memory_cached is
    # memory_reserved's function: the member named like the API is still the API's call
    result, entries = _answer(api, emu)
    assert ("runtime.npu." + api.rsplit(".", 1)[1], "api") in {(e.op, e.source) for e in entries}
    if api == "torch.cuda.memory_cached":
        assert result.status == "pass" and result.evidence == "device-state", [(e.op, e.source) for e in entries]
    else:  # the emulator's init / ipc_collect do nothing: taken away, nothing changes (issue 48)
        assert result.status == "skip" and "hollow" in result.tags, result.detail


def test_a_context_manager_api_is_device_state_through_the_tensor_it_places(emu):
    # torch.accelerator.device_index: no device-module call of its own name; a tensor made
    # inside on the bare device type lands on the index it set
    result, entries = _answer("torch.accelerator.device_index", emu)
    # its own footprint is the device switch it makes (the accelerator's C entry point) ...
    assert ("runtime._C._accelerator_exchangeDevice", "api") in {(e.op, e.source) for e in entries}
    # ... but the one emulated device is index 0 already: taken away, the case reads the
    # same, so the row cannot tell a wrong API (hollow, issue 48) until a second device
    assert result.status == "skip" and "hollow" in result.tags, result.detail



def test_an_observer_factorys_refusal_is_its_own_not_the_scenarios(tmp_path):
    """default_histogram_observer is a partial of HistogramObserver: the histc that observer
    issues is the API's op, so A2's float64 refusal is the API's dtype limit (it read
    "scaffolding refused" while the partial had no code of its own)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        from torchparity.api.classify import code_objects
        from torchparity.api.resolve import resolve
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.scenarios import sources
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        api = "torch.ao.quantization.observer.default_histogram_observer"
        obj = resolve(api).obj
        sc = sources.offer(api, obj).scenarios[0]
        result, _ = execute(sc, "float64", adapter, footprint=True, api_obj=obj, api_codes=code_objects(obj))
        print(result.status, result.cause, result.detail)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240,
                         cwd=tmp_path).stdout
    assert out.startswith("unsupported dtype_limit"), out
    assert "histc" in out and "scaffolding" not in out
