"""Fault modules (``docs/faults.md``): a module written outside the project plugged into the
emulated device through the interface, the generic per-op mutants, and the judge's
aliasing check against inputs that the ``mutant-alias`` class needs (issue 45).

In-process through ``faults.injecting(..., modules=...)`` on OpInfo cases, as a check
worker runs them (a real run names the module in TORCHPARITY_EMU_FAULT_MODULE).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from torchparity.devices.emulator import faults

EXAMPLE = str(Path(__file__).resolve().parents[3] / "docs" / "examples" / "fault_example.py")


@pytest.fixture(scope="module")
def ctx(dev):
    from torchparity.devices import get_adapter
    from torchparity.run.handlers import WorkerContext

    adapter = get_adapter("emu:allow-all")
    adapter.setup()
    return WorkerContext(adapter=adapter, options={"threads": 1})


def _row(ctx, key, dtype="float32", samples=2):
    from torchparity.run.handlers import handle

    return handle(ctx, {"kind": "opinfo", "api": key, "key": key, "dtype": dtype, "max_samples": samples})


OUTSIDE = '''
import torch
FAULTS = {"cumsum-last-lost": "cumsum forgets its last element's carry"}
def wrap(fault, op, call):
    if op._schema.name != "aten::cumsum":
        return None
    def run(x, dim, *a, **k):
        out = call(x, dim, *a, **k)
        out.narrow(dim, out.size(dim) - 1, 1).copy_(x.narrow(dim, x.size(dim) - 1, 1))
        return out
    return run
'''


def test_an_outside_module_plugged_in_kills_a_case(ctx, tmp_path):
    """A fault module written here, outside the project's code, with only ``FAULTS`` and
    ``wrap``: named like an environment entry, it reaches the device; the case turns red."""
    path = tmp_path / "outside_fault.py"
    path.write_text(OUTSIDE)
    assert _row(ctx, "cumsum")["status"] == "pass"
    with faults.injecting(["cumsum-last-lost"], modules=[str(path)]):
        assert faults.touches("cumsum-last-lost", "aten.cumsum.default")  # by its wrap
        assert not faults.touches("cumsum-last-lost", "aten.add.Tensor")
        bad = _row(ctx, "cumsum")
    assert bad["status"] == "fail", bad["detail"]
    assert _row(ctx, "cumsum")["status"] == "pass"  # gone on exit


def test_the_documented_example_module(ctx):
    with faults.injecting(["scan-off-by-one"], modules=[EXAMPLE]):
        assert faults.touches("scan-off-by-one", "aten::cumsum")
        bad = _row(ctx, "cumsum")
    assert bad["status"] == "fail", bad["detail"]


def test_the_environment_names_modules_and_refuses_bad_ones(tmp_path):
    env = {faults.MODULE_ENV: EXAMPLE, faults.ENV: "scan-off-by-one,mutant-swap@aten.sort.stable"}
    assert faults.problem(env) is None
    assert faults.labels(env) == ["fault:scan-off-by-one", "fault:mutant-swap@aten.sort.stable"]
    assert "unknown fault 'scan-off-by-one'" in faults.problem({faults.ENV: "scan-off-by-one"})
    assert "cannot load fault module" in faults.problem({faults.MODULE_ENV: str(tmp_path / "none.py")})
    (tmp_path / "empty.py").write_text("X = 1\n")
    assert "no fault module" in faults.problem({faults.MODULE_ENV: str(tmp_path / "empty.py")})


def test_a_targeted_fault_acts_on_its_op_only(ctx):
    with faults.injecting(["numeric-1e-2@aten.mul.Tensor"]):
        assert faults.touches("numeric-1e-2@aten.mul.Tensor", "aten::mul.Tensor")
        assert not faults.touches("numeric-1e-2@aten.mul.Tensor", "aten::add.Tensor")
        assert _row(ctx, "add")["status"] == "pass"
        assert _row(ctx, "mul")["status"] == "fail"


@pytest.mark.parametrize("mutant,op,key", [
    ("mutant-ulp", "aten.cumsum.default", "cumsum"),
    ("mutant-swap", "aten.cumsum.default", "cumsum"),
    ("mutant-alias", "aten.cumsum.default", "cumsum"),
    ("mutant-int-last", "aten.argmax.default", "argmax"),
    ("mutant-inplace-nowhere", "aten.add_.Tensor", "add"),
    # transpose reaches the emulator as the Meta view as_strided (a pure view's own path)
    ("mutant-view-strides", "aten.as_strided", "transpose"),
])
def test_each_mutant_class_is_killed_where_it_fires(ctx, dev, mutant, op, key):
    assert faults.touches(mutant, op)
    with faults.injecting([f"{mutant}@{op}"]):
        if key == "add":  # the in-place variant: an OpInfo "add" case runs the out-of-place op
            import torch

            x = torch.ones(3, device=dev)
            x.add_(1)
            assert x.cpu().tolist() == [1.0, 1.0, 1.0]  # wrote nowhere
            return
        bad = _row(ctx, key, samples=3)
    assert bad["status"] == "fail", (mutant, bad["detail"])


def test_an_output_aliasing_its_input_is_named(ctx):
    """Before issue 45 aliasing was compared between outputs only: a kernel that writes its
    result into its input and returns it passed."""
    with faults.injecting(["mutant-alias@aten.cumsum.default"]):
        bad = _row(ctx, "cumsum")
    assert bad["status"] == "fail" and bad["cause"] == "metadata"
    assert "shares storage with input tensor 0 on the device" in bad["detail"]


# -- the survivor classes of issue 45, each a classic kernel bug from outside ------------
KERNEL_BUGS = '''
import torch
FAULTS = {"dup-last-wins": "index_add: of duplicate indices only the last one's source is added",
          "ties-last": "argmax / argmin: the last of tied extremes, not the first"}
def wrap(fault, op, call):
    name = op._schema.name.split("::")[-1]
    if fault == "dup-last-wins" and name == "index_add":
        def run(x, dim, index, source, *a, **k):
            last = {}
            for j, i in enumerate(index.tolist()):
                last[i] = j
            keep = torch.tensor(sorted(last.values()), dtype=torch.long)
            return call(x, dim, index[keep], source.index_select(dim, keep), *a, **k)
        return run
    if fault == "ties-last" and name in ("argmax", "argmin"):
        def run(x, dim=None, keepdim=False):
            if dim is None:
                flat = x.reshape(-1)
                return flat.numel() - 1 - call(flat.flip(0), None, False)
            return x.size(dim) - 1 - call(x.flip(dim), dim, keepdim)
        return run
    return None
'''


@pytest.fixture
def kernel_bugs(tmp_path):
    path = tmp_path / "kernel_bugs.py"
    path.write_text(KERNEL_BUGS)
    return str(path)


@pytest.mark.parametrize("fault,key,dtype", [
    # no OpInfo sample of index_add holds a duplicate index: the project adds one
    ("dup-last-wins", "index_add", "float32"),
    # a tie among maxima does not survive the sample cap: the project adds one after it
    ("ties-last", "argmax", "float32"),
    ("ties-last", "argmin", "int64"),
])
def test_inputs_that_show_the_kernel_bug(ctx, kernel_bugs, fault, key, dtype):
    assert _row(ctx, key, dtype)["status"] == "pass"
    with faults.injecting([fault], modules=[kernel_bugs]):
        bad = _row(ctx, key, dtype)
    assert bad["status"] == "fail", bad["detail"]
    assert "torchparity's own" in (bad.get("note") or "")


@pytest.mark.parametrize("key", ["to", "bfloat16", "half"])
def test_a_truncating_conversion_fails(ctx, key):
    """float32 -> bfloat16 / float16 has one right answer (round to nearest even): a device
    that truncates fails, the values needing rounding being the project's own sample."""
    with faults.injecting(["convert-truncate"], modules=[EXAMPLE]):
        bad = _row(ctx, key)
    assert bad["status"] == "fail" and "exact match required" in bad["detail"], bad["detail"]


