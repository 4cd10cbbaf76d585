"""The ``runtime`` source: global switches, RNG, autograd, func and futures APIs doing
device work, on the CPU against itself and on the emulated A2 device; the Tensor /
Storage members added to the ``member`` source; the doc-location aliases of the resolver."""

from __future__ import annotations

import json

import torch

from tests.devices.emulator.helpers import run_python
from torchparity.api.resolve import maybe_resolve
from torchparity.devices import get_adapter
from torchparity.run.execute import execute
from torchparity.scenarios import sources
from torchparity.scenarios.sources import member, runtime

SAMPLE = ["torch.use_deterministic_algorithms", "torch.manual_seed", "torch.autograd.grad",
          "torch.autograd.FunctionCtx.mark_dirty", "torch.futures.Future.then", "torch.finfo"]


def _run(api, device_spec="cpu", dtype=None):
    adapter = get_adapter(device_spec)
    out = []
    for sc in runtime.scenarios(api, None):
        for d in ([dtype] if dtype else sc.dtypes):
            r, _ = execute(sc, d, adapter)
            out.append(r)
    return out


def test_cases_are_planned_fast_and_named_reasons_get_none():
    assert sources.source("runtime") is runtime.SOURCE and 61 <= runtime.ORDER <= 89
    assert runtime.scenarios("torch.mm", torch.mm) == []  # not its API: no probing at all
    assert runtime.scenarios("torch.set_num_interop_threads", None) == []
    assert "once per process" in runtime.why_not("torch.set_num_interop_threads", None)
    ids = [s.id for s in runtime.scenarios("torch.manual_seed", None)]
    assert ids == [s.id for s in runtime.scenarios("torch.manual_seed", None)] == ["runtime"]
    assert "random" in runtime.scenarios("torch.manual_seed", None)[0].tags
    assert len(runtime.apis()) >= 90


def test_cpu_against_itself_passes_and_restores_global_state():
    before = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads(),
              torch.get_float32_matmul_precision(), torch.is_grad_enabled())
    for api in SAMPLE + ["torch.set_num_threads", "torch.set_float32_matmul_precision",
                         "torch.autograd.grad_mode.set_grad_enabled.clone"]:
        results = _run(api, dtype="float32")
        assert results and all(r.status == "pass" for r in results), (api, [r.detail for r in results])
    assert (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads(),
            torch.get_float32_matmul_precision(), torch.is_grad_enabled()) == before


def test_a_block_answer_depends_on_the_api():
    sc = runtime.scenarios("torch.autograd.grad", None)[0]
    torch.manual_seed(0)
    d, dd, ga, gb, gc = sc.fn("cpu", torch.float64)
    torch.manual_seed(0)
    g = torch.randn(3, dtype=torch.float64)  # the leaves, drawn in the body's order
    a, b, c = (torch.randn(2, 3, dtype=torch.float64), torch.randn(3, dtype=torch.float64),
               torch.randn(2, 1, dtype=torch.float64))
    torch.testing.assert_close(d, 3 * g ** 2 + 2)
    torch.testing.assert_close(dd, 6 * g)
    # the broadcast operands' gradients: summed back over the dimensions they were spread on
    r = 2 * (a * b + c)
    torch.testing.assert_close(ga, r * b)
    torch.testing.assert_close(gb, (r * a).sum(0))
    torch.testing.assert_close(gc, r.sum(1, keepdim=True))
    assert "torch.autograd.grad" in sc.snippet('"npu"', "float32")


def test_members_added_to_the_member_source():
    # CPU-only members: the device answer is normalised ("raised exactly off the CPU")
    sc = member.scenarios("torch.Tensor.apply_", None)[0]
    raised_off_cpu, values = sc.fn("cpu", torch.float32)
    assert raised_off_cpu is True and values.device.type == "cpu"
    assert member.scenarios("torch.sparse.Tensor.coalesce", None)
    assert member.scenarios("torch.QInt8Storage", None)  # quantized legacy storages
    assert member.scenarios("torch.Tensor.cuda", None) == []  # still a named reason


def test_doc_locations_resolve():
    r = maybe_resolve("torch.autograd.Node.register_prehook")
    assert r is not None and r.obj is torch.autograd.graph.Node.register_prehook
    assert r.name == "torch.autograd.Node.register_prehook"
    assert maybe_resolve("torch.autograd.FunctionCtx.mark_dirty").obj \
        is torch.autograd.function.FunctionCtx.mark_dirty
    assert maybe_resolve("torch.autograd.NodeX") is None
    # instance attributes a class only annotates resolve to a read-only property
    r = maybe_resolve("torch.TypedStorage.dtype")
    assert isinstance(r.obj, property) and "torch.dtype" in r.obj.__doc__
    assert member.scenarios("torch.TypedStorage.dtype", r.obj)
    assert maybe_resolve("torch.TypedStorage.no_such_attribute") is None


def test_on_the_emulated_a2(tmp_path):
    out = run_python(f"""
        import json
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.scenarios.sources import member, runtime

        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        rows = {{}}
        for api, dtype in {json.dumps([[a, "float32"] for a in SAMPLE] + [
                ["torch.autograd.grad", "float64"], ["torch.dequantize", "float32"],
                ["torch.compile", "float32"]])}:
            for sc in runtime.scenarios(api, None):
                r, _ = execute(sc, dtype, adapter)
                rows[api + "/" + dtype] = [r.status, r.cause]
        sc = member.scenarios("torch.Tensor.numpy", None)[0]
        r, _ = execute(sc, "float32", adapter)
        rows["numpy"] = [r.status, r.cause]
        print(json.dumps(rows))
        """, tmp_path, timeout=400)
    rows = json.loads(out.strip().splitlines()[-1])
    for api in SAMPLE:
        assert rows[api + "/float32"] == ["pass", None], (api, rows)
    assert rows["torch.compile/float32"] == ["pass", None]
    assert rows["numpy"] == ["pass", None]
    # what the A2 profile refuses is an answer, not an error: float64 in the device's
    # grad kernels (the docs leave it out); quantized tensors the emulator has none of, which
    # is its own limit, not an answer about the chip
    assert rows["torch.autograd.grad/float64"][0] in ("pass", "unsupported")
    assert rows["torch.dequantize/float32"] == ["skip", "emulator_limit"]



def test_set_multithreading_enabled_is_observed_by_what_it_switches():
    """Issue 48: the case compared only a gradient, the same with the switch or without
    it (hollow); it now compares the flag inside and where a backward ran, which taking
    the API away changes."""
    from torchparity.api.classify import code_objects

    api = "torch.autograd.grad_mode.set_multithreading_enabled"
    obj = maybe_resolve(api).obj
    (sc,) = runtime.scenarios(api, None)
    # twice: taking its restoring exit away must not leave the next row's flag off
    for dtype in ("float32", "float64"):
        r, _ = execute(sc, dtype, get_adapter("cpu"), footprint=True, api_obj=obj,
                       api_codes=code_objects(obj))
        assert r.status == "pass" and r.own is not None and r.own.observes is True, (dtype, r.detail, r.own)
    assert torch._C._is_multithreading_enabled()
