"""The "opinfo" case kind, in-process on the CPU, with test doubles for a faulty device.

The device run is the only ``_call`` that passes ``sync``; the doubles below wrap it to
return wrong values or to raise like a backend that lacks a kernel.
"""

import pytest
import torch
from torch.utils._python_dispatch import _disable_current_modes

from torchparity.devices import get_adapter
from torchparity.run import opinfo_handler as h
from torchparity.run.handlers import WorkerContext, handle


@pytest.fixture(scope="module")
def ctx():
    return WorkerContext(adapter=get_adapter("cpu"), options={"threads": 1})


def run(ctx, key, dtype, **extra):
    return handle(ctx, dict({"kind": "opinfo", "api": "x", "key": key, "dtype": dtype}, **extra))


REAL_CALL = h._call


def device_double(monkeypatch, transform=None, raise_for=None, in_dispatch=False):
    """A faulty device. ``transform`` changes its outputs below the dispatcher, as a
    device's own numerics do; with ``in_dispatch`` its ops are dispatched like the op's
    own, as when an API computes differently on the device."""
    real = REAL_CALL
    seen = {"n": 0}

    def fake(fn, tree, process, seed, sync=None, **kw):
        if sync is None:  # the CPU reference or the golden
            return real(fn, tree, process, seed, sync, **kw)
        seen["n"] += 1
        if raise_for is not None and raise_for(seen["n"]):
            return h._Run(exc=RuntimeError("\"add_npu\" not implemented for 'Float'"), tree=tree)
        r = real(fn, tree, process, seed, sync, **kw)
        if r.exc is None and transform is not None:
            if in_dispatch:
                r.value = transform(r.value)
            else:
                with _disable_current_modes():
                    r.value = transform(r.value)
        return r

    monkeypatch.setattr(h, "_call", fake)


def test_cpu_against_cpu_passes_with_gradients(ctx):
    r = run(ctx, "add", "float32")
    assert r["status"] == "pass" and r["claimed"] is True
    n = r["counts"]["samples"]
    # every sample backward too, but the project's own NaN / inf one (forward only)
    assert r["counts"]["forward"] == {"pass": n} and r["counts"]["backward"] == {"pass": n - 1}
    assert "NaN / inf" in r["note"]
    assert r["metric"]["standard"] == "cpu float32"
    assert run(ctx, "add", "float32", grads=False)["counts"]["backward"] == {}


def test_op_limits_and_upstream_skips(ctx):
    r = run(ctx, "mean", "int64")
    # every sample raises on both sides: the op's contract, not a limit (issue 48)
    assert (r["status"], r["cause"]) == ("skip", "not_comparable") and "mean()" in r["detail"]
    assert r["detail"].startswith("both sides refused")
    r = run(ctx, "linalg.lu", "float32")
    assert (r["status"], r["cause"]) == ("skip", "upstream_skip")
    assert "expected failure" in r["detail"] and "ran on the device" in r["detail"]
    r = run(ctx, "resize_", "float32")  # OpInfo marks its test_dtypes as expected to fail
    assert r["note"] == "OpInfo 'resize_' marks test_dtypes for float32: expected failure"
    assert r["status"] == "pass" and r["metric"]["standard"] == "uninitialised"
    # views that read outside themselves: upstream's expected failure comes from copying
    # only the view; the sweep's copies keep the storage, so values are compared
    r = run(ctx, "as_strided.partial_views", "int32")
    assert r["status"] == "pass" and r["counts"]["forward"] == {"pass": 4}  # 3 samples + a non-contiguous one (layout fixed)
    assert "expected failure; not applied" in r["note"]
    r = run(ctx, "special.zeta", "float32")  # an expected failure with no restricted standard
    assert (r["status"], r["cause"]) == ("skip", "upstream_skip")


def test_nan_on_the_device_fails(ctx, monkeypatch):
    def nan10(value):
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() >= 10:
            value = value.detach().clone()
            value.view(-1)[::10] = float("nan")
        return value

    device_double(monkeypatch, transform=nan10)
    r = run(ctx, "mul", "float32", grads=False)
    assert (r["status"], r["cause"]) == ("fail", "mismatch")
    assert r["metric"]["name"] == "nan_mismatch" and r["metric"]["threshold"] == 0


