"""The "source" case kind: one scenario of any scenario source x one dtype.

The worker asks the source again (``scenarios.sources.find``) for the scenario with the
case's id: sources are deterministic, so the parent and the worker see the same one. It
runs through ``run.execute.execute`` like a hand-written suite: the same judge, causes
and footprint.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict

import torch

from ..api.classify import code_objects
from ..api.resolve import resolve
from ..scenarios import registry, sources
from .answer import from_result
from .context import WorkerContext, register
from .execute import execute, trace_device_ops


@register("source")
def handle_source(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    if "suites_loaded" not in ctx.cache:  # the hand source reads the suite registry
        registry.load_suites(ctx.modules)
        ctx.cache["suites_loaded"] = True
    api_obj = resolve(case["api"]).obj
    sc = sources.find(case["source"], case["api"], api_obj, case["scenario"])
    own = case.get("fn")
    if own is not None:  # in-process only: a generated test file's own copy of the case's
        # code runs in place of the source's (run.standalone); its golden is made from it
        sc = dataclasses.replace(sc, fn=own, module=own.__module__, golden=None)
    result, entries = execute(sc, case["dtype"], ctx.adapter, footprint=case.get("footprint", False),
                              api_obj=api_obj, api_codes=code_objects(api_obj))
    result.source = sc.source
    ops = trace_device_ops(sc, getattr(torch, case["dtype"]), ctx.adapter) \
        if case.get("device_ops") else None
    # the footprint is recorded only when asked: no footprint, no evidence to derive
    return from_result(result, entries if case.get("footprint") else None, ops).wire()
