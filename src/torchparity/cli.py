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
    html: bool = typer.Option(True, "--html/--no-html", help="With --out: report.html (self-contained)."),
    screenshot: bool = typer.Option(True, "--screenshot/--no-screenshot",
                                    help="With --out: screenshot.svg of the summary, and .png where a converter is found."),
    gentest_styles: List[str] = typer.Option([], "--gentest",
                                             help="With --out: generated tests under tests/STYLE/ "
                                                  "(device-generic, npu or all; repeatable)."),
) -> None:
    """Check APIs on a device against the CPU and write the deliverables."""
    from .app.check import check as run_check
    from .app.config import merge_options
    from .app.deliverables import deliverable_writers, expand_styles
    from .deliver.console import print_summary

    opts = merge_options(config, device=device, tests=tests, docs=docs, vendor_docs=vendor_docs,
                         torch_version=torch_version, chips=chips, timeout=timeout, jobs=jobs)
    writers = deliverable_writers(html=html, screenshot=screenshot, gentest_styles=expand_styles(gentest_styles),
                                  scenario_modules=scenarios) if out else []
    progress = None if quiet else _RichProgress(err_console)
    report = run_check(apis, opts["device"], out=str(out) if out else None, timeout=opts["timeout"],
                       jobs=opts["jobs"], scenario_modules=scenarios,
                       category_rules=str(category_rules) if category_rules else None,
                       progress=progress, tests_dir=opts["tests"], docs_dir=opts["docs"],
                       vendor_docs_dir=opts["vendor_docs"], torch_version=opts["torch_version"],
                       chips=opts["chips"], writers=writers)
    if not quiet:
        print_summary(report, out_console)
    if out:
        from .deliver.artifacts import artifacts

        files = artifacts(out)
        written = ["report.json", "report.en.md", "report.zh.md"]
        written += [f for f in (files["html"], files["screenshot_svg"]) if f]
        written += ["screenshot.png"] if files["screenshot"] == "screenshot.png" else []
        written += [f"tests/{style}/ ({len(paths)} files)" for style, paths in files["tests"].items()]
        out_console.print(f"wrote {out}/: {', '.join(written)}", markup=False, soft_wrap=True)
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
        out_console.print(f"wrote {path}: {len(profile.ops)} ops ({restricted} restricted), "
                          f"itt={profile.features.itt}", soft_wrap=True)


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
    apis: Optional[List[str]] = typer.Argument(None, help="Dotted API names (or --composites)."),
    profile: str = typer.Option(..., "--profile", "-p", help="Capability profile: shipped name or YAML file."),
    dtypes: Optional[str] = typer.Option(None, "--dtypes", help="Comma-separated dtypes (default: 12)."),
    against: Optional[Path] = typer.Option(None, "--against", help="A sweep folder on the profile's emulated device: confirm or refute each prediction."),
    docs_dtypes: Optional[Path] = typer.Option(None, "--docs-dtypes", help="YAML/JSON {api: [dtypes the vendor docs allow]}: compare."),
    vendor_docs: Optional[Path] = typer.Option(None, "--vendor-docs", help="Ascend native_api docs folder: compare with its dtype lists."),
    torch_version: Optional[str] = typer.Option(None, help="Vendor docs version (default: the installed torch's)."),
    chip: Optional[str] = typer.Option(None, help="Vendor docs chip, e.g. A2 (default: the profile's first chip)."),
    composites: bool = typer.Option(False, "--composites", help="Predict every vendor-documented API with a dtype list whose footprint has 2+ compute ops."),
    opinfo: bool = typer.Option(False, "--opinfo", help="Predict every API that op_db covers (as sweep --opinfo runs them)."),
    grads: bool = typer.Option(True, "--grads/--no-grads", help="Include the backward footprint."),
    max_samples: Optional[int] = typer.Option(None, "--max-samples", min=1, help="At most N OpInfo samples per API and dtype."),
) -> None:
    """Predict which dtypes a profile refuses for each API, from its footprint (no device)."""
    from .app.predict import (
        against_sweep,
        compare_with_docs,
        composite_apis,
        vendor_docs_dtypes,
    )
    from .app.predict import predict as run_predict
    from .devices.profiles import load_profile

    prof = load_profile(profile)
    docs = _load_docs_dtypes(docs_dtypes) if docs_dtypes else None
    if vendor_docs:
        wanted_chip = chip or (prof.chips[0] if prof.chips else None)
        docs = vendor_docs_dtypes(str(vendor_docs), None if composites else apis,
                                  chip=wanted_chip, torch_version=torch_version)
    names = list(apis or [])
    if opinfo:
        from .scenarios.opinfo import all_opinfo_apis

        names += [n for n in all_opinfo_apis() if n not in names]
    if composites:
        if docs is None:
            raise TorchparityError("--composites needs --vendor-docs or --docs-dtypes")
        names += [n for n in composite_apis(sorted(docs)) if n not in names]
        _say(f"{len(names)} composite API(s) with a vendor docs dtype list")
    if not names:
        raise TorchparityError("no API given: name some, or use --composites with vendor docs")
    preds = run_predict(names, prof, dtypes=_dtype_list(dtypes), grads=grads, max_samples=max_samples)
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
    if docs is not None:
        cmp = compare_with_docs(preds, docs, prof)
        rate = f"{cmp.rate:.1%}" if cmp.rate is not None else "n/a"
        _say(f"vendor docs: {cmp.agree} of {cmp.compared} (api, dtype) pairs agree "
             f"({rate}); {cmp.apis_agreeing} of {cmp.apis} APIs agree entirely")
        for d in cmp.disagreements:
            _say(f"  {d['verdict']}: {d['api']} {d['dtype']}: {d['reason']}")
    raise typer.Exit(code)


