"""OpInfo entries whose values OpInfo marks not comparable still get a verdict on what
is comparable (``judge.restricted``): on the CPU against itself, with test doubles for a
device that differs where the values are undefined (must pass) and where they are
defined (must fail), and on the emulated A2 device."""

import json

import pytest
import torch

from tests.devices.emulator.helpers import run_python
from tests.run.test_opinfo_handler import device_double
from torchparity.devices import get_adapter
from torchparity.judge import restricted as R
from torchparity.run import opinfo_restricted as RS
from torchparity.run.handlers import WorkerContext, handle


@pytest.fixture(scope="module")
def ctx():
    return WorkerContext(adapter=get_adapter("cpu"), options={"threads": 1})


def run(ctx, key, dtype, **extra):
    return handle(ctx, dict({"kind": "opinfo", "api": "x", "key": key, "dtype": dtype}, **extra))


def test_each_standard_is_named_in_the_row(ctx):
    expect = {("bernoulli", "float32"): "seeded-cpu", ("byte", "float32"): "in-range",
              ("bitwise_left_shift", "int32"): "in-range", ("unique", "int64"): "order-free",
              ("empty_like", "float32"): "uninitialised"}
    for (key, dtype), standard in expect.items():
        r = run(ctx, key, dtype, max_samples=3)
        assert r["status"] == "pass", (key, r)
        assert r["metric"]["standard"].startswith(standard), (key, r["metric"])
        assert r["detail"].startswith(f"[standard: {standard}"), r["detail"]
        assert f"OpInfo '{key}' marks test_compare_cpu" in r["detail"]


def test_casts_compare_only_the_elements_that_fit(ctx, monkeypatch):
    def wrap_out_of_range(value):  # a device free to answer anything where C++ is UB
        return value.detach().clone().fill_(77) if isinstance(value, torch.Tensor) else value

    mask = R.cast_defined(torch.tensor([-1.5, 3.9, 300.0, float("nan"), 255.0]), torch.uint8)
    assert mask.tolist() == [False, True, False, False, True]
    assert R.cast_defined(torch.tensor([2.0 ** 63, -2.0 ** 63]), torch.int64).tolist() == [False, True]
    device_double(monkeypatch, transform=wrap_out_of_range)
    r = run(ctx, "byte", "float32")
    assert (r["status"], r["cause"]) == ("fail", "mismatch")  # in-range elements differ too


def test_shifts_ignore_undefined_amounts_and_catch_defined_ones(ctx, monkeypatch):
    ok = R.shift_defined(torch.tensor([-1, 0, 7, 8, 31, 32]), torch.int32, torch.Size([6]))
    assert ok.tolist() == [False, True, True, True, True, False]
    device_double(monkeypatch, transform=lambda v: v + 1 if isinstance(v, torch.Tensor) else v)
    r = run(ctx, "bitwise_left_shift", "int32")
    assert (r["status"], r["cause"]) == ("fail", "mismatch")


def test_unique_in_any_order_passes_and_wrong_values_fail(ctx, monkeypatch):
    c = R.unique_canonical((torch.tensor([3, 1, 2]), torch.tensor([0, 0, 2, 1]), torch.tensor([2, 1, 1])),
                           {"return_inverse": True, "return_counts": True})
    assert [t.tolist() for t in c] == [[1, 2, 3], [2, 2, 1, 0], [1, 1, 2]]
    device_double(monkeypatch, transform=lambda v: v.flip(0) if isinstance(v, torch.Tensor) and v.dim() == 1 else v)
    r = run(ctx, "unique", "int64", max_samples=40)
    assert r["status"] == "pass", r  # plain unique: the values reversed are the same set
    device_double(monkeypatch, transform=lambda v: v + 1 if isinstance(v, torch.Tensor) else v)
    r = run(ctx, "unique", "int64", max_samples=40)
    assert (r["status"], r["cause"]) == ("fail", "mismatch")


def test_uninitialised_outputs_compare_strides(ctx, monkeypatch):
    device_double(monkeypatch, transform=lambda v: v.t().contiguous().t()
                  if isinstance(v, torch.Tensor) and v.dim() == 2 and min(v.shape) > 1 else v)
    r = run(ctx, "empty_like", "float32")
    assert (r["status"], r["cause"]) == ("fail", "metadata") and "strides" in r["detail"]


def test_random_ops_without_a_mirrored_generator_repeat_the_seed(ctx, monkeypatch):
    monkeypatch.setattr(RS, "rng_mirrors_cpu", lambda device, device_type: False)
    r = run(ctx, "bernoulli", "float32")
    assert r["status"] == "pass" and r["detail"].startswith("[standard: seeded-repeat")
    calls = {"n": 0}

    def drifting(value):  # a device whose seeded draws change from run to run
        calls["n"] += 1
        return (value + calls["n"]) if isinstance(value, torch.Tensor) else value

    device_double(monkeypatch, transform=drifting)
    r = run(ctx, "bernoulli", "float32")
    # a seeded random op that does not repeat its draws is wrong: a fail, not a warning
    assert r["status"] == "fail" and "under one seed and generator drew different values" in r["detail"]


def test_on_the_emulated_a2(tmp_path):
    out = run_python("""
        import json, torch
        from torchparity.devices import get_adapter
        from torchparity.run.handlers import WorkerContext, handle
        import torchparity.run.opinfo_handler

        a = get_adapter("emu:ascend-a2")
        a.setup()
        ctx = WorkerContext(adapter=a, options={"threads": 1})
        rows = {}
        for key, dtype in [("bernoulli", "float32"), ("char", "float16"), ("unique", "float32"),
                           ("new_empty", "float32"), ("randint", "int64")]:
            r = handle(ctx, {"kind": "opinfo", "api": "x", "key": key, "dtype": dtype,
                             "max_samples": 3})
            rows[key] = [r["status"], r["metric"]["standard"]]
        try:
            with torch.device(a.torch_device):
                torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]), torch.tensor([1.0]))
            rows["csr"] = "built"
        except RuntimeError as exc:
            rows["csr"] = str(exc)
        print(json.dumps(rows))
        """, tmp_path, timeout=300)
    rows = json.loads(out.strip().splitlines()[-1])
    assert rows["bernoulli"] == ["pass", "seeded-cpu (cpu float32)"]
    assert rows["char"] == ["pass", "in-range (exact)"]
    assert rows["unique"][0] == "pass" and rows["unique"][1].startswith("order-free")
    assert rows["new_empty"] == ["pass", "uninitialised"]
    assert rows["randint"] == ["pass", "seeded-cpu (exact)"]
    assert "not supported by the emulated device" in rows["csr"]
