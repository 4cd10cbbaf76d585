"""torchparity's torch_npu stand-in (npu_testing): Ascend-style test files run unchanged on
the emulated device; it is active only when asked for and never beside a real torch_npu;
failures are classified from what the run recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchparity.devices.profiles import load_profile
from torchparity.npu_testing import ENV_VAR, SITE, environ, missing, not_emulated, real_torch_npu
from torchparity.npu_testing.classify import classify

REPO = Path(__file__).resolve().parents[2]
FIXTURE_TREE = REPO / "tests" / "fixtures" / "ascend_tests"
FIXTURE = FIXTURE_TREE / "npu" / "test_fixture_ascend_style.py"
ASCEND_ENV = "TORCHPARITY_ASCEND_TESTS"


def _python(args, env, cwd, timeout=300):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=str(cwd), timeout=timeout)


# -- activation --------------------------------------------------------------------------
def test_importing_it_without_being_asked_is_refused(tmp_path):
    env = environ()
    env.pop(ENV_VAR)
    proc = _python(["-c", "import torch_npu"], env, tmp_path)
    assert proc.returncode != 0
    assert f"active only when {ENV_VAR}=emu:<profile> is set" in proc.stderr


def test_a_real_torch_npu_wins(tmp_path):
    real = tmp_path / "elsewhere" / "torch_npu"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("")
    assert real_torch_npu([str(SITE), str(real.parent)]) == str(real / "__init__.py")
    assert real_torch_npu([str(SITE)]) is None  # the stand-in itself is not a real one
    env = environ()
    env["PYTHONPATH"] += os.pathsep + str(real.parent)
    proc = _python(["-c", "import torch_npu"], env, tmp_path)
    assert proc.returncode != 0 and "a real torch_npu is installed" in proc.stderr
    proc = _python(["-m", "torchparity.npu_testing", str(FIXTURE)], env, tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_bad_input_is_one_line(tmp_path):
    for args in ([], ["--device", "cpu", str(FIXTURE)], [str(tmp_path / "none.py")],
                 ["--bogus", str(FIXTURE)]):
        proc = _python(["-m", "torchparity.npu_testing", *args], environ(), tmp_path)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)


def test_missing_names_say_which_kind():
    assert not_emulated("torch_npu.npu_format_cast").startswith("private storage formats")
    assert not_emulated("torch_npu.npu._npugraph_handlers.npugraph_handler").startswith("graph")
    assert not_emulated("torch_npu.npu.graphs") and not not_emulated("torch_npu.npu.graphsX")
    assert not_emulated("torch_npu.no_such_thing") is None
    assert "adapter does not provide" in missing("torch_npu.no_such_thing")


# -- the fixture file, run unchanged --------------------------------------------------------
def test_ascend_style_file_runs_unchanged_and_every_failure_is_classified(tmp_path):
    out = tmp_path / "r.json"
    proc = _python(["-m", "torchparity.npu_testing", "--results", str(out), str(FIXTURE)],
                   environ("emu:ascend-a2"), FIXTURE.parent)
    assert out.is_file(), proc.stderr[-3000:]
    tests = {t["id"].rsplit(".", 1)[-1]: t for t in json.loads(out.read_text())["tests"]}
    outcome = {name: t["outcome"] for name, t in tests.items()}
    assert outcome == {
        "test_device_name_passes": "passed",
        "test_supported_on_a2_passes": "passed",
        "test_only_on_950_skipped": "skipped",
        "test_mul_passes_float32": "passed",
        "test_mul_passes_float16": "passed",
        "test_prec_is_absolute_fails": "failed",
        "test_rtol_tolerates_few_outliers_passes": "passed",
        "test_dot_float64_chip_limit": "error",
        "test_format_cast_not_emulated": "error",
        "test_adapter_gap": "error",
        "test_two_devices_skipped": "skipped",
    }, proc.stderr[-3000:]
    assert "current device is Ascend910B" in tests["test_only_on_950_skipped"]["detail"]
    profile = load_profile("ascend-a2")
    chip = classify(tests["test_dot_float64_chip_limit"]["detail"], profile)
    assert (chip.cls, chip.reason) == ("chip_limit", "aten.dot float64")
    assert "float32" in chip.fact and chip.source
    limit = classify(tests["test_format_cast_not_emulated"]["detail"], profile)
    assert (limit.cls, limit.reason) == ("emulator", "not emulated: private storage formats "
                                                     "(FRACTAL_NZ, NC1HWC0, ...)")
    gap = classify(tests["test_adapter_gap"]["detail"], profile)
    assert (gap.cls, gap.reason) == ("adapter_gap", "missing torch_npu.no_such_helper")
    wrong = classify(tests["test_prec_is_absolute_fails"]["detail"], profile)
    assert (wrong.cls, wrong.reason) == ("emulator", "defect: AssertionError")


# -- the classifier on texts ----------------------------------------------------------------
def test_classifier_classes():
    profile = load_profile("ascend-a2")
    assert classify("ModuleNotFoundError: No module named 'torchvision'", profile).cls \
        == "environment"
    assert classify("AttributeError: module 'numpy' has no attribute 'float'", profile).reason \
        == "numpy version"
    assert classify("RuntimeError: x", profile, timed_out=True).cls == "environment"
    assert classify("torchparity.devices.emulator.storage.EmulatorFeatureError: "
                    "torch.Generator(device='npu:0') is not supported by the emulated device",
                    profile).reason == "not emulated: torch.Generator"
    assert classify("ImportError: cannot import name 'npu_combine_tensors' from "
                    "'torch_npu.utils' (x.py)", profile).reason \
        == "missing torch_npu.utils.npu_combine_tensors"
    assert classify("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. "
                    "DefaultCPUAllocator: can't allocate memory", profile).cls == "environment"
    # a refusal the profile does not back is not a chip limit
    fake = "RuntimeError: \"add_npu\" not implemented for 'Float'"
    assert classify(fake, profile).cls == "emulator"


# -- the benchmark ---------------------------------------------------------------------------
def _benchmark(tree, tmp_path, *args):
    env = dict(os.environ, **{ASCEND_ENV: str(tree)})
    return _python([str(REPO / "benchmarks" / "ascend_tests.py"), "--out", str(tmp_path),
                    *args], env, tmp_path, timeout=900)


def test_benchmark_refuses_without_a_tree(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != ASCEND_ENV}
    proc = _python([str(REPO / "benchmarks" / "ascend_tests.py")], env, tmp_path)
    assert proc.returncode == 2 and ASCEND_ENV in proc.stderr
    proc = _benchmark(tmp_path, tmp_path)
    assert proc.returncode == 2 and "no npu/ folder" in proc.stderr


@pytest.mark.slow
def test_benchmark_on_ascends_tree(tmp_path):
    tree = os.environ.get(ASCEND_ENV)
    if not tree:
        pytest.skip(f"{ASCEND_ENV} is not set (the 'test' folder of an Ascend/pytorch checkout)")
    proc = _benchmark(tree, tmp_path, "--files", "test_soc_version.py,test_device.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp_path / "ascend_tests.json").read_text())
    assert data["summary"]["files"] == 2 and data["summary"]["outcomes"].get("passed", 0) >= 2
    assert all(f["cls"] for r in data["files"] for f in r["failures"])


@pytest.mark.slow
def test_benchmark_on_the_shipped_fixture_tree(tmp_path):
    proc = _benchmark(FIXTURE_TREE, tmp_path, "--timeout", "600")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "ascend_tests.json").read_text())["summary"]
    assert summary["files"] == 1 and summary["failures"] == 4
    assert summary["per_class"] == {"chip_limit": 1, "emulator": 2, "adapter_gap": 1,
                                    "environment": 0}
    assert "aten.dot float64" in (tmp_path / "ascend_tests.md").read_text()


def test_import_torch_alone_brings_the_device_as_with_torch_npu(tmp_path):
    # torch's backend autoload finds the adapter's entry point (site/*.dist-info), as it finds
    # torch_npu's; a backward right away works (no probe deadlock inside torch's import)
    code = ("import torch; t = torch.ones(2, device='npu', requires_grad=True); "
            "(t * 2).sum().backward(); import torch_npu; "
            "print(t.grad.tolist(), torch_npu.npu.get_device_name(0))")
    proc = _python(["-c", code], environ(), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["[2.0,", "2.0]", "Ascend910B3"]


def test_weak_ref_tensor_shares_storage_with_the_same_view(tmp_path):
    # torch_npu._C._weak_ref_tensor (test_npu_format.py): sizes, strides, offset and data
    code = ("import torch, torch_npu\nfrom torch_npu._C import _weak_ref_tensor\n"
            "b = torch.arange(40.).npu(); v = torch.as_strided(b, (2, 3), (1, 4), 5)\n"
            "w = _weak_ref_tensor(v)\n"
            "print(w.size() == v.size(), w.stride() == v.stride(), w.storage_offset(),\n"
            "      w.data_ptr() == v.data_ptr(), torch.equal(w, v))\n"
            "try:\n    _weak_ref_tensor(3)\nexcept TypeError as e:\n    print('TypeError')\n")
    proc = _python(["-c", code], environ(), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["True", "True", "5", "True", "True", "TypeError"]


def test_benchmark_adds_a_run_of_the_files_not_run_before(tmp_path):
    # --reclassify A --add B: B's rows for files A lacks join the table, A's own rows stay,
    # every failure classified again by this classifier
    def run(files):
        return {"meta": {"device": "emu:ascend-a2", "which": "named", "timeout": 240, "jobs": 2,
                         "torch": "2.13.0"},
                "files": [{"file": f, "rc": 1, "timed_out": False, "wall_s": 1.0, "tests": 1,
                           "outcomes": {"failed": 1},
                           "failures": [{"test": f"{f}.T.t", "detail": detail, "cls": "?", "reason": "?"}]}
                          for f, detail in files]}
    gap = "AttributeError: " + missing("torch_npu._C._nothing_here")
    (tmp_path / "a.json").write_text(json.dumps(run([("test_a.py", gap)])), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(run([("test_a.py", "AssertionError: x"),
                                                     ("test_b.py", gap)])), encoding="utf-8")
    proc = _python([str(REPO / "benchmarks" / "ascend_tests.py"), "--reclassify", str(tmp_path / "a.json"),
                    "--add", str(tmp_path / "b.json"), "--out", str(tmp_path / "out")], os.environ, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((tmp_path / "out" / "ascend_tests.json").read_text())
    assert [r["file"] for r in data["files"]] == ["test_a.py", "test_b.py"]
    assert data["summary"]["per_class"]["adapter_gap"] == 2  # A's row kept, B's new file added
    assert "1 more files from a second run" in data["meta"]["which"]
