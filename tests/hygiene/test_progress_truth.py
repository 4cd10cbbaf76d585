"""Progress that tells the truth (issue 47, point 6): no ETA before a rate is measured (the
first case carries the workers' start-up: an ETA from it was `ETA 11m21s` for a two-minute
run), and with ``--device a,b,c`` each device counts its own cases (was `5/4 cases … ETA
-1m57s`). The clock is the test's, so this is exact and instant."""

import io
import re

from rich.console import Console

from torchparity.cli import progress as P


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _bar(monkeypatch):
    buf = io.StringIO()
    clock = Clock()
    monkeypatch.setattr(P.time, "monotonic", clock)
    monkeypatch.setattr(P, "PLAIN_EVERY_S", 0.0)
    return P.SweepProgress(Console(file=buf, force_terminal=False, width=200)), buf, clock


def test_no_eta_before_a_measured_rate(monkeypatch):
    bar, buf, clock = _bar(monkeypatch)
    bar.start(100, "sweep")
    clock.t += 120.0  # worker start-up: two minutes before the first case lands
    bar.advance({"status": "pass"})
    first = buf.getvalue().strip().splitlines()[-1]
    assert "1/100 cases" in first and not re.search(r"ETA \d", first), first
    clock.t += 1.0  # then one case a second
    bar.advance({"status": "pass"})
    second = buf.getvalue().strip().splitlines()[-1]
    assert "ETA 1m38s" in second and "1.00/s" in second, second


def test_each_device_counts_its_own_cases(monkeypatch):
    bar, buf, clock = _bar(monkeypatch)
    for device in ("emu:ascend-a2", "emu:ascend-a3", "emu:ascend-950dt"):
        bar.start(4, f"1 API(s) on {device}")
        for _ in range(4):
            clock.t += 1.0
            bar.advance({"status": "pass"})
        bar.stop()
    for line in buf.getvalue().splitlines():
        m = re.search(r"(\d+)/(\d+) cases", line)
        assert m and int(m.group(1)) <= int(m.group(2)), line
        assert "ETA -" not in line, line


def test_docs_audit_and_profile_build_say_where_they_are_when_piped(monkeypatch):
    """docs-audit printed nothing for minutes (issue 47, point 6): its step callback
    (``progress(i, n)``, also profile build's) now draws a line every 10 s when stderr is
    no terminal."""
    buf = io.StringIO()
    clock = Clock()
    monkeypatch.setattr(P.time, "monotonic", clock)
    monkeypatch.setattr(P, "PLAIN_EVERY_S", 0.0)
    bar = P.StepProgress(Console(file=buf, force_terminal=False, width=200))
    bar.start(0, "footprints of documented APIs")
    for i in range(1, 4):
        clock.t += 2.0
        bar.to(i, 300)
    bar.stop()
    lines = buf.getvalue().strip().splitlines()
    assert "footprints of documented APIs: 3/300 cases" in lines[-1], lines
    assert any("ETA" in ln and "/s" in ln for ln in lines), lines


def test_docs_audit_command_uses_the_step_bar(monkeypatch, tmp_path):
    import torchparity.app.docs_audit as audit_mod
    from torchparity import cli

    seen = []

    def fake_audit(*_a, progress=None, **_k):
        progress(1, 2)
        seen.append(progress)
        return {"findings": [], "entries_compared": 0, "seed_conflicts": []}

    monkeypatch.setattr(audit_mod, "audit", fake_audit)
    monkeypatch.setattr(audit_mod, "write_audit", lambda report, out: (out / "a.md", out / "a.json"))
    monkeypatch.setattr("sys.argv", ["torchparity", "docs-audit", "--vendor-docs", str(tmp_path),
                                     "--out", str(tmp_path)])
    try:
        cli.main()
    except SystemExit as done:
        assert done.code in (0, None)
    assert seen and getattr(seen[0], "__self__", None).__class__.__name__ == "StepProgress"
