"""Issue 45, second round, item 3: aliasing against inputs for code-block cases too (the
first round compared OpInfo samples only). A table case's body makes its inputs and
returns only its answer; the judge reads what the body's variables held when it returned
(``run.body_locals``): an output that shares storage with one of them on the device where
the CPU's does not fails, the variable named (the reverse is left to OpInfo samples:
a code block's host round trips alias on the CPU only)."""

from __future__ import annotations

import pytest
import torch

from torchparity.devices.emulator import faults


@pytest.fixture(scope="module")
def adapter(dev):
    from torchparity.devices import get_adapter

    a = get_adapter("emu:allow-all")
    a.setup()
    return a


def _row(adapter, source, api, dtype="float32"):
    from torchparity.run.execute import execute
    from torchparity.scenarios.sources import source as src

    (sc,) = src(source).scenarios(api, None)
    return execute(sc, dtype, adapter)[0]


def test_a_member_case_whose_output_is_its_input_on_the_device_fails_named(adapter):
    assert _row(adapter, "member", "torch.Tensor.hardshrink").status == "pass"
    # the kernel writes its (right) answer into its input and returns the input
    with faults.injecting(["mutant-alias@aten.hardshrink.default"]):
        bad = _row(adapter, "member", "torch.Tensor.hardshrink")
    assert bad.status == "fail" and bad.cause == "metadata", bad.detail
    assert "shares storage with the case's input `x` on the device" in bad.detail


def test_the_judge_compares_outputs_with_a_body_s_variables_by_name(dev):
    from torchparity.judge.compare import local_aliasing

    x_cpu, x_dev = torch.ones(3), torch.ones(3).to(dev)
    # the device's output is its input `x`, the CPU's a new tensor
    (j,) = local_aliasing({"x": x_cpu, "n": 3}, x_cpu + 1, {"x": x_dev, "n": 3}, x_dev.add_(1))
    assert j.status == "fail" and "shares storage with the case's input `x`" in j.detail
    # the reverse (the CPU's output is its input, the device's a copy) only when asked:
    # a code block's host round trips (x.cpu().apply_(f).to(device)) are copies on the
    # device and nothing on the CPU (Tensor.apply_, PackedSequence.to read so)
    assert local_aliasing({"x": x_cpu}, x_cpu.add_(1), {"x": x_dev}, x_dev + 1) == []
    (j,) = local_aliasing({"x": x_cpu}, x_cpu.add_(1), {"x": x_dev}, x_dev + 1, reverse=True)
    assert "does not share storage with the case's input `x`" in j.detail
    # the same on both sides, and a variable that is a CPU tensor in the device run (a
    # CPU tensor before its .to(device), which the CPU run's .to("cpu") returns as is)
    assert local_aliasing({"x": x_cpu}, x_cpu, {"x": x_dev}, x_dev) == []
    t = torch.ones(3)
    assert local_aliasing({"t": t}, t, {"t": t}, t.to(dev)) == []
