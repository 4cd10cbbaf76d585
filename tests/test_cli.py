"""End to end through the console script."""

import json
import os
import re
import subprocess
import sys

import pytest
from support import SEED_APIS


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "torchparity", *args], capture_output=True,
                          text=True, env=env or dict(os.environ), timeout=600)


def test_five_seed_apis_on_cpu(seed_bundle):
    """The session's one CPU check of the seed APIs (tests/conftest.py), read as a user would."""
    out = seed_bundle
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["device"] == {"type": "cpu", "name": report["device"]["name"], "emulated": False,
                                "profile": None, "spec": "cpu"}
    apis = {a["name"]: a for a in report["apis"]}
    assert set(apis) == set(SEED_APIS)
    for api in apis.values():
        assert api["scenarios"], api["name"]
        # a row either passes or is hollow: its case cannot observe the API (issue 48)
        assert all(s["status"] == "pass" or "hollow" in s["tags"] for s in api["scenarios"]), api["name"]
        assert api["verdict"]["status"] in ("supported", "device-independent"), api["name"]
    # emit_itt issues no device operator of its own and its observing rows pass (seed 000:
    # pure Python, decoupled from the device); its enabled=False no-op case is hollow
    itt = apis["torch.autograd.profiler.emit_itt"]
    assert itt["verdict"]["status"] == "device-independent"
    assert {s["id"] for s in itt["scenarios"] if "hollow" in s["tags"]} == {"disabled_noop", "itt_is_available"}
    fast = next(s for s in apis["torch.autograd.gradcheck"]["scenarios"] if s["id"] == "fast_mul")
    own = {e["op"]: e["dtypes"] for e in fast["footprint"] if e["source"] == "api"}
    assert own["aten.linalg_vector_norm"] == ["float64"] and own["aten.dot"] == ["float64"]
    assert apis["torch.autograd.forward_ad.enter_dual_level"]["analysis"]["device_involvement"] == "indirect"
    assert not [e for e in apis["torch.autograd.forward_ad.enter_dual_level"]["analysis"]["footprint"]
                if e["source"] == "api"]
    assert apis["torch.autograd.forward_ad.unpack_dual"]["analysis"]["device_involvement"] == "direct"
    for lang in ("en", "zh"):
        text = (out / f"report.{lang}.md").read_text(encoding="utf-8")
        assert text.startswith("# 【") and "torchparity" in text  # the community's title placeholder (issue 23)
        assert (out / "issues" / f"torch.autograd.gradcheck.{lang}.md").is_file()  # one issue per API
    assert "torch.autograd.gradcheck" in (out.parent / "stdout.txt").read_text(encoding="utf-8")


def test_unknown_api_is_one_line_and_exit_2():
    proc = _cli("check", "torch.autograd.no_such_thing")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "did you mean" in lines[0]
    assert "Traceback" not in proc.stderr


def test_bad_device_and_unavailable_device():
    proc = _cli("check", "torch.autograd.gradcheck", "--device", "tpu")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    proc = _cli("check", "torch.autograd.gradcheck", "--device", "npu")
    assert proc.returncode == 2 and "torch_npu" in proc.stderr


@pytest.mark.slow
def test_crash_and_timeout_fixture_through_check(tmp_path, fixture_path):
    out = tmp_path / "o"
    env = dict(os.environ)
    proc = _cli("check", "tp_fixture_scenarios.target", "--device", "cpu", "--scenarios",
                "tp_fixture_scenarios", "--out", str(out), env=env)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    status = {s["id"]: s["status"] for s in report["apis"][0]["scenarios"]}
    assert status == {"before": "pass", "segfault": "crash", "sleeps": "timeout", "after": "pass"}
    assert proc.returncode == 1  # broken verdict


