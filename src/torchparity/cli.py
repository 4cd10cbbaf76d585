"""The command line: a thin typer shell. Parse, call one function, print."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

# torch_npu, when installed, autoloads on `import torch` and breaks it where CANN is
# missing; torchparity imports it explicitly (and only) for --device npu.
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

import typer  # noqa: E402
from rich.console import Console  # noqa: E402

from . import __version__  # noqa: E402
from .errors import TorchparityError  # noqa: E402

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Does this PyTorch API behave on the device as on the CPU — for which "
                       "dtypes, and if not, why?")
profile_app = typer.Typer(no_args_is_help=True, help="Capability profiles of emulated devices.")
app.add_typer(profile_app, name="profile")

out_console = Console()
err_console = Console(stderr=True)

DEVICE_HELP = ("cpu, cuda[:N], npu[:N], xpu, mps, auto (first available accelerator), or "
               "emu:<profile> for the emulated accelerator (e.g. emu:ascend-a2)")


def _version(value: bool) -> None:
    if value:
        out_console.print(f"torchparity {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """torchparity: evidence and deliverables for PyTorch API support on accelerators."""


class _RichProgress:
    """Progress bar with ETA for check(); prints each non-passing case as it lands."""

    def __init__(self, console: Console):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                            console=console, transient=True)
        self.task = None

    def start(self, total: int, description: str) -> None:
        self.bar.start()
        self.task = self.bar.add_task(description, total=total)

    def advance(self, result, api: str) -> None:
        self.bar.advance(self.task)
        if result.status != "pass":
            self.console.print(f"  [dim]{api}[/dim] {result.id}[{result.dtype}] → {result.status}"
                               + (f" ({result.cause})" if result.cause else ""))

    def stop(self) -> None:
        self.bar.stop()


@app.command()
def check(
    apis: List[str] = typer.Argument(..., help="Dotted API names, e.g. torch.autograd.gradcheck"),
    device: str = typer.Option("auto", "--device", "-d", help=DEVICE_HELP),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for report.json and the zh/en reports."),
    timeout: float = typer.Option(120.0, help="Seconds per scenario before it counts as a timeout."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Worker processes."),
    scenarios: List[str] = typer.Option([], "--scenarios", help="Extra scenario module or .py file (repeatable)."),
    category_rules: Optional[Path] = typer.Option(None, help="YAML category rules (default: the Ascend community's)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary table."),
) -> None:
    """Check APIs on a device against the CPU and write the deliverables."""
    from .app.check import check as run_check
    from .deliver.console import print_summary

    progress = None if quiet else _RichProgress(err_console)
    report = run_check(apis, device, out=str(out) if out else None, timeout=timeout, jobs=jobs,
                       scenario_modules=scenarios, category_rules=str(category_rules) if category_rules else None,
                       progress=progress)
    if not quiet:
        print_summary(report, out_console)
    if out:
        out_console.print(f"wrote {out}/report.json, report.en.md, report.zh.md")
    broken = [a.name for a in report.apis if a.verdict.status in ("broken", "unknown")]
    raise typer.Exit(1 if broken else 0)


@app.command()
def devices() -> None:
    """List the device backends and whether each can be used here."""
    from .devices import REAL, get_adapter
    from .devices.profiles import builtin_profiles

    for name in REAL:
        adapter = get_adapter(name)
        reason = adapter.unavailable_reason()
        out_console.print(f"{name:6} {'available' if reason is None else reason}")
    for name in builtin_profiles():
        adapter = get_adapter(f"emu:{name}")
        reason = adapter.unavailable_reason()
        out_console.print(f"emu:{name} → emulated '{adapter.type}' "
                          f"{'available' if reason is None else reason}")


@profile_app.command("list")
def profile_list() -> None:
    """List the shipped capability profiles."""
    from .devices.profiles import builtin_profiles, load_profile

    for name, path in builtin_profiles().items():
        p = load_profile(path)
        out_console.print(f"{name:16} device '{p.device_type}', {len(p.ops)} op rules, "
                          f"chips: {', '.join(p.chips) or '-'}")


def _fail_line(message: str) -> None:
    """One line on stderr, unwrapped, whatever the terminal width."""
    line = " ".join(message.split())
    sys.stderr.write(f"torchparity: {line}\n")
    sys.stderr.flush()


def main() -> None:
    try:
        code = app(standalone_mode=False)  # click returns the code of typer.Exit here
        sys.exit(code if isinstance(code, int) else 0)
    except TorchparityError as exc:
        _fail_line(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _fail_line("interrupted; what was recorded so far is kept")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except Exception as exc:  # click usage errors come here in non-standalone mode
        try:
            from click.exceptions import Abort, ClickException
        except ImportError:  # newer typer vendors its own click, without Abort
            from typer._click import exceptions as _ce

            ClickException, Abort = _ce.ClickException, getattr(_ce, "Abort", ())
        if isinstance(exc, ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if Abort and isinstance(exc, Abort):
            sys.exit(130)
        if os.environ.get("TORCHPARITY_DEBUG"):
            raise
        _fail_line(f"internal error: {type(exc).__name__}: {exc} "
                   "(set TORCHPARITY_DEBUG=1 for the traceback)")
        sys.exit(1)


# ==== sweep, sweep-matrix, predict (branch sweep) ==============================================


def _say(text: str) -> None:
    """A plain line: API names with brackets are not rich markup."""
    out_console.print(text, markup=False, highlight=False, soft_wrap=True)


class _SweepProgress:
    """Progress bar with ETA and running status counts for sweep()."""

    def __init__(self, console: Console):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                            TextColumn("{task.fields[counts]}"), console=console, transient=True)
        self.task = None
        self.counts = {}

    def start(self, total: int, description: str) -> None:
        self.bar.start()
        self.task = self.bar.add_task(description, total=total, counts="")

    def advance(self, row) -> None:
        self.counts[row["status"]] = self.counts.get(row["status"], 0) + 1
        text = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        self.bar.update(self.task, advance=1, counts=text)

    def stop(self) -> None:
        self.bar.stop()


def _dtype_list(text: Optional[str]):
    from .scenarios.opinfo import DTYPE_NAMES

    if not text:
        return list(DTYPE_NAMES)
    return [d.strip() for d in text.split(",") if d.strip()]


@app.command()
def sweep(
    opinfo: bool = typer.Option(False, "--opinfo", help="Every OpInfo entry of op_db."),
    namespace: Optional[str] = typer.Option(None, "--namespace", help="APIs of a namespace that have OpInfo entries, e.g. torch.nn.functional."),
    apis: Optional[Path] = typer.Option(None, "--apis", help="File with one API name per line."),
    device: str = typer.Option("auto", "--device", "-d", help=DEVICE_HELP),
    dtypes: Optional[str] = typer.Option(None, "--dtypes", help="Comma-separated dtypes (default: the 12 of bool..complex128)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: one per core)."),
    timeout: float = typer.Option(300.0, help="Seconds per case (one API x one dtype, all samples)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for results.sqlite and matrix.{json,md,csv}; a rerun resumes."),
    reference_inputs: bool = typer.Option(False, "--reference-inputs", help="OpInfo reference_inputs instead of sample_inputs."),
    grads: bool = typer.Option(True, "--grads/--no-grads", help="Compare gradients where the op supports autograd."),
    max_samples: Optional[int] = typer.Option(None, "--max-samples", min=1, help="At most N samples per case."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Run every OpInfo sample of many APIs x dtypes on a device against the CPU.

    Exit code 1 when a case gave a wrong result, an error, a crash or a timeout.
    """
    from .app.sweep import read_api_file
    from .app.sweep import sweep as run_sweep

    names = read_api_file(str(apis)) if apis else []
    progress = None if quiet else _SweepProgress(err_console)
    summary = run_sweep(out=str(out), device=device, all_opinfo=opinfo, namespace=namespace,
                        apis=names, dtypes=_dtype_list(dtypes), jobs=jobs, timeout=timeout,
                        reference=reference_inputs, grads=grads, max_samples=max_samples,
                        progress=progress)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items())) or "nothing new"
    _say(f"{summary.ran} case(s) run in {summary.seconds:.1f} s "
                      f"({summary.already_done} already done): {counts}")
    if summary.no_scenarios:
        _say(f"no scenarios (no OpInfo entry): {len(summary.no_scenarios)} API(s), "
                          "listed in matrix.md")
    _say(f"wrote {out}/results.sqlite, matrix.json, matrix.md, matrix.csv")
    if summary.problems:
        _say(f"{summary.problems} case(s) with a wrong result, error, crash or timeout")
    raise typer.Exit(1 if summary.problems else 0)


