"""Twelve classic kernel bugs, written outside torchparity from docs/faults.md alone.

This module was written against the documented interface only (``FAULTS``, ``wrap(fault,
op, call, fire)``, ``touches``, ``collective``, ``device``): it imports nothing from
torchparity and relies on nothing the interface does not promise (an op's arguments are
bound here by the op's own schema, as the docs say they arrive "positional as in the
schema"). Each fault is a bug real kernels have shipped with; each wrapper calls ``fire``
only when it really changed a result, so the oracle's probe counts a pair only where the
bug showed in the API's device output.

    python benchmarks/oracle.py --faults docs/examples/outsider_faults.py --no-noise \
        --apis torch.sum torch.sort ...           # see docs/faults.md, "An outsider's module"
"""

import os

import torch

FAULTS = {
    "reduce-skip-last": "sum / mean over a dim (or all) leave out the last element of the reduced extent",
    "downcast-truncate": "float32/float64 -> float16/bfloat16 conversions (_to_copy, copy_) round toward zero",
    "stride-ignored": "elementwise kernels read a non-contiguous input as if it were contiguous",
    "accumulate-drops-duplicates": "index_add / scatter_add / index_put(accumulate) keep one write per duplicate index",
    "sort-unstable": "sort(stable=True) puts equal keys in reverse input order",
    "argmax-last-tie": "argmax / argmin / max.dim / min.dim answer the last of tied extrema, not the first",
    "softmax-overflow": "softmax computed without subtracting the max: rows whose exp overflows become NaN",
    "var-biased": "var / std ignore the correction (always divide by N)",
    "floor-divide-truncates": "floor_divide / div(rounding_mode='floor') round toward zero",
    "remainder-sign-of-dividend": "remainder returns fmod (the sign of the dividend, not of the divisor)",
    "rng-ignores-seed": "random fills ignore the generator's seed (a fresh draw every call)",
    "max-memory-zero": "max_memory_allocated (and the peak in memory_stats) read 0",
    "allgather-rank-order": "all_gather returns the ranks' parts in reverse rank order",
}

_REDUCE = {"sum", "mean", "nansum"}
_ELEMENTWISE = {"add", "sub", "mul", "div", "neg", "exp", "abs", "sin", "cos", "tanh", "sigmoid", "sqrt",
                "maximum", "minimum", "relu", "log", "reciprocal", "rsub"}
_ACCUMULATE = {"index_add", "index_add_", "scatter_add", "scatter_add_", "index_put", "index_put_",
               "_index_put_impl_", "_index_put_impl"}
_ARG_EXTREMA = {"argmax", "argmin", "max", "min"}
_RANDOM = {"normal", "normal_", "uniform_", "bernoulli", "bernoulli_", "exponential_", "random_",
           "cauchy_", "log_normal_", "geometric_", "randperm", "multinomial", "rand", "randn",
           "randint", "rand_like", "randn_like", "randint_like", "poisson", "native_dropout"}
_LOW = (torch.float16, torch.bfloat16)


def _base(op_name):
    parts = op_name.replace("::", ".").split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _names(op):
    return [a.name for a in op._schema.arguments]


def _bind(op, a, k):
    """The op's arguments by schema name (``a`` positional as in the schema, ``k`` by name)."""
    got = {}
    for arg, value in zip(op._schema.arguments, a):
        got[arg.name] = value
    got.update(k)
    for arg in op._schema.arguments:
        if arg.name not in got and arg.has_default_value():
            got[arg.name] = arg.default_value
    return got


def _call_with(call, op, a, k, **changed):
    """``call`` with some of the op's arguments replaced (by schema name)."""
    a = list(a)
    k = dict(k)
    names = _names(op)
    for name, value in changed.items():
        i = names.index(name)
        if i < len(a):
            a[i] = value
        else:
            k[name] = value
    return call(*a, **k)


