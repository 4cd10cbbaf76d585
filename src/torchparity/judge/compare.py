"""Comparing a device run with the CPU reference run of the same code.

The one judging path of torchparity: ``check`` (hand scenarios) and ``sweep`` (OpInfo
samples) both call :func:`compare_outputs`. Structure follows torch.testing: nested
sequences and mappings are walked in parallel; leaves are compared by kind (None, bool,
number, tensor, other). Output dtype, shape and device type are checked first (a right
value on the wrong device is still wrong); tensor values are then judged by a precision
standard of ``judge.standards``.

``golden`` (optional) is the same computation on the CPU in float64 / complex128: a value
or a zero-argument callable, called at most once and only when some floating leaf differs
from the CPU's (bit-identical outputs need no golden). ``kind`` says what the values are:
``values`` (compare them), ``random`` (a random op: distributions only),
``uninitialised`` (``empty`` and friends: metadata only) or ``exact`` (values with one right
answer, conversions and selections: bit for bit, no tolerance).
"""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from ..devices import precision
from ..results.models import Cause, Metric, Status
from ..scenarios.registry import Draws
from . import standards
from .judgement import Judgement, rank, worst

__all__ = ["Judgement", "compare_outputs", "input_aliasing", "local_aliasing", "output_kinds", "worst",
           "rank", "KINDS"]

KINDS = ("values", "random", "uninitialised", "exact")
_MISSING = object()

Golden = Union[None, Any, Callable[[], Any]]


def _fail(cause: Cause, detail: str, metric: Optional[Metric] = None) -> Judgement:
    return Judgement(Status.FAIL, cause, detail, metric)


def _meta(name: str) -> Metric:
    return Metric(name=name, value=None, threshold=None, standard="metadata")


