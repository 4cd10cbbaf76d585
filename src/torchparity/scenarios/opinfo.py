"""The OpInfo adapter: PyTorch's own operator database as scenarios.

``torch.testing._internal.common_methods_invocations.op_db`` describes ~700 operators as
data: a callable, sample inputs per dtype, the dtypes each device type claims, and the
upstream test suite's skips. This module maps API names to those entries (both sides
resolved to objects where possible), makes samples (on the CPU, seeded), reads OpInfo's
own skips for the tests that compare a device with the CPU, and names the ops whose
outputs are random or uninitialised. It knows nothing about devices beyond a device-type
string and ``Tensor.to``.

Public: :func:`opinfo_for`, :func:`all_opinfo_apis`, :func:`entries`, :func:`entry`,
:func:`make_samples`, :func:`upstream_skip`, :func:`claimed_dtypes`, :func:`output_kind`,
:func:`api_compute_ops`.
"""

from __future__ import annotations

import functools
import random
import unittest
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import torch

from ..dtypes import dtype_name

SEED = 0

# the upstream tests whose skips matter here: test_compare_cpu runs every sample on the
# device and on the CPU and compares (what a sweep does); test_variant_consistency_eager
# compares method / in-place / alias variants with the function (honoured when a sweep
# runs such a variant); test_dtypes checks the claimed dtypes (used by dtype discovery).
COMPARE_TESTS = ("test_compare_cpu",)
VARIANT_TESTS = ("test_variant_consistency_eager",)
DTYPE_TESTS = ("test_dtypes",)
TEST_CLASS = "TestCommon"

# Families whose outputs cannot be compared element-wise, by OpInfo key (name.variant).
# Random ops are also detected per sample at run time (the CPU run drew from the CPU
# generator); the list covers samples that draw their randomness some other way. Deterministic variants (feature_alpha_dropout.without_train,
# native_dropout_backward with a given mask) are not in it.
RANDOM_OPS = frozenset({
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal",
    "normal.in_place", "normal.number_mean", "uniform", "rand_like", "randn_like",
    "randint_like", "randint", "randn", "rand", "randperm", "nn.functional.dropout",
    "nn.functional.dropout1d", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d", "nn.functional.multi_head_attention_forward",
})
UNINITIALISED_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
    "resize_", "resize_as_",
})



@dataclass(frozen=True)
class OpEntry:
    """One OpInfo entry as reached through one API name."""

    api: str  # the dotted API name results are filed under
    key: str  # "name" or "name.variant_test_name": unique in its database
    db: str  # "op_db" | "python_ref_db"
    # which callable: "op" | "method" | "inplace" | "alias:<name>" | ... | "api:<dotted name>"
    # (an API that reaches the entry through its footprint, called with its samples)
    call: str = "op"

    @property
    def opinfo(self):
        return _index().by_key[(self.db, self.key)]

    def callable(self):
        op = self.opinfo
        kind, _, alias = self.call.partition(":")
        if kind == "op":
            return op.op
        if kind == "method":
            return op.method_variant
        if kind == "inplace":
            return op.inplace_variant
        if kind == "api":  # another API reaching this entry through its footprint
            from ..api.resolve import resolve

            return resolve(alias).obj
        for a in op.aliases:
            if a.name == alias:
                return {"alias": a.op, "alias_method": a.method_variant,
                        "alias_inplace": a.inplace_variant}[kind]
        raise KeyError(f"{self.key}: no callable {self.call!r}")

    @property
    def variant(self) -> str:
        """The sample-set / variant label results are keyed by."""
        return self.key if self.call == "op" else f"{self.key}[{self.call}]"


def _load_dbs():
    from torch.testing._internal.common_methods_invocations import op_db, python_ref_db

    _lighten_input_tracking()
    return {"op_db": op_db, "python_ref_db": python_ref_db}


