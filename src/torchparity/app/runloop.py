"""The one run loop of ``check``, ``sweep`` and the vendor-list run.

Each command plans its own cases (worker cases, ``scenarios.sources.case_for`` or a
source's catalogue entries) and reads the answers its own way (a report, a store of rows);
what happens in between is the same for all three and lives here: the worker settings
(device, scenario modules, torch threads per worker, the modules the sources ask to be
imported before the first case), one executor (the local pool or Ray), progress, every
event read as one :class:`~torchparity.run.answer.Answer`, and an interruption (Ctrl-C,
SIGTERM) that keeps what ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..devices.base import DeviceAdapter
from ..run.answer import Answer, answer_of
from ..run.executors import make_executor
from ..run.pool import CaseEvent
from ..scenarios import sources


def default_jobs() -> int:
    """Workers by default: one per CPU this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


@dataclass
class Ran:
    """What became of a run: the interruption that ended it early (None: it ended), and
    each worker's start-up seconds (imports, off every case's clock)."""

    stopped: Optional[BaseException] = None
    warmups: List[float] = field(default_factory=list)

    @property
    def interrupted(self) -> bool:
        return self.stopped is not None


def worker_init(adapter: DeviceAdapter, cases: Sequence[Dict[str, Any]], jobs: Optional[int],
                modules: Sequence[str] = ()) -> Dict[str, Any]:
    """The settings every worker starts with: the device, the scenario modules, torch
    threads (the CPUs shared among ``jobs`` workers) and the modules the sources of these
    cases import before their first case."""
    init: Dict[str, Any] = {"device": adapter.spec, "modules": list(modules),
                            "options": {"threads": max(1, default_jobs() // (jobs or 1))}}
    warm = sources.warm_for(cases)
    if warm:
        init["warm"] = warm
    return init


def prestart(adapter: DeviceAdapter, jobs: Optional[int], executor: str = "local",
             modules: Sequence[str] = (), spare: Optional[Any] = None) -> Optional[Any]:
    """A local pool whose first worker starts now, while the caller plans its cases: it
    sets up the device and warms up for every case kind (the cases are not known yet), so
    the run finds it ready; hand it to :func:`run_cases` as ``pool``. None for Ray (its
    actors start on the cluster). The caller calls ``discard()`` when done (a no-op after
    a run). ``spare`` (``run.pool.SpareWorker``): a worker started even earlier, which has
    imported torch meanwhile, is that first worker where the pool can take it."""
    if executor != "local":
        return None
    init = worker_init(adapter, [], jobs, modules)
    init["warm"] = sources.warm_all()
    pool = make_executor(executor, init, jobs=jobs, extra_env=adapter.worker_env(),
                         adapter=adapter)
    if spare is not None and hasattr(pool, "adopt") and pool.adopt(spare):
        return pool
    if hasattr(pool, "prestart"):
        pool.prestart(1)
    return pool


def run_cases(adapter: DeviceAdapter, cases: Sequence[Dict[str, Any]], timeouts: Sequence[float],
              on_answer: Callable[[int, Answer, float], None], *, jobs: Optional[int],
              executor: str = "local", ray_address: Optional[str] = None,
              modules: Sequence[str] = (), progress: Optional[Any] = None,
              description: str = "", pool: Optional[Any] = None) -> Ran:
    """Run ``cases`` (each limited to its ``timeouts`` entry) on ``adapter`` in ``jobs``
    workers (at most one per case); ``on_answer(index, answer, seconds)`` for each as it
    finishes. Ctrl-C or SIGTERM (``Terminated``) stops the run: what ran is kept, the
    interruption is returned in :attr:`Ran.stopped` for the caller to raise after it has
    written what it has. ``progress`` (the command's own): started with the number of
    cases and ``description``, stopped at the end; the caller advances it. ``pool``: one
    from :func:`prestart`, its started worker given this run's settings."""
    ran = Ran()

    def on_event(event: CaseEvent) -> None:
        on_answer(event.index, answer_of(event), event.seconds)

    if progress:
        progress.start(len(cases), description)
    init = worker_init(adapter, cases, jobs, modules)
    jobs_now = min(jobs, max(1, len(cases))) if jobs else None
    if pool is None:
        pool = make_executor(executor, init, jobs=jobs_now, extra_env=adapter.worker_env(),
                             adapter=adapter, ray_address=ray_address)
    else:  # started early: its started worker goes first; any other gets this run's init
        pool.init, pool.jobs = init, jobs_now or 1
    try:
        if cases:
            pool.run(list(cases), list(timeouts), on_event)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM as Terminated: keep what ran
        ran.stopped = exc
    finally:
        if hasattr(pool, "discard"):  # a started worker no case took
            pool.discard()
        if progress:
            progress.stop()
    ran.warmups = list(getattr(pool, "warmups", []) or [])
    return ran
