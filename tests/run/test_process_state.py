"""A case that changes a process-wide torch setting does not hand it to the next case."""

import torch
from torch.distributions import Distribution, Uniform

from torchparity.run import handlers, process_state
from torchparity.run.context import register


@register("test-leaves-state")
def _leaves_state(ctx, case):
    # what creating a torch.compile function does once per process (dynamo's TorchPatcher)
    Distribution.set_default_validate_args(False)
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    return {"ok": True}


@register("test-reads-state")
def _reads_state(ctx, case):
    try:
        Uniform(torch.tensor(1.0), torch.tensor(0.0))  # low > high: checked when validating
        checked = False
    except ValueError:
        checked = True
    return {"validates": checked, "dtype": str(torch.get_default_dtype()),
            "grad": torch.is_grad_enabled()}


def test_the_next_case_starts_from_the_state_the_first_one_started_from():
    before = process_state.snapshot()
    assert handlers.handle(None, {"kind": "test-leaves-state"}) == {"ok": True}
    assert process_state.snapshot() == before
    after = handlers.handle(None, {"kind": "test-reads-state"})
    assert after == {"validates": bool(before["torch.distributions.Distribution default validate_args"]),
                     "dtype": str(before["torch default dtype"]), "grad": before["torch grad mode"]}


def test_restore_names_what_it_set_back():
    saved = process_state.snapshot()
    try:
        torch.set_default_dtype(torch.float64)
        torch.set_default_device("meta")
        assert process_state.restore(saved) == ["torch default dtype", "torch default device"]
        assert torch.empty(1).device.type == saved["torch default device"].type
        assert process_state.restore(saved) == []
    finally:
        process_state.restore(saved)
    assert torch.get_default_dtype() == saved["torch default dtype"]


def test_a_compile_in_one_case_leaves_distribution_checks_on_for_the_next():
    """The cause of the order-dependent distribution rows: dynamo's one-time patch."""
    from torch._dynamo.eval_frame import TorchPatcher

    @register("test-compiles")
    def _compiles(ctx, case):
        TorchPatcher.patch.cache_clear()
        torch.compile(lambda x: x + 1, backend="eager")
        return {"validate": Distribution._validate_args}

    saved = Distribution._validate_args
    try:
        Distribution.set_default_validate_args(True)
        assert handlers.handle(None, {"kind": "test-compiles"}) == {"validate": False}
        assert Distribution._validate_args is True
    finally:
        Distribution.set_default_validate_args(saved)