def test_a_device_that_computes_otherwise_is_told_apart_by_its_ops(ctx, monkeypatch):
    # the same wrong values, once from the device's numerics, once from other ops
    def through_float64(v):
        return (v.double() * (1 + 2 ** -6)).to(v.dtype) if isinstance(v, torch.Tensor) else v

    device_double(monkeypatch, transform=through_float64)
    r = run(ctx, "mul", "float16", grads=False)
    assert (r["status"], r["cause"]) == ("fail", "mismatch")
    assert "code path" not in r["detail"]

    device_double(monkeypatch, transform=through_float64, in_dispatch=True)
    r = run(ctx, "mul", "float16", grads=False)
    assert (r["status"], r["cause"]) == ("fail", "device_path")
    assert "only there aten._to_copy(float16, dtype=float64)" in r["detail"], r["detail"]
    assert "only on the CPU nothing" in r["detail"]


def test_slightly_off_device_is_judged_against_the_golden(ctx, monkeypatch):
    # 2**-7 relative: about 8 float16 ulps on every element, past the golden ratios' float16
    # bar (8x the CPU's own error, which forgives a correct chip's 1-2 ulp; docs/sweep.md)
    device_double(monkeypatch, transform=lambda v: v * (1 + 2 ** -7) if isinstance(v, torch.Tensor) else v)
    r = run(ctx, "mul", "float16", grads=False)
    assert r["status"] == "fail" and r["metric"]["standard"] == "golden float16"
    assert r["metric"]["name"].endswith("_ratio")


def test_device_refusals_are_unsupported_or_partial(ctx, monkeypatch):
    device_double(monkeypatch, raise_for=lambda n: True)
    r = run(ctx, "add", "float32", grads=False)
    assert (r["status"], r["cause"]) == ("unsupported", "dtype_limit")
    assert "add_npu" in r["detail"]  # the device's own message is kept

    device_double(monkeypatch, raise_for=lambda n: n % 2 == 0)
    r = run(ctx, "add", "float32", grads=False)
    assert (r["status"], r["cause"]) == ("partial", "dtype_limit")


def test_copies_keep_strides_and_storage():
    base = torch.arange(20.0)
    view = base[2:].as_strided((2, 3), (1, 4), 3)
    c = h._copy(view)
    assert c.stride() == view.stride() and c.storage_offset() == view.storage_offset()
    assert torch.equal(c, view) and c.untyped_storage().data_ptr() != view.untyped_storage().data_ptr()
    up = h._copy(view, dtype=torch.float64)
    assert up.dtype == torch.float64 and torch.equal(up, view.double())
    g = torch.ones(3, requires_grad=True)
    assert h._copy(g).requires_grad and h._copy(g).is_leaf


def test_device_arguments_point_at_the_device_and_deviceless_samples_are_noted():
    tree = (torch.ones(2), (torch.device("cpu"), "cpu", "sum"), {"device": "cpu", "dim": 0})
    moved = h._map(tree, lambda t: t, device_fn=lambda d: "npu:0")
    assert moved[1] == ("npu:0", "npu:0", "sum") and moved[2] == {"device": "npu:0", "dim": 0}
    assert h._Case._reaches_device(tree)
    assert h._Case._reaches_device((5, (), {"device": "cpu"}))
    assert not h._Case._reaches_device((5, (10,), {"dtype": torch.float32}))  # arange(5, 10)


def test_factory_samples_without_device_are_not_compared(ctx):
    r = run(ctx, "arange", "float32")
    assert r["status"] == "pass" and "never reaches the device" in r["detail"]


def test_the_footprint_looks_past_a_first_sample_that_does_nothing(ctx):
    # atleast_3d of its first (4-d) sample returns the input itself; of a 2-d one it is a
    # view on the device: one sample alone called the API device-independent
    r = run(ctx, "atleast_3d", "float32", footprint=True)
    assert r["status"] == "pass", r["detail"]
    ops = {e["op"] for e in r["footprint"] if e["source"] == "api"}
    assert ops, r["footprint"]
    # an op that computes from its first sample stops there: one more device run, not eight
    r = run(ctx, "add", "float32", footprint=True)
    assert {e["op"] for e in r["footprint"]} == {"aten.add"}
    assert sum(e["count"] for e in r["footprint"]) == 1