def compare_outputs(cpu: Any, dev: Any, device_type: str, path: str = "output", *,
                    golden: Golden = None, kind: str = "values", layout: bool = False) -> Judgement:
    """Judge ``dev`` (from the device run) against ``cpu`` (the CPU reference run).

    ``layout``: the API's contract fixes its outputs' layout (views, ``*_like`` with
    preserve_format, ``empty_strided``, ``contiguous``, in-place and ``out=`` variants):
    strides (of dimensions longer than one), storage offsets and which outputs share
    storage are compared too."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    # what the device reported computing in reduced precision since the last judgement
    # (HF32 convolutions): a golden-judged float32 leaf is held to that precision's bar
    reduced = precision.take()
    results: List[Judgement] = []
    leaves: List[Tuple[str, Tuple[Any, ...], torch.Tensor, torch.Tensor]] = []
    pairs: List[Tuple[str, torch.Tensor, torch.Tensor]] = []
    _walk(cpu, dev, device_type, path, (), results, leaves, pairs=pairs)
    if layout:
        results.extend(layout_differences(pairs))

    golden_tree: Any = _MISSING
    for leaf_path, keys, c, d, leaf_kind in leaves:
        leaf_kind = leaf_kind or kind
        g = None
        if golden is not None and standards.needs_golden(c, d, leaf_kind):
            if golden_tree is _MISSING:
                golden_tree = _evaluate(golden)
            g = _follow(golden_tree, keys)
        if leaf_kind == "uninitialised":
            results.append(Judgement(Status.PASS, None, "", Metric(
                name="metadata_mismatches", value=0.0, threshold=0.0, standard="uninitialised")))
        else:
            results.append(standards.judge_values(c, d, leaf_path, golden=g, kind=leaf_kind,
                                                  compute_bits=precision.bits_for(reduced, c.dtype)))
    if not results:
        return Judgement(Status.PASS, None, "", Metric(name="outputs", value=0.0, threshold=None,
                                                       standard="metadata"))
    return worst(results)


def output_kinds(cpu: Any) -> Optional[List[str]]:
    """What :func:`compare_outputs` compares in the CPU's answer ``cpu``, as evidence on a
    row: the dtype names of its tensor leaves, ``strided`` when one of them is not
    contiguous, ``opaque`` when a leaf is an object compared by its own ``==`` (whatever it
    holds is not walked). Found by the comparison's own walk, of the answer against itself,
    so the two cannot drift apart. None (unrecorded) when the answer cannot be walked."""
    kinds: set = set()
    try:
        _walk(cpu, cpu, "cpu", "output", (), [], [], pairs=None, kinds=kinds)
    except Exception:
        return None
    return sorted(kinds)


_PLAIN = (str, bytes, torch.dtype, torch.device, torch.layout, torch.memory_format)


def _evaluate(golden: Golden) -> Any:
    if callable(golden):
        try:
            return golden()
        except Exception:  # no golden for this op (e.g. no float64 kernel): judge vs the CPU
            return None
    return golden


def _follow(tree: Any, keys: Tuple[Any, ...]) -> Optional[torch.Tensor]:
    for k in keys:
        try:
            tree = tree[k]
        except Exception:
            return None
    return tree if isinstance(tree, torch.Tensor) else None


def _is_seq(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, (str, bytes))


def layout_differences(pairs: Sequence[Tuple[str, torch.Tensor, torch.Tensor]]) -> List[Judgement]:
    """Strides, storage offset and storage sharing of (path, CPU, device) tensor pairs."""
    out: List[Judgement] = []
    strided = [(p, c, d) for p, c, d in pairs
               if c.layout == torch.strided and d.layout == torch.strided and c.shape == d.shape]
    for p, c, d in strided:
        if c.numel() == 0:
            continue
        cs = [st for st, n in zip(c.stride(), c.shape) if n > 1]
        ds = [st for st, n in zip(d.stride(), d.shape) if n > 1]
        if cs != ds:
            out.append(_fail(Cause.METADATA, f"{p}: strides {tuple(d.stride())}, CPU gave {tuple(c.stride())}",
                             _meta("output_strides")))
        elif c.storage_offset() != d.storage_offset():
            out.append(_fail(Cause.METADATA, f"{p}: storage offset {d.storage_offset()}, CPU gave "
                             f"{c.storage_offset()}", _meta("output_storage_offset")))
    for i, (p, c, d) in enumerate(strided):  # aliasing: outputs that share storage
        for q, c2, d2 in strided[i + 1:]:
            cpu_shared = _storage(c) == _storage(c2)
            if cpu_shared != (_storage(d) == _storage(d2)):
                how = "share" if cpu_shared else "do not share"
                out.append(_fail(Cause.METADATA, f"{p} and {q}: on the CPU they {how} storage, "
                                 "not on the device", _meta("output_aliasing")))
    if strided and not out:
        out.append(Judgement(Status.PASS, None, "", Metric(name="layout_mismatches", value=0.0,
                                                           threshold=0.0, standard="metadata")))
    return out


def _leaves(tree: Any) -> List[torch.Tensor]:
    """The tensors of a nested structure, in walking order (strided ones only)."""
    out: List[torch.Tensor] = []

    def walk(x):
        if isinstance(x, torch.Tensor):
            if x.layout == torch.strided:
                out.append(x)
        elif isinstance(x, Mapping):
            for v in x.values():
                walk(v)
        elif _is_seq(x):
            for v in x:
                walk(v)
    walk(tree)
    return out


def input_aliasing(cpu_inputs: Any, cpu: Any, dev_inputs: Any, dev: Any,
                   path: str = "output") -> List[Judgement]:
    """Outputs against the inputs they were computed from: an output that shares storage
    with an input on the device where the CPU's does not (a kernel that wrote its result
    into its input), or the reverse (an in-place or view op that returned a copy), fails
    with the pair named. Compared by position in walking order; nothing when the two
    sides' structures differ (``compare_outputs`` reports that)."""
    ci, di = _leaves(cpu_inputs), _leaves(dev_inputs)
    co, do = _leaves(cpu), _leaves(dev)
    if len(ci) != len(di) or len(co) != len(do):
        return []
    out: List[Judgement] = []
    for n, (c, d) in enumerate(zip(co, do)):
        if not c.numel() or not d.numel():
            continue
        for m, (a, b) in enumerate(zip(ci, di)):
            if not a.numel() or a.device.type != c.device.type or b.device.type != d.device.type:
                continue
            cpu_shared, dev_shared = _storage(c) == _storage(a), _storage(d) == _storage(b)
            if cpu_shared != dev_shared:
                how = "shares storage with" if dev_shared else "does not share storage with"
                cpu_how = "does not" if dev_shared else "does"
                out.append(_fail(Cause.METADATA, f"{path} tensor {n} {how} input tensor {m} on the device; "
                                 f"on the CPU it {cpu_how}", _meta("input_aliasing")))
                break
    return out


