"""The ``fx`` source on real torch.fx APIs: the CPU against itself, the emulated device
(in this process: the profile the test process hosts; and one ``check`` on
emu:ascend-a2), what its blocks return, and the APIs it names as not runnable."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import warnings

import pytest
import torch

from torchparity.run.execute import execute
from torchparity.scenarios.sources import fx, offer

APIS = ["torch.fx.symbolic_trace", "torch.fx.Graph.inserting_after", "torch.fx.Interpreter.run_node",
        "torch.fx.Transformer.call_function", "torch.fx.replace_pattern",
        "torch.fx.experimental.proxy_tensor.make_fx",
        "torch.fx.experimental.symbolic_shapes.ShapeEnv.produce_guards_expression"]


def _rows(api, adapter):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scs = fx.scenarios(api, None)
        assert scs and all(sc.source == "fx" and sc.api == api for sc in scs)
        return [execute(sc, dt, adapter)[0] for sc in scs for dt in sc.dtypes]


@pytest.mark.parametrize("api", APIS)
def test_real_api_passes_cpu_against_cpu(api, cpu):
    rows = _rows(api, cpu)
    assert [(r.status, r.detail) for r in rows if r.status != "pass"] == []


@pytest.mark.parametrize("api", APIS[:4] + APIS[5:])
def test_real_api_runs_on_the_emulated_device_and_matches(api, emu):
    rows = _rows(api, emu)
    assert all(r.emulated for r in rows)
    assert [(r.status, r.detail) for r in rows if r.status != "pass"] == []


def test_blocks_run_on_the_device_and_return_device_free_text(emu):
    sc = fx.scenarios("torch.fx.Graph.inserting_after", None)[0]
    torch.manual_seed(0)
    code, value = sc.fn(emu.torch_device, torch.float32)
    assert value.device.type == torch.device(emu.torch_device).type  # the edited graph ran there
    assert "neg = torch.neg(lin)" in code and "npu" not in code
    torch.manual_seed(0)
    code_cpu, value_cpu = sc.fn("cpu", torch.float32)
    assert code_cpu == code
    torch.testing.assert_close(value.cpu(), value_cpu)


def test_an_edit_changes_what_is_compared(cpu):
    # recompile swaps add for sub: the code and the values the block returns both follow
    sc = fx.scenarios("torch.fx.GraphModule.recompile", None)[0]
    torch.manual_seed(0)
    same, code, value = sc.fn("cpu", torch.float32)
    assert same and "torch.sub(sum_1, mean)" in code
    torch.manual_seed(0)
    plain = fx.scenarios("torch.fx.GraphModule.code", None)[0].fn("cpu", torch.float32)
    assert not torch.allclose(value, plain[1])


def test_symbols_come_from_the_device_tensor(emu):
    sc = fx.scenarios("torch.fx.experimental.symbolic_shapes.ShapeEnv.bind_symbols", None)[0]
    torch.manual_seed(0)
    on_dev = sc.fn(emu.torch_device, torch.float32)
    assert on_dev == sc.fn("cpu", torch.float32)
    assert ": 6" in on_dev and ": 4" in on_dev  # the hints are the device tensor's sizes


def test_ids_are_stable_and_named_reasons_for_the_rest():
    a = [sc.id for sc in fx.scenarios("torch.fx.Node.replace_all_uses_with", None)]
    fx.SOURCE.__dict__.pop("_scenarios_cache")  # made again, not served from the cache
    assert a == [sc.id for sc in fx.scenarios("torch.fx.Node.replace_all_uses_with", None)] == [
        "Node.replace_all_uses_with"]
    assert fx.scenarios("torch.abs", torch.abs) == [] and "not a torch.fx API" in fx.why_not("torch.abs", None)
    assert "inductor" in fx.why_not("torch.fx.passes.regional_inductor.regional_inductor", None)
    assert "does not have" in fx.why_not("torch.fx.experimental.symbolic_shapes.ShapeEnv.set_unbacked_var_to_val", None)
    found = offer("torch.fx.passes.regional_inductor.regional_inductor", None)
    assert not [sc for sc in found.scenarios if sc.source == "fx"] and "inductor" in found.tried["fx"]


def test_print_tabular_needs_tabulate(cpu):
    scs = fx.scenarios("torch.fx.Graph.print_tabular", None)
    if importlib.util.find_spec("tabulate") is None:  # tabulate (a dependency) is missing
        assert scs == [] and "tabulate" in fx.why_not("torch.fx.Graph.print_tabular", None)
        return
    torch.manual_seed(0)
    table = scs[0].fn("cpu", torch.float32)
    assert table[0].split() == ["opcode", "name", "target", "args", "kwargs"] and len(table) == 2 + 9
    assert _rows("torch.fx.Graph.print_tabular", cpu)[0].status == "pass"


@pytest.mark.slow
def test_check_on_ascend_a2(tmp_path):
    out = tmp_path / "c"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", "torch.fx.Tracer.is_leaf_module",
                           "--device", "emu:ascend-a2", "--out", str(out), "-q"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["device"]["spec"] == "emu:ascend-a2" and report["device"]["emulated"]
    rows = [s for a in report["apis"] for s in a["scenarios"]]
    assert rows and all(s["source"] == "fx" for s in rows)
    assert {s["status"] for s in rows if s["dtype"] != "float64"} == {"pass"}, rows
    # float64: the traced Linear's addmm is the block's model, refused by A2: scaffolding,
    # not the Tracer's answer
    f64 = [s for s in rows if s["dtype"] == "float64"]
    assert all(s["status"] == "skip" and "scaffolding refused" in s["detail"] for s in f64), f64
    assert all(s["emulated"] for s in rows)
    # the judge compared the flags and the generated code (Linear traced through)
    assert rows[0]["detail"].startswith("matches the CPU: (True, False, False, ")
    assert "lin_weight = self.lin.w" in rows[0]["detail"]


def test_wrap_snippet_carries_the_top_level_wrap():
    # fx.wrap works only at a module's top level: the case's helper is wrapped there, and
    # the snippet (the body with what it reads) carries the decorated helper
    (sc,) = fx.scenarios("torch.fx.wrap", None)
    code = sc.snippet('"cpu"')
    assert "@fx.wrap\ndef clamp_sum(t):" in code and "import torch.fx as fx" in code
    torch.manual_seed(0)
    targets, _ = sc.fn("cpu", torch.float32)
    assert "<function clamp_sum at 0x?>" in targets  # kept as one call, not traced through


def test_a_tracer_method_is_host_only_not_the_traced_modules_device_work(emu):
    """Issue 48 item 5: Tracer.getattr was filed device-state from the traced GraphModule's
    own addmm on the device (the frames' attribution, the case cannot run without the
    tracer's proxies). The traced module now runs on a CPU copy of itself: the tracer's
    answer is its own, host-only, and the graph's output is still compared."""
    from torchparity.api.classify import code_objects
    from torchparity.api.resolve import resolve
    from torchparity.judge.evidence import row_evidence
    from torchparity.run.execute import execute

    api = "torch.fx.Tracer.getattr"
    obj = resolve(api).obj
    (sc,) = fx.scenarios(api, None)
    res, entries = execute(sc, "float32", emu, footprint=True, api_obj=obj, api_codes=code_objects(obj))
    assert res.status == "pass", res.detail
    assert not [e.op for e in entries if "addmm" in e.op], entries
    assert row_evidence(res.status, res.cause, entries, own=res.own) == "host-only", (entries, res.own)


def test_a_tracing_switch_is_used_while_make_fx_traces(cpu):
    """Issue 48: ``maybe_disable_thunkify`` was entered outside ``make_fx`` (no tracer to
    switch: a no-op, the case hollow). It now acts inside the traced function, where it
    makes the tracer trace size arithmetic at once: taking it away changes the graph."""
    from torchparity.api.classify import code_objects
    from torchparity.api.resolve import resolve

    api = "torch.fx.experimental.proxy_tensor.maybe_disable_thunkify"
    obj = resolve(api).obj
    (sc,) = fx.scenarios(api, None)
    res, _ = execute(sc, "float32", cpu, footprint=True, api_obj=obj, api_codes=code_objects(obj))
    assert res.status == "pass" and res.own is not None and res.own.observes is True, (res.detail, res.own)
