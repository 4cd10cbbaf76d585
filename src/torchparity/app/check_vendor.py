"""`torchparity check --apis-from-vendor-docs DIR`: every API a vendor docs version lists.

Each listed API is resolved in the installed torch and asked of every scenario source
(``scenarios.sources``); its scenarios run per dtype in one worker pool, exactly as
``check`` runs them (OpInfo entries through the sweep's case kind, the rest through the
generic ``source`` kind). No per-API report is built: results go to ``OUT/results.sqlite``
(or the ``--store URL`` database) as they finish — the sweep's store, keyed (api,
variant = scenario id, sample_set = source, dtype), so a rerun resumes — and the per-API matrix (``matrix.json``,
``matrix.md``, ``matrix.csv``: one row per API x dtype with status, cause and source) is
written at the end. An API that does not resolve in this torch, or that no source
applies to, is one row with status ``unknown`` and the reason.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..api.resolve import maybe_resolve
from ..devices import get_adapter
from ..errors import DeviceUnavailableError, InputError
from ..judge.verdict import decide, load_rules
from ..results.models import Analysis, ScenarioResult
from ..results.store import prepare_out
from ..results.sweep_store import SweepLock, open_store
from ..run.answer import Answer
from ..run.executors import check_executor
from ..scenarios import registry, sources
from ..scenarios.registry import Scenario
from .check import DEFAULT_TIMEOUT, plan_scenarios, scenario_row, why_none
from .check import check_dtypes as _check_dtypes
from .runloop import default_jobs, run_cases
from .sweep import Progress, incomplete_mark
from .sweep import check_device as _check_device
from .sweep import run_meta as _meta

NONE = "-"  # variant / sample_set / dtype of an API's single "unknown" row


@dataclass
class ListedSummary:
    out: Path
    apis: int
    planned: int  # cases (API x scenario x dtype)
    ran: int
    already_done: int
    seconds: float
    plan_seconds: float
    counts: Dict[str, int]  # statuses of the cases run now
    verdicts: Dict[str, str]  # api -> supported | partial | unsupported | broken | unknown
    matrix_files: List[Path] = field(default_factory=list)
    interrupted: bool = False

    @property
    def problems(self) -> int:
        return sum(self.counts.get(s, 0) for s in ("fail", "error", "crash", "timeout"))


def listed_apis(docs_dir: str, torch_version: Optional[str]) -> Tuple[List[str], str]:
    """The API names the vendor docs list for one torch version, and that version."""
    from ..evidence.vendor_docs import load_vendor_docs
    from .evidence import installed_torch_version

    version = torch_version or installed_torch_version()
    index = load_vendor_docs(docs_dir, version)
    names = index.names()
    if not names:
        raise InputError(f"--apis-from-vendor-docs {docs_dir}: no API entries for torch {version}")
    return names, index.version or version


def _unknown_row(api: str, detail: str, emulated: bool) -> Dict[str, Any]:
    return dict(api=api, variant=NONE, sample_set=NONE, dtype=NONE, status="unknown",
                cause=None, detail=detail[:600], emulated=emulated, seconds=0.0)


def api_verdicts(rows: Sequence[Dict[str, Any]]) -> Dict[str, str]:
    """The verdict status of every API in the rows (``judge.verdict.decide`` over them)."""
    rules = load_rules()
    by_api: Dict[str, List[ScenarioResult]] = {}
    for r in rows:
        results = by_api.setdefault(r["api"], [])
        if r["status"] == "unknown":
            continue
        results.append(ScenarioResult(id=r["variant"], dtype=r["dtype"], status=r["status"],
                                      cause=r.get("cause"), evidence=r.get("evidence")))
    out = {}
    for api, results in by_api.items():
        analysis = Analysis(qualified_name=api, kind="?", implementation="?")
        out[api] = decide(analysis, results, {}, "", rules).status
    return out


def check_vendor_docs(docs_dir: str, *, out: str, device: str = "auto",
                      torch_version: Optional[str] = None, jobs: Optional[int] = None,
                      timeout: float = DEFAULT_TIMEOUT, dtypes: Optional[Sequence[str]] = None,
                      max_samples: Optional[int] = None, limit: Optional[int] = None,
                      scenario_modules: Sequence[str] = (), progress: Optional[Progress] = None,
                      spread: bool = False, store: Optional[str] = None,
                      on_planned: Optional[Callable[[int, int], None]] = None,
                      tests_dir: Optional[str] = None,
                      executor: str = "local", ray_address: Optional[str] = None,
                      namespaces: Sequence[str] = (),
                      only: Optional[Sequence[str]] = None) -> ListedSummary:
    """Run (or resume) every API the vendor docs list into ``out``; see the module doc.

    ``limit``: only the first N listed APIs (``spread``: N spread evenly over the list, for
    a benchmark's trial). ``on_planned(i, n)``: called as APIs are asked
    of the sources (planning resolves each name and may run one CPU call per footprint
    candidate). ``namespaces``: only the listed APIs equal to one of these dotted names or
    under it (``torch.fx`` keeps ``torch.fx.Graph.lint``, not ``torch.fxfoo``), applied
    before ``limit``. ``tests_dir``: a test tree whose tests of each API are replayed too
    (source ``upstream``, one census for the whole list). ``only``: just these listed
    APIs (a benchmark's stratified sample), in list order.
    """
    check_executor(executor, ray_address)
    if timeout <= 0:
        raise InputError("--timeout must be positive")
    if dtypes is not None:
        _check_dtypes(dtypes)
    if tests_dir is not None and not Path(tests_dir).is_dir():
        raise InputError(f"--tests {tests_dir}: no such folder")
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    names, version = listed_apis(docs_dir, torch_version)
    if namespaces:
        prefixes = [n.strip().rstrip(".") for n in namespaces if n.strip().rstrip(".")]
        names = [n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes)]
        if not names:
            raise InputError(f"--namespace {', '.join(namespaces)}: the vendor docs list no API there")
    if only is not None:
        wanted = set(only)
        names = [n for n in names if n in wanted]
    if limit is not None and spread and 0 < limit < len(names):
        step = len(names) / limit
        names = [names[int(i * step)] for i in range(limit)]
    elif limit is not None:
        names = names[:max(0, limit)]
    adapter = get_adapter(device)
    reason = adapter.unavailable_reason()
    if reason:
        raise DeviceUnavailableError(reason)
    registry.load_suites(scenario_modules)
    prepare_out(out_dir)
    with SweepLock(out_dir):  # as sweep: a second run on this folder is refused, not interleaved
        return _check_listed(out_dir, adapter, names, version, docs_dir=docs_dir, jobs=jobs,
                             timeout=timeout, dtypes=dtypes, max_samples=max_samples,
                             scenario_modules=scenario_modules, progress=progress, store=store,
                             on_planned=on_planned, tests_dir=tests_dir, executor=executor,
                             ray_address=ray_address)


def _check_listed(out_dir: Path, adapter, names: List[str], version: str, *, docs_dir: str,
                  jobs: Optional[int], timeout: float, dtypes: Optional[Sequence[str]],
                  max_samples: Optional[int], scenario_modules: Sequence[str],
                  progress: Optional[Progress], store: Optional[str],
                  on_planned: Optional[Callable[[int, int], None]], tests_dir: Optional[str],
                  executor: str, ray_address: Optional[str]) -> ListedSummary:
    store = open_store(out_dir, url=store)
    _check_device(store, adapter)
    options = {"selection": f"vendor docs {docs_dir} (torch {version})", "vendor_docs_version": version,
               "dtypes": list(dtypes) if dtypes else None, "max_samples": max_samples,
               "sources": [s.name for s in sources.all_sources()]}
    if not store.meta():
        store.set_meta(_meta(adapter, options))

    plan_start = time.monotonic()
    done = store.done_keys()
    settings = sources.RunSettings(tests_dir=tests_dir, backend=adapter.type, side_timeout=timeout)
    with warnings.catch_warnings():  # resolving 3,000 names warns of every deprecation
        warnings.simplefilter("ignore")
        # the names are resolved only for a source that reads them (--tests: the census)
        with sources.prepared(settings, (n for n in names if _resolves(n))):
            cases, meta, timeouts, planned = _plan(names, store, done, adapter.emulated,
                                                   dtypes, max_samples, timeout, on_planned)
    plan_seconds = time.monotonic() - plan_start

    if executor == "local":
        jobs = jobs or default_jobs()
    counts: Dict[str, int] = {}
    start = time.monotonic()

    def on_answer(index: int, answer: Answer, seconds: float) -> None:
        api, sc, dtype = meta[index]
        row = scenario_row(api, sc, dtype, answer, seconds, adapter.emulated)
        store.add(row)
        counts[row["status"]] = counts.get(row["status"], 0) + 1
        if progress:
            progress.advance(row)

    ran = run_cases(adapter, cases, timeouts, on_answer, jobs=jobs, executor=executor,
                    ray_address=ray_address, modules=scenario_modules, progress=progress,
                    description=f"{len(names)} listed API(s) on {adapter.spec}")
    interrupted = ran.interrupted

    wanted = set(names)
    rows = [r for r in store.rows() if r["api"] in wanted]
    verdicts = api_verdicts(rows)
    from ..deliver.sweep_matrix import build_matrix, write_matrix

    recorded = planned - len(cases) + sum(counts.values())
    doc = build_matrix(rows, store.meta(), incomplete_mark(interrupted, planned, recorded))
    doc["api_verdicts"] = verdicts
    files = write_matrix(doc, out_dir)
    store.close()
    summary = ListedSummary(out=out_dir, apis=len(names), planned=planned, ran=sum(counts.values()),
                            already_done=planned - len(cases), seconds=time.monotonic() - start,
                            plan_seconds=plan_seconds, counts=counts, verdicts=verdicts,
                            matrix_files=files, interrupted=interrupted)
    if ran.stopped is not None:
        raise ran.stopped
    return summary


def device_folders(device: Optional[str], out: str, store: Optional[str]) -> List[Tuple[str, str]]:
    """``--device a,b`` in the vendor-list mode: (spec, folder) per device, every device
    checked available before anything runs. One device writes into ``out`` itself; several
    write into ``out/<spec>/`` each (``emu:ascend-a2`` -> ``emu_ascend-a2``), one store each."""
    from ..devices import device_specs

    specs = device_specs(device)
    if len(specs) == 1:
        return [(specs[0], out)]
    if store is not None:
        raise InputError("--store takes one device: give each device its own run (a store "
                         "keeps the device it was made on)")
    for spec in specs:
        reason = get_adapter(spec).unavailable_reason()
        if reason:
            raise DeviceUnavailableError(reason)
    return [(spec, str(Path(out) / spec.replace(":", "_"))) for spec in specs]


def _plan(names: Sequence[str], store, done, emulated: bool, dtypes, max_samples, timeout,
          on_planned) -> Tuple[List[Dict[str, Any]], List[Tuple[str, Scenario, str]], List[float], int]:
    """Ask the sources for every name: the cases still to run (and their scenarios and
    timeouts), and how many cases the names have in all. Unknown rows are stored here."""
    cases: List[Dict[str, Any]] = []
    meta: List[Tuple[str, Scenario, str]] = []
    timeouts: List[float] = []
    planned = 0
    for i, name in enumerate(names):
        if on_planned:
            on_planned(i, len(names))
        try:
            resolved = maybe_resolve(name)
        except Exception as exc:  # a name whose attribute look-up itself fails here
            store.add(_unknown_row(name, f"cannot be resolved in this torch ({_torch()}): "
                                         f"{type(exc).__name__}: {exc}", emulated))
            continue
        if resolved is None:
            store.add(_unknown_row(name, f"does not resolve in this torch ({_torch()})", emulated))
            continue
        offer = plan_scenarios(name, resolved.obj, dtypes)
        if not offer.scenarios:
            store.add(_unknown_row(name, why_none(offer.tried, offer.reason).en, emulated))
            continue
        store.delete((name, NONE, NONE, NONE))  # a source applies now
        for sc in offer.scenarios:
            for dtype in sc.dtypes:
                planned += 1
                if (name, sc.id, sc.source, dtype) in done:
                    continue
                meta.append((name, sc, dtype))
                cases.append(sources.case_for(sc, name, dtype, max_samples=max_samples,
                                              footprint=True))  # the row's evidence
                timeouts.append(sc.timeout_s or timeout)
    if on_planned:
        on_planned(len(names), len(names))
    return cases, meta, timeouts, planned


def _resolves(name: str) -> bool:
    try:
        return maybe_resolve(name) is not None
    except Exception:
        return False


def _torch() -> str:
    import torch

    return f"torch {torch.__version__}"