def _changed(old, new):
    if isinstance(old, torch.Tensor):
        return old.shape != new.shape or old.dtype != new.dtype or not torch.equal(
            torch.nan_to_num(old.to(torch.float64) if old.is_floating_point() else old),
            torch.nan_to_num(new.to(torch.float64) if new.is_floating_point() else new)) or not torch.equal(
            old.isnan() if old.is_floating_point() else old, new.isnan() if new.is_floating_point() else new)
    return any(_changed(o, n) for o, n in zip(old, new))


def touches(fault, op_name):
    base = _base(op_name)
    name = op_name.replace("::", ".")
    return {
        "reduce-skip-last": base in _REDUCE,
        "downcast-truncate": base in ("_to_copy", "copy_", "to"),
        "stride-ignored": base in _ELEMENTWISE,
        "accumulate-drops-duplicates": base in _ACCUMULATE,
        "sort-unstable": base == "sort",
        "argmax-last-tie": base in _ARG_EXTREMA,
        "softmax-overflow": base in ("_softmax", "softmax", "_log_softmax"),
        "var-biased": base in ("var", "std", "var_mean", "std_mean"),
        "floor-divide-truncates": base in ("floor_divide", "floor_divide_", "div", "div_"),
        "remainder-sign-of-dividend": base in ("remainder", "remainder_"),
        "rng-ignores-seed": base in _RANDOM,
        "allgather-rank-order": name.startswith("c10d.allgather") or name.startswith("c10d._allgather"),
    }.get(fault, False)


def wrap(fault, op, call, fire=None):
    fire = fire or (lambda: None)
    base = _base(op._schema.name)
    if not touches(fault, op._schema.name):
        return None
    maker = _MAKERS.get(fault)
    return maker(op, call, fire, base) if maker else None


# -- the bugs ------------------------------------------------------------------------
def _reduce_skip_last(op, call, fire, base):
    names = _names(op)
    if "self" not in names:
        return None

    def run(*a, **k):
        out = call(*a, **k)
        got = _bind(op, a, k)
        x = got["self"]
        if not isinstance(x, torch.Tensor) or x.numel() < 2 or not isinstance(out, torch.Tensor):
            return out
        dims = got.get("dim")
        if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
            flat = x.reshape(-1)
            short = flat.narrow(0, 0, flat.numel() - 1)
            if base == "mean":  # the kernel divides by N but summed N-1 elements
                wrong = (short.sum(dtype=out.dtype) / flat.numel()).to(out.dtype)
            else:
                wrong = short.sum(dtype=out.dtype).to(out.dtype)
            wrong = wrong.reshape(out.shape)
        else:
            dims = [dims] if isinstance(dims, int) else list(dims)
            d = dims[-1] % x.dim()
            if x.size(d) < 2:
                return out
            short = x.narrow(d, 0, x.size(d) - 1)
            wrong = _call_with(call, op, a, k, self=short)
            if base == "mean":
                wrong = wrong * ((x.size(d) - 1) / x.size(d))
            wrong = wrong.to(out.dtype)
        if wrong.shape == out.shape and _changed(out, wrong):
            out.copy_(wrong)
            fire()
        return out
    return run


