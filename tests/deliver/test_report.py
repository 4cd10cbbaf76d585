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


def _dtype_free_report():
    """torch.cuda.synchronize (its case takes no dtype: tagged dtype-free, run in float32)
    and torch.add (rows per dtype)."""
    t = Text(en="covers", zh="覆盖")
    verdict = Verdict(status="supported", category="1.2①", summary=Text(en="s", zh="s"),
                      category_reason=Text(en="reason", zh="原因"))
    sync = ApiReport(name="torch.cuda.synchronize", qualified_name="torch.cuda.synchronize",
                     analysis=Analysis(qualified_name="torch.cuda.synchronize", kind="function", implementation="python_function",
                                      device_involvement="direct"),
                     scenarios=[ScenarioResult(id="devmod_synchronize", dtype="float32", status="pass",
                                               tags=["dtype-free"], description=t, expected=t)],
                     verdict=verdict)
    add = ApiReport(name="torch.add", qualified_name="torch.add",
                    analysis=Analysis(qualified_name="torch.add", kind="function", implementation="python_function",
                                      device_involvement="direct"),
                    scenarios=[ScenarioResult(id="add", dtype=d, status="pass", description=t, expected=t)
                               for d in ("float32", "float64")],
                    verdict=verdict)
    report = _report()
    report.apis = [sync, add]
    return report


def _block(md, api):
    """The part of a report about one API in section 4 (its table and support lines)."""
    part = md.split(f"#### `{api}`", 1)[1]
    return re.split(r"\n#{2,4} ", part, maxsplit=1)[0]


def test_dtype_free_rows_say_any_dtype_and_the_api_is_dtype_independent(tmp_path):
    from torchparity.deliver.console import dtype_cell
    from torchparity.deliver.html import render_html

    report = _dtype_free_report()
    zh, en = render_markdown(report, "zh"), render_markdown(report, "en")
    sync_zh, sync_en = _block(zh, "torch.cuda.synchronize"), _block(en, "torch.cuda.synchronize")
    # the dtype cell: any dtype, not float32 as a finding
    assert "| 与数据类型无关（用例不使用 dtype；以 float32 张量运行并记录） |" in sync_zh
    assert "| any (the case takes no dtype; run and recorded with float32 tensors) |" in sync_en
    assert "| float32 |" not in sync_zh and "| float32 |" not in sync_en
    # the pass list and the summary: dtype-independent, no "(float32)" dtype list
    assert "`devmod_synchronize`（与数据类型无关）" in sync_zh and "（float32）" not in sync_zh
    assert "`devmod_synchronize` (any dtype)" in sync_en and " (float32)" not in sync_en
    assert "与数据类型无关：该 API 的用例均不使用 dtype" in sync_zh
    assert "dtype-independent: none of this API's cases takes a dtype" in sync_en
    assert "`torch.cuda.synchronize`：无需适配" in zh and "其用例均不使用 dtype，结论与数据类型无关。" in zh
    # a case that reads dtype is unaffected: its rows and list name their dtypes
    add_zh, add_en = _block(zh, "torch.add"), _block(en, "torch.add")
    assert "| float32 |" in add_zh and "| float64 |" in add_zh and "| float64 |" in add_en
    assert "`add`（float32/float64）" in add_zh and "`add` (float32/float64)" in add_en
    assert "与数据类型无关" not in add_zh and "any dtype" not in add_en
    assert zh.count("其用例均不使用 dtype") == 1
    html = render_html(report)
    assert "any (the case takes no dtype" in html and "与数据类型无关（用例不使用 dtype" in html
    assert re.search(r"<td><span lang=\"en\">float64</span>", html)
    assert dtype_cell("float32", ["dtype-free"]).startswith("any") and dtype_cell("float32", []) == "float32"
    # the matrix of bundles: the case's dtype column says any
    from torchparity.deliver.matrix import build
    from torchparity.deliver.matrix import render_markdown as matrix_markdown

    table = matrix_markdown(build([("a", report)]))
    assert "| `torch.cuda.synchronize` | `devmod_synchronize` | any (takes no dtype; ran float32) |" in table
    assert "| `torch.add` | `add` | float64 |" in table
    # the per-API issues: the same words
    from torchparity.deliver.issues import write_issues

    write_issues(report, tmp_path)
    issue = (tmp_path / "issues" / "torch.cuda.synchronize.zh.md").read_text(encoding="utf-8")
    assert "与数据类型无关：该 API 的用例均不使用 dtype" in issue and "（float32）" not in issue


def test_the_terminal_summary_prints_a_detail_that_looks_like_markup_as_it_is():
    """A device's error quotes gloo's source path in brackets; read as rich markup it was a
    closing tag that matched nothing, and `check` ended in "internal error: MarkupError"
    after the run."""
    import io

    from rich.console import Console

    from torchparity.deliver.console import print_summary

    detail = "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] closed [bold]"
    out = io.StringIO()
    print_summary(_report(detail=detail), Console(file=out, width=400, color_system=None))
    assert "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] closed [bold]" in out.getvalue()
