"""The oracle's survivors on quant observers and torch.testing.assert_allclose (issue 20):
a reduction that skips the last element of its input and, for assert_allclose, results
scaled by 1 % or written to a new tensor instead of in place, must turn the row red; the
same rows stay green on a correct device (its noise)."""

from __future__ import annotations

import pytest

from torchparity.devices.emulator import faults
from torchparity.run.execute import execute
from torchparity.scenarios.sources import quant, tooling

OB = "torch.ao.quantization.observer."
CASES = [
    (quant, OB + "MinMaxObserver", ("reduce-drop",)),
    (quant, OB + "MovingAveragePerChannelMinMaxObserver", ("reduce-drop",)),
    (quant, "torch.ao.quantization.fake_quantize.FakeQuantize", ("reduce-drop",)),
    # its weight observer was fed w alone, whose extremes are never its last element
    (quant, "torch.ao.quantization.qconfig.default_debug_qconfig", ("reduce-drop",)),
    (tooling, "torch.testing.assert_allclose", ("reduce-drop", "numeric-1e-2", "inplace-copy")),
]


@pytest.mark.parametrize("source,api,bugs", CASES, ids=[c[1].rsplit(".", 1)[-1] for c in CASES])
def test_the_case_sees_the_device_bug(emu, source, api, bugs):
    (sc,) = source.scenarios(api, None)
    ok, _ = execute(sc, "float16", emu)
    assert ok.status == "pass", ok.detail
    with faults.injecting((), noise=True):
        noisy, _ = execute(sc, "float16", emu)
    assert noisy.status == "pass", noisy.detail
    for bug in bugs:
        with faults.injecting([bug]):
            bad, _ = execute(sc, "float16", emu)
        assert bad.status == "fail", (bug, bad.detail)
