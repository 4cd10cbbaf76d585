"""Sweep and predict on the emulated device (a device like any other: only its spec here)."""

import pytest
import torch

from torchparity.app.predict import against_sweep, predict
from torchparity.app.sweep import sweep
from torchparity.devices import get_adapter
from torchparity.results.models import EMULATED_BANNER

reason = get_adapter("emu:allow-all").unavailable_reason()
pytestmark = pytest.mark.skipif(reason is not None, reason=reason or "")

PROFILE = """\
name: test-no-dot-f64
device_type: npu
ops:
  aten.dot: {dtypes: [float16, bfloat16, float32, int64]}
  aten.linalg_vector_norm: {dtypes: [float16, bfloat16, float32]}
"""
APIS = ["torch.dot", "torch.nn.functional.normalize", "torch.add", "torch.sort"]
DTYPES = ["bool", "int64", "float16", "float32", "float64"]


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_allow_all_has_no_false_fails_and_is_labelled(tmp_path):
    s = sweep(out=str(tmp_path), device="emu:allow-all", apis=APIS, dtypes=DTYPES, jobs=2)
    assert s.ran == s.planned and s.problems == 0, s.totals
    assert s.totals.get("pass", 0) >= 10
    md = (tmp_path / "matrix.md").read_text(encoding="utf-8")
    assert md.splitlines()[0] == EMULATED_BANNER


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_sweep_confirms_every_prediction(tmp_path):
    prof = tmp_path / "p.yaml"
    prof.write_text(PROFILE, encoding="utf-8")
    out = tmp_path / "o"
    s = sweep(out=str(out), device=f"emu:{prof}", apis=APIS, dtypes=DTYPES, jobs=2)
    assert s.problems == 0, s.totals
    preds = predict(APIS, str(prof), dtypes=DTYPES)
    conf = against_sweep(preds, str(out))
    assert conf.compared >= 15 and conf.disagreements == [], conf.disagreements
    f64 = [p for p in preds if p.api == "torch.dot" and p.dtype == "float64"][0]
    assert f64.status == "unsupported" and f64.refusals[0].op == "aten.dot"


@pytest.mark.slow
def test_full_op_db_float32_on_allow_all_has_no_false_fails(tmp_path):
    s = sweep(out=str(tmp_path), device="emu:allow-all", catalogue=True, dtypes=["float32"])
    assert s.planned >= 700 and s.problems == 0, s.totals


def _a2_rows(out):
    import json

    rows = json.loads((out / "matrix.json").read_text(encoding="utf-8"))["rows"]
    return {(r["api"], r["dtype"]): r for r in rows}


SEED_OPS = ["torch.mm", "torch.dot", "torch.linalg.vector_norm", "torch.nn.functional.relu"]


def _assert_seed_ops(rows):
    # seed 000: Ascend NPUs do not support float64 linalg.vector_norm, dot, mm, relu
    for api in SEED_OPS:
        f64, f32 = rows[(api, "float64")], rows[(api, "float32")]
        assert (f64["status"], f64["cause"]) == ("unsupported", "dtype_limit"), f64
        # the NPU's words: aclnn's dtype check as torch_npu raises it (chips/messages.yaml)
        assert "not implemented for DT_DOUBLE" in f64["detail"] or "not implemented for 'Double'" in f64["detail"]
        assert f32["status"] == "pass", f32


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_shipped_ascend_a2_profile_refuses_the_seed_float64_ops(tmp_path):
    s = sweep(out=str(tmp_path), device="emu:ascend-a2", apis=SEED_OPS,
              dtypes=["float32", "float64"], jobs=2)
    assert s.ran == s.planned
    _assert_seed_ops(_a2_rows(tmp_path))


@pytest.mark.slow
def test_full_op_db_sweep_on_ascend_a2_completes(tmp_path):
    dtypes = ["float32", "float16", "bfloat16", "float64"]
    s = sweep(out=str(tmp_path), device="emu:ascend-a2", catalogue=True, dtypes=dtypes)
    assert s.planned >= 700 * len(dtypes) and s.ran == s.planned, s.totals
    assert s.totals.get("crash", 0) == 0 and s.totals.get("timeout", 0) == 0, s.totals
    _assert_seed_ops(_a2_rows(tmp_path))


@pytest.mark.skipif(not hasattr(torch.nn.functional, "linear_cross_entropy"),
                    reason="this torch has no torch.nn.functional.linear_cross_entropy")
