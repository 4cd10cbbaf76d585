"""Scaffolding never decides (issue 20 item 2): ops a scenario runs around the API are the
scenario's, not the API's. On emu:ascend-a2 (tanh refuses float64) the optim source picks
an activation the device runs, and a refusal issued by scenario code is ``skip`` /
``not_comparable`` ("scaffolding refused"), never a verdict on the API."""

from __future__ import annotations

from tests.devices.emulator.helpers import run_python


def test_optim_rows_are_not_decided_by_the_losss_tanh(tmp_path):
    out = run_python("""
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.scenarios.sources import optim
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        for api in ("torch.optim.Adam", "torch.optim.SGD.zero_grad",
                    "torch.optim.lr_scheduler.SequentialLR"):
            sc = optim.scenarios(api, None)[0]
            result, _ = execute(sc, "float64", adapter)
            print(api, result.status, result.cause, "|", result.detail)
        """, tmp_path, timeout=300)
    rows = [ln for ln in out.splitlines() if ln.startswith("torch.")]
    assert len(rows) == 3, out
    for ln in rows:
        assert "tanh" not in ln, ln  # the loss's activation is not the API's answer
    by = {ln.split()[0]: ln for ln in rows}
    # Adam's own update refuses float64 on A2 (lerp_): the optimizer's op, its answer
    assert by["torch.optim.Adam"].split()[1:3] == ["unsupported", "dtype_limit"], out
    assert "lerp" in by["torch.optim.Adam"], out
    # the step around zero_grad / the scheduler runs the foreach kernels, whose tensor-list
    # check refuses float64 on A2 (issue 44): a refusal of the optimizer's own op, not tanh
    for api in ("torch.optim.SGD.zero_grad", "torch.optim.lr_scheduler.SequentialLR"):
        assert by[api].split()[1] == "pass" or "_foreach_" in by[api], out


def test_a_refusal_issued_by_scenario_code_is_scaffolding_refused(tmp_path):
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        from torchparity.results.models import Text
        from torchparity.run.execute import execute
        from torchparity.scenarios.registry import Scenario
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()

        def fn(device, dtype):
            x = torch.linspace(-1, 1, 6, dtype=dtype).to(device)
            return torch.mul(torch.tanh(x), 2.0)   # tanh: the scenario's input transform

        t = Text(en="x", zh="x")
        for api_obj in (torch.mul, torch.tanh):
            sc = Scenario(id="s", api="torch.mul", fn=fn, description=t, expected=t,
                          dtypes=("float64",), module=__name__)
            result, _ = execute(sc, "float64", adapter, api_obj=api_obj)
            print(api_obj.__name__, result.status, result.cause, "|", result.detail)
        """, tmp_path, timeout=120)
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith(("mul", "tanh"))}
    assert rows["mul"].split()[1:3] == ["skip", "not_comparable"], out
    assert "scaffolding refused" in rows["mul"] and "aten.tanh" in rows["mul"], out
    # the same refusal where tanh IS the API under test stays the device's answer
    assert rows["tanh"].split()[1:3] == ["unsupported", "dtype_limit"], out


def test_no_scaffolding_the_device_runs_is_not_comparable(tmp_path):
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        from torchparity.results.models import Text
        from torchparity.run.execute import execute
        from torchparity.scenarios.registry import Scenario, scaffold
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()

        def fn(device, dtype):
            act = scaffold(device, dtype, [("tanh", torch.tanh)])
            return torch.mul(act(torch.ones(3, dtype=dtype).to(device)), 2.0)

        t = Text(en="x", zh="x")
        sc = Scenario(id="s", api="torch.mul", fn=fn, description=t, expected=t,
                      dtypes=("float64", "float32"), module=__name__)
        for dt in ("float64", "float32"):
            result, _ = execute(sc, dt, adapter, api_obj=torch.mul)
            print(dt, result.status, result.cause, "|", result.detail)
        """, tmp_path, timeout=120)
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("float")}
    assert rows["float64"].split()[1:3] == ["skip", "not_comparable"], out
    assert "scaffolding refused" in rows["float64"], out
    assert rows["float32"].split()[1] == "pass", out