def _downcast_truncate(op, call, fire, base):
    def truncate(src, dst_dtype):
        src = src.to(torch.float32)  # float64 sources: first to float32, then cut
        keep = 16 if dst_dtype == torch.bfloat16 else 13
        finite = src.isfinite()
        cut = (src.contiguous().view(torch.int32) >> keep << keep).view(torch.float32)
        if dst_dtype == torch.float16:
            # the cut value converted exactly (its 10-bit mantissa fits) unless it is
            # subnormal or out of range in half; keep the right answer there
            return torch.where(finite & (cut.abs() >= 2 ** -14), cut, src).to(dst_dtype)
        return torch.where(finite, cut, src).to(dst_dtype)

    if base in ("_to_copy", "to"):
        def convert(*a, **k):
            out = call(*a, **k)
            x = a[0] if a else k.get("self")
            if (isinstance(out, torch.Tensor) and isinstance(x, torch.Tensor)
                    and x.dtype in (torch.float32, torch.float64) and out.dtype in _LOW and x.numel()):
                wrong = truncate(x, out.dtype).reshape(out.shape)
                if _changed(out, wrong):
                    out.copy_(wrong)
                    fire()
            return out
        return convert
    if base == "copy_":
        def copy(*a, **k):
            got = _bind(op, a, k)
            dst, src = got["self"], got["src"]
            out = call(*a, **k)
            if (isinstance(src, torch.Tensor) and src.dtype in (torch.float32, torch.float64)
                    and dst.dtype in _LOW and src.numel()):
                wrong = truncate(src, dst.dtype).expand(dst.shape) if src.dim() <= dst.dim() else None
                if wrong is not None and _changed(dst, wrong):
                    dst.copy_(wrong)
                    fire()
            return out
        return copy
    return None


def _stride_ignored(op, call, fire, base):
    tensor_args = [a.name for a in op._schema.arguments if str(a.type) == "Tensor"]
    if not tensor_args or op._schema.is_mutable:
        return None

    def misread(t):
        if t.is_contiguous() or t.numel() < 2:
            return None
        need = t.storage_offset() + t.numel()
        if t.untyped_storage().nbytes() < need * t.element_size():
            return None
        strides, acc = [], 1
        for s in reversed(t.shape):
            strides.append(acc)
            acc *= s
        return t.as_strided(t.shape, tuple(reversed(strides)), t.storage_offset())

    def run(*a, **k):
        out = call(*a, **k)
        got = _bind(op, a, k)
        swapped = {n: misread(got[n]) for n in tensor_args if isinstance(got.get(n), torch.Tensor)}
        swapped = {n: v for n, v in swapped.items() if v is not None}
        if not swapped or not isinstance(out, torch.Tensor):
            return out
        wrong = _call_with(call, op, a, k, **swapped)
        if isinstance(wrong, torch.Tensor) and wrong.shape == out.shape and _changed(out, wrong):
            out.copy_(wrong)
            fire()
        return out
    return run


def _accumulate_drops(op, call, fire, base):
    def run(*a, **k):
        got = _bind(op, a, k)
        self_ = got.get("self")
        snapshot = self_.clone() if isinstance(self_, torch.Tensor) else None
        out = call(*a, **k)
        target = out if isinstance(out, torch.Tensor) else self_
        if snapshot is None or not isinstance(target, torch.Tensor):
            return out
        if base.startswith("index_add"):
            dim, index, src = got["dim"], got["index"], got["source"]
            alpha = got.get("alpha", 1)
            if index.numel() == index.unique().numel():
                return out
            wrong = snapshot.index_copy(dim, index, snapshot.index_select(dim, index) + alpha * src)
        elif base.startswith("scatter_add"):
            dim, index, src = got["dim"], got["index"], got["src"]
            if snapshot.dim() == 0 or index.numel() == 0:
                return out
            src = src.narrow(dim, 0, index.size(dim)) if src.shape != index.shape else src
            for d in range(index.dim()):
                if src.size(d) != index.size(d):
                    src = src.narrow(d, 0, index.size(d))
            wrong = snapshot.scatter(dim, index, snapshot.gather(dim, index) + src)
        else:  # index_put(accumulate=True)
            if not got.get("accumulate"):
                return out
            indices, values = got["indices"], got["values"]
            try:
                wrong = snapshot.index_put(indices, snapshot[tuple(indices)] + values, accumulate=False)
            except (IndexError, RuntimeError, TypeError):
                return out
        if wrong.shape == target.shape and _changed(target, wrong):
            target.copy_(wrong)
            fire()
        return out
    return run


