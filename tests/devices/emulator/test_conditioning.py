"""A failed row is no verdict where the CPU itself, rounding as a correct chip does, fails
the same comparison (``run.conditioning``): LBFGS's history and iteration count follow a
loss's last digits, and a correct device failed ``LBFGS.state_dict`` under its noise."""

from __future__ import annotations

import pytest
import torch

from torchparity.devices import get_adapter
from torchparity.devices.emulator import faults
from torchparity.results.models import Text
from torchparity.run.execute import execute
from torchparity.scenarios.registry import Scenario
from torchparity.scenarios.sources import optim


@pytest.fixture(scope="module")
def adapter(dev):
    a = get_adapter("emu:allow-all")
    a.setup()
    return a


def test_a_chaotic_answer_under_a_correct_chips_rounding_is_not_a_verdict(adapter):
    (sc,) = optim.scenarios("torch.optim.LBFGS.state_dict", None)
    assert execute(sc, "float16", adapter)[0].status == "pass"
    with faults.injecting((), noise=True):
        r, _ = execute(sc, "float16", adapter)
    assert (r.status, r.cause) == ("skip", "not_comparable"), r.detail
    assert r.detail.startswith("ill-conditioned")


def well_conditioned(device, dtype):
    x = torch.linspace(-1, 1, 64, dtype=dtype).to(device)
    return [torch.exp(x).sum(), torch.tanh(x) * 3]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_well_conditioned_answer_still_fails_on_a_wrong_device(adapter, dtype):
    t = Text(en="x", zh="x")
    sc = Scenario(id="s", api="torch.exp", fn=well_conditioned, description=t, expected=t)
    with faults.injecting(["numeric-1e-2"]):
        r, _ = execute(sc, dtype, adapter)
    assert r.status == "fail", r.detail
    with faults.injecting((), noise=True):
        assert execute(sc, dtype, adapter)[0].status == "pass"
