"""What the OpInfo case kind and the footprint case kind share: walking and mapping a
sample's nested inputs and outputs, seeding, the worker's one-time OpInfo set-up.

(Both case kinds use these; they live here so that neither imports the other's private
names.)
"""

from __future__ import annotations

import gc
import re
import warnings
from typing import Any, Callable, List, Optional

import torch

from ..scenarios import opinfo as oi
from .context import WorkerContext


def map_tree(tree: Any, fn: Callable[[torch.Tensor], Any], dtype_fn: Optional[Callable] = None,
         device_fn: Optional[Callable] = None) -> Any:
    """Apply ``fn`` to tensors, ``dtype_fn`` to dtypes and ``device_fn`` to devices (and
    to the string ``"cpu"``) in nested lists / tuples / dicts; other leaves are kept."""
    if isinstance(tree, torch.Tensor):
        return fn(tree)
    if dtype_fn is not None and isinstance(tree, torch.dtype):
        return dtype_fn(tree)
    if device_fn is not None and (isinstance(tree, torch.device) or (isinstance(tree, str) and tree == "cpu")):
        return device_fn(tree)
    if isinstance(tree, list):
        return [map_tree(t, fn, dtype_fn, device_fn) for t in tree]
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(map_tree(t, fn, dtype_fn, device_fn) for t in tree)
    if isinstance(tree, dict):
        return {k: map_tree(v, fn, dtype_fn, device_fn) for k, v in tree.items()}
    return tree


# a device run that fails because an argument must stay on the CPU (index tensors of
# tensor_split, ...) is retried with only the input on the device
CPU_ONLY_ARG = re.compile(r"(?i)(expected|must|should)\b[^.]{0,80}\bon (the )?cpu\b")


def seed_device(seed: int, device_type: str = "cpu") -> None:
    """Seed the CPU generator and the device's. (torch.manual_seed also seeds CUDA lazily,
    recording a stack trace per call: ~1 ms, too slow per sample.)"""
    torch.default_generator.manual_seed(seed)
    if device_type != "cpu":
        mod = getattr(torch, device_type, None)
        fn = getattr(mod, "manual_seed_all", None) or getattr(mod, "manual_seed", None)
        if callable(fn):
            fn(seed)
        else:
            torch.manual_seed(seed)


def leaves(tree: Any, out: Optional[list] = None) -> list:
    """Tensor and other leaves of nested lists / tuples / dicts, in order (a lean pytree)."""
    if out is None:
        out = []
    if isinstance(tree, torch.Tensor):
        out.append(tree)
    elif isinstance(tree, (list, tuple)):
        for t in tree:
            leaves(t, out)
    elif isinstance(tree, dict):
        for v in tree.values():
            leaves(v, out)
    else:
        out.append(tree)
    return out


def diff_leaves(value: Any) -> List[int]:
    return [i for i, t in enumerate(leaves(value))
            if isinstance(t, torch.Tensor) and t.requires_grad and t.grad_fn is not None]


def grad_inputs(tree: Any) -> List[torch.Tensor]:
    return [t for t in leaves(tree) if isinstance(t, torch.Tensor) and t.requires_grad]


def grad_error(exc: BaseException) -> bool:
    text = str(exc)
    return ("requires grad is being used in an in-place operation" in text
            or "doesn't require grad" in text and "element 0 of tensors" in text)


def setup_worker(ctx: WorkerContext) -> None:
    if ctx.cache.get("opinfo_ready"):
        return
    warnings.simplefilter("ignore")
    threads = ctx.options.get("threads")
    if threads:
        torch.set_num_threads(int(threads))
    oi.entries()  # import op_db once per worker
    # op_db is a large, long-lived object graph: keep the cyclic GC from rescanning it
    gc.collect()
    gc.freeze()
    ctx.cache["opinfo_ready"] = True