@app.command("sweep-matrix")
def sweep_matrix(
    dirs: List[Path] = typer.Argument(..., help="Sweep output folders (one per device or profile)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for matrix.{json,md,csv}."),
) -> None:
    """Write one support matrix from one or more sweeps (devices / profiles side by side).

    (`torchparity matrix` merges check report bundles; this merges sweep stores.)
    """
    from .deliver.sweep_matrix import build_matrix, merge_matrices, write_matrix
    from .results.sweep_store import open_store

    docs = []
    for d in dirs:
        store = open_store(d, must_exist=True)
        docs.append(build_matrix(store.rows(), store.meta()))
        store.close()
    write_matrix(merge_matrices(docs), out)
    _say(f"wrote {out}/matrix.json, matrix.md, matrix.csv")


def _load_docs_dtypes(path: Path):
    import json

    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise TorchparityError(f"--docs-dtypes {path}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise TorchparityError(f"--docs-dtypes {path}: expected a mapping api -> [dtypes]")
    return {str(k): list(v or []) for k, v in data.items()}


@app.command()
def predict(
    apis: List[str] = typer.Argument(..., help="Dotted API names."),
    profile: str = typer.Option(..., "--profile", "-p", help="Capability profile: shipped name or YAML file."),
    dtypes: Optional[str] = typer.Option(None, "--dtypes", help="Comma-separated dtypes (default: 12)."),
    against: Optional[Path] = typer.Option(None, "--against", help="A sweep folder on the profile's emulated device: confirm or refute each prediction."),
    docs_dtypes: Optional[Path] = typer.Option(None, "--docs-dtypes", help="YAML/JSON {api: [dtypes the vendor docs allow]}: compare."),
    grads: bool = typer.Option(True, "--grads/--no-grads", help="Include the backward footprint."),
) -> None:
    """Predict which dtypes a profile refuses for each API, from its footprint (no device)."""
    from .app.predict import against_sweep, compare_with_docs
    from .app.predict import predict as run_predict

    preds = run_predict(apis, profile, dtypes=_dtype_list(dtypes), grads=grads)
    for p in preds:
        if p.status == "pass":
            continue
        _say(f"{p.api} [{p.variant}] {p.dtype}: {p.status} — {p.reason}")
    ok = sum(1 for p in preds if p.status == "pass")
    _say(f"{len(preds)} prediction(s): {ok} expected to pass, "
                      f"{len(preds) - ok} expected to fail or unknown")
    code = 0
    if against:
        conf = against_sweep(preds, str(against))
        rate = f"{conf.rate:.1%}" if conf.rate is not None else "n/a"
        _say(f"against {against}: {conf.agree} of {conf.compared} confirmed ({rate}); "
                          f"{conf.not_compared} not comparable")
        for d in conf.disagreements:
            _say(f"  disagreement: {d['api']} [{d['variant']}] {d['dtype']}: predicted "
                              f"{d['predicted']} ({d['predicted_reason']}), observed {d['observed']} "
                              f"({d['observed_cause']}: {d['observed_detail'][:160]})")
        code = 1 if conf.disagreements else 0
    if docs_dtypes:
        cmp = compare_with_docs(preds, _load_docs_dtypes(docs_dtypes), profile)
        rate = f"{cmp.rate:.1%}" if cmp.rate is not None else "n/a"
        _say(f"vendor docs: {cmp.agree} of {cmp.compared} (api, dtype) pairs agree "
                          f"({rate}); {cmp.apis_agreeing} of {cmp.apis} APIs agree entirely")
        for d in cmp.disagreements:
            _say(f"  {d['verdict']}: {d['api']} {d['dtype']}: {d['reason']}")
    raise typer.Exit(code)


# ==== end of sweep block ==================================================================

if __name__ == "__main__":
    main()