def _sort_unstable(op, call, fire, base):
    if "stable" not in _names(op):
        return None

    def run(*a, **k):
        out = call(*a, **k)
        got = _bind(op, a, k)
        if not got.get("stable"):
            return out
        x = got["self"]
        dim = got.get("dim", -1)
        if x.dim() == 0 or x.numel() < 2:
            return out
        d = dim % x.dim()
        n = x.size(d)
        values, indices = out[0], out[1]
        flipped = x.flip(d)
        v2, i2 = torch.sort(flipped, dim=d, descending=bool(got.get("descending")), stable=True)
        i2 = (n - 1) - i2
        if _changed(indices, i2):
            indices.copy_(i2)
            values.copy_(v2)
            fire()
        return out
    return run


def _argmax_last_tie(op, call, fire, base):
    names = _names(op)
    if "dim" not in names or "self" not in names:
        return None

    def run(*a, **k):
        out = call(*a, **k)
        got = _bind(op, a, k)
        x, dim = got["self"], got.get("dim")
        if not isinstance(x, torch.Tensor) or x.numel() < 2:
            return out
        if dim is None:
            flat = x.reshape(-1).flip(0)
            wrong_i = _call_with(call, op, a, k, self=flat, dim=0)
            idx = wrong_i[1] if isinstance(wrong_i, tuple) else wrong_i
            idx = (flat.numel() - 1) - idx
            target = out[1] if isinstance(out, tuple) else out
            idx = idx.reshape(target.shape)
        else:
            if x.dim() == 0:
                return out
            d = dim % x.dim()
            flipped = x.flip(d)
            got2 = _call_with(call, op, a, k, self=flipped)
            idx = got2[1] if isinstance(got2, tuple) else got2
            idx = (x.size(d) - 1) - idx
            target = out[1] if isinstance(out, tuple) else out
        if target.dtype == idx.dtype and target.shape == idx.shape and _changed(target, idx):
            target.copy_(idx)
            fire()
        return out
    return run


def _softmax_overflow(op, call, fire, base):
    def run(*a, **k):
        out = call(*a, **k)
        got = _bind(op, a, k)
        x, dim = got["self"], got["dim"]
        if not isinstance(out, torch.Tensor) or not out.is_floating_point() or x.numel() == 0:
            return out
        # the naive kernel: exp(x) in the output's dtype, then divided by the row's sum
        overflow = torch.exp(x.to(out.dtype)).isinf() if x.dim() else torch.exp(x.to(out.dtype)).isinf()
        if x.dim():
            rows = overflow.any(dim=dim % x.dim(), keepdim=True).expand_as(out)
        else:
            rows = overflow
        if rows.any():
            wrong = torch.where(rows, torch.full_like(out, float("nan")), out)
            if _changed(out, wrong):
                out.copy_(wrong)
                fire()
        return out
    return run


def _var_biased(op, call, fire, base):
    if "correction" not in _names(op) and "unbiased" not in _names(op):
        return None

    def run(*a, **k):
        out = call(*a, **k)
        if "correction" in _names(op):
            wrong = _call_with(call, op, a, k, correction=0)
        else:
            wrong = _call_with(call, op, a, k, unbiased=False)
        targets = out if isinstance(out, tuple) else (out,)
        wrongs = wrong if isinstance(wrong, tuple) else (wrong,)
        changed = False
        for t, w in zip(targets, wrongs):
            if isinstance(t, torch.Tensor) and t.shape == w.shape and _changed(t, w):
                t.copy_(w)
                changed = True
        if changed:
            fire()
        return out
    return run


def _floor_truncates(op, call, fire, base):
    names = _names(op)
    if base.startswith("div") and "rounding_mode" not in names:
        return None

    def run(*a, **k):
        got = _bind(op, a, k)
        if base.startswith("div"):
            if got.get("rounding_mode") != "floor":
                return call(*a, **k)
            snapshot = got["self"].clone() if base.endswith("_") else None
            out = call(*a, **k)
            x = snapshot if snapshot is not None else got["self"]
        else:
            snapshot = got["self"].clone() if base.endswith("_") else None
            out = call(*a, **k)
            x = snapshot if snapshot is not None else got["self"]
        other = got["other"]
        wrong = torch.div(x, other, rounding_mode="trunc")
        if isinstance(out, torch.Tensor) and wrong.shape == out.shape:
            wrong = wrong.to(out.dtype)
            if _changed(out, wrong):
                out.copy_(wrong)
                fire()
        return out
    return run


