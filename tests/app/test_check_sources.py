"""check asks every scenario source: OpInfo per dtype, footprint reach, honest unknowns."""

import json
import os
import re
import subprocess
import sys

import pytest

from torchparity.app.check import check
from torchparity.app.sweep import SourceCase, plan
from torchparity.scenarios.sources import opinfo as opinfo_source


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_mm_runs_per_dtype_like_sweep_with_the_float64_refusal(tmp_path):
    report = check(["torch.mm"], "emu:ascend-a2", dtypes=["float32", "float64"], max_samples=1,
                   out=str(tmp_path / "o"))
    api = report.apis[0]
    rows = {s.dtype: s for s in api.scenarios}
    assert set(rows) == {"float32", "float64"}
    assert all(s.source == "opinfo" and s.id == "mm" and s.emulated for s in api.scenarios)
    assert rows["float32"].status == "pass"
    assert (rows["float64"].status, rows["float64"].cause) == ("unsupported", "dtype_limit")
    assert "DT_DOUBLE" in rows["float64"].detail or "Double" in rows["float64"].detail  # aclnn or c10 wording
    assert "aten.mm" in {e.op for e in rows["float32"].footprint}
    assert api.verdict.status == "partial" and api.verdict.category != "undetermined"
    assert api.analysis.device_involvement == "direct"
    assert api.sources_tried["opinfo"] == "1 scenario(s)"
    saved = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert [s["source"] for s in saved["apis"][0]["scenarios"]] == ["opinfo", "opinfo"]
    en = (tmp_path / "o" / "report.en.md").read_text(encoding="utf-8")
    assert "| `mm` | OpInfo (op_db) |" in en


def test_relu_reaches_the_opinfo_of_nn_functional_relu_by_footprint():
    (entry,) = opinfo_source.entries_for("torch.relu")
    assert (entry.key, entry.call) == ("nn.functional.relu", "api:torch.relu")
    report = check(["torch.relu"], "cpu", dtypes=["float32"], max_samples=2)
    (s,) = report.apis[0].scenarios
    assert s.id.startswith("nn.functional.relu") and s.source == "opinfo"
    assert s.status == "pass", s.detail
    # an API whose single op differs reaches nothing: torch.sigmoid has its own entry,
    # torch.autograd.grad none at all
    assert all(e.call == "op" for e in opinfo_source.entries_for("torch.sigmoid"))


def test_api_with_no_source_is_unknown_and_undetermined(tmp_path):
    # nobody covers it: settable once per process (the runtime source names the reason)
    report = check(["torch.set_num_interop_threads"], "emu:ascend-a2", out=str(tmp_path / "o"))
    api = report.apis[0]
    assert api.scenarios == []
    assert (api.verdict.status, api.verdict.category) == ("unknown", "undetermined")
    assert api.verdict.category_rule is None
    assert set(api.sources_tried) >= {"hand", "opinfo"}
    assert "Sources tried" in api.verdict.summary.en and "opinfo:" in api.verdict.summary.en
    zh = (tmp_path / "o" / "report.zh.md").read_text(encoding="utf-8")
    # no category is claimed: the only mention of one is the marked placeholder left to fill
    claimed = re.sub(r"【待补充：[^】]*】", "", zh)
    assert "待定" in zh and "已尝试的场景来源" in zh and "1.2①" not in claimed and "1.1①" not in claimed


def test_sweep_plans_other_sources_through_the_source_kind():
    p = plan(apis=["torch.autograd.gradcheck", "torch.mm"], dtypes=["float64"])
    hand = [c for c in p.cases if isinstance(c, SourceCase)]
    assert hand and all(c.scenario.source == "hand" and c.api == "torch.autograd.gradcheck" for c in hand)
    assert hand[0].payload(False, True, None)["kind"] == "source"
    assert [c.entry.key for c in p.cases if not isinstance(c, SourceCase)] == ["mm"]
    assert p.no_scenarios == []


def _docs(folder, names):
    version = folder / "pytorch_2-13-0"
    version.mkdir(parents=True)
    parts = ["# torch\n"]
    for n in names:
        parts.append(f"\n### {n}\n\n<div style=\"margin-left: 2em\">\n\n"
                     f"**原生文档**：[{n}](https://pytorch.org/docs/2.13/generated/{n}.html)\n\n"
                     "**支持情况**：\n\n| 硬件 | 是否支持 |\n| ---- | :----: |\n"
                     "| <term>Atlas A2 训练系列产品</term> | ✔ |\n\n</div>\n")
    (version / "torch.md").write_text("".join(parts), encoding="utf-8")
    return folder


def _cli(*args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "torchparity", *args], capture_output=True,
                          text=True, env=env, timeout=600)


