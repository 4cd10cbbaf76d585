"""An interrupted check says so in every report — report.zh.md (in Chinese), report.en.md,
report.html — and lists the cases that did not run, API by API (issue 22 item 7)."""

import re

import pytest

from torchparity.app import runloop
from torchparity.errors import Terminated


def test_every_report_of_an_interrupted_check_says_so_and_lists_what_did_not_run(tmp_path, monkeypatch):
    from torchparity.app import check as check_mod
    from torchparity.app.deliverables import deliverable_writers
    from torchparity.run.pool import CaseEvent

    class StoppedPool:
        warmups = []

        def run(self, cases, timeouts, on_event):
            for i in range(2):  # two cases of the first API run, then SIGTERM
                on_event(CaseEvent(index=i, kind="crash", detail="worker died"))
            raise Terminated()

    monkeypatch.setattr(runloop, "make_executor", lambda *a, **k: StoppedPool())
    out = tmp_path / "o"
    with pytest.raises(Terminated):
        check_mod.check(["torch.autograd.gradcheck", "torch.autograd.forward_ad.unpack_dual"],
                        "cpu", out=str(out), jobs=1,
                        writers=deliverable_writers(html=True, screenshot=False))
    zh = (out / "report.zh.md").read_text(encoding="utf-8")
    en = (out / "report.en.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "运行被中断" in zh and "interrupted" in en.lower() and 'id="interrupted-banner"' in html
    for text in (zh, en, html):
        assert "torch.autograd.forward_ad.unpack_dual" in text
        assert re.search(r"unpack_dual`?(：|: )[^\n]*\[float", text) or "unpack_dual</code>:" in text
    # an API none of whose cases ran reads in Chinese, with no English word inside
    line = next(ln for ln in zh.splitlines() if ln.startswith("- `torch.autograd.forward_ad.unpack_dual`："))
    assert "undetermined" not in line and "undecided" not in line, line
    # the summary's "passed" cell of a partly run API names what did not run (gradcheck's
    # "7/9" does not read as if its other scenarios were all judged)
    row = next(ln for ln in zh.splitlines() if ln.startswith("| `torch.autograd.gradcheck`"))
    assert "未执行" in row and "[float" in row, row
    row = next(ln for ln in en.splitlines() if ln.startswith("| `torch.autograd.gradcheck`"))
    assert "not run:" in row and "[float" in row, row


def test_an_interrupted_check_skips_the_screenshot_and_drops_an_earlier_one(tmp_path, monkeypatch):
    """Ctrl-C must end within seconds (issue 47, point 6): the picture of the summary table,
    the slowest writer, is not drawn for an interrupted run, and an earlier run's picture is
    not left beside this run's report."""
    from torchparity.app import check as check_mod
    from torchparity.app.deliverables import deliverable_writers
    from torchparity.run.pool import CaseEvent

    class StoppedPool:
        warmups = []

        def run(self, cases, timeouts, on_event):
            on_event(CaseEvent(index=0, kind="crash", detail="worker died"))
            raise KeyboardInterrupt()

    monkeypatch.setattr(runloop, "make_executor", lambda *a, **k: StoppedPool())
    out = tmp_path / "o"
    out.mkdir()
    (out / "screenshot.svg").write_text("<svg>an earlier run</svg>", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        check_mod.check(["torch.abs"], "cpu", out=str(out), jobs=1, dtypes=["float32"],
                        writers=deliverable_writers(html=True, screenshot=True, png=False))
    assert (out / "report.json").exists() and (out / "report.html").exists()
    assert not (out / "screenshot.svg").exists() and not (out / "screenshot.png").exists()
