"""`check --out DIR --gentest all` on the five seed APIs: a complete folder, cross-linked."""

import re

import pytest
from support import SEED_APIS

from torchparity.deliver.gentest import file_name


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_folder_is_complete(seed_bundle):
    names = {p.relative_to(seed_bundle).as_posix() for p in seed_bundle.rglob("*") if p.is_file()}
    for required in ("report.json", "report.en.md", "report.zh.md", "report.html", "screenshot.svg"):
        assert required in names
    for style in ("device-generic", "npu"):
        for api in SEED_APIS:
            assert f"tests/{style}/{file_name(api)}" in names


def test_reports_link_the_screenshot_html_and_tests(seed_bundle):
    for lang, heading in (("zh", "运行截图"), ("en", "Run screenshot")):
        md = (seed_bundle / f"report.{lang}.md").read_text(encoding="utf-8")
        assert f"## {heading}" in md
        shot = re.search(rf"!\[{heading}\]\((screenshot\.(png|svg))\)", md).group(1)
        assert (seed_bundle / shot).exists()
        assert "[report.html](report.html)" in md
        for link in re.findall(r"\]\((tests/[^)]+)\)", md):
            assert (seed_bundle / link).exists(), link
        # 测试方法 runs the generated files as seed 001 does: python test_….py -v
        assert re.search(r"^TORCHPARITY_DEVICE=cpu python tests/npu-judged/test_\w+\.py -v$", md, re.M)
        assert re.search(r"^TORCH_DEVICE_BACKEND_AUTOLOAD=1 python tests/npu-judged/test_\w+\.py -v$", md, re.M)
    html = (seed_bundle / "report.html").read_text(encoding="utf-8")
    for link in re.findall(r'href="([^"#:]+)"', html):
        assert (seed_bundle / link).exists(), link
    assert 'src="screenshot.' in html


def test_conclusion_items_are_one_per_line(seed_bundle):
    md = (seed_bundle / "report.zh.md").read_text(encoding="utf-8")
    for item in ("验证策略", "验证环境及版本", "验证结果", "运行日志"):
        assert re.search(rf"^- {item}：", md, re.M), item
    assert re.search(r"^- 运行日志：.*运行截图：\[screenshot\.(png|svg)\]", md, re.M)
