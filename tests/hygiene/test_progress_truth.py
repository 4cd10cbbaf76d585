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
