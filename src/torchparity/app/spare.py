"""A worker process started first thing, before the command imports torch: it imports
torch (and what every worker imports) while the command resolves, validates and plans, and
the check's first pool takes it (``run.pool.SpareWorker``). On a 2-core machine that moves
the worker's imports off the critical path of a short check. Light on purpose: importing
this module imports no torch."""

from __future__ import annotations

from typing import Optional

from ..run.pool import SpareWorker


def spare_worker(executor: str) -> Optional[SpareWorker]:
    """A started spare worker where the run's workers are local processes (not Ray's
    actors, which start on their cluster); close it when done (a no-op once a pool took
    it)."""
    return SpareWorker() if executor == "local" else None
