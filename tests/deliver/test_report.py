import re

from torchparity.deliver.report import cell, label_table, labels, render_markdown
from torchparity.results.models import (
    EMULATED_BANNER,
    Analysis,
    ApiReport,
    DeviceInfo,
    Environment,
    FootprintEntry,
    Report,
    ScenarioResult,
    Text,
    Verdict,
)


def _report(emulated=False, detail="ok"):
    t = Text(en="covers | things", zh="覆盖")
    api = ApiReport(
        name="torch.autograd.gradcheck", qualified_name="torch.autograd.gradcheck.gradcheck",
        analysis=Analysis(qualified_name="torch.autograd.gradcheck.gradcheck", kind="function",
                          implementation="python_function", device_involvement="direct",
                          footprint=[FootprintEntry(op="aten.dot", dtypes=["float64"], count=1)]),
        scenarios=[ScenarioResult(id="fast_mul", dtype="float64", status="unsupported",
                                  cause="dtype_limit", detail=detail, description=t, expected=t,
                                  emulated=emulated, snippet="import torch\nprint(1)\n")],
        verdict=Verdict(status="partial", category="1.2①", summary=Text(en="s", zh="s"),
                        category_reason=Text(en="reason", zh="原因")),
    )
    return Report(tool_version="0", created="now",
                  environment=Environment(os="Linux", arch="x86_64", python="3", torch="2.13"),
                  device=DeviceInfo(type="npu", emulated=emulated, profile="ascend-a2" if emulated else None,
                                    spec="emu:ascend-a2" if emulated else "npu"),
                  apis=[api], banner=EMULATED_BANNER if emulated else None)


def test_both_languages_have_every_label():
    for key, value in labels().items():
        assert set(value) == {"en", "zh"}, key


def test_every_label_is_used_by_a_template():
    from torchparity.deliver.report import HERE

    text = "".join((HERE / name).read_text(encoding="utf-8") for name in (
        "templates/report.md.j2", "templates/report.html.j2", "report_view.py"))
    unused = [k for k in labels() if f"L.{k}" not in text and f'"{k}' not in text and f"'{k}'" not in text
              and not any(k.startswith(p) for p in ("status_", "involvement_", "source_", "evidence_device",
                                                    "evidence_host", "evidence_none"))]
    assert unused == []


def test_emulated_report_opens_with_the_banner_and_labels_results():
    for lang, word, mark in (("en", "emulated", "(emulated)"), ("zh", "模拟设备", "（模拟设备）")):
        md = render_markdown(_report(emulated=True), lang)
        first_lines = "\n".join(md.splitlines()[:4])
        assert word in first_lines
        assert mark in md
    assert "prediction, not a hardware result" in render_markdown(_report(emulated=True), "en")


def test_real_device_report_has_no_banner():
    assert "a prediction" not in render_markdown(_report(), "en")


def test_sections_not_run_name_their_option():
    md = render_markdown(_report(), "en")
    assert "`--tests <test folder" in md and "【to fill: upstream tests】" in md


def test_table_cells_are_escaped_and_code_spans_are_not():
    md = render_markdown(_report(detail="a | b <script>\nnext"), "en")
    assert "`a | b <script> next`" in md  # a detail bullet: one code span, as recorded
    assert "covers \\| things" in md
    assert cell("x\ny|z") == "x y\\|z"


def test_chinese_report_uses_the_seed_section_names():
    md = render_markdown(_report(), "zh")
    for heading in ("API 功能分析", "上游用例检查", "资料检查", "API 功能测试", "结论"):
        assert re.search(rf"^## .*{heading}", md, re.M), heading
    assert label_table("zh")["env_cann"] in md


def test_reports_show_each_rows_evidence_and_the_device_independent_verdict():
    from torchparity.deliver.html import render_html

    report = _report()
    api = report.apis[0]
    api.scenarios[0].evidence = "host-only"
    api.verdict = Verdict(status="device-independent", category="1.2①", evidence="host-only",
                          summary=Text(en="s", zh="s"), category_reason=Text(en="reason", zh="原因"))
    zh, en = render_markdown(report, "zh"), render_markdown(report, "en")
    assert "| 证据 |" in zh and "与设备无关" in zh and "仅主机侧" in zh
    assert "| Evidence |" in en and "device-independent" in en and "host only" in en
    html = render_html(report)
    assert "host only" in html and "仅主机侧" in html and "Evidence" in html