def local_aliasing(cpu_locals: Mapping[str, Any], cpu: Any, dev_locals: Mapping[str, Any], dev: Any,
                   path: str = "output", reverse: bool = False) -> List[Judgement]:
    """Outputs against a code-block case's inputs: the variables its body held when it
    returned (``run.body_locals``), by name. An output tensor on the device that shares
    storage with a variable's tensor on the device where the CPU run's does not (a kernel
    that wrote its result into its input and returned it), or the reverse, fails with the
    variable named. Variables that are no device tensors in the device run (a CPU tensor
    before its ``.to(device)``, which the CPU run's ``.to("cpu")`` returns as is) are not
    compared. The reverse (the CPU's output is the variable, the device's a copy) only with
    ``reverse``: a case's host round trips (``x.cpu().apply_(f).to(device)``,
    ``PackedSequence.to``) are copies on the device and nothing at all on the CPU, so in a
    code block it is the harness's difference, not the device's (OpInfo samples, which
    have no such trips, compare both ways: :func:`input_aliasing`)."""
    out: List[Judgement] = []
    co, do = _leaves(cpu), _leaves(dev)
    if len(co) != len(do):
        return []
    for name in cpu_locals:
        if name not in dev_locals:
            continue
        ci, di = _leaves(cpu_locals[name]), _leaves(dev_locals[name])
        if len(ci) != len(di):
            continue
        for n, (c, d) in enumerate(zip(co, do)):
            if not c.numel() or not d.numel() or d.device.type == "cpu":
                continue
            hit = None
            for m, (a, b) in enumerate(zip(ci, di)):
                if not a.numel() or a.device.type != c.device.type or b.device.type != d.device.type:
                    continue
                cpu_shared, dev_shared = _storage(c) == _storage(a), _storage(d) == _storage(b)
                if cpu_shared != dev_shared and (dev_shared or reverse):
                    hit = (m, dev_shared)
                    break
            if hit is not None:
                m, dev_shared = hit
                which = f"`{name}`" + (f" (tensor {m})" if len(ci) > 1 else "")
                how = "shares storage with" if dev_shared else "does not share storage with"
                cpu_how = "does not" if dev_shared else "does"
                out.append(_fail(Cause.METADATA, f"{path} tensor {n} {how} the case's input {which} "
                                 f"on the device; on the CPU it {cpu_how}", _meta("input_aliasing")))
    return out


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # a tensor without storage (a wrapper subclass)
        return id(t)


