"""A case's footprint run is also its draws' repeat and its scaffolding check: the scenario
runs once on the CPU, once judged on the device, once recorded and once with its API taken
away (issue 48; issue 22: the extra per-case device runs, measured by
benchmarks/extra_runs.py); draws add the CPU's replay."""

from __future__ import annotations

from collections import Counter

import torch

from torchparity.devices import get_adapter
from torchparity.results.models import Text
from torchparity.run.execute import execute
from torchparity.scenarios.registry import Draws, Scenario


def _scenario(calls: Counter, seeded: bool = True) -> Scenario:
    state = {"n": 0}

    def fn(device, dtype):
        calls[device] += 1
        state["n"] += 1
        if not seeded:  # draws that ignore the seed: every run draws anew
            torch.manual_seed(1000 + state["n"])
        return Draws(torch.rand(2000, dtype=dtype, device=device))

    return Scenario(id="draws", api="torch.rand", fn=fn, description=Text(en="d", zh="d"),
                    expected=Text(en="e", zh="e"))


def test_the_footprint_run_is_the_draws_repeat():
    adapter = get_adapter("cpu")
    calls: Counter = Counter()
    result, entries = execute(_scenario(calls), "float32", adapter, footprint=True,
                              api_obj=torch.rand)
    assert result.status == "pass", result.detail
    # reference, judged, recorded (no run of its own for the repeat, nor for the replay's
    # recording), the run with the API taken away (run.takeaway), and the CPU's replay of
    # the recorded draws
    assert calls["cpu"] == 5, calls
    assert any(e.op == "aten.rand" and e.source == "api" for e in entries), entries


def test_draws_that_do_not_repeat_still_fail_with_the_shared_run():
    adapter = get_adapter("cpu")
    calls: Counter = Counter()
    result, _ = execute(_scenario(calls, seeded=False), "float32", adapter, footprint=True,
                        api_obj=torch.rand)
    assert result.status == "fail" and "repeat its draws" in result.detail, result.detail
    assert calls["cpu"] == 4, calls  # reference, judged, recorded, taken away