def test_a_case_records_what_its_comparison_compared(ctx):
    """``outputs`` (``judge.compare.output_kinds`` of the CPU's answers): a comparison's
    bool, an add's float16; the oracle reads it to leave out faults no answer can show."""
    assert run(ctx, "lt", "float16")["outputs"] == ["bool"]
    assert run(ctx, "add", "float16")["outputs"] == ["float16"]


def test_a_sample_cap_still_judges_a_sample_with_many_elements(ctx, monkeypatch):
    # relu's first two OpInfo samples (a 0-d and a 5-element tensor from one seed) hold
    # negative values only: a device wrong on positive inputs passed --max-samples 2
    def wrong_when_positive(v):
        return torch.where(v > 0, v * 2, v) if isinstance(v, torch.Tensor) else v
    device_double(monkeypatch, transform=wrong_when_positive)
    r = run(ctx, "nn.functional.relu", "float32", max_samples=2, grads=False)
    # the cap's 2, and the project's own: its largest made strided, and the NaN / inf one
    assert r["counts"]["samples"] == 4
    assert r["status"] == "fail", r["detail"]


def test_a_sample_cap_keeps_the_first_samples_and_the_largest():
    from torchparity.scenarios.opinfo import capped

    class S:
        def __init__(self, n):
            self.input = torch.zeros(n)
    samples = [S(1), S(5), S(25), S(250), S(50)]
    assert [s.input.numel() for s in capped(samples, 2)] == [1, 250]
    assert [s.input.numel() for s in capped(samples, 3)] == [1, 5, 250]
    assert capped(samples, None) == samples and capped(samples, 9) == samples


def test_a_random_like_op_that_loses_its_inputs_layout_fails(ctx, monkeypatch):
    # randint_like keeps a permuted input's layout (preserve_format) as empty_like does;
    # its draws were compared, its strides were not (the seed-1 oracle's strides survivor)
    device_double(monkeypatch, transform=lambda v: v.contiguous() if isinstance(v, torch.Tensor) else v)
    r = run(ctx, "randint_like", "float32", grads=False)
    assert r["status"] == "fail" and r["cause"] == "metadata", r["detail"]
    assert "strides" in r["detail"]


@pytest.mark.parametrize("key", ["argmin", "amax", "max.reduction_with_dim"])
def test_a_reduction_that_skips_its_last_element_fails(ctx, monkeypatch, key):
    # argmin's OpInfo samples never hold their minimum in the last element: a device whose
    # reduction skips it passed (the seed-1 oracle's reduce-drop survivor)
    from torchparity.scenarios import opinfo as oi

    def skip_last(fn, tree, process, seed, sync=None, **kw):
        if sync is not None:  # the device run: its input's last element is never read
            def cut(t):
                if isinstance(t, torch.Tensor) and t.numel() >= 2 and t.is_floating_point():
                    t = t.detach().clone()
                    t.view(-1)[-1] = t.view(-1)[0]
                return t
            tree = oi.map_tensors(tree, cut)
        return REAL_CALL(fn, tree, process, seed, sync, **kw)
    clean = run(ctx, key, "float32", grads=False, max_samples=2)
    assert clean["status"] == "pass", clean["detail"]
    monkeypatch.setattr(h, "_call", skip_last)
    r = run(ctx, key, "float32", grads=False, max_samples=2)
    assert r["status"] == "fail", r["detail"]


