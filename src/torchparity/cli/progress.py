"""Progress bars with ETA for long commands (rich), on stderr so stdout stays clean."""

from __future__ import annotations

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


class _Bar:
    def __init__(self, console: Console, *extra):
        self.console = console
        self.bar = _bar(console, *extra)
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