@pytest.mark.slow
def test_evidence_sections_in_check_reports(tmp_path):
    from pathlib import Path

    vendor = Path(__file__).resolve().parent / "data" / "ascend-native-api-docs"
    out = tmp_path / "o"
    proc = _cli("check", "torch.autograd.forward_ad.unpack_dual", "torch.autograd.forward_ad.enter_dual_level",
                "--device", "cpu", "--vendor-docs", str(vendor), "--torch-version", "2.12.0",
                "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    unpack, enter = report["apis"]
    assert unpack["evidence"]["docs"]["vendor"]["present"] is True
    assert unpack["evidence"]["docs"]["vendor"]["dtypes"] == ["float32"]
    assert enter["evidence"]["docs"]["vendor"]["present"] is False
    # no --tests: the shipped census index of Ascend/pytorch's test tree answers, labelled
    assert "tests" not in unpack["evidence"]["not_run"]
    assert unpack["evidence"]["tests"]["tree"].startswith("Ascend/pytorch@")
    zh = (out / "report.zh.md").read_text(encoding="utf-8")
    assert "当前资料缺失，需要进行资料补充" in zh and "随 torchparity 发布的上游用例统计索引" in zh


def test_config_file_supplies_defaults_and_bad_config_is_one_line(tmp_path):
    cfg = tmp_path / "tp.yaml"
    cfg.write_text("device: cpu\nvendor_docs: /no/such/folder\n")
    proc = _cli("check", "torch.autograd.forward_ad.unpack_dual", "--config", str(cfg), "--quiet")
    assert proc.returncode == 2 and "--vendor-docs /no/such/folder" in proc.stderr
    cfg.write_text("device: cpu\ncolour: blue\n")
    proc = _cli("check", "torch.autograd.forward_ad.unpack_dual", "--config", str(cfg), "--quiet")
    assert proc.returncode == 2 and "colour" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_docs_writes_missing_vendor_entries_from_check_bundles(tmp_path):
    from pathlib import Path

    vendor = Path(__file__).resolve().parent / "data" / "ascend-native-api-docs"
    bundle = tmp_path / "a2"
    proc = _cli("check", "torch.autograd.forward_ad.enter_dual_level", "torch.autograd.forward_ad.unpack_dual",
                "--device", "emu:ascend-a2", "--out", str(bundle), "--quiet", "--no-html", "--no-screenshot")
    assert proc.returncode == 0, proc.stderr
    proc = _cli("docs", "torch.autograd.forward_ad.enter_dual_level", "torch.autograd.forward_ad.unpack_dual",
                "--from", str(bundle), "--vendor-docs", str(vendor), "--only-missing")
    assert proc.returncode == 0, proc.stderr
    # unpack_dual has an entry already; enter_dual_level gets one, in the vendor's format
    assert "### torch.autograd.forward_ad.enter_dual_level" in proc.stdout
    assert "unpack_dual\n" not in proc.stdout
    assert "| <term>Atlas A2 训练系列产品</term> | ✔ |" in proc.stdout
    assert "模拟设备预测" in proc.stdout  # an emulated verdict says so
    proc = _cli("docs", "torch.autograd.gradcheck", "--from", str(bundle))
    assert proc.returncode == 2 and "no bundle has results for torch.autograd.gradcheck" in proc.stderr


def test_check_help_has_no_stray_spaces_and_names_defaults():
    """typer drops "[default: …]" from help texts, which left "timeout ." behind."""
    proc = _cli("check", "--help")
    assert proc.returncode == 0
    text = re.sub(r"[│\s]+", " ", proc.stdout)
    assert not re.search(r" \.(\s|$)", text)
    for default in ("(default: 120)", "(default: 1)", "(default: auto)", "(default: npu"):
        assert default in text, default


def test_bad_device_is_refused_before_torch_loads():
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('torch' in sys.modules))\n"
            "sys.argv = ['torchparity', 'check', 'torch.x', '--device', 'foo']\n"
            "from torchparity.cli import main\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout.strip() == "False", proc.stdout + proc.stderr
    assert "unknown device 'foo'" in proc.stderr


def test_devices_one_line_each_without_repeating_the_name():
    proc = _cli("devices", env=dict(os.environ, TERM="dumb", COLUMNS="60"))
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].split()[0] == "cpu" and any(ln.startswith("emu:ascend-a2 ") for ln in lines)
    for ln in lines:
        name = ln.split()[0]
        assert f"{name}: " not in ln  # "cuda   cuda: ..." said the name twice
    assert len(lines) == len({ln.split()[0] for ln in lines})  # no wrapped continuation lines
