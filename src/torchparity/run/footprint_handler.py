"""The "footprint" case kind: which (op, dtype) pairs one OpInfo entry x one dtype sends
to the device, sample by sample, forward and backward.

Run on a permissive device (``emu:allow-all``: nothing is refused while recording), this
is the operator footprint *after* decomposition: what a backend without its own kernel
for a CompositeExplicitAutograd / CompositeImplicitAutograd op (``allclose``,
``new_full``, ...) is actually asked about. ``app.predict`` looks the pairs up in a
target profile (``predict(..., trace="emulated")``) instead of the CPU dispatch-mode
footprint, which sees such composites before their kernels run.

Samples are made and run as the "opinfo" case kind runs them on the device (same seeds,
same device copies, the same retry with CPU-only arguments and without autograd); only
the op call and ``torch.autograd.grad`` are traced, not the copies to and from the
device. A sample the device raises on (with nothing refused, that is the op's own or the
emulator's limit, not the profile's) is reported with its error; a failing backward
leaves that sample without a backward footprint, as the CPU footprint does.

Payload: ``{"samples": [{"forward": [[op, dtype], ...], "backward": [...],
"error": str | None}, ...]}`` with op packets (``aten.isclose``) and dtype names ("" for
ops without a tensor argument), or ``{"no_samples": reason}``.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List

import torch

from ..scenarios import opinfo as oi
from .context import WorkerContext, register
from .execute import describe_exception
from .opinfo_handler import device_tree, wants_grads
from .opinfo_samples import CPU_ONLY_ARG as _CPU_ONLY_ARG
from .opinfo_samples import diff_leaves as _diff_leaves
from .opinfo_samples import grad_error as _grad_error
from .opinfo_samples import grad_inputs as _grad_inputs
from .opinfo_samples import leaves as _leaves
from .opinfo_samples import map_tree as _map
from .opinfo_samples import seed_device
from .opinfo_samples import setup_worker as _setup


def _pairs(seen) -> List[List[str]]:
    return sorted([op, dt] for op, dt in seen)


def sample_footprint(ctx: WorkerContext, fn, sample, index: int, grads: bool) -> Dict[str, Any]:
    """The traced forward and backward (op, dtype) pairs of one sample on the device."""
    adapter = ctx.adapter
    device, device_type = adapter.torch_device, adapter.type
    process = sample.output_process_fn_grad
    orig = oi.sample_parts(sample)
    seed = oi.SEED + index

    def forward(tree):
        seed_device(seed, device_type)
        with adapter.trace_ops() as seen:
            try:
                inp, args, kwargs = tree
                out = process(fn(inp, *args, **kwargs))
                adapter.synchronize()
                return out, None, _pairs(seen)
            except Exception as exc:  # the op's own failure is data
                return None, exc, _pairs(seen)

    tree = device_tree(orig, device)
    out, exc, fwd = forward(tree)
    if exc is not None and _CPU_ONLY_ARG.search(str(exc)):
        tree2 = device_tree(orig, device, input_only=True)
        retry = forward(tree2)
        if retry[1] is None:
            tree, (out, exc, fwd) = tree2, retry
    if exc is not None and _grad_error(exc):
        # an in-place sample on a leaf that requires grad: the sweep retries without autograd
        tree = _map(tree, lambda t: t.detach())
        out, exc, fwd = forward(tree)
        grads = False
    if exc is not None:
        return {"forward": fwd, "backward": [], "error": describe_exception(exc)}
    bwd: List[List[str]] = []
    if grads:
        out_idx = _diff_leaves(out)
        ins = _grad_inputs(tree)
        if out_idx and ins:
            leaves = _leaves(out)
            outs = [leaves[i] for i in out_idx]
            torch.default_generator.manual_seed(seed)
            with adapter.trace_ops() as seen:
                try:
                    torch.autograd.grad(outs, ins, [torch.ones_like(o) for o in outs],
                                        allow_unused=True)
                    adapter.synchronize()
                    bwd = _pairs(seen)
                except Exception:
                    bwd = []  # the backward fails regardless of the profile (as on the CPU)
    return {"forward": fwd, "backward": bwd, "error": None}


def run_case(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    with ctx.adapter.trace_ops() as probe:
        if probe is None:
            return {"harness_error": f"{ctx.adapter.spec} cannot trace the ops that reach it"}
    _setup(ctx)
    e = oi.OpEntry(api=case["api"], key=case["key"], db=case.get("db", "op_db"),
                   call=case.get("call", "op"))
    op = e.opinfo
    dtype = getattr(torch, case["dtype"])
    # the target profile's device type decides OpInfo's skips, as in a sweep on it
    device_type = case.get("device_type") or ctx.adapter.type
    grads = (bool(case.get("grads", True)) and oi.compare_skip(op, device_type, dtype, e.call) is None
             and wants_grads(op, dtype, e.call, device_type))
    try:
        samples = oi.make_samples(op, dtype, requires_grad=grads)
    except Exception as exc:
        return {"no_samples": f"OpInfo cannot make samples: {describe_exception(exc)}"}
    samples = oi.capped(samples, case.get("max_samples"))
    fn = e.callable()
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, s in enumerate(samples):
            try:
                out.append(sample_footprint(ctx, fn, s, i, grads))
            except Exception as exc:  # a harness problem with one sample: its ops are unknown
                out.append({"forward": [], "backward": [], "error": None,
                            "harness_error": f"sample {i}: {describe_exception(exc)}"})
    return {"samples": out}


@register("footprint")
def handle_footprint(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    return run_case(ctx, case)
