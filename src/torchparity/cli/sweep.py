"""sweep, sweep-matrix, predict."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import TorchparityError
from .progress import StepProgress, SweepProgress
from .shared import (
    DEVICE_HELP,
    EXECUTOR_HELP,
    RAY_ADDRESS_HELP,
    app,
    err_console,
)
from .shared import (
    say as _say,
)

STORE_HELP = ("Database for the results, a SQLAlchemy URL: postgresql://USER@HOST:PORT/DB lets "
              "several machines write one sweep (needs the postgres extra of torchparity), "
              "sqlite:///FILE (default: OUT/results.sqlite). A rerun skips what any writer finished.")


def wrote_line(out: Path, store: Optional[str]) -> str:
    """The closing line of a sweep: where its results and matrix are."""
    if store is None:
        return f"wrote {out}/results.sqlite, matrix.json, matrix.md, matrix.csv"
    from ..results.sweep_store import is_url

    shown = store
    if is_url(store):
        from sqlalchemy.engine import make_url

        shown = make_url(store).render_as_string(hide_password=True)
    return f"wrote the results into {shown}; {out}/matrix.json, matrix.md, matrix.csv"


def _dtype_list(text: Optional[str]):
    from ..dtypes import DTYPE_NAMES

    if not text:
        return list(DTYPE_NAMES)
    return [d.strip() for d in text.split(",") if d.strip()]


@app.command()
def sweep(
    opinfo: bool = typer.Option(False, "--opinfo", help="Every OpInfo entry of op_db."),
    namespace: Optional[str] = typer.Option(None, "--namespace", help="APIs of a namespace that some scenario source covers (OpInfo, hand suites, ...), e.g. torch.nn.functional."),
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
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
) -> None:
    """Run every OpInfo sample of many APIs x dtypes on a device against the CPU.

    Exit code 1 when a case gave a wrong result, an error, a crash or a timeout.
    """
    from ..app.sweep import read_api_file
    from ..app.sweep import sweep as run_sweep

    names = read_api_file(str(apis)) if apis else []
    progress = None if quiet else SweepProgress(err_console)
    summary = run_sweep(out=str(out), device=device, catalogue=opinfo, namespace=namespace,
                        apis=names, dtypes=_dtype_list(dtypes), jobs=jobs, timeout=timeout,
                        reference=reference_inputs, grads=grads, max_samples=max_samples,
                        progress=progress, store=store, executor=executor,
                        ray_address=ray_address)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items())) or "nothing new"
    _say(f"{summary.ran} case(s) run in {summary.seconds:.1f} s "
                      f"({summary.already_done} already done): {counts}")
    if summary.no_scenarios:
        _say(f"no scenarios (no scenario source applies): {len(summary.no_scenarios)} API(s), "
                          "listed in matrix.md")
    _say(wrote_line(out, store))
    if summary.problems:
        _say(f"{summary.problems} case(s) with a wrong result, error, crash or timeout")
    raise typer.Exit(1 if summary.problems else 0)


@app.command("sweep-matrix")
def sweep_matrix(
    dirs: List[str] = typer.Argument(..., help="Sweep output folders, results.sqlite files or store URLs (postgresql://...), one per device or profile."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for matrix.{json,md,csv}."),
) -> None:
    """Write one support matrix from one or more sweeps (devices / profiles side by side).

    (`torchparity matrix` merges check report bundles; this merges sweep stores.)
    """
    from ..deliver.sweep_matrix import build_matrix, merge_matrices, write_matrix
    from ..results.sweep_store import open_store

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
    trace: str = typer.Option("cpu", "--trace", help="Footprint source for OpInfo APIs: 'cpu' (dispatch mode on the CPU; composite ops such as allclose as themselves) or 'emulated' (the ops that reach the permissive emu:allow-all device after decomposition, in worker processes; no real device). Hand-scenario APIs always use the CPU."),
    vendor_ops: bool = typer.Option(True, "--vendor-ops/--no-vendor-ops", help="--trace cpu: follow the vendor's registered-op list for the profile's device type (composites it lacks decomposed, its own kernels as themselves); off: the plain CPU dispatch-mode footprint."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Workers for --trace emulated (default: one per core)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar (--trace emulated)."),
) -> None:
    """Predict which dtypes a profile refuses for each API, from its footprint (no device)."""
    from ..app.predict import TRACE_DEVICE, against_sweep
    from ..app.predict import predict as run_predict
    from ..app.predict_docs import compare_with_docs, composite_apis, vendor_docs_statements
    from ..devices.profiles import load_profile
    from ..results.models import EMULATED_BANNER

    prof = load_profile(profile)
    docs = _load_docs_dtypes(docs_dtypes) if docs_dtypes else None
    if vendor_docs:
        wanted_chip = chip or (prof.chips[0] if prof.chips else None)
        docs = vendor_docs_statements(str(vendor_docs), None if composites else apis,
                                      chip=wanted_chip, torch_version=torch_version)
    names = list(apis or [])
    if opinfo:
        from ..scenarios.opinfo import all_opinfo_apis

        names += [n for n in all_opinfo_apis() if n not in names]
    if composites:
        if docs is None:
            raise TorchparityError("--composites needs --vendor-docs or --docs-dtypes")
        names += [n for n in composite_apis(sorted(docs)) if n not in names]
        _say(f"{len(names)} composite API(s) with a vendor docs dtype list")
    if not names:
        raise TorchparityError("no API given: name some, or use --composites with vendor docs")
    preds = run_predict(names, prof, dtypes=_dtype_list(dtypes), grads=grads, max_samples=max_samples,
                        trace=trace, jobs=jobs, progress=None if quiet else StepProgress(err_console),
                        registered=None if vendor_ops else False)
    from ..devices.registered_ops import registered_ops

    vendor = registered_ops(prof.device_type) if vendor_ops else None
    source = (f"ops traced on the emulated device {TRACE_DEVICE} ({EMULATED_BANNER})" if trace == "emulated"
              else f"a dispatch mode on the CPU, as the {prof.device_type} device receives them "
                   f"(vendor op list: {vendor.source})" if vendor is not None
              else "a dispatch mode on the CPU")
    _say(f"predictions for profile '{prof.name}' from {source}; no device ran")
    from ..devices.profiles import chip_identity

    ident = chip_identity(prof)
    kernels = (prof.generated or {}).get("kernels")
    cann = (prof.generated or {}).get("cann") or ident.cann
    _say(f"chip {ident.device_name}; the profile's CANN: {cann or 'not recorded'}"
         + (f"; kernel facts at {kernels}" if kernels else ""))
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
        _say(f"vendor docs: {cmp.agree} of {cmp.compared - cmp.trivial} (api, dtype) pairs "
             f"agree ({rate}), not counting {cmp.trivial} where the CPU refuses too; "
             f"{cmp.apis_agreeing} of {cmp.apis} APIs agree entirely")
        if cmp.by_reason:
            _say("  disagreements by reason: " + ", ".join(
                f"{k} {v}" for k, v in sorted(cmp.by_reason.items(), key=lambda kv: -kv[1])))
        for d in cmp.disagreements:
            _say(f"  {d['verdict']} [{d['class']}]: {d['api']} {d['dtype']}: {d['reason']}")
            _say(f"    footprint: {'; '.join(d['footprint']) or 'no compute op'}")
    raise typer.Exit(code)