@pytest.mark.slow
def test_a_device_dependent_algorithm_is_named_as_the_cause(tmp_path):
    # linear_cross_entropy's chunked path picks its accumulation policy by device type:
    # float32 "accurate" on the CPU, the input dtype "compact" on unlisted devices (npu)
    import json

    s = sweep(out=str(tmp_path), device="emu:allow-all", apis=["torch.nn.functional.linear_cross_entropy"],
              dtypes=["float16", "float32"], jobs=2)
    rows = {(r["variant"], r["dtype"]): r
            for r in json.loads((tmp_path / "matrix.json").read_text(encoding="utf-8"))["rows"]}
    assert s.ran == s.planned == len(rows)
    chunked = rows[("nn.functional.linear_cross_entropy.chunked", "float16")]
    assert (chunked["status"], chunked["cause"]) == ("fail", "device_path"), chunked
    assert "'compact', dtype=float16" in chunked["detail"] and "'accurate', dtype=float32" in chunked["detail"]
    # the reference path (no options) is the same on both sides, and float32 is never upcast
    assert rows[("nn.functional.linear_cross_entropy", "float16")]["status"] == "pass"
    assert all(r["status"] == "pass" for (v, d), r in rows.items() if d == "float32")


# allclose's CompositeExplicitAutograd kernel reaches a device without its own allclose
# kernel as isclose's ops (abs, sub, le, ...): a profile that refuses float64 abs refuses
# float64 allclose on the device, although the CPU footprint shows only aten.allclose.
NO_ABS_F64 = """\
name: test-no-abs-f64
device_type: npu
default: allow
ops:
  aten.abs: {dtypes: [float16, bfloat16, float32]}
"""


@pytest.mark.slow
def test_emulated_trace_sees_decomposed_ops_the_cpu_trace_misses(tmp_path):
    prof = tmp_path / "no-abs.yaml"
    prof.write_text(NO_ABS_F64, encoding="utf-8")
    apis, dtypes = ["torch.allclose"], ["float32", "float64"]
    out = tmp_path / "o"
    s = sweep(out=str(out), device=f"emu:{prof}", apis=apis, dtypes=dtypes, jobs=2, max_samples=4)
    assert s.ran == s.planned == 2 and s.problems == 0, s.totals

    cpu = {p.dtype: p for p in predict(apis, str(prof), dtypes=dtypes, max_samples=4,
                                       registered=False)}
    emu = {p.dtype: p for p in predict(apis, str(prof), dtypes=dtypes, max_samples=4,
                                       trace="emulated", jobs=2)}
    assert cpu["float64"].ops == ["aten.allclose"] and cpu["float64"].status == "pass"
    # with the vendor's op list: allclose (no vendor kernel) arrives as isclose (a vendor
    # kernel, which the emulator, having none, decomposes further)
    dev = {p.dtype: p for p in predict(apis, str(prof), dtypes=dtypes, max_samples=4)}
    assert "aten.allclose" in dev["float64"].decomposed and "aten.isclose" in dev["float64"].ops
    assert "aten.allclose" not in emu["float64"].ops and "aten.isclose" not in emu["float64"].ops
    assert emu["float64"].status == "unsupported", emu["float64"].reason
    assert ("aten.abs", "float64", "forward") in [(r.op, r.dtype, r.phase) for r in emu["float64"].refusals]
    assert emu["float32"].status == "pass"

    assert against_sweep(list(emu.values()), str(out)).disagreements == []
    wrong = against_sweep(list(cpu.values()), str(out)).disagreements
    assert [(d["dtype"], d["predicted"], d["observed"]) for d in wrong] == [("float64", "pass", "unsupported")]


@pytest.mark.slow
def test_cli_predict_trace_emulated(tmp_path):
    import os
    import subprocess
    import sys

    prof = tmp_path / "no-abs.yaml"
    prof.write_text(NO_ABS_F64, encoding="utf-8")
    base = [sys.executable, "-m", "torchparity", "predict", "torch.allclose", "--profile", str(prof),
            "--dtypes", "float64", "--max-samples", "2"]
    proc = subprocess.run(base + ["--trace", "emulated", "-j", "1"], capture_output=True, text=True,
                          env=dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "torch.allclose [allclose] float64: unsupported — the profile refuses aten.abs × float64" in proc.stdout
    assert proc.stdout.splitlines()[0] == (
        f"predictions for profile 'test-no-abs-f64' from ops traced on the emulated device "
        f"emu:allow-all ({EMULATED_BANNER}); no device ran")
    bad = subprocess.run(base + ["--trace", "gpu"], capture_output=True, text=True,
                         env=dict(os.environ), timeout=300)
    assert bad.returncode != 0 and "--trace" in (bad.stdout + bad.stderr)
