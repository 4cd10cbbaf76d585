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
    result.evidence = row_evidence(result.status, result.cause, entries)
    return result, entries


@pytest.mark.parametrize("api", ["torch.backends.mkl.is_available",
                                 "torch.utils.cpp_extension.is_ninja_available",
                                 "torch.__config__.show", "torch.backends.cudnn.allow_tf32"])
def test_host_only_apis_are_device_independent(emu, api):
    result, entries = _answer(api, emu)
    assert result.status == "pass", result.detail
    assert result.evidence == "host-only", [(e.op, e.source) for e in entries]
    assert "tensor(" not in result.detail  # no borrowed device result among the outputs
    facts = {"involvement": "indirect", "implementation": "python_function", "harness": False}
    v = decide(Analysis(qualified_name=api, kind="function", implementation="python_function"),
               [result], facts, "npu (emulated: allow-all)")
    assert (v.status, v.category, v.evidence) == ("device-independent", "1.2①", "host-only")


def test_a_device_module_counter_is_device_state(emu):
    result, entries = _answer("torch.cuda.memory_allocated", emu)
    assert result.status == "pass" and result.evidence == "device-state"
    assert ("runtime.npu.memory_allocated", "api") in {(e.op, e.source) for e in entries}
