"""check, evidence, docs, devices, profile list/build."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .progress import CheckProgress, StepProgress
from .shared import (
    CONFIG_HELP,
    DEVICE_HELP,
    DOCS_HELP,
    EXECUTOR_HELP,
    RAY_ADDRESS_HELP,
    TESTS_HELP,
    VENDOR_HELP,
    app,
    err_console,
    out_console,
    profile_app,
)
from .shared import (
    say as _say,
)
from .sweep import STORE_HELP, wrote_line


@app.command()
def check(
    apis: Optional[List[str]] = typer.Argument(None, help="Dotted API names, e.g. torch.autograd.gradcheck"),
    device: Optional[str] = typer.Option(None, "--device", "-d", help=DEVICE_HELP + " (default: auto)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for report.json and the zh/en reports."),
    timeout: Optional[float] = typer.Option(None, help="Seconds per scenario before it counts as a timeout (default: 120)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: 1)."),
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
                                                  "(device-generic, npu, npu-judged, all or none; "
                                                  "repeatable) (default: npu-judged, the file the "
                                                  "report's 测试方法 runs; npu: files for Ascend's "
                                                  "test tree, without torchparity)."),
    dtypes: Optional[str] = typer.Option(None, "--dtypes", help="Comma-separated dtypes: each scenario runs only those of its own dtypes (default: all of them)."),
    max_samples: Optional[int] = typer.Option(None, "--max-samples", min=1, help="At most N OpInfo samples per API and dtype (default: all)."),
    from_vendor_docs: Optional[Path] = typer.Option(
        None, "--apis-from-vendor-docs",
        help="Check every API this vendor docs folder lists for --torch-version (default: the "
             "installed torch's) instead of named APIs: needs --out; results.sqlite there resumes; "
             "writes matrix.{json,md,csv} (one row per API x dtype), no per-API reports; several "
             "devices (--device a,b) write OUT/<device>/ each."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="With --apis-from-vendor-docs: only the first N listed APIs."),
    namespaces: List[str] = typer.Option([], "--namespace", help="With --apis-from-vendor-docs: only the listed APIs under this dotted name, e.g. torch.fx (repeatable)."),
    store: Optional[str] = typer.Option(None, "--store", help="With --apis-from-vendor-docs: " + STORE_HELP),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
    force: bool = typer.Option(False, "--force", help="With --out: overwrite test files of the same "
                               "name that are not torchparity's (default: keep them and say so), and "
                               "start over an unfinished check there instead of resuming it."),
    task: List[str] = typer.Option([], "--task", help="With --out: NAME=API,API files these APIs as one issue "
                                   "(issues/task-NAME.{zh,en}.md; repeatable); every other API gets its own."),
) -> None:
    """Check APIs on a device against the CPU and write the deliverables."""
    if from_vendor_docs is not None:
        _check_listed(from_vendor_docs, apis, device, out, timeout, jobs, scenarios, torch_version,
                      dtypes, max_samples, limit, config, quiet, store, tests=tests,
                      executor=executor, ray_address=ray_address, namespaces=namespaces)
        return
    if namespaces:
        from ..errors import InputError

        raise InputError("--namespace goes with --apis-from-vendor-docs")
    if store is not None:
        from ..errors import InputError

        raise InputError("--store goes with --apis-from-vendor-docs (a checked API's results "
                         "are its report bundle in --out)")
    from ..app.check_inputs import preflight

    # every input refused now, before torch, a worker or a scenario module runs
    asked = preflight(apis or [], config=config, device=device, tests=tests, docs=docs,
                      vendor_docs=vendor_docs, torch_version=torch_version, chips=chips,
                      timeout=timeout, jobs=jobs, executor=executor, ray_address=ray_address,
                      scenarios=scenarios, category_rules=category_rules, dtypes=dtypes,
                      gentest_styles=gentest_styles, task=task, out=out)
    opts, tasks = asked.options, asked.tasks
    from ..app.spare import spare_worker

    spare = spare_worker(executor)  # imports torch while this process does too
    try:
        report = _check_named(asked, opts, tasks, spare, out=out, html=html, screenshot=screenshot,
                              scenarios=scenarios, max_samples=max_samples, force=force,
                              progress=None if quiet else CheckProgress(err_console),
                              executor=executor, ray_address=ray_address, jobs=jobs,
                              category_rules=category_rules)
    finally:
        if spare is not None:
            spare.close()
    if not quiet:
        from ..deliver.console import print_summary

        print_summary(report, out_console)
    if out:
        from ..deliver.artifacts import artifacts

        files = artifacts(out)
        written = ["report.json", "report.en.md", "report.zh.md"]
        written += [f for f in (files["html"], files["screenshot_svg"]) if f]
        written += ["screenshot.png"] if files["screenshot"] == "screenshot.png" else []
        written += [f"tests/{style}/ ({len(paths)} files)" for style, paths in files["tests"].items()]
        written += [f"issues/ ({n} files)" for n in [len(list((out / "issues").glob("*.md")))] if n]
        out_console.print(f"wrote {out}/: {', '.join(written)}", markup=False, soft_wrap=True)
        kept = report.options.get("kept") or []
        if kept:  # the user's own files at generated files' paths: left alone
            out_console.print(f"kept {len(kept)} file(s) of yours in {out}/ (no torchparity marker "
                              f"line; nothing written there; --force overwrites): {', '.join(kept)}",
                              markup=False, soft_wrap=True)
    broken = [a.name for a in report.apis if a.verdict.status in ("broken", "unknown")]
    raise typer.Exit(1 if broken else 0)


def _check_named(asked, opts, tasks, spare, *, out, html, screenshot, scenarios, max_samples, force,
                 progress, executor, ray_address, jobs, category_rules):
    """The check of named APIs, its inputs already refused or accepted (``preflight``)."""
    from ..app.check import check as run_check
    from ..app.deliverables import deliverable_writers

    writers = deliverable_writers(html=html, screenshot=screenshot,
                                  gentest_styles=asked.gentest_styles,
                                  scenario_modules=scenarios, max_samples=max_samples,
                                  tests_dir=opts["tests"], tasks=tasks, force=force) if out else []
    return run_check(asked.apis, opts["device"], out=str(out) if out else None, timeout=opts["timeout"],
                     jobs=opts["jobs"] if executor == "local" else jobs,
                     executor=executor, ray_address=ray_address, scenario_modules=scenarios,
                     category_rules=str(category_rules) if category_rules else None,
                     progress=progress, tests_dir=opts["tests"], docs_dir=opts["docs"],
                     vendor_docs_dir=opts["vendor_docs"], torch_version=opts["torch_version"],
                     chips=opts["chips"], writers=writers, dtypes=asked.dtypes,
                     max_samples=max_samples, force=force, spare=spare)


def _dtypes(text: Optional[str]) -> Optional[List[str]]:
    if text is None:
        return None
    return [d.strip() for d in text.split(",") if d.strip()]


def _check_listed(docs_dir: Path, apis, device, out, timeout, jobs, scenarios, torch_version,
                  dtypes, max_samples, limit, config, quiet, store=None, tests=None,
                  executor="local", ray_address=None, namespaces=()) -> None:
    """check --apis-from-vendor-docs: every listed API into a resumable store and a matrix."""
    from collections import Counter

    from ..app.config import merge_options
    from ..errors import InputError

    if apis:
        raise InputError("--apis-from-vendor-docs checks the APIs the docs list: name no API too")
    if out is None:
        raise InputError("--apis-from-vendor-docs needs --out DIR (results.sqlite and the matrix go there)")
    if not docs_dir.is_dir():
        raise InputError(f"--apis-from-vendor-docs {docs_dir}: no such folder")
    if store is not None:  # a URL, refused now if it is none, before any import or worker
        from ..results.sweep_store import parse_store_flag

        parse_store_flag(store)
    from ..app.check_vendor import check_vendor_docs, device_folders
    from .progress import SweepProgress

    opts = merge_options(config, device=device, torch_version=torch_version, timeout=timeout, jobs=jobs,
                         tests=tests)
    planning = None if quiet else StepProgress(err_console)

    def on_planned(i: int, n: int) -> None:
        if planning is None:
            return
        if planning.task is None:
            planning.start(n, "asking the scenario sources")
        planning.bar.update(planning.task, completed=i)
        if i == n:
            planning.stop()

    problems = 0
    runs = device_folders(opts["device"], str(out), store)
    for spec, folder in runs:
        summary = check_vendor_docs(
            str(docs_dir), out=folder, device=spec, torch_version=opts["torch_version"],
            jobs=jobs, timeout=opts["timeout"], dtypes=_dtypes(dtypes), max_samples=max_samples,
            limit=limit, scenario_modules=scenarios, on_planned=on_planned, store=store,
            tests_dir=str(opts["tests"]) if opts.get("tests") else None,
            executor=executor, ray_address=ray_address, namespaces=namespaces,
            progress=None if quiet else SweepProgress(err_console))
        head = f"[{spec}] " if len(runs) > 1 else ""
        verdicts = Counter(summary.verdicts.values())
        counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items())) or "nothing new"
        _say(f"{head}{summary.apis} listed API(s): {summary.ran} case(s) run in {summary.seconds:.1f} s "
             f"({summary.already_done} already done): {counts}")
        _say(head + "verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
        _say(head + wrote_line(Path(folder), store))
        problems += summary.problems
        planning = None if quiet else StepProgress(err_console)
    raise typer.Exit(1 if problems else 0)


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
    from ..app.config import merge_options
    from ..app.evidence import evidence as gather
    from ..app.evidence import write_evidence
    from ..deliver.evidence_md import print_evidence

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
    from ..devices import REAL, get_adapter
    from ..devices.profiles import builtin_profiles

    rows = []
    for name in REAL:
        reason = get_adapter(name).unavailable_reason()
        # reasons start with the backend's name ("cuda: ..."): the first column says it already
        rows.append((name, "available" if reason is None else reason.split(": ", 1)[-1]
                     if reason.startswith(f"{name}: ") else reason))
    for name in builtin_profiles():
        adapter = get_adapter(f"emu:{name}")
        reason = adapter.unavailable_reason()
        rows.append((f"emu:{name}", f"emulated '{adapter.type}' " + ("available" if reason is None else reason)))
    width = max(len(n) for n, _ in rows)
    for name, text in rows:  # one line each, whatever the terminal's width
        out_console.print(f"{name:{width}}  {text}", soft_wrap=True, markup=False, highlight=False)


@profile_app.command("list")
def profile_list() -> None:
    """List the shipped capability profiles."""
    from ..devices.profiles import builtin_profiles, load_profile

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
    from_kernels: List[Path] = typer.Option(
        [], "--from-kernels", help="Ascend/op-plugin and hicann/ops-* snapshots (bare git dir or folder; "
        "repeatable): extract kernel facts, write <out>/ascend-kernels.yaml and follow them."),
    kernel_facts: Optional[Path] = typer.Option(
        None, "--kernel-facts", help="Kernel facts YAML written by --from-kernels (e.g. the shipped "
        "devices/profiles/sources/ascend-kernels.yaml)."),
    hccl_facts: Optional[Path] = typer.Option(
        None, "--hccl-facts", help="With kernel facts: the dtypes torch_npu's HCCL process group "
        "accepts per c10d op (default: the shipped devices/profiles/sources/ascend-hccl.yaml)."),
) -> None:
    """Generate Ascend capability profiles (A2, A3, 950DT) from the vendor support docs,
    and from the vendor's kernel sources when given (they win over the docs; the c10d rules
    then follow the HCCL facts)."""
    from ..app.evidence import installed_torch_version
    from ..app.profile_build import HCCL, KERNELS, OBSERVATIONS, build_profiles
    from ..devices.profiles import dump_profile
    from ..errors import InputError
    from ..evidence.kernels import dump_kernel_facts, extract_kernel_facts, load_kernel_facts
    from ..results.store import write_text_atomic

    if from_kernels and kernel_facts:
        raise InputError("give --from-kernels or --kernel-facts, not both")
    version = torch_version or installed_torch_version()
    kernels, kernels_name = None, KERNELS.name
    if from_kernels:
        kernels = extract_kernel_facts(from_kernels, version)
        facts_path = out / KERNELS.name
        write_text_atomic(facts_path, dump_kernel_facts(kernels))
        out_console.print(f"wrote {facts_path}: {len(kernels.ops)} aten ops with kernel lists "
                          f"({', '.join(f'{r}@{c[:12]}' for r, c in kernels.repos.items())})", soft_wrap=True)
    elif kernel_facts:
        kernels, kernels_name = load_kernel_facts(kernel_facts), kernel_facts.name
    bar = StepProgress(err_console)  # a bar in a terminal, a line every 10 s otherwise
    bar.start(0, "footprints of documented APIs")
    try:
        profiles = build_profiles(
            from_ascend_docs, version, chips=chips,
            observations=None if no_observations else (observations or OBSERVATIONS),
            kernels=kernels, kernels_name=kernels_name, hccl=hccl_facts or HCCL,
            progress=bar.to)
    finally:
        bar.stop()
    for name, profile in profiles.items():
        path = out / f"{name}.yaml"
        write_text_atomic(path, dump_profile(profile))
        restricted = sum(1 for e in profile.ops.values() if not e.supported or e.dtypes is not None)
        out_console.print(f"wrote {path}: {len(profile.ops)} ops ({restricted} restricted), "
                          f"itt={profile.features.itt}", soft_wrap=True)


@app.command("docs-audit")
def docs_audit(
    vendor_docs: Path = typer.Option(..., "--vendor-docs", help=VENDOR_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for docs-audit.md and docs-audit.json."),
    torch_version: Optional[str] = typer.Option(None, help="Docs version to read (default: the installed torch's)."),
    kernel_facts: Optional[Path] = typer.Option(
        None, "--kernel-facts", help="Kernel facts YAML (default: the shipped ascend-kernels.yaml)."),
    observations: Optional[Path] = typer.Option(None, help="Hardware observations YAML (default: the shipped Ascend ones)."),
) -> None:
    """Docs entries whose dtype list contradicts the kernel source or another entry of the same
    op, with evidence and the corrected line (Markdown + JSON for the docs maintainers)."""
    from ..app.docs_audit import audit, write_audit
    from ..app.evidence import installed_torch_version
    from ..app.profile_build import KERNELS, OBSERVATIONS
    from ..evidence.kernels import load_kernel_facts

    version = torch_version or installed_torch_version()
    kernels = load_kernel_facts(kernel_facts or KERNELS)
    bar = StepProgress(err_console)  # a bar in a terminal, a line every 10 s otherwise
    bar.start(0, "footprints of documented APIs")
    try:
        report = audit(vendor_docs, version, kernels, observations=observations or OBSERVATIONS,
                       progress=bar.to)
    finally:
        bar.stop()
    md, js = write_audit(report, out)
    out_console.print(f"wrote {md} and {js}: {len(report['findings'])} findings over "
                      f"{report['entries_compared']} entries, {len(report['seed_conflicts'])} seed conflicts",
                      soft_wrap=True)


@app.command()
def docs(
    apis: List[str] = typer.Argument(..., help="Dotted API names."),
    bundles: List[Path] = typer.Option(..., "--from", help="A check --out folder (or report.json) per chip (repeatable)."),
    chips: List[str] = typer.Option([], "--chips", help="Only bundles measured on these chips, e.g. A2 (repeatable)."),
    vendor_docs: Optional[Path] = typer.Option(None, "--vendor-docs", help=VENDOR_HELP),
    only_missing: bool = typer.Option(False, "--only-missing", help="Leave out APIs the vendor docs already list (needs --vendor-docs)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for pytorch_X-Y-Z.md files (default: print)."),
) -> None:
    """Vendor support-docs entries (Ascend format) for APIs, from our verdicts per chip."""
    from ..app.docs import docs as write_docs
    from ..results.store import write_text_atomic

    files = write_docs(apis, [str(b) for b in bundles], chips=chips,
                       vendor_docs_dir=str(vendor_docs) if vendor_docs else None,
                       only_missing=only_missing)
    if not files:
        _say("nothing to write: every API already has an entry")
        return
    for name, text in files.items():
        if out:
            write_text_atomic(out / f"{name}.md", text)
            _say(f"wrote {out / (name + '.md')}")
        else:
            out_console.print(text, markup=False, highlight=False, soft_wrap=True)