def _remainder_fmod(op, call, fire, base):
    def run(*a, **k):
        got = _bind(op, a, k)
        x = got.get("self")
        snapshot = x.clone() if base.endswith("_") and isinstance(x, torch.Tensor) else x
        out = call(*a, **k)
        other = got.get("other")
        if not isinstance(out, torch.Tensor) or not isinstance(snapshot, (torch.Tensor, int, float)):
            return out
        try:
            if isinstance(snapshot, torch.Tensor):
                wrong = torch.fmod(snapshot, other)
            else:
                wrong = torch.fmod(torch.as_tensor(snapshot, dtype=out.dtype), other)
        except (RuntimeError, TypeError):
            return out
        if wrong.shape == out.shape:
            wrong = wrong.to(out.dtype)
            if _changed(out, wrong):
                out.copy_(wrong)
                fire()
        return out
    return run


def _rng_ignores_seed(op, call, fire, base):
    def scramble(t):
        if not isinstance(t, torch.Tensor) or t.numel() < 2:
            return False
        # a draw the seed does not fix: the same distribution, another order every call
        g = torch.Generator().manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        perm = torch.randperm(t.numel(), generator=g)
        flat = t.reshape(-1)
        wrong = flat[perm].reshape(t.shape)
        if _changed(t, wrong):
            t.copy_(wrong)
            return True
        return False

    def run(*a, **k):
        out = call(*a, **k)
        outs = out if isinstance(out, tuple) else (out,)
        # native_dropout: the output and its mask move together
        if base == "native_dropout" and len(outs) == 2:
            g = torch.Generator().manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
            perm = torch.randperm(outs[0].numel(), generator=g)
            before = outs[1].clone()
            for t in outs:
                t.copy_(t.reshape(-1)[perm].reshape(t.shape))
            if not torch.equal(before, outs[1]):
                fire()
            return out
        if scramble(outs[0]):
            fire()
        return out
    return run


_MAKERS = {
    "reduce-skip-last": _reduce_skip_last,
    "downcast-truncate": _downcast_truncate,
    "stride-ignored": _stride_ignored,
    "accumulate-drops-duplicates": _accumulate_drops,
    "sort-unstable": _sort_unstable,
    "argmax-last-tie": _argmax_last_tie,
    "softmax-overflow": _softmax_overflow,
    "var-biased": _var_biased,
    "floor-divide-truncates": _floor_truncates,
    "remainder-sign-of-dividend": _remainder_fmod,
    "rng-ignores-seed": _rng_ignores_seed,
}


# -- hooks beside ops ------------------------------------------------------------------
def collective(fault, name, outputs, inputs, rank, size):
    if fault != "allgather-rank-order" or size < 2:
        return
    if name == "allgather":
        for slots in outputs:  # one list of per-rank tensors per input
            held = [t.clone() for t in slots]
            for t, part in zip(slots, reversed(held)):
                t.copy_(part)
    elif name == "allgather_into_tensor":
        out = outputs if isinstance(outputs, torch.Tensor) else outputs[0]
        parts = [p.clone() for p in out.chunk(size, dim=0)]
        for place, part in zip(out.chunk(size, dim=0), reversed(parts)):
            place.copy_(part)


def device(fault, name, value):
    if fault != "max-memory-zero":
        return value
    if name == "max_memory_allocated":
        return 0
    if name == "memory_stats" and isinstance(value, dict):
        return {k: (0 if "peak" in k else v) for k, v in value.items()}
    return value
