"""`torchparity check`: analyse, run, judge and report a list of APIs on one device (or several, one after the other)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..api import footprint as fp
from ..api.classify import analyse, calls_user_callable, is_context_manager
from ..api.resolve import ResolvedApi, allow_namespaces, resolve
from ..devices import device_specs, get_adapter
from ..devices.base import DeviceAdapter
from ..devices.environment import capture
from ..errors import DeviceUnavailableError, InputError
from ..judge.evidence import row_evidence
from ..judge.verdict import decide, load_rules
from ..results.models import (
    EMULATED_BANNER,
    ApiReport,
    DeviceRun,
    FootprintEntry,
    Report,
    RunApi,
    ScenarioResult,
    Status,
    Text,
)
from ..results.store import prepare_out
from ..run.answer import DETAIL_LIMIT, Answer
from ..run.executors import check_executor
from ..scenarios import registry, sources
from ..scenarios.registry import Scenario
from ..version import __version__
from .check_store import CheckRecord, case_key
from .evidence import evidence as gather_evidence
from .runloop import prestart, run_cases

DEFAULT_TIMEOUT = 120.0


class Progress:
    """What check() reports while it works; the CLI draws it, tests may record it."""

    def start(self, total: int, description: str) -> None: ...

    def advance(self, result: ScenarioResult, api: str) -> None: ...

    def stop(self) -> None: ...


@dataclass
class _Plan:
    resolved: ResolvedApi
    scenarios: List[Scenario]
    case_ids: List[int] = field(default_factory=list)
    tried: Dict[str, str] = field(default_factory=dict)  # source -> what it said
    reason: str = ""  # the named reason when no source gives a scenario (Offer.reason)


def plan_scenarios(api: str, obj: Any, dtypes: Optional[Sequence[str]] = None) -> "sources.Offer":
    """What every scenario source offers for ``api``; with ``dtypes``, each scenario keeps
    only those of its dtypes (one with none left is dropped, and the source says so)."""
    offer = sources.offer(api, obj)
    if dtypes is None:
        return offer
    wanted = list(dtypes)
    kept = []
    for sc in offer.scenarios:  # "-": a case running whatever dtypes it has (an upstream test)
        ds = tuple(d for d in sc.dtypes if d in wanted or d == sources.ANY_DTYPE)
        if ds:  # a copy: hand scenarios are the registry's own objects
            kept.append(dataclasses.replace(sc, dtypes=ds))
    for name in {sc.source for sc in offer.scenarios} - {sc.source for sc in kept}:
        offer.tried[name] += f", none in the dtypes asked ({', '.join(wanted)})"
    offer.scenarios = kept
    return offer


def why_none(tried: Dict[str, str], reason: str = "") -> Text:
    """Why no scenario ran: the named reason (the owning sources' words) first, then every
    source tried."""
    listed = "; ".join(f"{k}: {v}" for k, v in tried.items()) or "none"
    head_en = f"No scenario ran: {reason}." if reason else "No scenario ran."
    head_zh = f"没有可运行的场景：{reason}。" if reason else "没有可运行的场景。"
    return Text(en=f"{head_en} Sources tried — {listed}.",
                zh=f"{head_zh}已尝试的场景来源——{listed}。")


def case_result(answer: Answer, sc: Scenario, dtype: str, emulated: bool,
                seconds: float = 0.0) -> Tuple[ScenarioResult, List[FootprintEntry]]:
    """A worker's answer to one case (any kind) as a ScenarioResult and its footprint."""
    entries = list(answer.footprint or [])
    if answer.result is not None:  # the case ran the scenario itself: its whole result
        result = answer.result.model_copy(deep=True)
    else:
        tags = list(sc.tags) + (["not-claimed-by-opinfo"] if answer.claimed is False else [])
        detail = answer.detail
        if answer.note:
            detail = f"{detail} (note: {answer.note})"
        result = ScenarioResult(
            id=sc.id, dtype=dtype, description=sc.description, expected=sc.expected, tags=tags,
            emulated=emulated, duration_s=round(seconds, 6), status=answer.status,
            cause=answer.cause, metric=answer.metric,
            # the pool's own words (a crash, a timeout) are kept whole
            detail=detail if answer.status in POOL_STATUSES else detail[:DETAIL_LIMIT])
    result.source = sc.source
    if answer.outputs is not None and result.outputs is None:
        result.outputs = list(answer.outputs)
    # a world's device work runs in its rank processes: their footprints come back with
    # their results (footprint.RANKS_RECORDED among the entries); a world row with no entry at
    # all (the ranks sent none, a launcher's children) is "not recorded", never host-only
    recorded = answer.recorded and not ("distributed" in sc.tags and not entries)
    result.evidence = row_evidence(result.status, result.cause, entries, recorded=recorded,
                                   own=result.own)
    return result, entries


POOL_STATUSES = (Status.CRASH.value, Status.TIMEOUT.value)
ROW_EXTRAS = ("counts", "claimed", "claimed_backward", "kind", "note")


def scenario_row(api: str, sc: Scenario, dtype: str, answer: Answer, seconds: float,
                 emulated: bool) -> Dict[str, Any]:
    """One case as a row of the sweep store: keyed (api, scenario id, source, dtype)."""
    result, _ = case_result(answer, sc, dtype, emulated, seconds)
    return dict(store_row(result, answer, seconds), api=api, variant=sc.id,
                sample_set=sc.source, dtype=dtype)


def store_row(result: ScenarioResult, answer: Answer, seconds: float) -> Dict[str, Any]:
    """A judged case's columns in the sweep store (its key aside)."""
    row: Dict[str, Any] = dict(status=result.status, cause=result.cause, detail=result.detail,
                               metric=result.metric.model_dump(mode="json") if result.metric else None,
                               emulated=bool(result.emulated), seconds=round(seconds, 4),
                               evidence=result.evidence)
    row.update(extras(answer))
    return row


def extras(answer: Answer) -> Dict[str, Any]:
    """What a case kind adds to a store row (OpInfo's counts, claims, output kind, note)."""
    return {k: getattr(answer, k) for k in ROW_EXTRAS if getattr(answer, k) is not None}


def check(apis: Sequence[str], device: str = "auto", *, out: Optional[str] = None,
          timeout: float = DEFAULT_TIMEOUT, jobs: Optional[int] = 1, scenario_modules: Sequence[str] = (),
          category_rules: Optional[str] = None, progress: Optional[Progress] = None,
          tests_dir: Optional[str] = None, docs_dir: Optional[str] = None,
          vendor_docs_dir: Optional[str] = None, torch_version: Optional[str] = None,
          chips: Sequence[str] = (), dtypes: Optional[Sequence[str]] = None,
          max_samples: Optional[int] = None,
          writers: Sequence[Callable[[Report, Path], None]] = (),
          executor: str = "local", ray_address: Optional[str] = None,
          force: bool = False, spare: Optional[Any] = None) -> Report:
    """Check ``apis`` on ``device`` against the CPU.

    Resolves every name first (an unknown one raises UnknownApiError before anything
    runs), runs each API's scenarios in worker processes (``jobs`` at a time, each case
    limited to ``timeout`` seconds unless the scenario sets its own), judges them, and
    returns the Report. ``tests_dir`` / ``docs_dir`` / ``vendor_docs_dir`` fill the
    upstream-test and docs sections (see :func:`torchparity.app.evidence.evidence`); the
    sections not asked for say so. With ``out``, writes report.json and the zh/en reports
    there — also when interrupted, with what was recorded so far. A generated file whose
    path in ``out`` holds a file of the user's (no marker line) is not written unless
    ``force``; ``report.options["kept"]`` lists them.

    Scenarios come from every scenario source (``scenarios.sources``): hand suites, OpInfo
    (run per dtype through the same case kind as ``sweep``), and the others. ``dtypes``
    keeps only those dtypes; ``max_samples`` caps the samples of an OpInfo case.
    ``executor``: ``local`` (the worker pool) or ``ray`` (actors on the cluster at
    ``ray_address``, see ``run.ray_executor``). ``spare``: a worker the caller started
    before it imported torch (``run.pool.SpareWorker``), the first device's pool takes it;
    the caller closes it (a no-op once taken).

    ``device`` may list several specs, comma-separated (``emu:ascend-a2,emu:ascend-a3``):
    every one is checked before anything runs, then each runs in turn in its own workers.
    The first is the report's device (its scenarios and verdicts); the others' per-API
    outcomes are ``Report.runs``, one row per chip in the reports' test results.
    """
    check_executor(executor, ray_address)
    if not apis:
        raise InputError("no API given: name at least one, e.g. torch.autograd.gradcheck")
    if timeout <= 0:
        raise InputError("--timeout must be positive")
    if out and Path(out).exists() and not Path(out).is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    adapters = [get_adapter(spec) for spec in device_specs(device)]  # all, before anything runs
    for adapter in adapters:
        reason = adapter.unavailable_reason()
        if reason:
            raise DeviceUnavailableError(reason)
    rules = load_rules(category_rules)
    allow_namespaces(scenario_modules)  # a module the user names may check its own APIs
    resolved = [resolve(name) for name in apis]
    for folder, what in ((tests_dir, "--tests"), (docs_dir, "--docs"), (vendor_docs_dir, "--vendor-docs")):
        if folder is not None and not Path(folder).is_dir():
            raise InputError(f"{what} {folder}: no such folder")
    if dtypes is not None:
        check_dtypes(dtypes)
    from ..results.sweep_store import SweepLock

    with contextlib.ExitStack() as held:
        record = None
        if out:  # a folder that cannot be written is refused now, not after every case ran
            prepare_out(Path(out))
            # one check at a time per --out, as sweep has: two would leave a report of one
            # run next to the issues and tests of both
            held.enter_context(SweepLock(Path(out), name=CHECK_LOCK, what="check"))
            # every case is kept as it finishes: a killed check resumes (app.check_store)
            record = CheckRecord.open(Path(out), _identity(apis, adapters, dtypes, max_samples,
                                                           scenario_modules, tests_dir), force)
            held.callback(record.close)
        registry.load_suites(scenario_modules)
        return _check_locked(
            apis, adapters, resolved, rules, out=out, timeout=timeout, jobs=jobs,
            scenario_modules=scenario_modules, progress=progress, tests_dir=tests_dir,
            docs_dir=docs_dir, vendor_docs_dir=vendor_docs_dir, torch_version=torch_version,
            chips=chips, dtypes=dtypes, max_samples=max_samples, writers=writers,
            executor=executor, ray_address=ray_address, force=force, record=record,
            spare=spare)


def _identity(apis, adapters, dtypes, max_samples, scenario_modules, tests_dir) -> Dict[str, Any]:
    """What a check must share with the unfinished one in its --out to resume it."""
    return {"apis": list(apis), "devices": [a.spec for a in adapters],
            "options": {"dtypes": list(dtypes) if dtypes is not None else None,
                        "max_samples": max_samples, "modules": list(scenario_modules),
                        "tests": str(tests_dir) if tests_dir else None,
                        "injected": [list(a.injected()) for a in adapters]}}


CHECK_LOCK = "check.lock"


def _check_locked(apis, adapters, resolved, rules, *, out, timeout, jobs, scenario_modules,
                  progress, tests_dir, docs_dir, vendor_docs_dir, torch_version, chips, dtypes,
                  max_samples, writers, executor, ray_address, force=False,
                  record: Optional[CheckRecord] = None, spare: Optional[Any] = None) -> Report:
    run = dict(resolved=resolved, rules=rules, timeout=timeout, jobs=jobs, dtypes=dtypes,
               max_samples=max_samples, tests_dir=tests_dir, scenario_modules=scenario_modules,
               progress=progress, executor=executor, ray_address=ray_address, record=record)
    report, plans, census_found, stopped = _run_on(adapters[0], spare=spare, **run)
    for index, other in enumerate(adapters[1:], start=1):  # one device after the other
        if stopped is not None:
            break
        extra, _, _, stopped = _run_on(other, device_index=index, **run)
        report.runs.append(device_run(extra))
    adapter = adapters[0]
    found = gather_evidence(
        [a.name for a in report.apis], tests_dir=tests_dir, docs_dir=docs_dir,
        vendor_docs_dir=vendor_docs_dir, torch_version=torch_version, chips=list(chips) or None,
        device_involvement={a.name: a.analysis.device_involvement for a in report.apis},
        harness={a.name: bool(a.analysis.harness) for a in report.apis},
        backend=adapter.type, tests_evidence=census_found)
    for api_report in report.apis:
        api_report.evidence = found.get(api_report.name)
        _add_replay(api_report)
    if out:
        from ..deliver.bundle import interrupted_writers, write_bundle

        if stopped is not None:  # Ctrl-C / SIGTERM: what ran, written without the picture
            writers = interrupted_writers(writers, Path(out))
        kept = write_bundle(report, Path(out), writers, force=force)
        if kept:  # in memory only: report.json was written before this was known
            report.options["kept"] = kept
        if record is not None and stopped is None:  # the next check here starts afresh
            record.finish()
    if stopped is not None:
        raise stopped
    return report


def device_run(report: Report) -> DeviceRun:
    """A whole report as one of the other devices of a several-device run."""
    apis = []
    for a in report.apis:
        counted = [s for s in a.scenarios if s.status != "skip"]
        apis.append(RunApi(name=a.name, status=a.verdict.status, category=a.verdict.category,
                           passed=sum(1 for s in counted if s.status == "pass"), total=len(counted)))
    return DeviceRun(device=report.device, environment=report.environment, apis=apis,
                     interrupted=bool(report.options.get("interrupted")))


def _run_on(adapter: DeviceAdapter, *, resolved: List[ResolvedApi], rules, timeout: float,
            jobs: Optional[int], dtypes, max_samples, tests_dir, scenario_modules, progress,
            executor: str, ray_address, record: Optional[CheckRecord] = None,
            device_index: int = 0,
            spare: Optional[Any] = None) -> Tuple[Report, List[_Plan], Any, Optional[BaseException]]:
    """Plan, run (one worker pool for this device) and judge every API on one device;
    returns the report, the plans, the upstream census and the interruption if one came.
    With ``record`` (``--out``), a case recorded by the unfinished run before is read back,
    not run, and every case run is recorded as it finishes."""
    # the run's settings reach the sources (--tests: the upstream tests of each API are
    # scenarios too, one census for all)
    settings = sources.RunSettings(tests_dir=tests_dir, backend=adapter.type, side_timeout=timeout)
    # the first worker imports torch while the cases are planned (op_db's import: seconds)
    early = prestart(adapter, jobs, executor, scenario_modules, spare=spare)
    try:
        return _plan_and_run(adapter, early, settings, resolved=resolved, rules=rules,
                             timeout=timeout, jobs=jobs, dtypes=dtypes, max_samples=max_samples,
                             scenario_modules=scenario_modules, progress=progress,
                             executor=executor, ray_address=ray_address, record=record,
                             device_index=device_index)
    finally:
        if hasattr(early, "discard"):
            early.discard()


def _plan_and_run(adapter: DeviceAdapter, early, settings, *, resolved: List[ResolvedApi], rules,
                  timeout: float, jobs: Optional[int], dtypes, max_samples, scenario_modules,
                  progress, executor: str, ray_address, record: Optional[CheckRecord],
                  device_index: int) -> Tuple[Report, List[_Plan], Any, Optional[BaseException]]:
    plans: List[_Plan] = []
    cases: List[Dict[str, Any]] = []
    timeouts: List[float] = []
    meta: List[Tuple[int, Scenario, str]] = []
    with sources.prepared(settings, [r.name for r in resolved]) as found:
        census_found = found.tests_evidence
        for r in resolved:
            offer = plan_scenarios(r.name, r.obj, dtypes)
            plan = _Plan(r, offer.scenarios, tried=offer.tried, reason=offer.reason)
            for sc in plan.scenarios:
                for dtype in sc.dtypes:
                    plan.case_ids.append(len(cases))
                    meta.append((len(plans), sc, dtype))
                    cases.append(sources.case_for(sc, r.name, dtype, max_samples=max_samples,
                                                  footprint=True))
                    timeouts.append(sc.timeout_s or timeout)
            plans.append(plan)

    results: Dict[int, ScenarioResult] = {}
    footprints: Dict[int, List[FootprintEntry]] = {}
    injected = adapter.injected()
    keys = [case_key(plans[p].resolved.name, sc.id, sc.source, dtype, device_index, adapter.spec)
            for p, sc, dtype in meta]
    todo: List[int] = []
    for i, key in enumerate(keys):
        earlier = record.recorded(key) if record is not None else None
        if earlier is None:
            todo.append(i)
        else:
            results[i], footprints[i] = earlier

    def on_answer(at: int, answer: Answer, seconds: float) -> None:
        index = todo[at]
        _, sc, dtype = meta[index]
        result, entries = case_result(answer, sc, dtype, adapter.emulated, seconds)
        result.injected = list(injected)
        result.snippet = sc.snippet(device_expr=f'"{adapter.type}"', dtype=dtype)
        result.footprint = [e for e in entries if e.source != "scenario"
                            and e.op.split(".", 1)[-1] not in fp.METADATA_OPS]
        results[index] = result
        footprints[index] = entries
        if record is not None:
            record.add(keys[index], store_row(result, answer, seconds), result, entries)
        if progress:
            progress.advance(result, sc.api)

    description = f"{len(resolved)} API(s) on {adapter.spec}"
    if len(todo) < len(cases):
        description += f" (resumed: {len(cases) - len(todo)} of {len(cases)} cases recorded before)"
    ran = run_cases(adapter, [cases[i] for i in todo], [timeouts[i] for i in todo], on_answer,
                    jobs=jobs, executor=executor, ray_address=ray_address,
                    modules=scenario_modules, progress=progress, description=description,
                    pool=early)
    interrupted = ran.interrupted
    report = _assemble(plans, results, footprints, adapter, rules, interrupted)
    if interrupted:  # every report says which cases never ran, API by API
        unrun: Dict[str, List[str]] = {}
        for i, (p, sc, dtype) in enumerate(meta):
            if i not in results:
                unrun.setdefault(plans[p].resolved.name, []).append(f"{sc.id}[{dtype}]")
        report.options["unrun"] = unrun
    if ran.warmups:  # worker start-up imports, once, not on any case's clock
        report.options["worker_warmup_s"] = round(max(ran.warmups), 2)
    return report, plans, census_found, ran.stopped


def _add_replay(api_report: ApiReport) -> None:
    """Which upstream tests, replayed, already pass on the device: into the recommendation."""
    from ..evidence.rules import add_replay

    ev = api_report.evidence
    replayed = [s for s in api_report.scenarios if s.source in sources.replaying()]
    if ev is None or ev.recommendation is None or not replayed:
        return
    add_replay(ev.recommendation, [(s.id, s.dtype, s.status, s.cause) for s in replayed])


def check_dtypes(dtypes: Sequence[str]) -> None:
    from ..dtypes import DTYPE_NAMES

    bad = [d for d in dtypes if d not in DTYPE_NAMES]
    if bad or not dtypes:
        raise InputError(f"--dtypes: unknown {', '.join(bad) or '(none given)'}; "
                         f"known: {', '.join(DTYPE_NAMES)}")


def involvement(entries: List[FootprintEntry], results: Sequence[ScenarioResult]) -> str:
    """none | indirect | direct (``api.footprint.involvement``); where every case took the
    API away (``run.takeaway``) and none found it steering the scenario's device work, the
    scenario's entries are its own: no entry of the API's is "none", not "indirect"."""
    inv = fp.involvement(entries)
    owns = [r.own for r in results if r.own is not None]
    if (inv == "indirect" and owns and not any(e.source == "callable" for e in entries)
            and all(o.method == "takeaway" and not o.steers for o in owns)):
        return "none"
    return inv


def _is_harness(resolved: ResolvedApi, entries: Sequence[FootprintEntry]) -> bool:
    """Wraps user code: it called back a user callable it was given (the footprint holds
    ``callable`` entries: gradcheck) or is a context manager (emit_itt); never from a
    parameter's name."""
    return calls_user_callable(entries) or is_context_manager(resolved.obj)


def _assemble(plans: List[_Plan], results: Dict[int, ScenarioResult],
              footprints: Dict[int, List[FootprintEntry]], adapter: DeviceAdapter, rules,
              interrupted: bool) -> Report:
    info = adapter.info()
    label = f"{info.type} (emulated: {info.profile})" if info.emulated else info.type
    api_reports = []
    for plan in plans:
        analysis = analyse(plan.resolved)
        scenario_results = [results[i] for i in plan.case_ids if i in results]
        entries = fp.merge(e for i in plan.case_ids for e in footprints.get(i, []))
        analysis.footprint = entries
        analysis.device_involvement = involvement(entries, scenario_results) if plan.scenarios else None
        facts = {
            "involvement": analysis.device_involvement,
            "implementation": analysis.implementation,
            "harness": _is_harness(plan.resolved, entries),
        }
        analysis.harness = facts["harness"]
        verdict = decide(analysis, scenario_results, facts, label, rules,
                         why_none=why_none(plan.tried, plan.reason))
        api_reports.append(ApiReport(
            name=plan.resolved.name, qualified_name=plan.resolved.qualified_name,
            analysis=analysis, scenarios=scenario_results, verdict=verdict,
            sources_tried=plan.tried,
        ))
    return Report(
        tool_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        environment=capture(adapter),
        device=info,
        apis=api_reports,
        banner=EMULATED_BANNER if info.emulated else None,
        options={"interrupted": True} if interrupted else {},
    )
