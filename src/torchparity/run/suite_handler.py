"""The "suite" case kind: one hand-written scenario x one dtype."""

from __future__ import annotations

from typing import Any, Dict

import torch

from ..api.classify import code_objects
from ..api.resolve import resolve
from ..scenarios import registry
from .answer import from_result
from .context import WorkerContext, register
from .execute import execute, trace_device_ops


@register("suite")
def handle_suite(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    if "suites_loaded" not in ctx.cache:
        registry.load_suites(ctx.modules)
        ctx.cache["suites_loaded"] = True
    sc = registry.find(case["api"], case["scenario"])
    api_obj = resolve(case["api"]).obj
    result, entries = execute(sc, case["dtype"], ctx.adapter, footprint=case.get("footprint", False),
                              api_obj=api_obj, api_codes=code_objects(api_obj))
    ops = trace_device_ops(sc, getattr(torch, case["dtype"]), ctx.adapter) \
        if case.get("device_ops") else None
    # the footprint is recorded only when asked: no footprint, no evidence to derive
    return from_result(result, entries if case.get("footprint") else None, ops).wire()
