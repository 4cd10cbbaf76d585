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


def _observes(api: str, sc, adapter, dtype: str = "float32"):
    from torchparity.api.classify import code_objects
    from torchparity.api.resolve import resolve

    obj = resolve(api).obj
    res, _ = execute(sc, dtype, adapter, footprint=True, api_obj=obj, api_codes=code_objects(obj))
    return res


def test_a_loaded_state_differs_from_the_one_a_new_object_starts_in(cpu):
    """Issue 48: a scheduler loading the state of one EPOCHS on, into one built on an
    optimizer already loaded, read the same learning rate loaded or not (hollow); what
    follows the load (its epoch count, the epochs after) tells now. Likewise an optimizer
    member's new optimizer starts with other hyperparameters than the loaded ones."""
    for api in ("torch.optim.lr_scheduler.ExponentialLR.load_state_dict",
                "torch.optim.lr_scheduler.StepLR.load_state_dict",
                "torch.optim.SGD.load_state_dict"):
        (sc,) = optim.scenarios(api, None)
        res = _observes(api, sc, cpu)
        assert res.status == "pass" and "hollow" not in res.tags, (api, res.detail)
        assert res.own is not None and res.own.observes is True, (api, res.own)


def test_a_step_moves_a_bfloat16_parameter_by_more_than_its_resolution(cpu):
    """Issue 48: SGD's default lr (1e-3) moves no bfloat16 parameter of magnitude ~1 (8 bits
    of mantissa): ``step`` taken away read the same, the bfloat16 row was hollow. The step
    row runs with ``STEP_LR`` at least, so every dtype's step moves the parameters."""
    (sc,) = optim.scenarios("torch.optim.SGD.step", None)
    res = _observes("torch.optim.SGD.step", sc, cpu, "bfloat16")
    assert res.status == "pass" and "hollow" not in res.tags, res.detail
    assert res.own is not None and res.own.observes is True, res.own
