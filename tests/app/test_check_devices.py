"""check on several devices in one run (`--device a,b`): one 测试结果 row per chip."""

import json

import pytest

from torchparity.app.check import check
from torchparity.errors import TorchparityError

API = "torch.Tensor.element_size"


@pytest.mark.slow
def test_two_emulated_chips_one_row_each(tmp_path):
    out = tmp_path / "o"
    report = check([API], "emu:ascend-a2,emu:ascend-950dt", out=str(out))
    assert report.device.spec == "emu:ascend-a2"  # the first device is the report's own
    assert [r.device.spec for r in report.runs] == ["emu:ascend-950dt"]
    other = report.runs[0].apis[0]
    assert other.name == API and other.total > 0 and report.runs[0].device.emulated

    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["device"]["profile"] == "ascend-a2"
    assert [r["device"]["profile"] for r in data["runs"]] == ["ascend-950dt"]

    zh = (out / "report.zh.md").read_text(encoding="utf-8")
    results = zh.split("### 测试结果", 1)[1].split("\n## ", 1)[0]
    a2, a5 = results.split("A5芯片", 1)
    for part, chip in ((a2, "Atlas A2 训练系列产品"), (a5, "Ascend 950DT")):
        rows = [line for line in part.splitlines() if "本次运行" in line]
        assert len(rows) == 1 and f"模拟设备 {chip}" in rows[0], part
        assert "`element_size`" in rows[0]
    assert "Ascend 950DT" in zh.split("### 测试结果", 1)[0]  # the hardware line names both


@pytest.mark.parametrize("device", ["emu:ascend-a2,emu:no-such-profile", "emu:ascend-a2,npux",
                                    "emu:ascend-a2,emu:ascend-a2"])
def test_bad_spec_in_list_refused_before_running(tmp_path, device):
    out = tmp_path / "o"
    with pytest.raises(TorchparityError):
        check([API], device, out=str(out))
    assert not out.exists()  # nothing ran, nothing was written
