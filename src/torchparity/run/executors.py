"""Choosing where cases run: the local worker pool (default) or a Ray cluster.

Every executor has the pool's interface: ``run(cases, timeouts, on_event)`` calls
``on_event`` with one :class:`~torchparity.run.pool.CaseEvent` per case as it finishes
(in the caller's thread), and ``warmups`` lists the workers' start-up seconds. So
``sweep`` and ``check`` only choose one; the judge, the store and the progress bar stay
as they are.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Dict, Optional

from ..errors import InputError
from .pool import WorkerPool

EXECUTORS = ("local", "ray")
RAY_MISSING = ("--executor ray: Ray is not installed here; install it with "
               "pip install 'torchparity[ray]'")


def check_executor(name: str, ray_address: Optional[str] = None) -> None:
    """Refuse an unknown executor, ``ray`` without Ray installed, or an address without
    ``ray`` -- before anything is planned or run."""
    if name not in EXECUTORS:
        raise InputError(f"--executor {name}: unknown; use one of: {', '.join(EXECUTORS)}")
    if name == "ray" and not _have_ray():
        raise InputError(RAY_MISSING)
    if ray_address and name != "ray":
        raise InputError("--ray-address needs --executor ray")


def _have_ray() -> bool:
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # a broken or hidden installation
        return False


def make_executor(name: str, init: Dict[str, Any], *, jobs: Optional[int],
                  extra_env: Dict[str, str], adapter: Any, ray_address: Optional[str] = None):
    """The executor ``name`` for workers that get ``init``, on ``adapter``'s device.

    ``extra_env`` is what the device adds to a worker's environment: the local pool adds
    it to this process's environment, a Ray actor to its own (never this machine's).
    ``jobs``: workers of the local pool (one if None); for Ray, at most that many actors
    (None: one per device slot of the cluster)."""
    check_executor(name, ray_address)
    if name == "ray":
        from .ray_executor import RayExecutor, slot_resources

        init = dict(init)
        key, amount = slot_resources(adapter.type, adapter.emulated)
        if not adapter.emulated:  # Ray makes the slot's device the only one visible
            init["device"] = adapter.type
        options = dict(init.get("options") or {})
        options.pop("threads", None)
        if key == "CPU":  # a slot has one CPU; elsewhere torch's own default
            options["threads"] = int(amount)
        init["options"] = options
        return RayExecutor(init, jobs=jobs, extra_env=extra_env, device_type=adapter.type,
                           emulated=adapter.emulated, address=ray_address)
    env = dict(os.environ)
    env.update(extra_env)
    return WorkerPool(init, jobs=jobs or 1, env=env)
