"""The terminal summary (rich). The same tables are recorded as the run screenshot."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text as RichText

from ..dtypes import DTYPE_FREE
from ..results.models import Report

STYLE = {"pass": "green", "fail": "red", "unsupported": "yellow", "error": "red",
         "crash": "bold red", "timeout": "magenta", "skip": "dim", "partial": "yellow",
         "supported": "green", "device-independent": "green", "broken": "red", "unknown": "dim"}


def dtype_cell(dtype: str | None, tags: list) -> str:
    """A row's dtype column: its dtype, or "any" for a case whose code takes no dtype
    (with the dtype of the tensors it ran with)."""
    if DTYPE_FREE in tags:
        return f"any (takes no dtype; ran {dtype or 'float32'})"
    return dtype or ""


def summary_renderable(report: Report, details: bool = True) -> Group:
    dev = report.device
    emulated = " (emulated)" if dev.emulated else ""
    if dev.emulated:
        where = f"{dev.type} — EMULATED, profile {dev.profile}: a prediction, not a hardware result"
    else:
        where = f"{dev.type} — {report.environment.device_name or 'device'}"
    parts = [RichText(f"torchparity {report.tool_version} · torch {report.environment.torch} · {where}",
                      style="bold")]
    for api in report.apis:
        v = api.verdict
        # the API line stands apart from its table, so a narrow table never wraps it
        parts.append(RichText.assemble((api.name, "bold"), "  ",
                                       (f"{v.status}{emulated}", STYLE.get(v.status, "")),
                                       f"  category {v.category or '-'}"))
        show_source = any(s.source and s.source != "hand" for s in api.scenarios)
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("scenario", no_wrap=True)
        if show_source:
            table.add_column("source", no_wrap=True)
        table.add_column("dtype", no_wrap=True)
        table.add_column("status", no_wrap=True)
        table.add_column("cause", no_wrap=True)
        if details:
            table.add_column("detail", overflow="fold", ratio=1)
        for s in api.scenarios:
            # plain text, never markup: a detail quotes what a device raised ("[/__w/...]")
            row = [RichText(s.id)] + ([RichText(s.source or "")] if show_source else []) + [
                RichText(dtype_cell(s.dtype, s.tags)), RichText(s.status + emulated, style=STYLE.get(s.status, "")),
                RichText(s.cause or "")]
            if details:
                row.append(RichText(s.detail if s.status != "pass" else ""))
            table.add_row(*row)
        if not api.scenarios:
            table.add_row("(no scenario from any source)", "", "", "", *([""] if details else []))
        parts.append(table)
        if not api.scenarios and api.sources_tried:
            parts.append(RichText("sources tried: " + "; ".join(
                f"{k}: {v}" for k, v in api.sources_tried.items()), style="dim"))
    return Group(*parts)


def runs_renderable(report: Report) -> Group:
    """One table per further device of a ``--device a,b,c`` run: each API's verdict there
    (those runs keep no scenarios, see ``DeviceRun``)."""
    parts = []
    for run in report.runs:
        dev = run.device
        where = (f"{dev.type} — EMULATED, profile {dev.profile}: a prediction, not a hardware result"
                 if dev.emulated else f"{dev.type} — {run.environment.device_name or 'device'}")
        parts.append(RichText(where + ("  (interrupted)" if run.interrupted else ""), style="bold"))
        table = Table(show_edge=False, pad_edge=False)
        for col in ("api", "status", "passed", "category"):
            table.add_column(col, no_wrap=True)
        emulated = " (emulated)" if dev.emulated else ""
        for api in run.apis:
            table.add_row(RichText(api.name), RichText(api.status + emulated, style=STYLE.get(api.status, "")),
                          f"{api.passed}/{api.total}", api.category or "-")
        parts.append(table)
    return Group(*parts)


def print_summary(report: Report, console: Console, details: bool = True) -> None:
    console.print(summary_renderable(report, details))
    if report.runs:  # every device's table, not only the first one's
        console.print(runs_renderable(report))
