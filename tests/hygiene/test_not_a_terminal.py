"""Not a terminal (CI logs, `| tee`): a progress line on stderr every 10 s (cases done,
rate, ETA) instead of a live bar that prints nothing there; tables and --help at a fixed
wide width, option names whole (issue 22, the newcomer's points)."""

import io
import subprocess
import sys
import types

from rich.console import Console

from torchparity.cli import progress as P


def test_a_progress_line_when_stderr_is_no_terminal(monkeypatch):
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=160)
    monkeypatch.setattr(P, "PLAIN_EVERY_S", 0.0)
    bar = P.SweepProgress(console)
    bar.start(4, "sweep torch.abs on cpu")
    for _ in range(3):
        bar.advance({"status": "pass"})
    bar.stop()
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    assert len(lines) >= 3, buf.getvalue()
    assert "3/4 cases" in lines[-1] and "/s" in lines[-1] and "ETA" in lines[-1], lines
    check = P.CheckProgress(console)
    check.start(2, "check")
    check.advance(types.SimpleNamespace(status="fail", id="x", dtype="float32", cause="mismatch"), "torch.abs")
    assert "1/2 cases" in buf.getvalue() and "→ fail" in buf.getvalue()


def test_help_is_not_cut_when_piped():
    out = subprocess.run([sys.executable, "-m", "torchparity", "check", "--help"],
                         capture_output=True, text=True, timeout=120).stdout
    assert "--apis-from-vendor-docs" in out and "--apis-from-vend…" not in out
    assert max(len(ln) for ln in out.splitlines()) > 120  # wider than rich's 80 columns
