"""Draws replayed: a sampler judged by what the CPU computes from the device's own
random numbers (``run.replay``), which a two-sample test of 128 draws cannot do."""

from __future__ import annotations

import pytest
import torch

from torchparity.devices import get_adapter
from torchparity.devices.emulator import faults
from torchparity.results.models import Text
from torchparity.run.execute import execute
from torchparity.run.replay import Recording, Replaying
from torchparity.scenarios.registry import Draws, Scenario


def laplace(device, dtype):
    d = torch.distributions.Laplace(torch.tensor([0.5, -1.0], dtype=dtype).to(device),
                                    torch.tensor([1.0, 2.0], dtype=dtype).to(device))
    return [Draws(d.rsample((64,)))]


def test_a_replay_hands_the_recorded_draws_to_the_cpu_in_order():
    rec = Recording()
    with rec:
        torch.manual_seed(1)
        first = laplace("cpu", torch.float32)[0].tensor
    assert [name for name, _ in rec.draws] == ["aten.uniform_"]
    torch.manual_seed(2)  # another seed: only the replay can give the same draws back
    replay = Replaying(rec.draws)
    with replay:
        again = laplace("cpu", torch.float32)[0].tensor
    assert replay.complete and torch.equal(first, again)
    other = Replaying(rec.draws)
    with other:  # other random ops than the recording's: nothing is replayed
        torch.randn(3)
    assert not other.complete and "aten.randn" in other.broken


@pytest.fixture(scope="module")
def adapter(dev):
    a = get_adapter("emu:allow-all")
    a.setup()
    return a


def _row(adapter, dtype, names=(), noise=False):
    t = Text(en="x", zh="x")
    sc = Scenario(id="rsample", api="torch.distributions.laplace.Laplace.rsample", fn=laplace,
                  description=t, expected=t)
    with faults.injecting(list(names), noise=noise):
        result, _ = execute(sc, dtype, adapter)
    return result


@pytest.mark.parametrize("fault", ["numeric-1e-2", "numeric-1e-3"])
def test_a_sampler_whose_arithmetic_is_off_fails(adapter, fault):
    # Laplace.rsample on a device whose results are 0.1 % off: its draws still pass the
    # two-sample test against the CPU's; replayed, they differ from what they should be
    clean = _row(adapter, "float32")
    assert clean.status == "pass" and "seeded-replay" in clean.detail, clean.detail
    r = _row(adapter, "float32", [fault])
    assert r.status == "fail" and "seeded-replay" in r.detail, r.detail


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_a_correct_device_with_its_own_rounding_passes_the_replay(adapter, dtype):
    r = _row(adapter, dtype, noise=True)
    assert r.status == "pass", r.detail
