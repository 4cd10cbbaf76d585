"""`torchparity predict --trace emulated`: footprints recorded on the emulated device.

The (op, dtype) pairs that reach ``emu:allow-all`` (nothing refused while recording), after
decomposition, per OpInfo sample, in worker processes (the "footprint" case kind of
``run/``; a process can host one emulator profile). Still no real device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

TRACE_DEVICE = "emu:allow-all"
TRACE_TIMEOUT = 600.0


@dataclass
class SampleFootprint:
    """The (op, dtype) pairs one OpInfo sample dispatched, forward and backward."""

    forward: List[Tuple[str, Optional[str]]]
    backward: List[Tuple[str, Optional[str]]]
    cpu_error: Optional[str] = None
    decomposed: List[str] = field(default_factory=list)
    bookkeeping: List[str] = field(default_factory=list)
    native_op: Optional[str] = None
    empty: bool = False  # the sample's input has no elements


def emulated_footprints(cases: Sequence[Tuple[Any, str]], grads: bool, max_samples: Optional[int],
                         device_type: str, jobs: Optional[int] = None, progress: Any = None,
                         ) -> Dict[Tuple[str, str, str], Any]:
    """{(db, variant, dtype): [SampleFootprint] | reason str} for OpInfo (entry, dtype)
    cases, traced on ``emu:allow-all`` in worker processes."""
    import os

    from ..devices import get_adapter
    from ..errors import DeviceUnavailableError
    from ..run.pool import CaseEvent, WorkerPool
    from .runloop import default_jobs

    adapter = get_adapter(TRACE_DEVICE)
    reason = adapter.unavailable_reason()
    if reason:
        raise DeviceUnavailableError(f"--trace emulated: {reason}")
    if not cases:
        return {}
    cores = default_jobs()
    jobs = max(1, min(jobs or cores, len(cases)))
    payloads = [{"kind": "footprint", "api": e.api, "key": e.key, "db": e.db, "call": e.call,
                 "dtype": d, "grads": grads, "max_samples": max_samples,
                 "device_type": device_type} for e, d in cases]
    found: Dict[Tuple[str, str, str], Any] = {}

    def on_event(ev: CaseEvent) -> None:
        if progress is not None:
            progress.advance()
        e, d = cases[ev.index]
        key = (e.db, e.variant, d)
        p = ev.payload
        if ev.kind != "result":
            found[key] = f"tracing on {TRACE_DEVICE}: {ev.kind}: {ev.detail}"
        elif "harness_error" in p:
            found[key] = f"tracing on {TRACE_DEVICE} failed: {p['harness_error']}"
        elif "no_samples" in p:
            found[key] = p["no_samples"]
        else:
            found[key] = [
                SampleFootprint([(op, dt or None) for op, dt in s["forward"]],
                                 [(op, dt or None) for op, dt in s["backward"]], s.get("error"))
                for s in p.get("samples", []) if not s.get("harness_error")]

    env = dict(os.environ)
    env.update(adapter.worker_env())
    pool = WorkerPool({"device": adapter.spec, "modules": [],
                       "options": {"threads": max(1, cores // jobs)}}, jobs=jobs, env=env)
    if progress is not None:
        progress.start(len(payloads), f"tracing on {TRACE_DEVICE}")
    try:
        pool.run(payloads, [TRACE_TIMEOUT] * len(payloads), on_event)
    finally:
        if progress is not None:
            progress.stop()
    return found


