"""Comparing a device run with the CPU reference run of the same scenario.

Structure follows torch.testing: nested sequences and mappings are walked in parallel;
leaves are compared by kind (None, bool, number, tensor, other). Tensors are judged by a
*standard* (``judge.standards``): the device's values are moved to the CPU and held to
``torch.testing.assert_close`` tolerances for their dtype; output dtype, shape and device
type are checked separately, because a right value on the wrong device is still wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence

import torch

from ..results.models import Cause, Metric, Status
from . import standards


@dataclass
class Judgement:
    status: Status
    cause: Optional[Cause] = None
    detail: str = ""
    metric: Optional[Metric] = None

    @property
    def passed(self) -> bool:
        return self.status == Status.PASS


_RANK = {Status.PASS: 0, Status.SKIP: 1, Status.FAIL: 3, Status.UNSUPPORTED: 2,
         Status.ERROR: 4, Status.CRASH: 5, Status.TIMEOUT: 5}


def worst(judgements: Sequence[Judgement]) -> Judgement:
    """The worst status wins (error > fail > unsupported > skip > pass)."""
    if not judgements:
        return Judgement(Status.PASS)
    return max(judgements, key=lambda j: _RANK[j.status])


def _fail(cause: Cause, detail: str, metric: Optional[Metric] = None) -> Judgement:
    return Judgement(Status.FAIL, cause, detail, metric)


def compare_outputs(cpu: Any, dev: Any, device_type: str, path: str = "output") -> Judgement:
    """Judge ``dev`` (from the device run) against ``cpu`` (the CPU reference run)."""
    results: List[Judgement] = []
    _walk(cpu, dev, device_type, path, results)
    return worst(results)


def _is_seq(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, (str, bytes))


def _walk(cpu: Any, dev: Any, device_type: str, path: str, out: List[Judgement]) -> None:
    if isinstance(cpu, torch.Tensor) or isinstance(dev, torch.Tensor):
        out.append(_tensor(cpu, dev, device_type, path))
        return
    if cpu is None or dev is None:
        if cpu is not dev:
            out.append(_fail(Cause.METADATA, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}"))
        return
    if isinstance(cpu, Mapping):
        if not isinstance(dev, Mapping) or set(cpu) != set(dev):
            out.append(_fail(Cause.METADATA, f"{path}: keys differ ({_short(cpu)} vs {_short(dev)})"))
            return
        for k in cpu:
            _walk(cpu[k], dev[k], device_type, f"{path}[{k!r}]", out)
        return
    if _is_seq(cpu):
        if not _is_seq(dev) or len(cpu) != len(dev):
            out.append(_fail(Cause.METADATA, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}"))
            return
        for i, (a, b) in enumerate(zip(cpu, dev)):
            _walk(a, b, device_type, f"{path}[{i}]", out)
        return
    if isinstance(cpu, bool) or isinstance(dev, bool):
        if cpu != dev or type(cpu) is not type(dev):
            out.append(_fail(Cause.MISMATCH, f"{path}: CPU gave {cpu!r}, device gave {dev!r}",
                             Metric(name="equal", value=0.0, threshold=1.0, standard="exact")))
        return
    if isinstance(cpu, (int, float, complex)) and isinstance(dev, (int, float, complex)):
        if isinstance(cpu, int) and isinstance(dev, int):
            ok = cpu == dev
        else:
            ok = _close_number(complex(cpu), complex(dev))
        if not ok:
            out.append(_fail(Cause.MISMATCH, f"{path}: CPU gave {cpu!r}, device gave {dev!r}",
                             Metric(name="abs_diff", value=abs(complex(cpu) - complex(dev)),
                                    threshold=standards.SCALAR_ATOL, standard="scalar")))
        return
    if isinstance(cpu, torch.dtype) or isinstance(cpu, (str, bytes)) or type(cpu) is type(dev):
        try:
            equal = cpu == dev
            equal = bool(equal)
        except Exception:
            equal = repr(cpu) == repr(dev)
        if not equal:
            out.append(_fail(Cause.MISMATCH, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}"))
        return
    out.append(_fail(Cause.METADATA, f"{path}: CPU gave {type(cpu).__name__}, device gave {type(dev).__name__}"))


def _close_number(a: complex, b: complex) -> bool:
    if any(math.isnan(v) for v in (a.real, a.imag, b.real, b.imag)):
        return all(math.isnan(x) == math.isnan(y) for x, y in ((a.real, b.real), (a.imag, b.imag)))
    return abs(a - b) <= standards.SCALAR_ATOL + standards.SCALAR_RTOL * abs(a)


def _tensor(cpu: Any, dev: Any, device_type: str, path: str) -> Judgement:
    if not isinstance(cpu, torch.Tensor) or not isinstance(dev, torch.Tensor):
        return _fail(Cause.METADATA, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}")
    expected_type = device_type if cpu.device.type == "cpu" else cpu.device.type
    if dev.device.type != expected_type:
        return _fail(Cause.METADATA, f"{path}: on {dev.device.type}, expected on {expected_type}")
    if dev.dtype != cpu.dtype:
        return _fail(Cause.METADATA, f"{path}: dtype {dev.dtype}, CPU gave {cpu.dtype}")
    if dev.shape != cpu.shape:
        return _fail(Cause.METADATA, f"{path}: shape {tuple(dev.shape)}, CPU gave {tuple(cpu.shape)}")
    if cpu.layout != torch.strided or dev.layout != torch.strided:
        cpu, dev = cpu.to_dense(), dev.to_dense()
    return standards.judge_values(cpu.detach(), dev.detach().cpu(), path)


def _short(x: Any, limit: int = 60) -> str:
    if isinstance(x, torch.Tensor):
        return f"tensor(shape={tuple(x.shape)}, dtype={x.dtype}, device={x.device.type})"
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."
