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

TESTS_HELP = "A test tree (PyTorch's test/ or a backend's port) for the upstream test census."
DOCS_HELP = "PyTorch docs sources (docs/ or docs/source) for the official docs check."
VENDOR_HELP = "Vendor support docs: Ascend's native_api folder (pytorch_X-Y-Z/ inside)."
CONFIG_HELP = ("YAML file with defaults for device, tests, docs, vendor_docs, torch_version, chips, "
               "timeout, jobs; flags override it.")
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
    device: Optional[str] = typer.Option(None, "--device", "-d", help=DEVICE_HELP + " [default: auto]"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for report.json and the zh/en reports."),
    timeout: Optional[float] = typer.Option(None, help="Seconds per scenario before it counts as a timeout [default: 120]."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes [default: 1]."),
    scenarios: List[str] = typer.Option([], "--scenarios", help="Extra scenario module or .py file (repeatable)."),
    category_rules: Optional[Path] = typer.Option(None, help="YAML category rules (default: the Ascend community's)."),
    tests: Optional[Path] = typer.Option(None, "--tests", help=TESTS_HELP),
    docs: Optional[Path] = typer.Option(None, "--docs", help=DOCS_HELP),
    vendor_docs: Optional[Path] = typer.Option(None, "--vendor-docs", help=VENDOR_HELP),
    torch_version: Optional[str] = typer.Option(None, help="Torch version for docs links and vendor docs (default: installed)."),
    chips: List[str] = typer.Option([], "--chips", help="Chips to list in the vendor docs check, e.g. A2 (repeatable)."),
    config: Optional[Path] = typer.Option(None, "--config", help=CONFIG_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary table."),
) -> None:
    """Check APIs on a device against the CPU and write the deliverables."""
    from .app.check import check as run_check
    from .app.config import merge_options
    from .deliver.console import print_summary

    opts = merge_options(config, device=device, tests=tests, docs=docs, vendor_docs=vendor_docs,
                         torch_version=torch_version, chips=chips, timeout=timeout, jobs=jobs)
    progress = None if quiet else _RichProgress(err_console)
    report = run_check(apis, opts["device"], out=str(out) if out else None, timeout=opts["timeout"],
                       jobs=opts["jobs"], scenario_modules=scenarios,
                       category_rules=str(category_rules) if category_rules else None,
                       progress=progress, tests_dir=opts["tests"], docs_dir=opts["docs"],
                       vendor_docs_dir=opts["vendor_docs"], torch_version=opts["torch_version"],
                       chips=opts["chips"])
    if not quiet:
        print_summary(report, out_console)
    if out:
        out_console.print(f"wrote {out}/report.json, report.en.md, report.zh.md")
    broken = [a.name for a in report.apis if a.verdict.status in ("broken", "unknown")]
    raise typer.Exit(1 if broken else 0)


@app.command()
def evidence(
    apis: List[str] = typer.Argument(..., help="Dotted API names."),
    tests: Optional[Path] = typer.Option(None, "--tests", help=TESTS_HELP),
    docs: Optional[Path] = typer.Option(None, "--docs", help=DOCS_HELP),
    vendor_docs: Optional[Path] = typer.Option(None, "--vendor-docs", help=VENDOR_HELP),
    torch_version: Optional[str] = typer.Option(None, help="Torch version for docs links and vendor docs (default: installed)."),
    chips: List[str] = typer.Option([], "--chips", help="Chips to list, e.g. A2 (repeatable)."),
    config: Optional[Path] = typer.Option(None, "--config", help=CONFIG_HELP),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for evidence.json."),
) -> None:
    """Upstream test census and docs checks, without running anything on a device."""
    from .app.config import merge_options
    from .app.evidence import evidence as gather
    from .app.evidence import write_evidence
    from .deliver.evidence_md import print_evidence

    opts = merge_options(config, tests=tests, docs=docs, vendor_docs=vendor_docs,
                         torch_version=torch_version, chips=chips)
    found = gather(apis, tests_dir=opts["tests"], docs_dir=opts["docs"],
                   vendor_docs_dir=opts["vendor_docs"], torch_version=opts["torch_version"],
                   chips=opts["chips"] or None)
    print_evidence(found, out_console)
    if out:
        write_evidence(found, out / "evidence.json")
        out_console.print(f"wrote {out}/evidence.json")


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


@profile_app.command("build")
def profile_build(
    from_ascend_docs: Path = typer.Option(..., "--from-ascend-docs", help=VENDOR_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the <profile>.yaml files."),
    torch_version: Optional[str] = typer.Option(None, help="Docs version to read (default: the installed torch's)."),
    chips: List[str] = typer.Option([], "--chips", help="Only these chips, e.g. A2 (repeatable)."),
    observations: Optional[Path] = typer.Option(None, help="Hardware observations YAML (default: the shipped Ascend ones)."),
    no_observations: bool = typer.Option(False, help="Docs only, no hardware observations."),
) -> None:
    """Generate Ascend capability profiles (A2, A3, 950DT) from the vendor support docs."""
    from rich.progress import Progress

    from .app.evidence import installed_torch_version
    from .app.profile_build import OBSERVATIONS, build_profiles
    from .devices.profiles import dump_profile
    from .results.store import write_text_atomic

    version = torch_version or installed_torch_version()
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("footprints of documented APIs", total=None)
        profiles = build_profiles(
            from_ascend_docs, version, chips=chips,
            observations=None if no_observations else (observations or OBSERVATIONS),
            progress=lambda i, n: bar.update(task, completed=i, total=n))
    for name, profile in profiles.items():
        path = out / f"{name}.yaml"
        write_text_atomic(path, dump_profile(profile))
        restricted = sum(1 for e in profile.ops.values() if not e.supported or e.dtypes is not None)
        out_console.print(f"wrote {path}: {len(profile.ops)} ops ({restricted} restricted), itt={profile.features.itt}")


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
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        if os.environ.get("TORCHPARITY_DEBUG"):
            raise
        _fail_line(f"internal error: {type(exc).__name__}: {exc} "
                   "(set TORCHPARITY_DEBUG=1 for the traceback)")
        sys.exit(1)


if __name__ == "__main__":
    main()
