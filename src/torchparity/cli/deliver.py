"""gentest, scaffold, matrix, review."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from .shared import (
    app,
    out_console,
)


@app.command()
def gentest(
    apis: List[str] = typer.Argument(..., help="Dotted API names, e.g. torch.autograd.gradcheck"),
    style: str = typer.Option("device-generic", "--style",
                              help="device-generic (instantiate_device_type_tests); npu (files "
                                   "for Ascend's test tree: only torch, torch_npu and "
                                   "torch.testing._internal, @ops over op_db entries); "
                                   "npu-judged (Ascend test/npu conventions, judged by "
                                   "torchparity: needs it installed)"),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the test files (one per API)."),
    scenarios: List[str] = typer.Option([], "--scenarios", help="Extra scenario module or .py file (repeatable)."),
    limits_from: Optional[Path] = typer.Option(None, "--limits-from",
                                               help="report.json (or its folder) of a check run: "
                                                    "its refused cases become recorded limits."),
    max_samples: Optional[int] = typer.Option(None, "--max-samples", min=1,
                                              help="At most N OpInfo samples per dtype (as check --max-samples)."),
    supported_devices: Optional[str] = typer.Option(None, "--supported-devices",
                                                    help="npu-judged style: comma-separated SupportedDevices "
                                                         "names (default Ascend910B,Ascend910_93,Ascend950)."),
    tests: Optional[Path] = typer.Option(None, "--tests",
                                         help="A test tree (as check --tests): its tests of each API "
                                              "are replayed too; the files read the tree from "
                                              "$TORCHPARITY_TESTS when they run."),
    force: bool = typer.Option(False, "--force", help="Overwrite files of the same name that are "
                               "not torchparity's (default: keep them and say so)."),
) -> None:
    """Write test files generated from the scenarios: device, dtypes and shapes as parameters."""
    from ..app.gentest import gentest as run_gentest
    from ..deliver.gentest import DEFAULT_SUPPORTED_DEVICES
    from ..results.store import load_report

    report = load_report(limits_from) if limits_from else None
    chips = [c.strip() for c in supported_devices.split(",") if c.strip()] if supported_devices \
        else list(DEFAULT_SUPPORTED_DEVICES)
    files = run_gentest(apis, style, str(out), scenario_modules=scenarios, report=report,
                        supported_devices=chips, max_samples=max_samples,
                        tests_dir=str(tests) if tests else None, force=force)
    from ..deliver.gentest import KEPT

    for f in files:
        if f.outcome == KEPT:
            out_console.print(f"kept {out / f.name}: not a torchparity file (no marker line); "
                              "nothing written there (--force overwrites it)", markup=False,
                              soft_wrap=True)
        else:
            out_console.print(f"{f.outcome} {out / f.name} ({f.tests} tests, style {f.style})",
                              markup=False, soft_wrap=True)
    if style == "npu":
        for api in apis:
            if not any(f.api == api for f in files):
                out_console.print(f"no npu file for {api}: none of its cases can be said without "
                                  "torchparity (random draws, re-made scenarios, worlds, replays); "
                                  "--style npu-judged writes them", markup=False, soft_wrap=True)
    counts = {}
    for f in files:
        counts[f.outcome] = counts.get(f.outcome, 0) + 1
    out_console.print("summary: " + ", ".join(f"{n} {k}" for k, n in counts.items()), markup=False)


@app.command()
def scaffold(
    api: str = typer.Argument(..., help="Dotted API name, e.g. torch.autograd.functional.vjp"),
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="Folder for the suite module (default: print it)."),
    device: str = typer.Option("cpu", "--device", help="Where the docstring examples run for the footprint."),
    no_run: bool = typer.Option(False, "--no-run", help="Do not run the docstring examples (no footprint)."),
) -> None:
    """Write a suite module to start from: signature, docstring examples, footprint, TODOs."""
    from ..app.scaffold import scaffold as run_scaffold

    result = run_scaffold(api, str(out) if out else None, device=device, run_examples=not no_run)
    if result.path is None:
        sys.stdout.write(result.text)
        return
    out_console.print(f"wrote {result.path} ({result.examples} docstring example block(s), "
                      f"{result.runnable} ran; scenario 'todo' is a placeholder until written)",
                      markup=False, soft_wrap=True)


@app.command()
def matrix(
    bundles: List[Path] = typer.Argument(..., help="report.json files, or the folders holding them."),
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="Folder for matrix.md, matrix.csv, matrix.html and "
                                            "vendor-docs/pytorch_X-Y-Z.md."),
    formats: str = typer.Option("md,csv,html,vendor", "--formats", help="Comma-separated subset of md,csv,html,vendor."),
) -> None:
    """Merge bundles from several environments (torch versions x chips/profiles x devices)."""
    from ..app.matrix import matrix as run_matrix
    from ..deliver.matrix import render_markdown

    m, written = run_matrix([str(b) for b in bundles], str(out) if out else None,
                            [f.strip() for f in formats.split(",") if f.strip()])
    if out is None:
        sys.stdout.write(render_markdown(m))
        return
    for path in written:
        out_console.print(f"wrote {path}", markup=False, soft_wrap=True)


@app.command()
def review(
    file: Path = typer.Argument(..., help="The contributor's issue or PR text (Markdown or plain text)."),
    report: List[Path] = typer.Option([], "--report",
                                      help="report.json (or its folder) whose analysis to use instead "
                                           "of running the APIs' scenarios on the CPU, and whose evidence "
                                           "each claim of the text is checked against (repeatable; default: "
                                           "the report.json beside the file or above its issues/ folder)."),
    versions: Optional[str] = typer.Option(None, "--versions",
                                           help="Torch versions the results must cover (default 2.7.1,2.11.0,2.12.0)."),
    chips: Optional[str] = typer.Option(None, "--chips", help="Chip groups the results must cover (default A2/A3,A5)."),
    lang: str = typer.Option("both", "--lang", help="zh, en or both."),
    run: bool = typer.Option(True, "--run/--no-run",
                             help="Run the APIs' scenarios on the CPU to learn their device involvement."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the verdict as JSON here."),
) -> None:
    """First review of a task deliverable: exit 0 when acceptable, 1 with every problem named."""
    import json

    from ..app.review import review as run_review
    from ..deliver.review import as_dict, render
    from ..errors import InputError
    from ..results.store import write_text_atomic

    if lang not in ("zh", "en", "both"):
        raise InputError("--lang must be zh, en or both")
    def split(text: Optional[str]) -> Optional[List[str]]:
        return [x.strip() for x in text.split(",") if x.strip()] if text else None

    result = run_review(str(file), reports=[str(r) for r in report], versions=split(versions),
                        chips=split(chips), run=run)
    texts = [render(result, code) for code in (("zh", "en") if lang == "both" else (lang,))]
    sys.stdout.write("\n".join(texts))
    if json_out:
        write_text_atomic(json_out, json.dumps(as_dict(result), ensure_ascii=False, indent=2) + "\n")
    raise typer.Exit(0 if result.accepted else 1)
