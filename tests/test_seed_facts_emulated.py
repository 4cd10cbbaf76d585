"""The seeds' facts, reproduced on the shipped emulated Ascend A2 profile, end to end.

Seed 000 (910B3, an Atlas A2): gradcheck / gradgradcheck slow mode work in float64;
fast mode does not (linalg.vector_norm / dot refuse float64); emit_itt(enabled=False) is
a no-op and enabled=True fails because the build has no ITT. Seed 001: forward AD on
device dual tensors works in float16 and float32, tensors stay on the device, exit
clears the tangent.
"""

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def a2(seed_bundle_a2):
    out = seed_bundle_a2
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return out, report, {a["name"]: {(s["id"], s["dtype"]): s for s in a["scenarios"]}
                         for a in report["apis"]}


def test_labelled_emulated(a2):
    _, report, _ = a2
    assert report["device"] == {"type": "npu", "name": "Ascend910B3 (emulated)",
                                "emulated": True, "profile": "ascend-a2", "spec": "emu:ascend-a2"}
    assert report["banner"] == "emulated: a prediction, not a hardware result"
    assert all(s["emulated"] for a in report["apis"] for s in a["scenarios"])


@pytest.mark.parametrize("api", ["torch.autograd.gradcheck", "torch.autograd.gradgradcheck"])
def test_slow_mode_float64_passes_fast_mode_is_refused(a2, api):
    _, _, by = a2
    for sid in ("slow_mul", "slow_sin_cos", "slow_exp", "slow_sum", "slow_linear"):
        assert by[api][(sid, "float64")]["status"] == "pass", sid
    fast = by[api][("fast_mul", "float64")]
    assert (fast["status"], fast["cause"]) == ("unsupported", "dtype_limit")
    # the NPU's words (aclnn's dtype check as torch_npu raises it, chips/messages.yaml)
    assert ("linalg_vector_norm" in fast["detail"] or "dot" in fast["detail"]) and (
        "DT_DOUBLE" in fast["detail"] or "'Double'" in fast["detail"])


def test_emit_itt_is_a_build_configuration_limit(a2):
    _, _, by = a2
    itt = by["torch.autograd.profiler.emit_itt"]
    # a no-op taken away is the same no-op: the case cannot tell a wrong API (issue 48)
    noop = itt[("disabled_noop", "float32")]
    assert (noop["status"], noop["own"]["observes"]) == ("skip", False) and "hollow" in noop["tags"]
    assert (itt[("enabled", "float32")]["status"], itt[("enabled", "float32")]["cause"]) == (
        "unsupported", "build_config")


def test_forward_ad_rows_pass_in_float16_and_float32(a2):
    _, _, by = a2
    unpack, enter = by["torch.autograd.forward_ad.unpack_dual"], by["torch.autograd.forward_ad.enter_dual_level"]
    for dtype in ("float16", "float32"):
        for sid in ("device_kept", "square_tangent", "plain_tensor"):
            assert unpack[(sid, dtype)]["status"] == "pass", (sid, dtype)
    for key, row in enter.items():
        assert row["status"] == "pass", key
    assert "None" in enter[("exit_clears_tangent", "float32")]["detail"]


def test_generated_device_generic_tests_run_on_the_emulated_device(a2):
    out, report, _ = a2
    refused = sum(1 for a in report["apis"] for s in a["scenarios"] if s["status"] == "unsupported")
    env = dict(os.environ, TORCHPARITY_DEVICE="emu:ascend-a2")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-o", "addopts=", str(out / "tests" / "device-generic")],
                          capture_output=True, text=True, env=env, cwd=str(out), timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert f"{refused} skipped" in proc.stdout  # exactly the cases check found refused
    assert " 0 passed" not in proc.stdout and "passed" in proc.stdout
