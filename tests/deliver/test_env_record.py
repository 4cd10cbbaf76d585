"""Issue 46 item 3: one environment record, written the same way in md, html, en and zh."""

import re

from torchparity.deliver.env_record import record
from torchparity.deliver.html import render_html
from torchparity.deliver.report import render_markdown
from torchparity.results.models import DeviceInfo, Environment, Report


def _emulated():
    env = Environment(os="Linux (x86_64)", arch="x86_64", python="3.11", torch="2.13.0+cpu",
                      backend={"torchparity-emulator": "0.1.0"}, device_name="Ascend910B3 (emulated)",
                      extra={"profile": "ascend-a2", "chips": "Atlas A2 训练系列产品", "chip": "Ascend910B3",
                             "profile_cann": "8.5.0"})
    dev = DeviceInfo(type="npu", name="Ascend910B3 (emulated)", emulated=True, profile="ascend-a2",
                     spec="emu:ascend-a2")
    return Report(tool_version="0", created="now", environment=env, device=dev)


def test_the_record_names_chip_soc_and_the_profiles_cann():
    zh = record(_emulated().environment, _emulated().device, "zh")
    en = record(_emulated().environment, _emulated().device, "en")
    assert zh.name == "Atlas A2 训练系列产品 / Ascend910B3" and en.name == "Atlas A2 Training Series / Ascend910B3"
    assert zh.cann_version == en.cann_version == "8.5.0" and zh.cann.startswith("8.5.0（")
    assert "训练系列产品" not in en.hardware + en.cann
    hw = Environment(os="openEuler", arch="aarch64", python="3.9", torch="2.7.1", cann="8.5.0",
                     backend={"torch_npu": "2.7.1"}, device_name="Ascend910B3")
    rec = record(hw, DeviceInfo(type="npu", name="Ascend910B3"), "zh")
    assert rec.cann == "8.5.0" and rec.hardware == "Atlas A2 训练系列产品 / Ascend910B3"
    assert rec.versions == "torch 2.7.1 / torch_npu 2.7.1"
    rec = record(hw.model_copy(update={"cann": None}), DeviceInfo(type="npu", name="Ascend910B3"), "zh")
    assert rec.cann == "未检测到"


def test_md_html_en_and_zh_write_one_environment():
    report = _emulated()
    zh = render_markdown(report, "zh")
    en = render_markdown(report, "en")
    html = render_html(report)
    rz, re_ = record(report.environment, report.device, "zh"), record(report.environment, report.device, "en")
    assert f"- 昇腾硬件信息：{rz.hardware}" in zh and f"- CANN软件版本：{rz.cann}" in zh
    assert f"- Hardware: {re_.hardware}" in en and f"- CANN version: {re_.cann}" in en
    assert "训练系列产品" not in en and "CANN软件版本：无" not in zh and "CANN version: none" not in en
    code = lambda s: re.sub(r"`([^`]+)`", r"<code>\1</code>", s)  # noqa: E731
    env_table = html.split('<table id="environment">', 1)[1].split("</table>", 1)[0]
    for rec, lang in ((rz, "zh"), (re_, "en")):
        assert f'<span lang="{lang}">{code(rec.hardware)}</span>' in env_table
        assert f'<span lang="{lang}">{code(rec.cann)}</span>' in env_table
    assert "Ascend910B3（模拟设备）" not in html and ">—<" not in env_table
    # 验证环境及版本 writes the same record
    assert f"- 验证环境及版本：{rz.hardware}；{rz.versions}；CANN {rz.cann}" in zh
