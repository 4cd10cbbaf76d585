"""report.html: self-contained, escaped, sortable; checked in headless Chromium."""

import re

from support import require_chromium

from torchparity.app.convert import dump_dom
from torchparity.deliver.html import render_html
from torchparity.results.models import (
    EMULATED_BANNER,
    Analysis,
    ApiReport,
    DeviceInfo,
    DeviceRun,
    Environment,
    Report,
    RunApi,
    ScenarioResult,
    Text,
    Verdict,
)

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _report(emulated=True):
    def sc(id_, status, cause=None, detail=""):
        return ScenarioResult(id=id_, dtype="float32", status=status, cause=cause, detail=detail,
                              description=Text(en=f"covers {id_} {EVIL}", zh=f"覆盖 {id_}"),
                              expected=Text(en="ok", zh="通过"), emulated=emulated)

    apis = []
    for name, scenarios, status in [
        ("torch.autograd.forward_ad.unpack_dual",
         [sc("a_pass", "pass"), sc("b_refused", "unsupported", "dtype_limit", EVIL),
          sc("c_wrong", "fail", "mismatch", "1 of 4 elements differ"), sc("d_pass", "pass")], "broken"),
        ("torch.autograd.gradcheck", [sc("slow_mul", "pass")], "supported"),
    ]:
        apis.append(ApiReport(
            name=name, qualified_name=name,
            analysis=Analysis(qualified_name=name, kind="function", implementation="python_function",
                              device_involvement="direct", summary=EVIL),
            scenarios=scenarios,
            verdict=Verdict(status=status, category="1.1①", summary=Text(en=EVIL, zh=EVIL))))
    return Report(tool_version="0.1.0", created="2026-01-01T00:00:00+00:00",
                  environment=Environment(os="Linux", arch="x86_64", python="3.11", torch="2.13.0"),
                  device=DeviceInfo(type="npu", emulated=emulated, profile="ascend-a2" if emulated else None,
                                    spec="emu:ascend-a2" if emulated else "npu"),
                  apis=apis, banner=EMULATED_BANNER if emulated else None)


def test_other_devices_of_the_run_get_a_row_each_labelled_emulated():
    one = _report()
    assert 'id="other-devices"' not in render_html(one)  # a one-device run has no such table
    env = Environment(os="Linux", arch="x86_64", python="3.11", torch="2.13.0",
                      device_name="Atlas A3 (emulated)")
    one.runs = [DeviceRun(device=DeviceInfo(type="npu", emulated=True, profile="ascend-a3",
                                            spec="emu:ascend-a3"), environment=env,
                          apis=[RunApi(name="torch.autograd.gradcheck", status="unsupported",
                                       category="2.1", passed=0, total=3)])]
    html = render_html(one)
    table = html.split('id="other-devices"', 1)[1].split("</table>", 1)[0]
    rows = table.split("<tr>")[2:]  # after the header row
    assert len(rows) == 3  # two APIs on the first device, one on the second
    a3 = next(r for r in rows if "emu:ascend-a3" in r)
    assert "torch.autograd.gradcheck" in a3 and "0/3" in a3 and "(emulated)" in a3
    assert 's-unsupported' in a3


def test_page_is_self_contained():
    html = render_html(_report())
    assert html.count("<script>") == 1 and html.count("<style>") == 1
    assert "<link" not in html and "@import" not in html
    assert not re.search(r'\bsrc="(https?:)?//', html)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html)


def test_every_report_text_is_escaped():
    html = render_html(_report())
    assert EVIL not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "onerror=alert(1)>" not in html


def test_emulated_banner_at_top_only_when_emulated():
    html = render_html(_report())
    body = html.split("<body", 1)[1]
    assert body.index('id="emulated-banner"') < body.index("<h1")
    assert EMULATED_BANNER in body
    assert 'id="emulated-banner"' not in render_html(_report(emulated=False))


def test_chromium_renders_banner_names_and_sorted_scenarios(tmp_path):
    require_chromium()
    page = tmp_path / "report.html"
    page.write_text(render_html(_report()), encoding="utf-8")
    dom = dump_dom(page)
    # the script ran: the scenario table of the first API is sorted worst-first
    assert 'data-sorted-by="4:descending"' in dom  # the result column (after item, source, covers, dtype)
    table = dom.split('class="sortable scenarios"', 1)[1].split("</table>", 1)[0]
    order = re.findall(r"<td><code>(\w+)</code></td>", table)
    assert order == ["c_wrong", "b_refused", "a_pass", "d_pass"], order
    assert 'aria-sort="descending"' in table
    # banner and API names are rendered text; hostile text stayed text
    text = re.sub(r"<[^>]+>", " ", dom)
    assert "emulated: a prediction, not a hardware result" in text
    assert "torch.autograd.forward_ad.unpack_dual" in text and "torch.autograd.gradcheck" in text
    assert dom.count("<script") == 1
    assert "alert(1)>" not in dom.replace("&gt;", ">").split("<body", 1)[0]


def test_every_html_label_is_used_and_bilingual():
    from torchparity.deliver.html import HERE, html_labels

    template = (HERE / "templates" / "report.html.j2").read_text(encoding="utf-8")
    for key, value in html_labels().items():
        assert set(value) == {"en", "zh"}, key
        assert f't("{key}"' in template or f'"{key.rsplit("_", 1)[0]}_"' in template, key


def _zh_view(html):
    """What the Chinese view shows: no English spans, no code, no markup."""
    text = re.sub(r'<span lang="en">.*?</span>|<(p|ul) lang="en"[^>]*>.*?</\1>', "", html, flags=re.S)
    text = re.sub(r"<style>.*?</style>|<script>.*?</script>|<title>.*?</title>|<code>.*?</code>|<pre>.*?</pre>",
                  "", text, flags=re.S)
    return re.sub(r"<[^>]+>", " ", text)


def test_the_chinese_view_shows_no_raw_value_or_english_status():
    zh = _zh_view(render_html(_report()))
    for raw in ("(emulated)", "dtype_limit", "mismatch", "direct", "host-only", "threshold",
                "unsupported", "hand", " fail", "python_function"):
        assert raw not in zh, raw
    assert "模拟设备" in zh and "硬件能力限制" in zh and "直接涉及" in zh and "手写用例" in zh


def test_long_tables_open_collapsed_with_their_count():
    report = _report()
    api = report.apis[0]
    api.scenarios = [api.scenarios[0].model_copy(update={"id": f"case_{i}"}) for i in range(25)]
    html = render_html(report)
    assert '<details class="table"><summary><span lang="en">25 rows</span><span lang="zh">共 25 行</span>' in html
    assert '<details class="table" open><summary><span lang="en">1 row</span>' in html  # short: open
    assert ".wide { overflow-x: auto" in html
