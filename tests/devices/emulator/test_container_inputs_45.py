"""Issue 45, third round: the seed-0 survivor ``mutant-alias@aten._prelu_kernel`` on
``torch.nn.ModuleList``. The case chained its layers as ``x = m(x)``: a PReLU kernel that
wrote its (right) answer into its input and returned it left the chain's answer right and
clobbered a tensor no compared value held any more, so the row passed. A user's input
clobbered by a layer is a real bug; the container cases now return their input as well."""

from __future__ import annotations

import pytest

from torchparity.devices.emulator import faults


@pytest.fixture(scope="module")
def adapter(dev):
    from torchparity.devices import get_adapter

    a = get_adapter("emu:allow-all")
    a.setup()
    return a


def _row(adapter, api, dtype="float32"):
    from torchparity.run.execute import execute
    from torchparity.scenarios.sources import source as src

    (sc,) = src("nnutil").scenarios(api, None)
    return execute(sc, dtype, adapter)[0]


@pytest.mark.parametrize("api", ["torch.nn.ModuleList", "torch.nn.ModuleDict"])
def test_a_layer_that_writes_into_its_input_fails_the_container_case(adapter, api):
    assert _row(adapter, api).status == "pass"
    with faults.injecting(["mutant-alias@aten._prelu_kernel.default"]):
        bad = _row(adapter, api)
    assert bad.status == "fail", bad.detail
