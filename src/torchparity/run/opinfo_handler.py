"""The "opinfo" case kind: one OpInfo entry x one dtype, every sample, in one worker.

Per sample: inputs made on the CPU (seeded) are copied to the device (strides kept) and
to a private CPU copy; the device run and the CPU reference run happen back to back in
this process, the outputs pass through ``output_process_fn_grad`` and are judged by
``judge.compare.compare_outputs`` with a lazily computed float64 golden (the same op on
the untouched inputs upcast). Where the op supports autograd and the dtype is floating,
gradients of the same outputs with the same seeded cotangents are judged the same way.
The per-sample judgements are folded into one case result (``judge.aggregate``): this
is the dtype discovery record for (op, dtype) on the device.

Samples are cached per worker for the case only (the next case is another op or dtype);
op_db is imported once per worker.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional

import torch

from ..judge.aggregate import SampleOutcome, aggregate
from ..judge.compare import compare_outputs, input_aliasing, output_kinds, worst
from ..judge.evidence import DEVICE_COMPUTE, from_footprint
from ..judge.judgement import Judgement
from ..judge.paths import path_difference
from ..results.error_rules import classify_exception, classify_exception_chain
from ..results.models import Cause, Status
from ..scenarios import opinfo as oi
from . import opinfo_restricted as RS
from .answer import Answer
from .context import WorkerContext, register
from .execute import cpu_raised_device_returned, describe_exception
from .opinfo_samples import CPU_ONLY_ARG as _CPU_ONLY_ARG
from .opinfo_samples import diff_leaves as _diff_leaves
from .opinfo_samples import grad_error as _grad_error
from .opinfo_samples import grad_inputs as _grad_inputs
from .opinfo_samples import leaves as _leaves
from .opinfo_samples import map_tree as _map
from .opinfo_samples import seed_device
from .opinfo_samples import setup_worker as _setup
from .paths import record_path

HIGHER = {torch.float16: torch.float64, torch.bfloat16: torch.float64,
          torch.float32: torch.float64, torch.complex32: torch.complex128,
          torch.complex64: torch.complex128}


def _copy(t: torch.Tensor, device: Any = None, dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """A detached copy on ``device`` / in ``dtype`` that keeps the storage layout.

    The whole storage is copied and viewed with the same sizes, strides and offset, so
    non-contiguous, overlapping and partial views stay what they were (``as_strided``
    samples read storage outside the view).
    """
    t0 = t.detach()
    kw: Dict[str, Any] = {}
    if device is not None:
        kw["device"] = device
    if dtype is not None:
        kw["dtype"] = dtype
    if t0.is_conj() or t0.is_neg():
        t0 = t0.resolve_conj().resolve_neg()
    if t0.layout != torch.strided or (t0.is_contiguous() and t0.storage_offset() == 0
                                      and t0.untyped_storage().nbytes() == t0.numel() * t0.element_size()):
        out = t0.to(copy=True, **kw)
    else:
        storage = t0.untyped_storage()
        base = torch.empty(0, dtype=t0.dtype).set_(storage, 0, (storage.nbytes() // t0.element_size(),), (1,))
        out = base.to(copy=True, **kw).as_strided(t0.shape, t0.stride(), t0.storage_offset())
    if t.requires_grad and (out.is_floating_point() or out.is_complex()):
        out.requires_grad_(True)
    return out


def _upcast_tensor(t: torch.Tensor) -> torch.Tensor:
    high = HIGHER.get(t.dtype)
    return _copy(t, dtype=high) if high is not None else t


def _upcast_dtype(d: torch.dtype) -> torch.dtype:
    return HIGHER.get(d, d)


class _Run:
    __slots__ = ("value", "exc", "tree", "drew_random")

    def __init__(self, value=None, exc=None, tree=None, drew_random=False):
        self.value, self.exc, self.tree = value, exc, tree
        self.drew_random = drew_random


def device_tree(orig, device: Any, input_only: bool = False):
    """A sample on ``device``: tensors copied there; device arguments (factories'
    ``device=``, ``Tensor.to('cpu')``) point there too. ``input_only``: the other tensor
    arguments stay on the CPU."""
    def to_device(t):
        return _copy(t, device=device)

    def device_fn(d):
        return torch.device(device) if isinstance(d, torch.device) else device

    if not input_only:
        return _map(orig, to_device, device_fn=device_fn)
    inp, args, kwargs = orig
    return (_map(inp, to_device, device_fn=device_fn), _map(args, _copy, device_fn=device_fn),
            _map(kwargs, _copy, device_fn=device_fn))


def _call(fn, tree, process, seed: int, sync: Optional[Callable[[], None]] = None,
          device_type: str = "cpu", watch_rng: bool = False) -> _Run:
    """Run ``fn`` on ``tree``; with ``watch_rng`` (CPU runs) note whether it drew random
    numbers from the CPU generator: the op is random (nondeterministic_seeded)."""
    seed_device(seed, device_type)
    before = torch.default_generator.get_state() if watch_rng else None
    inp, args, kwargs = tree
    try:
        out = fn(inp, *args, **kwargs)
        if sync is not None:
            sync()
        run = _Run(value=process(out), tree=tree)
    except Exception as exc:  # the op's own failure is data
        run = _Run(exc=exc, tree=tree)
    if before is not None:
        run.drew_random = not torch.equal(before, torch.default_generator.get_state())
    return run


def _grads(run: _Run, out_idx: List[int], cotangents: List[torch.Tensor], seed: int,
           sync: Optional[Callable[[], None]] = None) -> _Run:
    leaves = _leaves(run.value)
    outs = [leaves[i] for i in out_idx]
    ins = _grad_inputs(run.tree)
    torch.default_generator.manual_seed(seed)
    try:
        grads = torch.autograd.grad(outs, ins, cotangents, allow_unused=True)
        if sync is not None:
            sync()
        return _Run(value=tuple(grads))
    except Exception as exc:
        return _Run(exc=exc)


class _Case:
    """Everything one case needs; ``run_sample`` judges one sample."""

    def __init__(self, ctx: WorkerContext, e: oi.OpEntry, dtype: torch.dtype, kind: str,
                 grads: bool, skip_reason: Optional[str] = None, standard: Optional[str] = None,
                 mark: Optional[str] = None):
        self.adapter = ctx.adapter
        self.device = ctx.adapter.torch_device
        self.device_type = ctx.adapter.type
        self.extra_rules = ctx.adapter.error_patterns()
        self.fn = e.callable()
        self.dtype = dtype
        self.kind = kind
        self.grads = grads
        self.golden_ok = dtype in HIGHER
        self.random_seen = False
        self.outputs: set = set()  # output_kinds of the CPU answers compared
        self.skip_reason = skip_reason  # values are not compared (OpInfo's own skip)
        # OpInfo marks the values not comparable, but part of them is (judge.restricted):
        # in-range-cast | in-range-shift | order-free; ``mark`` is OpInfo's reason
        self.standard = standard
        self.mark = mark
        # an in-place variant's variant-consistency mark: a sample whose in-place call
        # resized its input on the CPU is skipped with it; every other sample compares
        self.resize_mark: Optional[str] = None
        # the op's contract fixes its outputs' layout: strides, offsets, aliasing compared
        self.layout = oi.layout_fixed(e.opinfo, e.call)
        # one right answer (a conversion, a selection): outputs judged bit for bit
        self.exact = oi.exact_output(e.opinfo)
        self.standards_used: set = set()
        self._golden: Optional[_Run] = None
        self.kwargs: Dict[str, Any] = {}
        self.inp: Any = None
        self.other: Any = None

    def _sync(self) -> None:
        self.adapter.synchronize()

    # -- one sample -------------------------------------------------------------------
    def run_sample(self, sample, index: int) -> SampleOutcome:
        process = sample.output_process_fn_grad
        orig = oi.sample_parts(sample)
        self._golden = None
        if not self._reaches_device(orig):
            return SampleOutcome(forward=_cat("not_comparable", Judgement(
                Status.SKIP, Cause.NOT_COMPARABLE,
                "the sample has no tensor and no device argument: it never reaches the device")))
        dev_tree = device_tree(orig, self.device)
        # the golden and a repeated device run need untouched inputs (an op may write to
        # its inputs)
        cpu_tree = _map(orig, _copy)
        inp, args, kwargs = orig
        self.inp, self.other, self.kwargs = inp, (args[0] if args else kwargs.get("other")), kwargs
        seed = oi.SEED + index
        dev = _call(self.fn, dev_tree, process, seed, self._sync, device_type=self.device_type)

        def again() -> _Run:  # the device run once more, same inputs, same seed
            return _call(self.fn, device_tree(orig, self.device), process, seed, self._sync,
                         device_type=self.device_type)

        if dev.exc is not None and _CPU_ONLY_ARG.search(str(dev.exc)):
            retry = _call(self.fn, device_tree(orig, self.device, input_only=True), process, seed,
                          self._sync, device_type=self.device_type)
            if retry.exc is None:
                dev = retry
        cpu = _call(self.fn, cpu_tree, process, seed, watch_rng=True)
        if cpu.drew_random:
            self.random_seen = True
        kind = "random" if (cpu.drew_random or self.kind == "random") else self.kind

        if cpu.exc is not None and _grad_error(cpu.exc):
            # e.g. an in-place sample on a leaf that requires grad: retry without autograd
            dev = _call(self.fn, _map(dev_tree, lambda t: t.detach()), process, seed, self._sync,
                        device_type=self.device_type)
            cpu = _call(self.fn, _map(cpu_tree, lambda t: t.detach()), process, seed)
        resized = self._resized(inp, cpu)
        if resized is not None:
            forward = _cat("not_comparable", Judgement(Status.SKIP, Cause.UPSTREAM_SKIP, resized))
        else:
            forward = self._judge_runs(cpu, dev, kind, "output",
                                       lambda: self._golden_forward(orig, process, seed), again=again)
        backward = None
        if self.grads and forward.category in ("pass", "warn", "fail", "not_comparable") \
                and cpu.exc is None and dev.exc is None:
            backward = self._backward(cpu, dev, orig, process, seed, kind)
        self._explain_by_path(orig, process, seed, forward, backward)
        return SampleOutcome(forward=forward, backward=backward)

    def _resized(self, inp: Any, cpu: _Run) -> Optional[str]:
        """With ``resize_mark``: why the sample is not compared where the CPU's in-place
        call gave its input another shape (the samples OpInfo's mark flags)."""
        if self.resize_mark is None or cpu.exc is not None or cpu.tree is None:
            return None
        after = cpu.tree[0]
        if not (isinstance(inp, torch.Tensor) and isinstance(after, torch.Tensor)) \
                or after.shape == inp.shape:
            return None
        return (f"values not compared: {self.resize_mark} (the CPU's in-place call resized its "
                f"input from {tuple(inp.shape)} to {tuple(after.shape)})")

    # -- why a result differs -----------------------------------------------------------
    def _explain_by_path(self, orig, process, seed: int, forward, backward) -> None:
        """Where values differ, run the sample once more on each side under a path
        recorder; if the device run dispatched other ops or dtypes, that is the cause."""
        # values only: a dtype or shape difference stays ``metadata`` (the first real
        # difference; another path is then its consequence)
        failed = [p for p in (forward, backward) if p is not None and p.category == "fail"
                  and p.judgement.cause == Cause.MISMATCH]
        if not failed:
            return
        with_grads = backward is not None

        def run(tree, device_type, sync):
            def go():
                r = _call(self.fn, tree, process, seed, sync, device_type=device_type)
                out_idx = _diff_leaves(r.value) if with_grads and r.exc is None else []
                if out_idx and _grad_inputs(r.tree):
                    leaves = _leaves(r.value)
                    _grads(r, out_idx, [torch.ones_like(leaves[i]) for i in out_idx], seed, sync)
            return record_path(go)

        cpu_path = run(_map(orig, _copy), "cpu", None)
        why = path_difference(cpu_path, run(device_tree(orig, self.device), self.device_type, self._sync),
                              self.device_type)
        if why is None:
            return
        with self.adapter.clean() as clean:  # injected faults: is the path difference theirs?
            if clean and path_difference(cpu_path, run(device_tree(orig, self.device), self.device_type,
                                                       self._sync), self.device_type) == why:
                for part in failed:  # the clean device takes the same other path
                    part.judgement.detail = f"{part.judgement.detail}; note: {why} (as on the clean device)"
                return
        for part in failed:
            part.judgement.cause = Cause.DEVICE_PATH
            part.judgement.detail = f"{why}; {part.judgement.detail}"

    @staticmethod
    def _reaches_device(orig) -> bool:
        """Whether a sample has anything to put on the device: a tensor or a device
        argument. (A factory sample without ``device=`` makes CPU tensors anywhere.)"""
        found = []

        def note(x):
            found.append(x)
            return x

        _map(orig, note, device_fn=note)
        return bool(found)

    def _judge_runs(self, cpu: _Run, dev: _Run, kind: str, path: str,
                    golden: Optional[Callable[[], Any]], again: Optional[Callable[[], _Run]] = None):
        if dev.exc is not None:
            msg = describe_exception(dev.exc)
            if cpu.exc is not None:  # raises like the CPU: the op itself refuses this sample;
                # the op's contract, neither the device's limit nor its support (issue 48)
                return _cat("same_error", Judgement(Status.SKIP, Cause.NOT_COMPARABLE,
                                                    f"{msg} (the CPU raises {type(cpu.exc).__name__} too)"),
                            cpu_raised=True)
            cls, inner = classify_exception_chain(dev.exc, self.extra_rules)
            if cls is not None:
                if inner is not dev.exc:  # the device's error under a wrapper decides
                    msg = f"{describe_exception(inner)} (raised within {msg[:120]})"
                return _cat("unsupported", Judgement(cls[0], cls[1], msg))
            return _cat("error", Judgement(Status.ERROR, Cause.DEVICE_ERROR, msg))
        if cpu.exc is not None:  # the device accepted what the CPU refuses: a difference
            j = cpu_raised_device_returned(cpu.exc, self.extra_rules, f"{path}: ")
            return _cat("fail" if j.status == Status.FAIL else "not_comparable", j, cpu_raised=True)
        # a sample whose CPU run drew random numbers is judged by the seeded standard
        # whatever OpInfo's mark says (pca_lowrank: "output is non-deterministic")
        if self.skip_reason and kind != "random":
            return _cat("not_comparable", Judgement(Status.SKIP, Cause.UPSTREAM_SKIP, self.skip_reason))
        try:
            if kind == "uninitialised":
                return _by_status(RS.judge_uninitialised(self, cpu.value, dev.value, path))
            if kind == "random":
                return _by_status(RS.judge_seeded(self, cpu.value, dev.value, path, again))
            if self.standard in ("in-range-cast", "in-range-shift", "order-free") and path == "output":
                return _by_status(RS.judge_restricted(self, cpu.value, dev.value, path))
        except Exception as exc:  # a judging problem is ours, not the device's
            return _cat("harness", Judgement(Status.ERROR, Cause.HARNESS_ERROR,
                                             f"{path}: judging failed: {describe_exception(exc)}"))
        if path == "output":  # what the row compared, as evidence (``Answer.outputs``)
            self.outputs.update(output_kinds(cpu.value) or ("opaque",))
        try:
            exact = self.exact and kind == "values" and path == "output"
            j = compare_outputs(cpu.value, dev.value, self.device_type, path,
                                golden=golden if (self.golden_ok and kind == "values" and not exact) else None,
                                kind="exact" if exact else kind, layout=self.layout and kind == "values")
        except Exception as exc:  # a judging problem is ours, not the device's
            return _cat("harness", Judgement(Status.ERROR, Cause.HARNESS_ERROR,
                                             f"{path}: judging failed: {describe_exception(exc)}"))
        if j.status == Status.SKIP:
            return _cat("not_comparable", j)
        if kind == "values" and path == "output":
            # an output that is (or is not) its input where the CPU's is not (or is)
            aliased = input_aliasing(cpu.tree, cpu.value, dev.tree, dev.value, path)
            if aliased:
                j = worst([j, *aliased])
        if j.status == Status.PASS:
            return _cat("warn" if j.warn else "pass", j)
        return _cat("fail", j)

    # -- golden -----------------------------------------------------------------------
    def _golden_run(self, orig, process, seed) -> _Run:
        tree = _map(orig, _upcast_tensor, _upcast_dtype)
        return _call(self.fn, tree, process, seed)

    def _golden_forward(self, orig, process, seed):
        run = self._golden_cache(orig, process, seed)
        if run.exc is not None:
            raise run.exc
        return run.value

    def _golden_cache(self, orig, process, seed) -> _Run:
        if self._golden is None:  # reset per sample in run_sample
            self._golden = self._golden_run(orig, process, seed)
        return self._golden

    # -- gradients --------------------------------------------------------------------
    def _backward(self, cpu: _Run, dev: _Run, orig, process, seed: int, kind: str):
        out_idx = _diff_leaves(cpu.value)
        if not out_idx or not _grad_inputs(cpu.tree):
            return None
        dev_leaves = _leaves(dev.value)
        if len(dev_leaves) != len(_leaves(cpu.value)):
            return None  # the forward judgement already failed on structure
        gen = torch.Generator().manual_seed(seed)
        cpu_leaves = _leaves(cpu.value)
        cot = [_cotangent(cpu_leaves[i], gen) for i in out_idx]
        dev_missing = [i for i in out_idx if not (isinstance(dev_leaves[i], torch.Tensor)
                                                  and dev_leaves[i].requires_grad)]
        if dev_missing:
            return _cat("fail", Judgement(Status.FAIL, Cause.METADATA,
                                          "grad: a device output does not require grad where the CPU's does"))
        cpu_g = _grads(cpu, out_idx, cot, seed)
        dev_g = _grads(dev, out_idx, [c.to(self.device) for c in cot], seed, self._sync)

        def golden():
            g = self._golden_cache(orig, process, seed)
            if g.exc is not None:
                raise g.exc
            g_leaves = _leaves(g.value)
            if len(g_leaves) != len(cpu_leaves) or any(
                    not (isinstance(g_leaves[i], torch.Tensor) and g_leaves[i].requires_grad)
                    for i in out_idx):
                return None
            res = _grads(g, out_idx, [_upcast_tensor(c) for c in cot], seed)
            if res.exc is not None:
                raise res.exc
            return res.value

        return self._judge_runs(cpu_g, dev_g, kind, "grad", golden)


def _by_status(j: Judgement):
    if j.status == Status.SKIP:
        return _cat("not_comparable", j)
    if j.status == Status.PASS:
        return _cat("warn" if j.warn else "pass", j)
    if j.status == Status.ERROR:
        return _cat("harness", j)
    return _cat("fail", j)


def _cotangent(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A seeded random cotangent (made in float32 and cast: every dtype gets the same draw)."""
    base = torch.randn(t.shape, dtype=torch.complex64 if t.is_complex() else torch.float32,
                       generator=gen)
    return base.to(t.dtype)


def _cat(category: str, j: Judgement, cpu_raised: bool = False):
    from ..judge.aggregate import Part

    return Part(category=category, judgement=j, cpu_raised=cpu_raised)


# -- the case kind ----------------------------------------------------------------------

def wants_grads(op, dtype: torch.dtype, call: str, device_type: str) -> bool:
    if not op.supports_autograd or not call.startswith(("op", "method", "alias", "api")) \
            or call.startswith("alias_inplace"):
        return False
    if dtype.is_floating_point:
        return True
    if dtype.is_complex:
        try:
            return bool(op.supports_complex_autograd("cpu"))
        except Exception:
            return False
    return False


def run_case(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    _setup(ctx)
    start = time.perf_counter()
    e = oi.OpEntry(api=case["api"], key=case["key"], db=case.get("db", "op_db"),
                   call=case.get("call", "op"))
    op = e.opinfo
    dtype_name = case["dtype"]
    dtype = getattr(torch, dtype_name)
    device_type = ctx.adapter.type
    claimed = dtype_name in oi.claimed_dtypes(op, device_type)
    base = {"claimed": claimed, "emulated": ctx.adapter.emulated}
    # OpInfo's own skip / xfail of test_dtypes here: the claims are known to be off
    dtype_note = oi.upstream_skip(op, device_type, dtype, oi.DTYPE_TESTS)
    if dtype_note:
        base["note"] = dtype_note
    # OpInfo's own skip / expected failure of the device-vs-CPU test: the values it marks
    # are not compared. What stays comparable is judged by a restricted standard
    # (judge.restricted: metadata of uninitialised outputs, seeded draws of random ops,
    # in-range elements of casts and shifts, unique's values in sorted order); anything
    # else is reported as skip with OpInfo's reason. The samples run on the device either
    # way, so that dtype discovery learns whether the device takes the dtype. A mark of
    # the variant-consistency test only (a method against its function on one device)
    # does not concern the device against the CPU: values are compared, with a note. For
    # an in-place variant it may also flag samples the variant cannot take (addbmm_ on a
    # broadcast input, which the CPU silently resizes): those samples, and only those, are
    # skipped with the mark (``_Case.resize_mark``); the rest compare, since the device and
    # the CPU run the same in-place call (logical_not_ keeps its input's dtype where the
    # function returns bool: the variant test's concern, not the device's).
    kind = oi.output_kind(op)
    compare_mark, variant_mark = oi.compare_marks(op, device_type, dtype, e.call)
    every_mark = oi.every_test_mark(op, device_type, dtype)
    if every_mark:  # a whole test class skipped (a redundant entry): its samples compare
        said = f"{every_mark}; not applied to the values: it names no test, so it says nothing of the device's"
        # the test_dtypes note above is the same mark, read for dtype discovery: said once
        base["note"] = said if base.get("note") == every_mark else _join(base.get("note"), said)
    standard = oi.restricted_standard(op) if compare_mark else None
    skip_reason = compare_mark
    if compare_mark and (standard is not None or kind != "values"):
        skip_reason = None
    if standard == "storage-kept":
        base["note"] = _join(base.get("note"), f"{compare_mark}; not applied: the sweep copies "
                             "the whole storage, which that expected failure loses")
    resize_mark = None
    if variant_mark and not compare_mark:
        if e.call.startswith(("inplace", "alias_inplace")) and kind == "values":
            resize_mark = variant_mark
            base["note"] = _join(base.get("note"), f"{variant_mark}; applied only to samples whose "
                                 "in-place call resizes its input on the CPU: it compares a variant "
                                 "with its function, not the device with the CPU")
        else:
            base["note"] = _join(base.get("note"), f"{variant_mark}; not applied: it compares a "
                                 "variant with its function, not the device with the CPU")
    grads = (bool(case.get("grads", True)) and (skip_reason is None or standard == "storage-kept")
             and (compare_mark is None or standard == "storage-kept")
             and wants_grads(op, dtype, e.call, device_type))
    if grads:
        base["claimed_backward"] = dtype_name in oi.claimed_dtypes(op, device_type, backward=True)
    try:
        samples = oi.make_samples(op, dtype, requires_grad=grads,
                                  reference=bool(case.get("reference")))
    except Exception as exc:
        return dict(base, status="skip", cause=Cause.HARNESS_ERROR.value,
                    detail=f"OpInfo cannot make {dtype_name} samples: {describe_exception(exc)}",
                    seconds=time.perf_counter() - start)
    # made before the sample limit: the first samples may hold one element only
    every = samples
    nan = oi.nan_sample(op, samples, dtype) if samples and case.get("sample") is None else None
    extreme = (oi.extreme_last_sample(op, samples, dtype) if samples and case.get("sample") is None
               else None)
    samples = oi.capped(samples, case.get("max_samples"))
    if samples and oi.layout_fixed(op, e.call):
        # a layout-fixing op is also asked on a non-contiguous input: contiguous samples
        # alone cannot tell a device that makes every output contiguous
        try:
            samples = list(samples) + [samples[0].noncontiguous()]
        except Exception:
            pass  # a sample that has no non-contiguous form: the others are judged
        # ... and on a dense permuted one: the layout preserve_format keeps
        permuted = next((p for p in map(oi.permuted_sample, every) if p is not None), None)
        if permuted is not None:
            samples = list(samples) + [permuted]
    if nan is not None:  # a device that drops NaN in a max / min / sum shows on it
        samples = list(samples) + [nan]
    if extreme is not None:  # a device that skips a reduction's last element shows on it
        samples = list(samples) + [extreme]
    # the function, its method and in-place variants and aliases alike (an in-place
    # index_add_ or a Tensor.sort has the same kernel bugs to show as the function)
    own = (oi.bug_samples(op, dtype) if case.get("sample") is None
           and e.call.startswith(("op", "method", "inplace", "alias")) else [])
    extremal = (oi.extremal_sample(op, every, dtype) if case.get("sample") is None and e.call == "op"
                and kind == "values" else None)
    if own:  # the project's own inputs that show kernel bugs (duplicate indices, ties, rounding)
        if grads:
            def grad(t):
                return (t.detach().requires_grad_(True)
                        if isinstance(t, torch.Tensor) and t.is_floating_point() else t)
            own = [s.transform(grad) for s in own]
    # a strided input for elementwise ops (layout-fixing ops have theirs above): a kernel
    # that ignores an input's strides shows on it
    strided = (oi.strided_sample(op, every, dtype) if case.get("sample") is None and e.call == "op"
               and not oi.layout_fixed(op, e.call) else None)
    if strided is not None:
        own = list(own) + [strided]
    if extremal is not None:
        # NaN / inf where the op defines them: the forward only (a gradient at an infinity
        # is 0 or NaN by cancellation, within a correct device's rounding of its factors)
        own = list(own) + [extremal.transform(lambda t: t.detach() if isinstance(t, torch.Tensor) else t)]
    if own:
        samples = list(samples) + own
        base["note"] = _join(base.get("note"), f"{len(own)} sample(s) are torchparity's own: "
                             "inputs that show kernel bugs OpInfo's samples lack (duplicate indices, "
                             "ties, values a conversion must round, logits that overflow, a strided "
                             "input, NaN / inf)")
    first = 0  # a generated test file judges one sample (run.standalone): its index kept
    if case.get("sample") is not None:
        first = int(case["sample"])
        samples = samples[first:first + 1]
    if not samples:
        return dict(base, status="skip", cause=Cause.HARNESS_ERROR.value,
                    detail=f"OpInfo makes no {dtype_name} samples",
                    seconds=time.perf_counter() - start)
    runner = _Case(ctx, e, dtype, kind, grads, skip_reason,
                   standard=standard if standard != "storage-kept" else None, mark=compare_mark)
    runner.resize_mark = resize_mark
    outcomes = []
    for i, s in enumerate(samples, start=first):
        try:
            outcomes.append(runner.run_sample(s, i))
        except Exception as exc:  # a harness problem with one sample
            # ... unless the device refuses the sample's inputs themselves (a layout the
            # emulated device cannot hold, moving a sparse CSR input): that is its answer
            cls = classify_exception(type(exc).__name__, str(exc), runner.extra_rules)
            if cls is not None:
                outcomes.append(SampleOutcome(forward=_cat("unsupported", Judgement(
                    cls[0], cls[1], f"sample {i}: {describe_exception(exc)}"))))
                continue
            outcomes.append(SampleOutcome(forward=_cat("harness", Judgement(
                Status.ERROR, Cause.HARNESS_ERROR, f"sample {i}: {describe_exception(exc)}"))))
    result = aggregate(outcomes)
    kind = "random" if runner.random_seen and runner.kind == "values" else runner.kind
    detail = result.detail
    if runner.standards_used and result.status != "skip":
        used = ", ".join(sorted(runner.standards_used))
        why = f"; OpInfo: {compare_mark}" if compare_mark else ""
        detail = f"[standard: {used}{why}] {detail}"[:600]
    out = dict(base, status=result.status, cause=result.cause, detail=detail,
               metric=result.metric, counts=result.counts, kind=kind,
               outputs=sorted(runner.outputs) if runner.outputs else None,
               seconds=time.perf_counter() - start)
    if case.get("footprint"):  # check asks for it; sweep rows stay as they were
        out["footprint"] = sample_footprint(ctx, runner.fn, samples)
    return out


def _join(a: Optional[str], b: str) -> str:
    return f"{a}; {b}" if a else b


# samples run again for the footprint, at most: the first one that computes ends it
FOOTPRINT_SAMPLES = 8


def sample_footprint(ctx: WorkerContext, fn, samples) -> List[Dict[str, Any]]:
    """The ops more device runs of ``samples`` dispatch (``api.footprint`` entries), one
    recorder over them: the first sample that computes on the device ends it, else up to
    ``FOOTPRINT_SAMPLES``. The first sample alone is not enough: ``atleast_3d`` of a 4-d
    input returns the input itself, while of a 2-d one it is a view on the device."""
    from ..api.footprint import UNRECORDED, FootprintRecorder

    recorder = FootprintRecorder(ctx.adapter.type, api_objects=[fn])
    completed = 0
    for sample in samples[:FOOTPRINT_SAMPLES]:
        try:
            # a sample the device refuses to hold (a sparse CSR input on the emulated
            # device) was judged as such already; it adds nothing to the footprint
            tree = device_tree(oi.sample_parts(sample), ctx.adapter.torch_device)
        except Exception:
            continue
        for attempt in (tree, None):
            if attempt is None:  # an in-place sample on a leaf that requires grad: as the
                tree = _map(tree, lambda t: t.detach())  # judged run, retried without autograd
            seed_device(oi.SEED, ctx.adapter.type)
            try:
                with recorder:
                    inp, args, kwargs = tree
                    fn(inp, *args, **kwargs)
                    ctx.adapter.synchronize()
                completed += 1
            except Exception as exc:  # the judged run already reported it; ops up to it are recorded
                if attempt is not None and _grad_error(exc):
                    continue
            break
        if from_footprint(recorder.entries()) == DEVICE_COMPUTE:
            break
    entries = [e.model_dump(mode="json") for e in recorder.entries()]
    if not completed:  # no sample ran to its end: what the op does was not seen, not host-only
        entries.append({"op": UNRECORDED, "dtypes": [], "count": 1, "source": "api"})
    return entries


@register("opinfo")
def handle_opinfo(ctx: WorkerContext, case: Dict[str, Any]) -> Dict[str, Any]:
    return Answer.model_validate(run_case(ctx, case)).wire()

