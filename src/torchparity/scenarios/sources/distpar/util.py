"""What the ``distpar`` world bodies share: parts, the seeded model and inputs, the
world's folder."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import torch

from ....results.error_rules import is_refusal
from ...registry import ScaffoldingRefused
from .. import world

ERROR = "__part_error__"  # the key a failed part's value carries: (type name, first line)


NOT_RUN = "__part_not_run__"  # the value of a part not run after the world went out of step
PEER_WAIT_S = 3.0  # how long a rank whose part failed waits to hear whether its peers' did
_SEQ = [0]  # parts this rank reached, in order (the same order in every rank)


def part(out: Dict[str, Any], name: str, fn: Callable[[], Any]) -> None:
    """``out[name] = fn()``, or the error it raised (``CheckpointException`` is a
    ``BaseException``: caught too; interrupts are not).

    In a world: a part not asked for (``world.only_parts``) is not run. A part that failed
    in this rank but not in every peer (each rank says how its part ended in the world's
    folder; peers that say nothing within ``PEER_WAIT_S`` are waiting on this rank) may
    leave a peer waiting forever: the body's value is marked ``world.OUT_OF_STEP`` (the rank
    then ends its world) and the parts after it are ``NOT_RUN``, to be asked in worlds of
    their own."""
    only = world.only_parts()
    if only is not None and name not in only:
        return
    seq = _SEQ[0] = _SEQ[0] + 1
    if out.get(world.OUT_OF_STEP):
        out[name] = {NOT_RUN: True}
        _say(seq, "skip")
        return
    try:
        out[name] = fn()
        _say(seq, "ok")
        return
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 (the API's own answer, kept as data)
        failures = getattr(exc, "failures", None)  # CheckpointException: rank -> its error
        if isinstance(failures, dict) and failures:
            rank, cause = sorted(failures.items())[0]
            cause = cause[0] if isinstance(cause, tuple) and cause else cause  # (error, its frames)
            text = f"on rank {rank}: {type(cause).__name__}: {cause}".strip()
        else:
            exc = _refusal_within(exc)
            text = str(exc).strip()
        # all its lines, joined: an aclnn refusal names the dtype on a later line
        first = " ".join(ln.strip() for ln in text.splitlines() if ln.strip()) or type(exc).__name__
        out[name] = {ERROR: (type(exc).__name__, first[:1000])}
    _say(seq, "err")
    if not _every_peer_failed(seq):
        out[world.OUT_OF_STEP] = True


def _refusal_within(exc: BaseException) -> BaseException:
    """``exc``, or the device refusal it wraps (``__cause__`` / ``__context__``): a
    pipeline stage re-raises "[Stage 0] failed to run forward:" from the kernel's refusal."""
    if isinstance(exc, ScaffoldingRefused) or is_refusal(exc):
        return exc  # already the answer (a refused scaffolding step stays one)
    seen, inner = {id(exc)}, exc.__cause__ or exc.__context__
    while inner is not None and id(inner) not in seen:
        if is_refusal(inner):
            return inner
        seen.add(id(inner))
        inner = inner.__cause__ or inner.__context__
    return exc


def _status_file(seq: int, rank: int):
    base = os.environ.get("TORCHPARITY_WORLD_DIR")
    return None if not base else Path(base) / f"part-{seq}-rank{rank}"


def _ranks():
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return None
    return dist.get_rank(), dist.get_world_size()


def _say(seq: int, how: str) -> None:
    """Tell the peers how this rank's part ``seq`` ended (nothing outside a world)."""
    ranks = _ranks()
    path = _status_file(seq, ranks[0]) if ranks else None
    if path is not None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(how)
        tmp.replace(path)


def _every_peer_failed(seq: int) -> bool:
    """Whether every peer's part ``seq`` failed too (the world is still in step); True
    outside a world (one process: no peer waits)."""
    ranks = _ranks()
    if ranks is None or _status_file(seq, ranks[0]) is None:
        return True
    rank, size = ranks
    deadline = time.monotonic() + PEER_WAIT_S
    for peer in (r for r in range(size) if r != rank):
        path = _status_file(seq, peer)
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not path.exists() or path.read_text() != "err":
            return False
    return True


def not_run(value: Any) -> bool:
    """A part's value saying it was not run (its world went out of step before it)."""
    return isinstance(value, dict) and bool(value.get(NOT_RUN))


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
    body's dtype (integer tensors keep theirs). In a case that computes the float64 golden
    (``world.computing_golden``) they are rounded to that dtype, then upcast: the golden
    starts from the same values and computes the rest in float64."""
    if isinstance(x, torch.Tensor) and not x.is_floating_point():
        return x.to(device)
    made = x.to(device=device, dtype=current_dtype())
    if not world.computing_golden():
        return made
    if isinstance(made, torch.Tensor) and made.is_complex():
        return made.to(torch.complex128)
    return made.to(torch.float64)


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
        first = " ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip()) or type(exc).__name__
        raise ScaffoldingRefused(f"the {type(opt).__name__} step the scenario runs around the API "
                                 f"was refused: {first[:600]}") from exc


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