def test_a_device_that_returns_where_the_cpu_refuses_fails(ctx, monkeypatch):
    """Issue 48 item 4: the emulated Tensor.ldexp_ resized self (5,1) to (5,5) where the
    CPU refuses; the sample is a difference (fail, exception_mismatch), not "not
    comparable". The double: a device that broadcasts self instead of raising."""
    real = REAL_CALL

    def fake(fn, tree, process, seed, sync=None, **kw):
        r = real(fn, tree, process, seed, sync, **kw)
        if sync is not None and r.exc is not None and "doesn't match the broadcast shape" in str(r.exc):
            inp, args, kwargs = tree
            r = real(lambda a, *rest, **k: fn(a.expand(torch.broadcast_shapes(
                a.shape, *[x.shape for x in rest if isinstance(x, torch.Tensor)])).clone(), *rest, **k),
                tree, process, seed, sync, **kw)
        return r

    monkeypatch.setattr(h, "_call", fake)
    r = run(ctx, "ldexp", "float32", call="inplace", grads=False)
    assert (r["status"], r["cause"]) == ("fail", "exception_mismatch"), r
    assert "the device returned where the CPU raises RuntimeError" in r["detail"]


@pytest.mark.parametrize("key,dtype", [("erfc", "int32"), ("ldexp", "int64")])
def test_every_sample_refused_on_both_sides_is_no_answer(ctx, key, dtype):
    """Issue 48: erfc_ / ldexp_ in integer dtypes raise on the CPU as on the device; those
    rows read unsupported op_limit and made the API 'partial'. Both sides refusing is the
    op's contract: skip / not_comparable "both sides refused", neither limit nor support."""
    from torchparity.judge.evidence import is_answer

    r = run(ctx, key, dtype, call="inplace", grads=False)
    assert (r["status"], r["cause"]) == ("skip", "not_comparable"), r
    assert r["detail"].startswith("both sides refused") and "CPU raises" in r["detail"]
    assert not is_answer(r["status"], r["cause"])
    assert r["detail"].count("both sides refused") == 1, r["detail"]


def _off_by_one(value):
    """A device whose float results are off by one (a wrong rounding, a wrong logical_not_),
    written in place: an in-place variant's result stays its input."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        with torch.no_grad():
            value.add_(1)
    return value


@pytest.mark.parametrize("call", ["method", "inplace"])
def test_a_whole_class_skip_of_a_redundant_entry_still_compares(ctx, monkeypatch, call):
    """Issue 48 item 7 (hand-read Tensor.round / round_): OpInfo skips every TestCommon test
    of round.decimals_3 ("already tested with decimals_0"); that skip names no test and says
    nothing of a device's values, so a device that rounds to 3 decimals wrong must fail.
    Before, every decimals_3 row read skip upstream_skip "values not compared"."""
    r = run(ctx, "round.decimals_3", "float32", call=call, grads=False)
    assert r["status"] == "pass", r
    assert "marks every test" in r["note"] and "names no test" in r["note"]
    device_double(monkeypatch, transform=_off_by_one)
    r = run(ctx, "round.decimals_3", "float32", call=call, grads=False)
    assert (r["status"], r["cause"]) == ("fail", "mismatch"), r


def test_an_in_place_variant_mark_compares_the_device_with_the_cpu(ctx, monkeypatch):
    """Issue 48 item 7 (hand-read Tensor.logical_not_): OpInfo marks logical_not's
    test_variant_consistency_eager for non-bool dtypes (the in-place variant keeps the input's
    dtype, the function returns bool); the device and the CPU both run logical_not_, so a
    wrong float32 logical_not_ must fail. Before, those rows read "values not compared"."""
    r = run(ctx, "logical_not", "float32", call="inplace", grads=False)
    assert r["status"] == "pass", r
    assert "test_variant_consistency_eager" in r["note"] and "applied only to samples" in r["note"]
    device_double(monkeypatch, transform=_off_by_one)
    r = run(ctx, "logical_not", "float32", call="inplace", grads=False)
    assert (r["status"], r["cause"]) == ("fail", "mismatch"), r


def test_an_in_place_sample_the_cpu_resizes_stays_skipped_with_the_mark(ctx):
    """What the in-place variant mark still flags: addbmm_ on a broadcast input, which the
    CPU silently resizes (pytorch#55907); those samples skip with the mark, the rest compare."""
    r = run(ctx, "addbmm", "float32", call="inplace", grads=False)
    fwd = r["counts"]["forward"]
    assert fwd.get("pass", 0) >= 1 and fwd.get("not_comparable", 0) >= 1, r
    assert "resized its input" in r["detail"] or "resized its input" in str(r), r