def _lighten_input_tracking() -> None:
    """Make OpInfo's sample tracking cheap outside unit tests.

    Every ``sample_inputs`` call looks for the running unittest method to attach the
    current sample to it (a debugging aid), through ``inspect.stack()``. That resolves a
    module for every frame, and a frame whose file does not exist (``<frozen runpy>``
    under ``python -m``, as in every worker) makes it scan all of ``sys.modules``: ~50 ms
    per call, most of a sweep's time. The replacement walks the frames directly and finds
    the same test method, if there is one.
    """
    import sys

    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core

    if getattr(common_utils.extract_test_fn, "_torchparity", False):
        return

    def current_test_method():
        try:
            frame = sys._getframe(1)
        except ValueError:
            return None
        while frame is not None:
            owner = frame.f_locals.get("self") if "self" in frame.f_code.co_varnames else None
            if isinstance(owner, unittest.TestCase):
                try:
                    _, cls_name, test_name = owner.id().rsplit(".", 2)
                except ValueError:
                    cls_name, test_name = "", ""
                if cls_name == type(owner).__name__ and test_name.startswith("test"):
                    return getattr(owner, test_name).__func__
            frame = frame.f_back
        return None

    current_test_method._torchparity = True
    for module in (common_utils, core):  # core imported the name
        if hasattr(module, "extract_test_fn"):
            module.extract_test_fn = current_test_method


