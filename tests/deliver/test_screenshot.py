"""The run screenshot: the rich summary as a self-contained SVG, and a PNG where possible."""

import re

from support import require_chromium

from torchparity.app.convert import svg_to_png
from torchparity.app.deliverables import write_screenshot
from torchparity.deliver.screenshot import summary_svg, svg_size
from torchparity.results.store import load_report


def test_svg_holds_the_summary_and_fetches_nothing(seed_bundle):
    report = load_report(seed_bundle)
    svg = summary_svg(report)
    assert svg.lstrip().startswith("<svg") and "</svg>" in svg
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", svg)
    assert not re.search(r'(href|src)="(https?:)?//', svg)
    for api in report.apis:
        assert api.name.replace("_", "_") in svg.replace("&#160;", " ")
    width, height = svg_size(svg)
    assert width > 500 and height > 500


def test_emulated_summary_says_so(seed_bundle):
    report = load_report(seed_bundle)
    report.device.emulated, report.device.profile = True, "ascend-a2"
    assert "EMULATED" in summary_svg(report).replace("&#160;", " ")


def test_png_with_chromium(tmp_path, seed_bundle):
    require_chromium()
    svg = tmp_path / "s.svg"
    text = summary_svg(load_report(seed_bundle))
    svg.write_text(text, encoding="utf-8")
    used = svg_to_png(svg, tmp_path / "s.png", svg_size(text))
    assert used is not None
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stale_png_is_removed_when_not_converted(tmp_path, seed_bundle):
    (tmp_path / "screenshot.png").write_bytes(b"old")
    write_screenshot(load_report(seed_bundle), tmp_path, png=False)
    assert (tmp_path / "screenshot.svg").exists() and not (tmp_path / "screenshot.png").exists()


def test_svg_is_120_columns_whatever_term_says(monkeypatch):
    """TERM=dumb (scripts, CI) must not shrink the screenshot to rich's 80-column default."""
    from torchparity.deliver.screenshot import summary_svg, svg_size
    from torchparity.results.models import DeviceInfo, Environment, Report

    report = Report(tool_version="0", created="now", device=DeviceInfo(type="cpu"),
                    environment=Environment(os="Linux", arch="x86_64", python="3", torch="2.13"))
    sizes = {}
    for term in ("dumb", "xterm-256color"):
        monkeypatch.setenv("TERM", term)
        sizes[term] = svg_size(summary_svg(report))[0]
    assert sizes["dumb"] == sizes["xterm-256color"] > 1400  # 120 columns of ~12 px


def test_png_with_pip_dependencies_only(tmp_path, monkeypatch):
    """resvg-py (a declared dependency) writes the PNG with no browser and no rsvg/cairo."""
    import struct

    from torchparity.app import convert
    from torchparity.deliver.screenshot import summary_svg, svg_size
    from torchparity.results.models import DeviceInfo, Environment, Report

    monkeypatch.setattr(convert.shutil, "which", lambda name: None)  # no rsvg-convert, no Chromium
    monkeypatch.delenv("TORCHPARITY_CHROMIUM", raising=False)
    monkeypatch.setitem(__import__("sys").modules, "cairosvg", None)
    report = Report(tool_version="0", created="now", device=DeviceInfo(type="cpu"),
                    environment=Environment(os="Linux", arch="x86_64", python="3", torch="2.13"))
    text = summary_svg(report)
    svg = tmp_path / "s.svg"
    svg.write_text(text, encoding="utf-8")
    assert convert.svg_to_png(svg, tmp_path / "s.png", svg_size(text)) == "resvg"
    data = (tmp_path / "s.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">I", data[16:20])[0] == svg_size(text)[0]  # 120 columns wide
