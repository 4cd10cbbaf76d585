"""What the ``distpar`` world bodies share: parts, the seeded model and inputs, the
world's folder."""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Dict, List

import torch

from ....results.error_rules import is_refusal
from ...registry import ScaffoldingRefused

ERROR = "__part_error__"  # the key a failed part's value carries: (type name, first line)


def part(out: Dict[str, Any], name: str, fn: Callable[[], Any]) -> None:
    """``out[name] = fn()``, or the error it raised (``CheckpointException`` is a
    ``BaseException``: caught too; interrupts are not)."""
    try:
        out[name] = fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 (the API's own answer, kept as data)
        failures = getattr(exc, "failures", None)  # CheckpointException: rank -> its error
        if isinstance(failures, dict) and failures:
            rank, cause = sorted(failures.items())[0]
            cause = cause[0] if isinstance(cause, tuple) and cause else cause  # (error, its frames)
            text = f"on rank {rank}: {type(cause).__name__}: {cause}".strip()
        else:
            text = str(exc).strip()
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(exc).__name__)
        out[name] = {ERROR: (type(exc).__name__, first[:500])}


# the dtype the body running in this rank asked for (``in_dtype``): the models and inputs
# below are made in it (float32 outside a body)
_DTYPES: List[torch.dtype] = []


def in_dtype(body: Callable[..., Any]) -> Callable[..., Any]:
    """A world body ``body(rank, world, device, dtype)`` whose models and inputs
    (``model``, ``inputs``, ``cast``) are made in ``dtype``: the case's dtype reaches
    every part without each helper taking it (float16 / bfloat16 are what an Ascend user
    trains in)."""
    @functools.wraps(body)
    def run(rank, world, device, dtype):
        _DTYPES.append(dtype)
        try:
            return body(rank, world, device, dtype)
        finally:
            _DTYPES.pop()
    return run


def current_dtype() -> torch.dtype:
    return _DTYPES[-1] if _DTYPES else torch.float32


def cast(x: Any, device: str) -> Any:
    """A module or tensor made on the CPU, moved to ``device``, its floating values in the
    body's dtype (integer tensors keep theirs)."""
    if isinstance(x, torch.Tensor) and not x.is_floating_point():
        return x.to(device)
    return x.to(device=device, dtype=current_dtype())


def model(device: str, width: int = 4, out: int = 2) -> torch.nn.Module:
    """The same small model on every rank (seeded), built on the CPU (float32, then cast:
    the same starting values in every dtype) and moved."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, out))
    return cast(m, device)


def inputs(device: str, rank: int, step: int = 0, rows: int = 3, width: int = 4) -> torch.Tensor:
    """A batch that differs per rank and step, made on the CPU (in the body's dtype)."""
    g = torch.Generator().manual_seed(1000 * rank + step + 1)
    return cast(torch.randn(rows, width, generator=g), device)


def scaffold_step(opt: torch.optim.Optimizer) -> None:
    """One step of an optimizer the body runs around the API (scaffolding: the SGD after a
    DDP backward, the Adam whose state a checkpoint helper saves). A device refusal in the
    case's dtype is not the API's answer: ``ScaffoldingRefused``, so the row reads
    "scaffolding refused" (not_comparable), never a verdict. The optimizers here run their
    per-parameter loop (``foreach=False``): the ops the most devices run, the same
    arithmetic as the fused lists."""
    try:
        opt.step()
    except (RuntimeError, NotImplementedError, TypeError) as exc:
        if not is_refusal(exc):  # the runner's own table: a refusal, not any error
            raise
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        raise ScaffoldingRefused(f"the {type(opt).__name__} step the scenario runs around the API "
                                 f"was refused: {first[:300]}") from exc


def sgd_step(m: torch.nn.Module, lr: float = 0.1):
    opt = torch.optim.SGD(m.parameters(), lr=lr, foreach=False)
    scaffold_step(opt)
    return [p.detach().clone() for p in m.parameters()]


def world_dir(name: str) -> str:
    """A folder every rank of this world shares (inside the world's temporary folder,
    which the process that started the world removes)."""
    base = os.environ.get("TORCHPARITY_WORLD_DIR")
    if not base:
        raise RuntimeError("not inside a torchparity world (no TORCHPARITY_WORLD_DIR)")
    path = os.path.join(base, name)
    os.makedirs(path, exist_ok=True)
    return path
