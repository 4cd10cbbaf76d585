"""`torchparity sweep`: every OpInfo sample of many APIs x every dtype on one device.

One case is one OpInfo entry x one dtype with all its samples; the CPU reference and the
device run happen in the same worker process (``run.opinfo_handler``). Results go to
``OUT/results.sqlite`` as they finish (or to the ``--store URL`` database, e.g. one
PostgreSQL that several machines write; a rerun skips what any of them finished), and the
support matrix (``matrix.json``, ``matrix.md``, ``matrix.csv``) is written at the end.

``--apis`` / ``--namespace`` ask the scenario sources (``scenarios.sources``): an API with
OpInfo entries (its own, or the one its footprint reaches) runs them as above; any other
API runs the scenarios of the other sources (hand suites, ...) through the generic
``source`` case kind, one row per scenario x dtype keyed (api, scenario id, source, dtype).
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..devices import get_adapter
from ..devices.base import DeviceAdapter
from ..devices.environment import capture
from ..dtypes import DTYPE_NAMES
from ..errors import DeviceUnavailableError, InputError, OutputError, UnknownApiError
from ..judge.evidence import row_evidence
from ..results.store import prepare_out
from ..results.sweep_store import FILENAME, SweepLock, SweepStore, open_store
from ..run.answer import Answer
from ..run.executors import check_executor
from ..scenarios import registry, sources
from ..version import __version__
from .check import POOL_STATUSES, extras, scenario_row
from .runloop import default_jobs, run_cases

DEFAULT_TIMEOUT = 300.0
DTYPES = DTYPE_NAMES


class Progress:
    """What sweep() reports while it works; the CLI draws it, tests may record it."""

    def start(self, total: int, description: str) -> None: ...

    def advance(self, row: Dict[str, Any]) -> None: ...

    def stop(self) -> None: ...


@dataclass
class Case:
    """One catalogue entry (OpInfo's op_db) x one dtype, with all its samples."""

    entry: Any  # an entry of ``source.entries()``: api, variant
    dtype: str
    sample_set: str
    source: Any  # the catalogue source (scenarios.sources.base.Source)

    @property
    def key(self) -> Tuple[str, str, str, str]:
        return (self.entry.api, self.entry.variant, self.sample_set, self.dtype)

    def payload(self, reference: bool, grads: bool, max_samples: Optional[int]) -> Dict[str, Any]:
        return self.source.entry_case(self.entry, self.dtype, reference=reference, grads=grads,
                                      max_samples=max_samples, footprint=True)  # the row's evidence


@dataclass
class SourceCase:
    """A scenario of another source (hand suites, modules, ...) x one dtype: the row is
    keyed (api, scenario id, source, dtype), as ``check --apis-from-vendor-docs`` keys it."""

    api: str
    scenario: Any  # scenarios.registry.Scenario
    dtype: str

    @property
    def key(self) -> Tuple[str, str, str, str]:
        return (self.api, self.scenario.id, self.scenario.source, self.dtype)

    def payload(self, reference: bool, grads: bool, max_samples: Optional[int]) -> Dict[str, Any]:
        return sources.case_for(self.scenario, self.api, self.dtype, max_samples=max_samples,
                                grads=grads, footprint=True)  # the row's evidence


@dataclass
class Plan:
    cases: List[Any]  # Case | SourceCase
    apis: List[str]
    no_scenarios: List[str] = field(default_factory=list)
    selection: str = ""


@dataclass
class SweepSummary:
    out: Path
    planned: int
    ran: int
    already_done: int
    seconds: float
    counts: Dict[str, int]
    no_scenarios: List[str]
    matrix_files: List[Path] = field(default_factory=list)
    interrupted: bool = False
    totals: Dict[str, int] = field(default_factory=dict)  # statuses of every planned case

    @property
    def problems(self) -> int:
        """Wrong results, errors, crashes and timeouts among the planned cases."""
        return sum(self.totals.get(s, 0) for s in ("fail", "error", "crash", "timeout"))


# -- choosing what to run ----------------------------------------------------------------

def namespace_apis(namespace: str) -> List[str]:
    """Public callables of a namespace (``torch.nn.functional``), as dotted names."""
    from ..api.resolve import resolve

    module = resolve(namespace).obj
    names = []
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(module, name)
        except Exception:
            continue
        if isinstance(obj, type) or type(obj).__name__ == "module" or not callable(obj):
            continue
        home = getattr(obj, "__module__", None) or ""
        if home and not home.startswith("torch"):  # typing.Optional and such imports
            continue
        names.append(f"{namespace}.{name}")
    return names


def read_api_file(path: str) -> List[str]:
    """The API names of an --apis file. A line that is not a dotted Python name is refused
    as ``check`` refuses it (one line, exit 2, with its line number); a well-formed name
    that names nothing is kept and listed among the APIs without scenarios."""
    from ..api.resolve import check_dotted

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--apis {path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"--apis {path}: not UTF-8 text (byte {exc.start})") from None
    names = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line or line in names:
            continue
        try:
            check_dotted(line)
        except UnknownApiError as exc:
            raise InputError(f"--apis {path} line {number}: {exc}") from None
        names.append(line)
    if not names:
        raise InputError(f"--apis {path}: no API names in it (one per line, # comments)")
    return names


def plan(*, catalogue: bool = False, namespace: Optional[str] = None,
         apis: Sequence[str] = (), dtypes: Sequence[str] = DTYPES,
         reference: bool = False, only: Optional[Sequence[str]] = None) -> Plan:
    """The cases of a sweep. ``catalogue``: every entry of the catalogue sources (OpInfo's
    op_db; ``only``: just these entry keys, for tests); else the APIs named, each through
    the catalogue source that has entries for it, or every other source."""
    bad = [d for d in dtypes if d not in DTYPES]
    if bad:
        raise InputError(f"--dtypes: unknown {', '.join(bad)}; known: {', '.join(DTYPES)}")
    sample_set = "reference_inputs" if reference else "sample_inputs"
    chosen: List[Tuple[Any, Any]] = []  # (source, entry)
    no_scenarios: List[str] = []
    others: List[SourceCase] = []
    if catalogue:
        chosen = [(src, e) for src in sources.sweeping() for e in src.entries(None)
                  if only is None or e.key in only]
        selection = " + ".join(src.catalogue for src in sources.sweeping())
        names = sorted({e.api for _, e in chosen})
    else:
        names = list(apis)
        if namespace:
            ns = namespace_apis(namespace)
            names = ns + [n for n in apis if n not in ns]
        selection = f"namespace {namespace}" if namespace else "api list"
        for name in names:
            src, found = sources.entries_of(name)
            if not found:
                found_other = _other_scenarios(name, dtypes)
                if not found_other:
                    no_scenarios.append(name)
                others.extend(found_other)
            chosen.extend((src, e) for e in found if (src, e) not in chosen)
    cases: List[Any] = [Case(e, d, sample_set, src) for src, e in chosen for d in dtypes]
    cases += others
    return Plan(cases=cases, apis=names, no_scenarios=no_scenarios, selection=selection)


def _other_scenarios(name: str, dtypes: Sequence[str]) -> List[SourceCase]:
    """The cases of every source without a catalogue for ``name``, in the dtypes asked."""
    from ..api.resolve import maybe_resolve

    resolved = maybe_resolve(name)
    if resolved is None:
        return []
    registry.load_suites()
    swept = {src.name for src in sources.sweeping()}
    return [SourceCase(name, sc, d) for sc in sources.offer(name, resolved.obj).scenarios
            if sc.source not in swept for d in sc.dtypes if d in dtypes]


# -- running ----------------------------------------------------------------------------

def _row(case: Any, answer: Answer, seconds: float, emulated: bool) -> Dict[str, Any]:
    if isinstance(case, SourceCase):
        return scenario_row(case.api, case.scenario, case.dtype, answer, seconds, emulated)
    api, variant, sample_set, dtype = case.key
    row: Dict[str, Any] = dict(api=api, variant=variant, sample_set=sample_set, dtype=dtype,
                               emulated=emulated, seconds=round(seconds, 4),
                               status=answer.status, cause=answer.cause, detail=answer.detail)
    if answer.metric is not None:
        row["metric"] = answer.metric.model_dump(mode="json")
    row.update(extras(answer))
    if answer.status not in POOL_STATUSES and answer.harness_error is None:
        # a worker's own answer: the evidence its footprint gives (none for the pool's
        # crash / timeout and a harness error: nothing was compared)
        entries = list(answer.footprint or [])
        row["evidence"] = row_evidence(row.get("status"), row.get("cause"), entries,
                                       recorded=answer.recorded,
                                       own=answer.result.own if answer.result is not None else None)
    return row


def run_meta(adapter: DeviceAdapter, options: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "tool_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "device": adapter.info().model_dump(mode="json"),
        "environment": capture(adapter).model_dump(mode="json"),
        "options": options,
    }


def check_device(store: SweepStore, adapter: DeviceAdapter) -> None:
    meta = store.meta()
    old = meta.get("device")
    if old and (old.get("spec"), old.get("type")) != (adapter.spec, adapter.type):
        where, other = ((store.path.parent, "--out") if store.path and store.path.name == FILENAME
                        else (store.where, "--store"))
        raise InputError(f"{where}: holds a sweep on '{old.get('spec')}'; "
                         f"use another {other} for '{adapter.spec}'")
    was = ((meta.get("environment") or {}).get("extra") or {}).get("injected", "")
    now = ", ".join(adapter.injected())
    if old and was != now:  # a clean store resumed under a fault (or back) would mix both
        where = store.path.parent if store.path and store.path.name == FILENAME else store.where
        raise InputError(f"{where}: holds a sweep with injected '{was or 'nothing'}'; this run "
                         f"injects '{now or 'nothing'}': use another output")


def sweep(*, out: str, device: str = "cpu", catalogue: bool = False,
          namespace: Optional[str] = None, apis: Sequence[str] = (),
          dtypes: Sequence[str] = DTYPES, jobs: Optional[int] = None,
          timeout: float = DEFAULT_TIMEOUT, reference: bool = False, grads: bool = True,
          max_samples: Optional[int] = None, progress: Optional[Progress] = None,
          only: Optional[Sequence[str]] = None, write_matrix: bool = True,
          store: Optional[str] = None,
          executor: str = "local", ray_address: Optional[str] = None) -> SweepSummary:
    """Run (or resume) a sweep into ``out``; returns what happened. ``store``: a database
    URL for the results (default: ``OUT/results.sqlite``); the matrix goes to ``out``.

    ``executor``: ``local`` (a worker pool here) or ``ray`` (actors on the Ray cluster at
    ``ray_address``; ``jobs`` then caps the actors, default one per device slot)."""
    if not (catalogue or namespace or apis):
        raise InputError("nothing to sweep: give --opinfo, --namespace NS or --apis FILE")
    check_executor(executor, ray_address)
    if timeout <= 0:
        raise InputError("--timeout must be positive")
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    adapter = get_adapter(device)
    reason = adapter.unavailable_reason()
    if reason:
        raise DeviceUnavailableError(reason)
    the_plan = plan(catalogue=catalogue, namespace=namespace, apis=apis, dtypes=dtypes,
                    reference=reference, only=only)
    if executor == "local":
        jobs = jobs or default_jobs()
    prepare_out(out_dir)
    with SweepLock(out_dir):  # a second sweep on this folder is refused, not interleaved
        return _sweep(out_dir, adapter, the_plan, dtypes=dtypes, jobs=jobs, timeout=timeout,
                      reference=reference, grads=grads, max_samples=max_samples,
                      progress=progress, write_matrix=write_matrix, store_url=store,
                      executor=executor, ray_address=ray_address)


def incomplete_mark(interrupted: bool, planned: int, recorded: int) -> Optional[Dict[str, int]]:
    """``matrix.json``'s ``incomplete``: None for a run that ended, else how many cases were
    planned and how many have a result (the same command resumes the rest)."""
    return {"planned": planned, "recorded": recorded} if interrupted else None


def _sweep(out_dir: Path, adapter: DeviceAdapter, the_plan: Plan, *, dtypes: Sequence[str],
           jobs: Optional[int], timeout: float, reference: bool, grads: bool,
           max_samples: Optional[int], progress: Optional[Progress], write_matrix: bool,
           store_url: Optional[str] = None,
           executor: str = "local", ray_address: Optional[str] = None) -> SweepSummary:
    store = open_store(out_dir, url=store_url)
    check_device(store, adapter)
    options = {"selection": the_plan.selection, "dtypes": list(dtypes), "reference": reference,
               "grads": grads, "max_samples": max_samples}
    if not store.meta():
        store.set_meta(run_meta(adapter, options))
    old_missing = store.meta().get("no_scenarios", [])
    store.set_meta({"no_scenarios": sorted(set(old_missing) | set(the_plan.no_scenarios))})

    done = store.done_keys()
    todo = [c for c in the_plan.cases if c.key not in done]
    payloads = [c.payload(reference, grads, max_samples) for c in todo]
    counts: Dict[str, int] = {}
    start = time.monotonic()

    def on_answer(index: int, answer: Answer, seconds: float) -> None:
        row = _row(todo[index], answer, seconds, adapter.emulated)
        store.add(row)
        counts[row["status"]] = counts.get(row["status"], 0) + 1
        if progress:
            progress.advance(row)

    ran = run_cases(adapter, payloads, [timeout] * len(payloads), on_answer, jobs=jobs,
                    executor=executor, ray_address=ray_address, progress=progress,
                    description=f"sweep {the_plan.selection} on {adapter.spec}")
    interrupted = ran.interrupted

    files: List[Path] = []
    all_rows = store.rows()
    planned_keys = {c.key for c in the_plan.cases}
    totals: Dict[str, int] = {}
    for r in all_rows:
        if (r["api"], r["variant"], r["sample_set"], r["dtype"]) in planned_keys:
            totals[r["status"]] = totals.get(r["status"], 0) + 1
    if write_matrix:
        from ..deliver.sweep_matrix import build_matrix
        from ..deliver.sweep_matrix import write_matrix as write

        try:
            incomplete = incomplete_mark(interrupted, len(the_plan.cases), sum(totals.values()))
            files = write(build_matrix(all_rows, store.meta(), incomplete), out_dir)
        except OSError as exc:
            store.close()
            raise OutputError(
                f"could not write the matrix into {out_dir} ({exc.strerror or exc}); every result "
                f"is kept in {store.where}: write the matrix later with `torchparity sweep-matrix "
                f"{out_dir if store_url is None else store.where} --out FOLDER`") from None
    summary = SweepSummary(out=out_dir, planned=len(the_plan.cases), ran=sum(counts.values()),
                           already_done=len(the_plan.cases) - len(todo),
                           seconds=time.monotonic() - start, counts=counts,
                           no_scenarios=the_plan.no_scenarios, matrix_files=files,
                           interrupted=interrupted, totals=totals)
    store.close()
    if ran.stopped is not None:
        raise ran.stopped
    return summary