@pytest.fixture
def tiny_docs(tmp_path):
    # set_num_interop_threads: resolved, every source declines it (it can be set once per
    # process); change_current_allocator: the devmod source names why (a compiled allocator
    # library); torch.backends.cuda.cufft_plan_cache, used here before, now has devmod
    # scenarios (its resolution is tested in tests/api)
    return _docs(tmp_path / "docs", ["torch.mm", "torch.set_num_interop_threads", "torch.no_such_api_here",
                                     "torch.cuda.change_current_allocator"])


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_vendor_docs_mode_writes_the_matrix_and_resumes(tiny_docs, tmp_path):
    out = tmp_path / "run"
    args = ("check", "--apis-from-vendor-docs", str(tiny_docs), "--torch-version", "2.13.0",
            "--device", "emu:ascend-a2", "--out", str(out), "--dtypes", "float32,float64",
            "--max-samples", "1", "--jobs", "1", "--quiet")
    first = _cli(*args)
    assert first.returncode == 0, first.stderr
    assert "4 listed API(s): 2 case(s) run" in first.stdout
    doc = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    rows = {(r["api"], r["dtype"]): r for r in doc["rows"]}
    assert rows[("torch.mm", "float64")]["status"] == "unsupported"
    assert rows[("torch.mm", "float64")]["cause"] == "dtype_limit"
    assert rows[("torch.mm", "float32")]["source"] == "opinfo"
    assert rows[("torch.set_num_interop_threads", "-")]["status"] == "unknown"
    assert "Sources tried" in rows[("torch.set_num_interop_threads", "-")]["detail"]
    assert "does not resolve" in rows[("torch.no_such_api_here", "-")]["detail"]
    alloc = rows[("torch.cuda.change_current_allocator", "-")]
    assert alloc["status"] == "unknown"
    assert "Sources tried" in alloc["detail"]  # resolved, no source applies
    assert "allocator compiled as a shared library" in alloc["detail"]
    assert doc["api_verdicts"] == {"torch.mm": "partial", "torch.set_num_interop_threads": "unknown",
                                   "torch.no_such_api_here": "unknown",
                                   "torch.cuda.change_current_allocator": "unknown"}
    csv = (out / "matrix.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].endswith(",source,evidence")
    assert any(line.endswith(",opinfo,device-compute") for line in csv)  # torch.mm ran on the device
    assert "## No executed scenario (unknown)" in (out / "matrix.md").read_text(encoding="utf-8")
    again = _cli(*args)
    assert again.returncode == 0, again.stderr
    assert "0 case(s) run" in again.stdout and "(2 already done)" in again.stdout


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_bad_vendor_docs_folder_is_one_line_and_exit_2(tmp_path):
    proc = _cli("check", "--apis-from-vendor-docs", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no such folder" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = _cli("check", "--apis-from-vendor-docs", str(empty), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_vendor_docs_mode_keeps_only_the_named_namespace(tiny_docs, tmp_path):
    out = tmp_path / "ns"
    proc = _cli("check", "--apis-from-vendor-docs", str(tiny_docs), "--torch-version", "2.13.0",
                "--device", "cpu", "--out", str(out), "--namespace", "torch.cuda",
                "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    assert sorted(doc["api_verdicts"]) == ["torch.cuda.change_current_allocator"]
    # a prefix is a dotted name, not a string prefix; no listed API there is one line, exit 2
    bad = _cli("check", "--apis-from-vendor-docs", str(tiny_docs), "--torch-version", "2.13.0",
               "--device", "cpu", "--out", str(tmp_path / "none"), "--namespace", "torch.m")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "no API there" in bad.stderr


@pytest.mark.slow
def test_vendor_docs_mode_runs_several_devices_each_into_its_own_folder(tiny_docs, tmp_path):
    out = tmp_path / "two"
    proc = _cli("check", "--apis-from-vendor-docs", str(tiny_docs), "--torch-version", "2.13.0",
                "--device", "cpu,emu:ascend-a2", "--out", str(out), "--dtypes", "float64",
                "--max-samples", "1", "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "[cpu] 4 listed API(s)" in proc.stdout and "[emu:ascend-a2] 4 listed API(s)" in proc.stdout
    cpu = json.loads((out / "cpu" / "matrix.json").read_text(encoding="utf-8"))
    emu = json.loads((out / "emu_ascend-a2" / "matrix.json").read_text(encoding="utf-8"))
    mm = {r["device"]: r["status"] for d in (cpu, emu) for r in d["rows"]
          if r["api"] == "torch.mm" and r["dtype"] == "float64"}
    assert sorted(mm.values()) == ["pass", "unsupported"]  # the A2 profile refuses float64 mm
    assert emu["emulated"] and not cpu["emulated"]
    # a store keeps one device: several devices into one --store is one line, exit 2
    bad = _cli("check", "--apis-from-vendor-docs", str(tiny_docs), "--device", "cpu,emu:ascend-a2",
               "--out", str(tmp_path / "s"), "--store", "sqlite:///" + str(tmp_path / "s.db"))
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "one device" in bad.stderr