def _walk(cpu: Any, dev: Any, device_type: str, path: str, keys: Tuple[Any, ...],
          out: List[Judgement], leaves: list, leaf_kind: Optional[str] = None,
          pairs: Optional[list] = None, kinds: Optional[set] = None) -> None:
    if isinstance(cpu, Draws) or isinstance(dev, Draws):  # random draws: a two-sample test
        if not (isinstance(cpu, Draws) and isinstance(dev, Draws)):
            out.append(_fail(Cause.METADATA, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}",
                             _meta("output_kind")))
            return
        _walk(cpu.tensor, dev.tensor, device_type, path, keys + ("tensor",), out, leaves, "random", pairs, kinds)
        return
    if isinstance(cpu, torch.Tensor) or isinstance(dev, torch.Tensor):
        j = _tensor_meta(cpu, dev, device_type, path)
        if j is not None:
            out.append(j)
        else:
            if pairs is not None:
                pairs.append((path, cpu, dev))
            if kinds is not None:
                kinds.add(str(cpu.dtype).replace("torch.", ""))
                if cpu.layout == torch.strided and cpu.numel() > 1 and not cpu.is_contiguous():
                    kinds.add("strided")
            c, d = _dense(cpu.detach()), _dense(dev.detach().cpu())
            leaves.append((path, keys, c, d, leaf_kind))
        return
    if cpu is None or dev is None:
        if cpu is not dev:
            out.append(_fail(Cause.METADATA, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}",
                             _meta("output_kind")))
        return
    if isinstance(cpu, Mapping):
        if not isinstance(dev, Mapping) or set(cpu) != set(dev):
            out.append(_fail(Cause.METADATA, f"{path}: keys differ ({_short(cpu)} vs {_short(dev)})",
                             _meta("output_keys")))
            return
        for k in cpu:
            _walk(cpu[k], dev[k], device_type, f"{path}[{k!r}]", keys + (k,), out, leaves, leaf_kind, pairs, kinds)
        return
    if _is_seq(cpu):
        if not _is_seq(dev) or len(cpu) != len(dev):
            out.append(_fail(Cause.METADATA, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}",
                             _meta("output_length")))
            return
        for i, (a, b) in enumerate(zip(cpu, dev)):
            _walk(a, b, device_type, f"{path}[{i}]", keys + (i,), out, leaves, leaf_kind, pairs, kinds)
        return
    if isinstance(cpu, bool) or isinstance(dev, bool):
        ok = cpu == dev and type(cpu) is type(dev)
        metric = Metric(name="equal", value=1.0 if ok else 0.0, threshold=1.0, standard="exact")
        out.append(Judgement(Status.PASS, None, "", metric) if ok else
                   _fail(Cause.MISMATCH, f"{path}: CPU gave {cpu!r}, device gave {dev!r}", metric))
        return
    if isinstance(cpu, (int, float, complex)) and isinstance(dev, (int, float, complex)):
        if isinstance(cpu, int) and isinstance(dev, int):
            ok = cpu == dev
            metric = Metric(name="abs_diff", value=float(abs(cpu - dev)), threshold=0.0,
                            standard="exact")
        else:
            ok, metric = standards.scalar_close(complex(cpu), complex(dev))
        out.append(Judgement(Status.PASS, None, "", metric) if ok else
                   _fail(Cause.MISMATCH, f"{path}: CPU gave {cpu!r}, device gave {dev!r}", metric))
        return
    if isinstance(cpu, torch.dtype) or isinstance(cpu, (str, bytes)) or type(cpu) is type(dev):
        if kinds is not None and not isinstance(cpu, _PLAIN):
            kinds.add("opaque")
        try:
            equal = bool(cpu == dev)
        except Exception:
            equal = repr(cpu) == repr(dev)
        metric = Metric(name="equal", value=1.0 if equal else 0.0, threshold=1.0, standard="exact")
        out.append(Judgement(Status.PASS, None, "", metric) if equal else
                   _fail(Cause.MISMATCH, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}",
                         metric))
        return
    out.append(_fail(Cause.METADATA, f"{path}: CPU gave {type(cpu).__name__}, device gave {type(dev).__name__}",
                     _meta("output_type")))


def _dense(t: torch.Tensor) -> torch.Tensor:
    if t.layout != torch.strided:
        t = t.to_dense()
    return t


def _tensor_meta(cpu: Any, dev: Any, device_type: str, path: str) -> Optional[Judgement]:
    if not isinstance(cpu, torch.Tensor) or not isinstance(dev, torch.Tensor):
        return _fail(Cause.METADATA, f"{path}: CPU gave {_short(cpu)}, device gave {_short(dev)}",
                     _meta("output_type"))
    expected_type = device_type if cpu.device.type == "cpu" else cpu.device.type
    if dev.device.type != expected_type:
        return _fail(Cause.METADATA, f"{path}: on {dev.device.type}, expected on {expected_type}",
                     _meta("output_device"))
    if dev.dtype != cpu.dtype:
        return _fail(Cause.METADATA, f"{path}: dtype {dev.dtype}, CPU gave {cpu.dtype}",
                     _meta("output_dtype"))
    if dev.shape != cpu.shape:
        return _fail(Cause.METADATA, f"{path}: shape {tuple(dev.shape)}, CPU gave {tuple(cpu.shape)}",
                     _meta("output_shape"))
    return None


def _short(x: Any, limit: int = 60) -> str:
    if isinstance(x, torch.Tensor):
        return f"tensor(shape={tuple(x.shape)}, dtype={x.dtype}, device={x.device.type})"
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."