@pytest.mark.parametrize("key,dtype", [("to", "float32"), ("bfloat16", "float32"), ("sort", "bfloat16"),
                                       ("argmax", "float16"), ("index_add", "bfloat16")])
def test_exact_and_own_samples_pass_under_device_noise(ctx, key, dtype):
    with faults.injecting((), noise=True):
        ok = _row(ctx, key, dtype)
    assert ok["status"] == "pass", ok["detail"]


@pytest.mark.parametrize("dunder,key", [("__floordiv__", "floor_divide"), ("__mod__", "remainder"),
                                        ("__truediv__", "div.no_rounding_mode"), ("__and__", "bitwise_and")])
def test_a_dunder_operator_reaches_its_opinfo_entry(dunder, key):
    from torchparity.scenarios.opinfo import opinfo_for

    (e,) = opinfo_for(f"torch.Tensor.{dunder}")
    assert e.key == key and e.call == f"api:torch.Tensor.{dunder}"


def test_a_dunder_operator_case_sees_a_kernel_bug(ctx):
    from torchparity.run.handlers import handle

    case = {"kind": "opinfo", "api": "torch.Tensor.__floordiv__", "key": "floor_divide",
            "call": "api:torch.Tensor.__floordiv__", "dtype": "int64", "max_samples": 2}
    assert handle(ctx, case)["status"] == "pass"
    with faults.injecting(["mutant-int-last@aten.floor_divide"]):
        bad = handle(ctx, case)
    assert bad["status"] == "fail", bad["detail"]


