"""Progress bars with ETA for long commands (rich), on stderr so stdout stays clean."""

from __future__ import annotations

import time
from typing import Dict

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def _bar(console: Console, *extra) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), *extra,
                    console=console, transient=True)


PLAIN_EVERY_S = 10.0  # not a terminal (CI logs, `| tee`): one progress line this often


class _PlainBar:
    """What a rich bar shows, as a line on stderr every ``PLAIN_EVERY_S`` seconds when the
    console is no terminal (a live bar would print nothing there): cases done, rate, ETA."""

    def __init__(self, console: Console):
        self.console = console
        self.total, self.done, self.description = 0, 0, ""
        self.t0 = self.last = 0.0

    def start(self) -> None:
        self.t0 = self.last = time.monotonic()

    def add_task(self, description: str, total: int, **_fields) -> int:
        self.description, self.total = description, total
        return 0

    def advance(self, _task=None, advance: int = 1) -> None:
        self.done += advance
        now = time.monotonic()
        if now - self.last >= PLAIN_EVERY_S:
            self.last = now
            self.line(now)

    def update(self, _task=None, advance: int = 0, **_fields) -> None:
        if advance:
            self.advance(advance=advance)

    def line(self, now: float) -> None:
        spent = max(now - self.t0, 1e-9)
        rate = self.done / spent
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = f"{int(left // 60)}m{int(left % 60):02d}s" if left is not None else "?"
        self.console.print(f"{self.description}: {self.done}/{self.total} cases, {rate:.2f}/s, "
                           f"ETA {eta}", markup=False, highlight=False, soft_wrap=True)

    def stop(self) -> None:
        if self.total:
            self.line(time.monotonic())


class _Bar:
    def __init__(self, console: Console, *extra):
        self.console = console
        self.bar = _bar(console, *extra) if console.is_terminal else _PlainBar(console)
        self.task = None

    def stop(self) -> None:
        self.bar.stop()


class CheckProgress(_Bar):
    """check(): one step per scenario case; each non-passing case is printed as it lands."""

    def start(self, total: int, description: str) -> None:
        self.bar.start()
        self.task = self.bar.add_task(description, total=total)

    def advance(self, result, api: str) -> None:
        self.bar.advance(self.task)
        if result.status != "pass":
            self.console.print(f"  [dim]{escape(api)}[/dim] {escape(result.id)}\\[{result.dtype}] → {result.status}"
                               + (f" ({result.cause})" if result.cause else ""), markup=True,
                               highlight=False)


class SweepProgress(_Bar):
    """sweep(): one step per case, with running counts by status."""

    def __init__(self, console: Console):
        super().__init__(console, TextColumn("{task.fields[counts]}"))
        self.counts: Dict[str, int] = {}

    def start(self, total: int, description: str) -> None:
        self.bar.start()
        self.task = self.bar.add_task(description, total=total, counts="")

    def advance(self, row) -> None:
        self.counts[row["status"]] = self.counts.get(row["status"], 0) + 1
        text = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        self.bar.update(self.task, advance=1, counts=text)


class StepProgress(_Bar):
    """One step per unit of work, nothing else to say (predict --trace emulated)."""

    def start(self, total: int, description: str) -> None:
        self.bar.start()
        self.task = self.bar.add_task(description, total=total)

    def advance(self) -> None:
        self.bar.advance(self.task)
