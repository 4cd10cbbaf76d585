"""explain-skips."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .shared import DEVICE_HELP, app, err_console
from .shared import say as _say


@app.command("explain-skips")
def explain_skips(
    disabled: Path = typer.Option(..., "--disabled", help="The vendor's disabled-test list (Ascend/pytorch "
                                  "test/unsupported_test_cases/.pytorch-disabled-tests.json)."),
    tests: Optional[Path] = typer.Option(None, "--tests", help="The test tree the listed tests come from "
                                         "(PyTorch's test/): its @ops decorators and the tests to replay."),
    device: str = typer.Option("emu:ascend-a2", "--device", "-d", help=DEVICE_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the outputs and explain-skips.sqlite; "
                             "a rerun resumes."),
    sample: Optional[int] = typer.Option(None, "--sample", min=1, help="Only N entries, evenly spread "
                                         "over the list."),
    stratified: bool = typer.Option(False, "--stratified", help="With --sample: spread the sample over "
                                    "class × kind × dtype family in proportion (else every k-th entry)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Worker processes for the replays."),
    side_timeout: float = typer.Option(60.0, "--side-timeout", min=1.0, help="Seconds for one side "
                                       "(CPU or device) of one replayed test."),
    store: Optional[str] = typer.Option(None, "--store", help="A sweep of the same device (its folder "
                                        "or store URL): the @ops entries are answered from its rows "
                                        "where it has the op and dtype."),
    max_samples: int = typer.Option(3, "--max-samples", min=1, help="OpInfo samples per op and dtype "
                                    "for the capability prediction."),
) -> None:
    """Explain every entry of a disabled-test list: the vendor's category, with evidence."""
    from ..app.explain_skips import CATEGORIES
    from ..app.explain_skips import explain_skips as run

    def progress(what: str, i: int, n: int) -> None:
        if i == n or i % 200 == 0:
            err_console.print(f"{what}: {i}/{n}", markup=False, highlight=False)

    result = run(disabled=str(disabled), tests=str(tests) if tests else None, device=device,
                 out=str(out), sample=sample, stratify=stratified, side_timeout=side_timeout, jobs=jobs,
                 max_samples=max_samples, store=store, progress=progress)
    counts = result.counts()
    kind = "predicted" if result.emulated else "measured"
    _say(f"{len(result.entries)} entries on {result.device} ({kind}), {result.seconds:g} s: "
         + ", ".join(f"{c} {counts[c]}" for c in CATEGORIES if counts[c]))
    for path in result.files:
        _say(f"wrote {path}")