# ==== end of sweep block ==================================================================


# ============================================================================ deliverables
# gentest, review, matrix (branch `deliver`). Commands of other branches go above or below
# this block; keep each block self-contained.


@app.command()
def gentest(
    apis: List[str] = typer.Argument(..., help="Dotted API names, e.g. torch.autograd.gradcheck"),
    style: str = typer.Option("device-generic", "--style",
                              help="device-generic (instantiate_device_type_tests) or npu "
                                   "(Ascend test/npu: torch_npu TestCase, SupportedDevices)"),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the test files (one per API)."),
    scenarios: List[str] = typer.Option([], "--scenarios", help="Extra scenario module or .py file (repeatable)."),
    limits_from: Optional[Path] = typer.Option(None, "--limits-from",
                                               help="report.json (or its folder) of a check run: "
                                                    "its refused cases become recorded limits."),
    supported_devices: Optional[str] = typer.Option(None, "--supported-devices",
                                                    help="npu style: comma-separated SupportedDevices "
                                                         "names (default Ascend910B,Ascend910_93,Ascend950)."),
) -> None:
    """Write test files generated from the scenarios: device, dtypes and shapes as parameters."""
    from .app.gentest import gentest as run_gentest
    from .deliver.gentest import DEFAULT_SUPPORTED_DEVICES
    from .results.store import load_report

    report = load_report(limits_from) if limits_from else None
    chips = [c.strip() for c in supported_devices.split(",") if c.strip()] if supported_devices \
        else list(DEFAULT_SUPPORTED_DEVICES)
    files = run_gentest(apis, style, str(out), scenario_modules=scenarios, report=report,
                        supported_devices=chips)
    for f in files:
        out_console.print(f"wrote {out / f.name} ({f.tests} tests, style {f.style})", markup=False)


@app.command()
def matrix(
    bundles: List[Path] = typer.Argument(..., help="report.json files, or the folders holding them."),
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="Folder for matrix.md, matrix.csv, matrix.html and "
                                            "vendor-docs/pytorch_X-Y-Z.md."),
    formats: str = typer.Option("md,csv,html,vendor", "--formats", help="Comma-separated subset of md,csv,html,vendor."),
) -> None:
    """Merge bundles from several environments (torch versions x chips/profiles x devices)."""
    from .app.matrix import matrix as run_matrix
    from .deliver.matrix import render_markdown

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
                                           "of running the APIs' scenarios on the CPU (repeatable)."),
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

    from .app.review import review as run_review
    from .deliver.review import as_dict, render
    from .errors import InputError
    from .results.store import write_text_atomic

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


if __name__ == "__main__":
    main()