@pytest.mark.slow  # a fresh process hosting the A2 profile (~20 s)
def test_device_path_is_named_only_for_a_new_path_difference(tmp_path):
    """cumprod takes another path on the emulated A2 even when clean (its rows pass): under
    an injected bug the value difference is the bug's, so the cause stays ``mismatch`` with
    the path noted (before issue 45: ``device_path``)."""
    from .helpers import run_python

    out = run_python("""
        import json, warnings
        warnings.simplefilter("ignore")
        import os
        os.environ["TORCHPARITY_EMU_FAULT"] = "mutant-swap@aten.cumprod"
        from torchparity.devices import get_adapter
        from torchparity.run.handlers import WorkerContext, handle
        emu = get_adapter("emu:ascend-a2"); emu.setup()
        ctx = WorkerContext(adapter=emu, options={"threads": 1})
        r = handle(ctx, {"kind": "opinfo", "api": "torch.cumprod", "key": "cumprod", "dtype": "float32",
                         "max_samples": 1})
        print(json.dumps([r["status"], r.get("cause"), r.get("detail")]))
    """, tmp_path)
    status, cause, detail = __import__("json").loads(out.strip().splitlines()[-1])
    assert status == "fail" and cause == "mismatch", (cause, detail)
    assert "another code path" in detail and "(as on the clean device)" in detail


def _check_cli(apis, env_extra, tmp_path):
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "o"
    env = dict(os.environ, **env_extra)
    r = subprocess.run([sys.executable, "-c", "from torchparity.cli import main; main()", "check", *apis,
                        "--device", "emu:ascend-a2", "--dtypes", "float32", "--out", str(out), "--no-html",
                        "--gentest", "none"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    return json.loads((out / "report.json").read_text())


@pytest.mark.slow  # a 2-rank world and the memory APIs under the example's hooks, ~1 min
def test_the_example_hooks_reach_collectives_and_the_device_module(tmp_path):
    """The environment path of a plugged module: its collective hook reaches the rank
    processes (all_reduce turns red) and every row says what was injected. (Its
    memory-granule fault survives memory_allocated's scenario, which compares growth and
    release, not the counter's absolute value: reported, not hidden.)"""
    report = _check_cli(["torch.distributed.all_reduce"],
                        {faults.MODULE_ENV: EXAMPLE, faults.ENV: "allreduce-extra-rank,memory-granule"}, tmp_path)
    (a,) = report["apis"]
    rows = [s for s in a["scenarios"] if s["status"] != "skip"]
    assert rows and any(s["status"] == "fail" for s in rows), [(s["status"], s["detail"][:80]) for s in rows]
    assert all("fault:allreduce-extra-rank" in s["injected"] for s in rows)


def test_a_device_module_hook_changes_what_the_counters_answer(dev):
    import torch

    module = getattr(torch, dev)
    x = torch.ones(256, device=dev)
    clean = module.memory_allocated()
    with faults.injecting(["memory-granule"], modules=[EXAMPLE]):
        assert module.memory_allocated() == clean + 512
    with faults.injecting(["memstat-zero"]):  # the catalogue's own, through the same hook
        assert module.memory_allocated() == 0 and set(module.memory_stats().values()) == {0}
    del x


def test_plug_makes_a_module_known_without_activating_it(monkeypatch):
    monkeypatch.setattr(faults, "_CATALOGUE", dict(faults._CATALOGUE))  # noqa: SLF001 (restored)
    monkeypatch.setattr(faults, "FAULTS", dict(faults.FAULTS))
    assert "scan-off-by-one" not in faults.FAULTS
    faults.plug(EXAMPLE)
    assert "scan-off-by-one" in faults.FAULTS and not faults.ACTIVE
    assert faults.touches("scan-off-by-one", "aten.cumsum")
