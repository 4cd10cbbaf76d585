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
    # unwrapped: an option's whole help on the option's line, no box drawn around it
    line = next(ln for ln in out.splitlines() if "--apis-from-vendor-docs <" in ln or "--apis-from-vendor-docs  " in ln)
    assert "no per-API reports" in line and "several devices" in line, line
    assert "│" not in out and "╭" not in out


def test_every_device_of_a_several_device_check_gets_its_table():
    from rich.console import Console

    from torchparity.deliver.console import print_summary
    from torchparity.results.models import (
        DeviceInfo,
        DeviceRun,
        Environment,
        Report,
        RunApi,
    )

    env = Environment(os="Linux", arch="x86_64", python="3.11", torch="2.13.0")
    report = Report(tool_version="0.1.0", created="2026-01-01T00:00:00+00:00", environment=env,
                    device=DeviceInfo(type="cpu", spec="cpu"), apis=[])
    report.runs = [DeviceRun(device=DeviceInfo(type="npu", emulated=True, profile=p, spec=f"emu:{p}"),
                             environment=env,
                             apis=[RunApi(name="torch.mm", status="partial", passed=k, total=3)])
                   for k, p in ((1, "ascend-a3"), (2, "ascend-950dt"))]
    buf = io.StringIO()
    print_summary(report, Console(file=buf, width=160))
    text = buf.getvalue()
    assert "profile ascend-a3" in text and "profile ascend-950dt" in text
    assert "1/3" in text and "2/3" in text and text.count("torch.mm") == 2