def _key(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _lookup(dotted: str) -> Any:
    obj: Any = torch
    parts = dotted.split(".")
    if parts[0] == "torch":
        parts = parts[1:]
    for p in parts:
        try:
            obj = getattr(obj, p)
        except Exception:
            return None
    return obj


def _api_name(op) -> str:
    """The public dotted name of an OpInfo's function variant."""
    name = op.name
    if name.startswith("torch."):
        return name
    if name.startswith("_refs."):
        return "torch." + name
    obj = _lookup(name)
    if obj is not None and (callable(obj) or isinstance(obj, property)) and not isinstance(obj, torch.dtype):
        return "torch." + name
    if hasattr(torch.Tensor, name):
        return "torch.Tensor." + name
    op_obj = getattr(op, "op", None)
    for module in ("torch", "torch.nn.functional", "torch.Tensor"):
        nm = getattr(op_obj, "__name__", None)
        if nm and _lookup(f"{module}.{nm}") is op_obj:
            return f"{module}.{nm}"
    return "torch." + name


class _Index:
    def __init__(self):
        self.dbs = _load_dbs()
        self.by_key: Dict[Tuple[str, str], Any] = {}
        self.by_name: Dict[str, List[OpEntry]] = {}
        self.by_id: Dict[int, List[OpEntry]] = {}
        self.keep: List[Any] = []  # objects whose id() is indexed stay alive
        self.canonical: List[OpEntry] = []
        for db, ops in self.dbs.items():
            for op in ops:
                key = _key(op)
                self.by_key[(db, key)] = op
                api = _api_name(op)
                main = OpEntry(api=api, key=key, db=db, call="op")
                if db == "op_db":
                    self.canonical.append(main)
                self._add_name(api, main)
                self._add_obj(op.op, main)
                if op.method_variant is not None:
                    e = OpEntry(api=f"torch.Tensor.{op.name}", key=key, db=db, call="method")
                    self._add_obj(op.method_variant, e)
                    self._add_name(e.api, e)
                if op.inplace_variant is not None:
                    e = OpEntry(api=f"torch.Tensor.{op.name}_", key=key, db=db, call="inplace")
                    self._add_obj(op.inplace_variant, e)
                    self._add_name(e.api, e)
                for a in op.aliases:
                    for kind, fn, api_name in (
                            ("alias", a.op, "torch." + a.name),
                            ("alias_method", a.method_variant, f"torch.Tensor.{a.name}"),
                            ("alias_inplace", a.inplace_variant, f"torch.Tensor.{a.name}_")):
                        if fn is None:
                            continue
                        e = OpEntry(api=api_name, key=key, db=db, call=f"{kind}:{a.name}")
                        self._add_obj(fn, e)
                        self._add_name(api_name, e)

    def _add_name(self, name: str, e: OpEntry) -> None:
        lst = self.by_name.setdefault(name, [])
        if e not in lst:
            lst.append(e)

    def _add_obj(self, obj: Any, e: OpEntry) -> None:
        if obj is None or isinstance(obj, (str, int, float)):
            return
        # lambdas and per-entry wrappers are not API objects; builtins and functions are
        if getattr(obj, "__name__", "") == "<lambda>":
            return
        self.keep.append(obj)
        lst = self.by_id.setdefault(id(obj), [])
        if e not in lst:
            lst.append(e)


@functools.lru_cache(maxsize=1)
def _index() -> _Index:
    return _Index()


def opinfo_for(api_name: str, *, include_refs: bool = True) -> List[OpEntry]:
    """The OpInfo entries that exercise ``api_name`` (empty when there are none).

    Matches by object identity first (``torch.absolute`` reaches the ``abs`` entry through
    its alias, ``torch.Tensor.add_`` the in-place variant of ``add``), then by name.
    Entries are filed under the name asked for.
    """
    idx = _index()
    found: List[OpEntry] = []
    obj = _lookup(api_name) if api_name.startswith("torch") else None
    if obj is not None and not isinstance(obj, (torch.dtype, str, int, float, bool)):
        found.extend(idx.by_id.get(id(obj), []))
    for e in idx.by_name.get(api_name, []):
        if e not in found:
            found.append(e)
    if not found:  # a dunder operator reaches its op's entry, called as the operator
        found = _dunder_entries(api_name)
    if not include_refs:
        found = [e for e in found if e.db == "op_db"]
    out: List[OpEntry] = []
    for e in found:
        e2 = OpEntry(api=api_name, key=e.key, db=e.db, call=e.call)
        if e2 not in out:
            out.append(e2)
    return out


# Tensor operators whose OpInfo entry is filed under the op's name (issue 45, item 7):
# ``a // b`` is ``Tensor.__floordiv__``, OpInfo's ``floor_divide``. The operator is called
# with the entry's samples (``call="api:<name>"``), as ``a.__floordiv__(b)``; reversed
# operators without an entry of their own are left out (their samples would be reversed).
DUNDER_OPS = {
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div.no_rounding_mode",
    "__div__": "div.no_rounding_mode", "__floordiv__": "floor_divide", "__mod__": "remainder",
    "__pow__": "pow", "__matmul__": "matmul", "__and__": "bitwise_and", "__or__": "bitwise_or",
    "__xor__": "bitwise_xor", "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
    "__invert__": "bitwise_not", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__eq__": "eq", "__ne__": "ne", "__pos__": "positive",
}


def _dunder_entries(api_name: str) -> List[OpEntry]:
    prefix = "torch.Tensor."
    if not api_name.startswith(prefix):
        return []
    key = DUNDER_OPS.get(api_name[len(prefix):])
    if key is None or ("op_db", key) not in _index().by_key:
        return []
    return [OpEntry(api=api_name, key=key, db="op_db", call=f"api:{api_name}")]


def all_opinfo_apis() -> List[str]:
    """Every API name that op_db covers (function variants), sorted."""
    return sorted({e.api for e in _index().canonical})


def entries() -> List[OpEntry]:
    """One entry per op_db OpInfo, filed under its function's API name."""
    return list(_index().canonical)


def entry(db: str, key: str):
    """The OpInfo object for a (database, key) pair."""
    return _index().by_key[(db, key)]


# -- samples ----------------------------------------------------------------------------

def seed_all(seed: int = SEED) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass


def make_samples(opinfo, dtype: torch.dtype, *, requires_grad: bool = False,
                 reference: bool = False, seed: int = SEED) -> list:
    """Seeded samples made on the CPU (moving them is the runner's job)."""
    seed_all(seed)
    fn = opinfo.reference_inputs if reference else opinfo.sample_inputs
    samples = list(fn("cpu", dtype, requires_grad=requires_grad))
    if output_kind(opinfo) == "random":
        # a random op's draws are compared with a second seeded device run: its largest
        # samples first, so a sample limit keeps draws that can differ (bernoulli's first
        # samples hold 3 and 1 elements: two unseeded runs agree on them by chance)
        samples.sort(key=lambda s: -_numel(s.input))
    return samples


def capped(samples: list, limit: Optional[int]) -> list:
    """At most ``limit`` samples: the first ``limit - 1`` in OpInfo's order and the largest of
    the rest, so a cap still judges a sample with many elements. OpInfo's first samples are
    often a 0-d and a 5-element tensor drawn from one seed: relu's two hold negative values
    only, and a device wrong on positive inputs passed ``--max-samples 2``."""
    if not limit or len(samples) <= int(limit):
        return list(samples)
    head, rest = list(samples[: int(limit) - 1]), samples[int(limit) - 1:]
    largest = max(range(len(rest)), key=lambda i: (_numel(rest[i].input), -i))
    return head + [rest[largest]]


def _numel(x: Any) -> int:
    if isinstance(x, torch.Tensor):
        return x.numel()
    if isinstance(x, (list, tuple)):
        return sum(_numel(t) for t in x)
    return 0


# ops whose contract propagates NaN through a max / min / sum (OpInfo names): their
# samples include one with a NaN (:func:`nan_sample`), so a device that drops NaN shows
NAN_PROPAGATING = frozenset({
    "sum", "max", "min", "amax", "amin", "maximum", "minimum", "aminmax", "mean", "prod",
    "nn.functional.softmax", "logsumexp",
})


def propagates_nan(opinfo) -> bool:
    return opinfo.name in NAN_PROPAGATING


def nan_sample(opinfo, samples: list, dtype: torch.dtype):
    """The first sample whose floating input has 2+ elements, with its middle element NaN
    (None: not a NaN-propagating op, not a floating dtype, or no such sample)."""
    if not propagates_nan(opinfo) or not dtype.is_floating_point:
        return None
    for s in samples:
        x = s.input
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() >= 2:
            def put(t, _x=x):
                if t is _x:
                    t = t.detach().clone()
                    t.view(-1)[t.numel() // 2] = float("nan")
                    return t.requires_grad_(_x.requires_grad)
                return t
            return s.transform(put)
    return None


# reductions that pick an extreme (OpInfo names): their samples include one whose extreme
# sits in the last element (:func:`extreme_last_sample`), so a device that skips the last
# element of a reduction shows; random samples put it there by chance only
EXTREME_PICKING = {"argmin": "min", "amin": "min", "min": "min", "aminmax": "min",
                   "argmax": "max", "amax": "max", "max": "max"}


def extreme_last_sample(opinfo, samples: list, dtype: torch.dtype):
    """The first sample whose input has 2+ elements, its last element (in memory order,
    hence last along every dimension) made the input's new minimum or maximum, as the op
    picks; None for other ops, bool, or where no such value fits the dtype."""
    end = EXTREME_PICKING.get(opinfo.name)
    if end is None or opinfo.variant_test_name == "binary" or dtype == torch.bool \
            or dtype.is_complex:
        return None
    for s in samples:
        x = s.input
        if not (isinstance(x, torch.Tensor) and x.numel() >= 2 and x.is_contiguous()):
            continue
        v = (x.min() - 1) if end == "min" else (x.max() + 1)
        v = v.item()
        if not dtype.is_floating_point:
            info = torch.iinfo(dtype)
            if not info.min <= int(v) <= info.max:
                return None

        def put(t, _x=x, _v=v):
            if t is _x:
                t = t.detach().clone()
                t.view(-1)[-1] = _v
                return t.requires_grad_(_x.requires_grad)
            return t
        return s.transform(put)
    return None


def map_tensors(tree: Any, fn) -> Any:
    """Apply ``fn`` to every tensor in nested lists / tuples / dicts (others kept)."""
    if isinstance(tree, torch.Tensor):
        return fn(tree)
    if isinstance(tree, list):
        return [map_tensors(t, fn) for t in tree]
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(map_tensors(t, fn) for t in tree)
    if isinstance(tree, dict):
        return {k: map_tensors(v, fn) for k, v in tree.items()}
    return tree


def sample_parts(sample) -> Tuple[Any, tuple, dict]:
    return sample.input, tuple(sample.args), dict(sample.kwargs)


# -- skips ------------------------------------------------------------------------------

def decorator_skip(dec: Any, device_type: str) -> Optional[str]:
    """Why this decorator would skip (or expect to fail) the test; None if it would not."""
    if dec is unittest.expectedFailure:
        return "expected failure"
    if dec is unittest.skip:  # used bare: skips with no reason
        return "skipped"
    qual = getattr(dec, "__qualname__", "")
    if qual == "skip.<locals>.decorator":
        for cell in getattr(dec, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, str):
                return f"skipped: {value}"
        return "skipped"
    if qual in ("onlyCUDA", "onlyCPU", "onlyMPS", "onlyXPU"):
        only = qual[4:].lower()
        return None if device_type == only else f"runs only on {only}"
    if type(dec).__name__.startswith("skip") and hasattr(dec, "dep") and hasattr(dec, "reason"):
        dev = getattr(dec, "device_type", None)
        if dec.dep and (dev is None or dev == device_type):
            return f"skipped: {dec.reason}"
    return None


def upstream_skip(opinfo, device_type: str, dtype: torch.dtype,
                  tests: Sequence[str] = COMPARE_TESTS, every_test: Optional[bool] = None) -> Optional[str]:
    """OpInfo's own skip / expected failure for one of ``tests`` here, as a reason.
    ``every_test``: None, any mark; False, only marks that name the test; True, only marks
    that name none (a whole test class skipped: upstream's redundant entries)."""
    from torch.testing._internal.opinfo.core import DecorateInfo

    for info in opinfo.decorators:
        if not isinstance(info, DecorateInfo):
            continue
        if every_test is not None and (info.test_name is None) != every_test:
            continue
        for test in tests:
            try:
                active = info.is_active(TEST_CLASS, test, device_type, dtype, {})
            except Exception:
                active = False
            if not active:
                continue
            for dec in info.decorators:
                why = decorator_skip(dec, device_type)
                if why:
                    where = f" on {info.device_type}" if info.device_type else ""
                    which = info.test_name or "every test"
                    return f"OpInfo '{_key(opinfo)}' marks {which}{where} for {dtype_name(dtype)}: {why}"
    return None


def compare_skip(opinfo, device_type: str, dtype: torch.dtype, call: str) -> Optional[str]:
    """OpInfo's own skip / expected failure of the device-vs-CPU tests of a variant
    (``call`` "op", "method", ...): the tests a sweep case stands for. A mark that names no
    test is not one of them (``compare_marks``)."""
    tests = COMPARE_TESTS + (VARIANT_TESTS if call != "op" else ())
    return upstream_skip(opinfo, device_type, dtype, tests, every_test=False)


def compare_marks(opinfo, device_type: str, dtype: torch.dtype, call: str) -> Tuple[Optional[str], Optional[str]]:
    """(OpInfo's skip / expected failure of ``test_compare_cpu``, of the variant
    consistency test when ``call`` is a variant): the two reasons apart, since only the
    first concerns a device against the CPU. Only marks that name the test count: a skip
    of a whole test class (``DecorateInfo(skip, 'TestCommon')``) says nothing of a device's
    values; upstream uses it for redundant entries (round.decimals_3 "already tested with
    decimals_0", polygamma_n_k "Redundant tests"), whose samples still compare
    (``every_test_mark`` names it, for a note)."""
    compare = upstream_skip(opinfo, device_type, dtype, COMPARE_TESTS, every_test=False)
    variant = (upstream_skip(opinfo, device_type, dtype, VARIANT_TESTS, every_test=False)
               if call != "op" else None)
    return compare, variant


def every_test_mark(opinfo, device_type: str, dtype: torch.dtype) -> Optional[str]:
    """OpInfo's skip of every test of the device-vs-CPU test's class here, as a reason
    (not a comparison mark: ``compare_marks``)."""
    return upstream_skip(opinfo, device_type, dtype, COMPARE_TESTS, every_test=True)


# Ops whose test_compare_cpu mark leaves part of the output comparable (judge.restricted):
# integer casts (overflow is undefined), shifts (amounts outside [0, bits) are undefined),
# unique (order undefined when sorted=False).
CAST_OPS = frozenset({"byte", "char", "short", "int", "long"})
SHIFT_OPS = frozenset({"bitwise_left_shift", "bitwise_right_shift"})
ORDER_FREE_OPS = frozenset({"unique"})
# upstream's test_compare_cpu copies a sample with ``.to(device)``, which keeps only the
# view; these entries read storage outside it, hence its expected failure. The sweep's
# copies keep the whole storage (``run.opinfo_handler._copy``): values compare as usual.
STORAGE_KEPT_OPS = frozenset({"as_strided.partial_views"})


def restricted_standard(opinfo) -> Optional[str]:
    """How a sample of an op whose values OpInfo marks not comparable is still judged:
    ``in-range-cast`` | ``in-range-shift`` | ``order-free`` | ``storage-kept`` | None."""
    key = _key(opinfo)
    if key in STORAGE_KEPT_OPS:
        return "storage-kept"
    if opinfo.name in CAST_OPS:
        return "in-range-cast"
    if opinfo.name in SHIFT_OPS:
        return "in-range-shift"
    if opinfo.name in ORDER_FREE_OPS:
        return "order-free"
    return None


KNOWN_DEVICE_TYPES = ("cpu", "cuda", "xpu", "mps", "hpu")


def claimed_dtypes(opinfo, device_type: str, backward: bool = False) -> List[str]:
    """The dtypes OpInfo claims for ``device_type`` (the CPU's for unknown device types)."""
    dt = device_type if device_type in KNOWN_DEVICE_TYPES else "cpu"
    try:
        found = opinfo.supported_backward_dtypes(dt) if backward else opinfo.supported_dtypes(dt)
    except Exception:
        return []
    return sorted(dtype_name(d) for d in found)


# ops whose contract fixes the layout of their result: views (the result's strides and
# storage offset follow from the input's), ``*_like`` and ``clone`` with preserve_format,
# ``contiguous``, ``empty_strided``; in-place variants return their input (aliasing)
LAYOUT_OPS = frozenset({
    "T", "mT", "as_strided", "chunk", "diagonal", "expand", "movedim", "narrow", "permute",
    "select", "split", "squeeze", "t", "transpose", "unbind", "unflatten", "unfold", "unsqueeze",
    "view", "view_as", "clone", "contiguous", "empty_strided", "new_empty_strided", "to",
})


def permuted_sample(sample):
    """``sample`` with its input tensor laid out with its first two dims swapped in memory
    (same shape and values, dense but not contiguous): the layout ``preserve_format`` keeps,
    unlike OpInfo's ``noncontiguous()`` (not dense: its ``*_like`` results are contiguous
    on every backend). None when the input has fewer than two dims of size > 1."""
    x = sample.input
    if not isinstance(x, torch.Tensor) or x.dim() < 2 or x.size(0) < 2 or x.size(1) < 2:
        return None

    def put(t, _x=x):
        if t is _x:
            return t.detach().transpose(0, 1).contiguous().transpose(0, 1).requires_grad_(_x.requires_grad)
        return t
    return sample.transform(put)


def layout_fixed(opinfo, call: str = "op") -> bool:
    """Whether strides, storage offset and aliasing of the op's outputs are compared."""
    return (opinfo.name in LAYOUT_OPS or opinfo.name.endswith("_like")
            or call.startswith(("inplace", "alias_inplace")))


# -- the project's own samples: inputs that show kernel bugs -----------------------------
# Added where OpInfo's samples lack them (issue 45), after the sample cap, labelled in the
# row's detail as the project's own: duplicate indices for accumulating index / scatter
# ops, ties where the op's contract says which of them wins, values a conversion into a
# lower-precision dtype must round (to nearest even).
DUPLICATE_INDEX_OPS = ("index_add", "scatter_add", "index_put")
# ops whose winner among ties is documented: the first index (argmax / argmin, max / min
# along a dim) or the input order (a stable sort)
TIE_OPS = ("argmax", "argmin", "max", "min", "sort", "argsort")
# conversions: OpInfo name -> the target dtypes of the sample (None: the op's own)
CONVERSION_OPS = {"to": (torch.bfloat16, torch.float16), "bfloat16": (None,), "half": (None,)}
# softmax and kin over logits whose exp overflows in the dtype (1000 overflows float64's
# exp, 100 float32's and bfloat16's, 12 float16's): a kernel that does not subtract the
# row's max before exp returns NaN there; a correct one the same as on the moderate row
SOFTMAX_OPS = ("softmax", "log_softmax", "nn.functional.softmin", "special.softmax", "special.log_softmax")


def _rounding_values(dtype: torch.dtype) -> torch.Tensor:
    """float32 values a conversion to bfloat16 / float16 must round, ties to even among
    them: 1 + 2^-8 (a bfloat16 tie, to 1), 1 + 3 x 2^-8 (a tie, up), 1 + 2^-11 and
    1 + 3 x 2^-11 (float16 ties), values just above and below halfway, negatives."""
    base = [1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -9, 1 + 2 ** -7 + 2 ** -9, 1 + 2 ** -11,
            1 + 3 * 2 ** -11, 1 + 2 ** -12, 3.14159265, -(1 + 3 * 2 ** -8), -(1 + 3 * 2 ** -11),
            1000.0 + 2 ** -4 + 2 ** -6, 0.1]
    return torch.tensor(base, dtype=torch.float64).to(dtype)


def bug_samples(opinfo, dtype: torch.dtype) -> List[Any]:
    """The project's own samples for ``opinfo`` in ``dtype`` (see above); [] for other ops."""
    from torch.testing._internal.opinfo.core import SampleInput

    name, variant = opinfo.name, getattr(opinfo, "variant_test_name", "")
    out: List[Any] = []
    numeric = dtype != torch.bool and not dtype.is_complex
    if name in DUPLICATE_INDEX_OPS and numeric:
        gen = torch.Generator().manual_seed(0)

        def vals(*shape, low=-4):
            return torch.randint(low, 5, shape, generator=gen).to(dtype)
        # what accumulates is positive: duplicates whose values cancel (3 and -3 on one
        # index) would hide a kernel that keeps one write per index
        if name == "index_add":
            out.append(SampleInput(vals(5, 3), args=(0, torch.tensor([0, 2, 0, 0, 4]), vals(5, 3, low=1))))
        elif name == "scatter_add":
            out.append(SampleInput(vals(4, 3), args=(0, torch.tensor([[0, 1, 0], [0, 1, 0], [2, 1, 0]]),
                                                     vals(3, 3, low=1))))
        elif name == "index_put":
            out.append(SampleInput(vals(6), args=((torch.tensor([1, 1, 3, 1]),), vals(4, low=1)),
                                   kwargs={"accumulate": True}))
    if name in TIE_OPS and numeric and variant != "binary":
        x = torch.tensor([[1, 3, 2, 3, 0, 3], [0, 0, 2, 2, 1, 0]]).to(dtype)
        if name in ("argmax", "argmin"):
            out += [SampleInput(x), SampleInput(x, args=(1,))]
        elif name in ("max", "min"):
            out.append(SampleInput(x, args=(1,)))
        else:
            out += [SampleInput(x, kwargs={"stable": True}),
                    SampleInput(x, kwargs={"stable": True, "descending": True})]
    if name in CONVERSION_OPS and dtype in (torch.float32, torch.float64):
        x = _rounding_values(dtype)
        for target in CONVERSION_OPS[name]:
            out.append(SampleInput(x, args=(target,)) if target is not None else SampleInput(x))
    if name in SOFTMAX_OPS and not variant and dtype.is_floating_point:
        # values exact in every floating dtype: 1000 +- 8 and a moderate row
        x = torch.tensor([[1000.0, 1008.0, 992.0, 1000.0], [-1.0, 0.0, 1.0, 2.0]], dtype=dtype)
        if name == "nn.functional.softmin":
            x = -x
        out.append(SampleInput(x, args=(1,)))
    return out


# NaN and infinities where the op defines them: the elementwise ufuncs, whose OpInfo
# entries upstream asks on extremal values (TestUnaryUfuncs / TestBinaryUfuncs, CPU
# included) unless it marks that test skipped or failing for the CPU in the dtype
EXTREMAL_TESTS = {"UnaryUfuncInfo": ("TestUnaryUfuncs", "test_reference_numerics_extremal"),
                  "BinaryUfuncInfo": ("TestBinaryUfuncs", "test_reference_numerics_extremal_values")}
EXTREMAL_VALUES = (float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0)


def _extremal_test(opinfo, dtype: torch.dtype) -> Optional[Tuple[str, str]]:
    """(test class, test) upstream asks ``opinfo`` on NaN / inf with, where it runs on the
    CPU in ``dtype``; None otherwise."""
    from torch.testing._internal.opinfo.core import DecorateInfo

    test = next((t for cls in type(opinfo).__mro__ for name, t in EXTREMAL_TESTS.items()
                 if cls.__name__ == name), None)
    if test is None or not dtype.is_floating_point:
        return None
    for info in opinfo.decorators:
        if not isinstance(info, DecorateInfo):
            continue
        try:
            active = info.is_active(test[0], test[1], "cpu", dtype, {})
        except Exception:
            active = False
        if active and any(decorator_skip(dec, "cpu") for dec in info.decorators):
            return None
    return test


def strided_sample(opinfo, samples: list, dtype: torch.dtype):
    """The largest sample (2+ elements) of an elementwise ufunc (UnaryUfuncInfo /
    BinaryUfuncInfo), every tensor of it made non-contiguous (OpInfo's ``noncontiguous()``:
    the same values every other element of a larger storage): a kernel that reads a
    strided input as if it were contiguous returns other values. None for other ops (a
    layout-fixing op already gets one) and where no sample fits."""
    if not any(cls.__name__ in EXTREMAL_TESTS for cls in type(opinfo).__mro__):
        return None
    fit = [s for s in samples if isinstance(s.input, torch.Tensor) and s.input.dtype == dtype
           and s.input.numel() >= 2]
    if not fit:
        return None
    try:
        return max(fit, key=lambda x: x.input.numel()).noncontiguous()
    except Exception:
        return None


def extremal_sample(opinfo, samples: list, dtype: torch.dtype):
    """The largest sample (6+ elements) of an elementwise ufunc upstream asks on extremal
    values, its input's first elements (in memory order) made NaN, inf, -inf, -0, 0, 1;
    the other operands and keyword arguments as OpInfo made them. None for other ops."""
    if _extremal_test(opinfo, dtype) is None:
        return None
    fit = [s for s in samples if isinstance(s.input, torch.Tensor) and s.input.dtype == dtype
           and s.input.numel() >= len(EXTREMAL_VALUES)]
    if not fit:
        return None
    s = max(fit, key=lambda x: x.input.numel())

    def put(t, _x=s.input):
        if t is _x:
            t = t.detach().clone()
            t.view(-1)[: len(EXTREMAL_VALUES)] = torch.tensor(EXTREMAL_VALUES, dtype=t.dtype)
            return t.requires_grad_(_x.requires_grad)
        return t
    try:
        return s.transform(put)
    except Exception:
        return None  # an input that cannot be written in place (an expanded view)


# OpInfo names whose floating outputs have exactly one right answer: conversions, copies,
# selections and permutations of input elements (sorts, max / min, gathers, flips), sign
# and integral rounding. A correct chip agrees bit for bit (NaN with NaN, -0 with 0), so
# they are judged exact, not within a precision's tolerance (issue 45, item 4).
EXACT_OPS = frozenset({
    "to", "double", "float", "half", "bfloat16", "clone", "contiguous", "type_as",
    "sort", "msort", "argsort", "topk", "kthvalue", "median", "nanmedian", "mode", "max", "min",
    "amax", "amin", "aminmax", "maximum", "minimum", "fmax", "fmin", "cummax", "cummin",
    "gather", "index_select", "take", "take_along_dim", "flip", "fliplr", "flipud", "roll",
    "rot90", "cat", "stack", "hstack", "vstack", "dstack", "column_stack", "narrow_copy",
    "masked_select", "repeat", "tile", "unique", "unique_consecutive", "where", "masked_fill",
    "index_fill", "tril", "triu", "diag", "diag_embed", "neg", "abs", "sign", "floor",
    "ceil", "trunc", "nn.functional.relu", "repeat_interleave", "index_copy",
})


def exact_output(opinfo) -> bool:
    """Whether ``opinfo``'s outputs are judged bit for bit (``EXACT_OPS``; round only
    without decimals)."""
    return opinfo.name in EXACT_OPS or (opinfo.name == "round" and not getattr(opinfo, "variant_test_name", ""))


def output_kind(opinfo) -> str:
    """values | random | uninitialised, from the op's family."""
    if opinfo.name in UNINITIALISED_OPS:
        return "uninitialised"
    if _key(opinfo) in RANDOM_OPS or getattr(opinfo, "has_nondeterministic_output", False):
        return "random"
    return "values"


# -- footprint --------------------------------------------------------------------------

def first_sample_dtype(opinfo, preferred: Iterable[str] = ("float32", "float64", "int64")) -> Optional[torch.dtype]:
    claimed = claimed_dtypes(opinfo, "cpu")
    for name in preferred:
        if name in claimed:
            return getattr(torch, name)
    return getattr(torch, claimed[0]) if claimed else None


def api_compute_ops(api_name: str, dtype: Optional[str] = None) -> Optional[List[str]]:
    """The aten compute ops the API dispatches on its first OpInfo sample (CPU run).

    None when no OpInfo entry covers the API or no sample runs. Views, copies and
    allocations are left out (``api.footprint.compute_ops``). Used to turn vendor docs
    into capability profiles: an API whose list is exactly one op lends that op the
    API's documented dtypes.
    """
    from ..api.footprint import FootprintRecorder, compute_ops

    found = opinfo_for(api_name, include_refs=False) or opinfo_for(api_name)
    for e in found:
        op = e.opinfo
        dt = getattr(torch, dtype) if dtype else first_sample_dtype(op)
        if dt is None:
            continue
        try:
            samples = make_samples(op, dt)
        except Exception:
            continue
        fn = e.callable()
        for s in samples[:1]:
            inp, args, kwargs = sample_parts(s)
            if e.call.startswith(("inplace", "alias_inplace")):
                inp = map_tensors(inp, lambda t: t.clone())
            recorder = FootprintRecorder("cpu", api_objects=[fn])
            try:
                with recorder:
                    fn(inp, *args, **kwargs)
            except Exception:
                continue
            return sorted({x.op for x in compute_ops(recorder.entries())})
    return None
