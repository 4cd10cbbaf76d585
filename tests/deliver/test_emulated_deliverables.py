"""The deliverables on the emulated accelerator (skipped until it is built in this tree).

A small capability profile refuses float64 dot / vector_norm and has no ITT, as the seeds
describe Ascend NPUs. `check --gentest device-generic` must label everything emulated,
and the generated tests must run on the emulated device: green where it works, skipped
with the recorded reason exactly where check found a refusal.
"""

import json
import os
import subprocess
import sys

import pytest

PROFILE = """\
name: seed-like
description: refuses float64 dot and vector_norm, no ITT (a test profile)
device_type: npu
chips: [Atlas A2 训练系列产品]
device_name: seed-like (emulated)
ops:
  aten.dot: {dtypes: [float16, bfloat16, float32]}
  aten.linalg_vector_norm: {dtypes: [float16, bfloat16, float32]}
features:
  itt: false
"""
APIS = ["torch.autograd.gradcheck", "torch.autograd.profiler.emit_itt"]


@pytest.fixture(scope="module")
def emu_bundle(tmp_path_factory):
    root = tmp_path_factory.mktemp("emu")
    profile = root / "seed-like.yaml"
    profile.write_text(PROFILE, encoding="utf-8")
    spec = f"emu:{profile}"
    # the check runs in its own process: only this torch's features matter here, not
    # the profile this pytest process may already host
    from torchparity.devices.emulator import support_problem

    reason = support_problem()
    if reason:
        pytest.skip(reason)
    out = root / "bundle"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", *APIS, "--device", spec,
                           "--out", str(out), "--gentest", "device-generic", "-q"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return spec, out


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_everything_is_labelled_emulated(emu_bundle):
    _, out = emu_bundle
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["device"]["emulated"] and report["banner"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.split("<body", 1)[1].index('id="emulated-banner"') < html.split("<body", 1)[1].index("<h1")
    assert "EMULATED" in (out / "screenshot.svg").read_text(encoding="utf-8").replace("&#160;", " ")
    for lang, word in (("en", "emulated"), ("zh", "模拟设备")):
        assert word in (out / f"report.{lang}.md").read_text(encoding="utf-8").splitlines()[2]


def test_generated_tests_run_on_the_emulated_device(emu_bundle):
    spec, out = emu_bundle
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    refused = {(a["name"], s["id"]) for a in report["apis"] for s in a["scenarios"] if s["status"] == "unsupported"}
    assert ("torch.autograd.gradcheck", "fast_mul") in refused
    assert ("torch.autograd.profiler.emit_itt", "enabled") in refused
    env = dict(os.environ, TORCHPARITY_DEVICE=spec)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-o", "addopts=", str(out / "tests")],
                          capture_output=True, text=True, env=env, cwd=str(out), timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "PRIVATEUSE1" in proc.stdout and "_npu_float64 PASSED" in proc.stdout  # on the emulated npu
    skipped = proc.stdout.count(" SKIPPED")
    assert skipped == len(refused), proc.stdout[-4000:]
    assert "recorded by torchparity check on emu:" in proc.stdout
