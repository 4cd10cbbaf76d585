"""The optim source runs the CPU reference on the implementation torch picks for the
device under test: torch defaults optimizers to the foreach kernels on an accelerator
and to the per-tensor loop on the CPU, and the two differ in float64 (ASGD)."""

from __future__ import annotations

from torchparity.run.execute import execute
from torchparity.scenarios.registry import device_under_test
from torchparity.scenarios.sources import optim


def test_foreach_is_what_torch_picks_for_the_device_under_test(emu):
    info = optim._infos()["ASGD"]
    assert optim.path_kwargs(info, {}, "cpu") == {"foreach": False}
    with device_under_test(emu.torch_device):
        assert optim.path_kwargs(info, {}, "cpu") == {"foreach": True}
        assert optim.path_kwargs(info, {"differentiable": True}, "cpu")["foreach"] is False
        assert optim.path_kwargs(info, {"foreach": False}, "cpu") == {"foreach": False}
        assert optim.path_kwargs(optim._infos()["LBFGS"], {}, "cpu") == {}


def test_asgd_float64_is_judged_on_the_path_the_device_runs(emu):
    scs = [s for s in optim.scenarios("torch.optim.ASGD", None) if "float64" in s.dtypes]
    assert scs
    for sc in scs:
        res, _ = execute(sc, "float64", emu)
        assert res.status == "pass", (sc.id, res.cause, res.detail)
