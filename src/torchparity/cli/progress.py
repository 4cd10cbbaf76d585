"""Progress bars with ETA for long commands (rich), on stderr so stdout stays clean."""

from __future__ import annotations

import time
from typing import Dict, Optional

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
        self.first = None  # (time, done) at the first finished case: the rate starts there

    def start(self) -> None:
        self.t0 = self.last = time.monotonic()

    def add_task(self, description: str, total: int, **_fields) -> int:
        """A new task (``check --device a,b,c``: one per device) counts from zero, with a
        rate of its own: a counter never runs past its total, an ETA never goes negative."""
        self.description, self.total, self.done = description, total, 0
        self.t0 = self.last = time.monotonic()
        self.first = None
        return 0

    def advance(self, _task=None, advance: int = 1) -> None:
        self.done += advance
        now = time.monotonic()
        if self.first is None:  # the first case carries the workers' start-up: not a rate
            self.first = (now, self.done)
        if now - self.last >= PLAIN_EVERY_S:
            self.last = now
            self.line(now)

    def update(self, _task=None, advance: int = 0, completed: Optional[int] = None,
               total: Optional[int] = None, **_fields) -> None:
        if total is not None:
            self.total = total
        if completed is not None and completed > self.done:
            advance += completed - self.done
        if advance:
            self.advance(advance=advance)

    def line(self, now: float) -> None:
        """Cases done and, once two cases have finished, the measured rate and an ETA from
        it; before that no ETA (one guessed from start-up is minutes off)."""
        done = min(self.done, self.total) if self.total else self.done
        text = f"{self.description}: {done}/{self.total} cases"
        measured = self.first is not None and self.done > self.first[1] and now > self.first[0]
        if done >= self.total:
            text += ", done"
        elif measured:
            rate = (self.done - self.first[1]) / (now - self.first[0])
            left = max(self.total - done, 0) / rate
            text += f", {rate:.2f}/s, ETA {int(left // 60)}m{int(left % 60):02d}s"
        else:
            text += ", ETA once a rate is measured"
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

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

    def to(self, done: int, total: int) -> None:
        """A step callback ``progress(i, n)`` (docs-audit, profile build): ``done`` of ``total``."""
        self.bar.update(self.task, completed=done, total=total)
