"""Markdown output escapes ids, messages and fences (issue 10, point 9): hostile scenario
ids, snippets and error messages render as text, never as live HTML or links.

The reports are rendered by markdown-it (CommonMark with tables and raw HTML on, as a
forge does) and the HTML it makes is searched for what the attacker wanted."""

from markdown_it import MarkdownIt

from torchparity.deliver.narrative import code, fence
from torchparity.deliver.report import cell, render_markdown
from torchparity.results.models import (
    Analysis,
    ApiReport,
    DeviceInfo,
    Environment,
    Report,
    ScenarioResult,
    Text,
    Verdict,
)

IMG = "<img src=x onerror=alert(1)>"
LINK = "[link](http://evil.example/)"


def _report():
    scenarios = [
        ScenarioResult(id=f"a`b` {IMG} ``", dtype="float32", status="error", cause="device_error",
                       detail=f"RuntimeError: {LINK} {IMG}",
                       snippet=f"import torch\n```\n{IMG}\n{LINK}\n````\nprint(torch.abs(torch.ones(1)))\nprint(1)\n",
                       description=Text(en=f"covers {LINK} {IMG}", zh=f"覆盖 {LINK} {IMG}")),
        ScenarioResult(id=f"plain {LINK}", dtype="float32", status="fail", detail=f"got {LINK} {IMG}",
                       snippet=f"x = 1  # {IMG}\n"),
    ]
    def analysis(name):
        return Analysis(qualified_name=name, kind="function", implementation="python_function",
                        device_involvement="direct")

    api = ApiReport(name="torch.abs", qualified_name="torch.abs", scenarios=scenarios,
                    analysis=analysis("torch.abs"),
                    verdict=Verdict(status="broken", summary=Text(en="s", zh="s")))
    # an API no source gave a case for: what each source said is shown
    none = ApiReport(name="torch.neg", qualified_name="torch.neg", scenarios=[],
                     analysis=analysis("torch.neg"), sources_tried={"opinfo": f"no `entry` {LINK} {IMG}"},
                     verdict=Verdict(status="unknown", summary=Text(en="s", zh="s")))
    return Report(tool_version="0", created="now",
                  environment=Environment(os="Linux", arch="x86_64", python="3", torch="2.13"),
                  device=DeviceInfo(type="cpu", spec="cpu"), apis=[api, none])


def _html(md: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def test_hostile_ids_snippets_and_messages_stay_text_in_both_languages():
    report = _report()
    for lang in ("en", "zh"):
        html = _html(render_markdown(report, lang))
        assert "<img" not in html, lang
        assert 'href="http://evil.example/"' not in html, lang
        assert "evil.example" in html  # shown, as text


def test_no_snippet_ends_its_fence_early():
    report = _report()
    html = _html(render_markdown(report, "en"))
    # the snippet's own ``` lines are inside one code block with the rest of it
    assert html.count("<pre><code") == html.count("</code></pre>")
    block = html.split('<pre><code class="language-python">', 1)[1].split("</code></pre>", 1)[0]
    assert "```" in block and "print(1)" in block


def test_code_span_fence_is_longer_than_any_backtick_run():
    assert code("a") == "`a`"
    span = code("x ``` y")
    assert span.startswith("````") and span.endswith("````")
    assert _html(code("a`b")).count("<code>") == 1
    assert fence("a\n````\nb\n").startswith("`````")


def test_cell_escapes_link_brackets_and_html():
    out = cell(f"{LINK} {IMG}")
    # '<' escaped as Markdown's '\<' (no HTML tag can open), no entity to show raw
    assert "<" not in out.replace("\\<", "") and "](" not in out.replace("\\]", "")
