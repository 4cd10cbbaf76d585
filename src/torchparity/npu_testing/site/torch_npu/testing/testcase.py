"""``torch_npu.testing.testcase``: Ascend's TestCase and run_tests, for the emulated device.

The comparison rules are torch_npu's (Ascend/pytorch torch_npu/testing/testcase.py), written
anew here:

- ``assertEqual(x, y, prec=None, message='', allow_inf=False, exact_dtype=None)``: tensors
  of one size whose largest absolute difference is at most ``prec`` (default
  ``self.precision``, 1e-5); NaNs in the same places; numbers within ``prec``; containers
  element by element; a string as ``prec`` is the message.
- ``assertRtolEqual(x, y, prec=1e-4, prec16=1e-3, auto_trans_dtype=False, message=None)``:
  on numpy copies of one shape and dtype, an element passes when its absolute difference
  or its difference relative to ``max(|x|, |y|) + minimum`` is at most ``prec`` (``prec16``
  for float16); it fails only when more than ``size * prec`` elements fail both ways;
  bfloat16 pairs are compared with ``torch.allclose(rtol=atol=prec16)``; bool exactly.
- ``assertWarns(call_fn, msg='')`` / ``assertNotWarn(call_fn, msg='')`` take a callable
  (not unittest's context-manager form), as torch_npu's do.
- ``setUpClass`` picks the device (``SET_NPU_DEVICE``, default npu:0); ``setUp`` seeds
  torch and ``random`` with ``SEED`` (default 666).

``run_tests()`` is ``unittest.main`` over the calling file, as in torch_npu outside CI.
"""

import os
import random
import re
import sys
import unittest
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import contextmanager
from numbers import Number
from unittest.util import strclass  # noqa: F401  (Ascend's tests import it from here)

import expecttest
import numpy as np
import torch

from .common_utils import is_iterable, iter_indices, set_npu_device  # noqa: F401

IS_IN_CI = os.getenv("IN_CI") == "1"


def run_tests():
    """Run the tests of the calling file (``unittest.main`` with the command line's argv)."""
    unittest.main(argv=sys.argv)


_RTOL_DTYPES = (np.bool_, np.uint16, np.int16, np.int32, np.float16, np.float32, np.int8,
                np.uint8, np.int64, np.float64)


class TestCase(expecttest.TestCase):
    _precision = 1e-5
    maxDiff = None
    exact_dtype = False

    @property
    def precision(self):
        return self._precision

    @precision.setter
    def precision(self, prec):
        self._precision = prec

    @classmethod
    def setUpClass(cls):
        cls.npu_device = set_npu_device()

    def setUp(self):
        seed = int(os.getenv("SEED", "666"))
        torch.manual_seed(seed)
        random.seed(seed)

    # -- relative comparison on numpy copies --------------------------------------------
    def assertRtolEqual(self, x, y, prec=1.e-4, prec16=1.e-3, auto_trans_dtype=False,
                        message=None):
        if isinstance(x, Sequence) and isinstance(y, Sequence):
            for a, b in zip(x, y):
                self.assertRtolEqual(a, b, prec, prec16, auto_trans_dtype, message)
            return
        if isinstance(x, torch.Tensor) and isinstance(y, Sequence):
            y = torch.as_tensor(y, dtype=x.dtype, device=x.device)
        elif isinstance(y, torch.Tensor) and isinstance(x, Sequence):
            x = torch.as_tensor(x, dtype=y.dtype, device=y.device)
        if torch.is_tensor(x) and torch.is_tensor(y):
            if auto_trans_dtype:
                x = x.to(y.dtype)
            if x.dtype == torch.bfloat16 and y.dtype == torch.bfloat16:
                if x.shape != y.shape:
                    self.fail("shape error!")
                if not torch.allclose(x.cpu(), y.cpu(), rtol=prec16, atol=prec16):
                    self.fail("result error!")
                return
            x = x.detach().cpu().numpy()
            y = y.detach().cpu().numpy()
        elif isinstance(x, Number) and isinstance(y, Number):
            x, y = np.array(x), np.array(y)
        if x.shape != y.shape:
            self.fail("shape error")
        if x.dtype != y.dtype:
            self.fail("dtype error")
        if x.dtype not in _RTOL_DTYPES:
            self.fail(f"required dtype in {[d.__name__ for d in _RTOL_DTYPES]}, got {x.dtype}")
        if x.dtype == np.bool_:
            if not np.equal(x, y).all():
                self.fail("result error")
            return
        tol, floor = (prec16, 6e-8) if x.dtype == np.float16 else (prec, 1e-9)
        nan_x, nan_y = np.isnan(x), np.isnan(y)
        if not np.array_equal(nan_x, nan_y):
            self.fail(message)
        err = np.abs(y - x)
        if nan_x.any():
            err[nan_x] = 0
        abs_ok = err <= tol
        rel_ok = err / (np.maximum(np.abs(x), np.abs(y)) + floor) <= tol
        if abs_ok.all() or rel_ok.all():
            return
        allowed = x.size * tol
        if np.count_nonzero(~rel_ok) > allowed and np.count_nonzero(~abs_ok) > allowed:
            self.fail("result error")

    # -- absolute comparison -------------------------------------------------------------
    def assertEqual(self, x, y, prec=None, message="", allow_inf=False, exact_dtype=None):
        if exact_dtype is None:
            exact_dtype = self.exact_dtype
        if isinstance(prec, str) and message == "":
            message, prec = prec, None
        if prec is None:
            prec = self.precision
        self._equal(x, y, prec, message, allow_inf, exact_dtype)

    def _equal(self, x, y, prec, message, allow_inf, exact_dtype):
        base = super(TestCase, self)
        if isinstance(x, Number) or isinstance(y, Number):
            self._numbers_equal(x, y, prec, message, allow_inf)
        elif isinstance(x, np.bool_) or isinstance(y, np.bool_):
            a = x.item() if isinstance(x, torch.Tensor) else x
            b = y.item() if isinstance(y, torch.Tensor) else y
            base.assertEqual(a, b, message)
        elif isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            self._tensors_equal(x, y, prec, message, allow_inf, exact_dtype)
        elif isinstance(x, (str, bytes)) and isinstance(y, (str, bytes)):
            base.assertEqual(x, y, message)
        elif type(x) is set and type(y) is set:
            base.assertEqual(x, y, message)
        elif isinstance(x, dict) and isinstance(y, dict):
            if isinstance(x, OrderedDict) and isinstance(y, OrderedDict):
                self._equal(list(x.items()), list(y.items()), prec, message, allow_inf,
                            exact_dtype)
            else:
                self._equal(set(x), set(y), prec, message, allow_inf, exact_dtype)
                keys = list(x)
                self._equal([x[k] for k in keys], [y[k] for k in keys], prec, message,
                            allow_inf, exact_dtype)
        elif is_iterable(x) and is_iterable(y):
            base.assertEqual(len(x), len(y), message)
            for a, b in zip(x, y):
                self._equal(a, b, prec, message, allow_inf, exact_dtype)
        else:
            base.assertEqual(x, y, message)

    def _numbers_equal(self, x, y, prec, message, allow_inf):
        if isinstance(x, torch.Tensor):
            x = x.item()
        if isinstance(y, torch.Tensor):
            y = y.item()
        if abs(x) == float("inf") or abs(y) == float("inf"):
            if not allow_inf:
                self.fail(f"Expected finite numeric values - x={x}, y={y}")
            super(TestCase, self).assertEqual(x, y, message)
            return
        super(TestCase, self).assertLessEqual(abs(x - y), prec, message)

    def _tensors_equal(self, x, y, prec, message, allow_inf, exact_dtype):
        base = super(TestCase, self)
        base.assertEqual(x.is_sparse, y.is_sparse, message)
        base.assertEqual(x.is_quantized, y.is_quantized, message)
        if x.is_sparse:
            x, y = self.safeCoalesce(x), self.safeCoalesce(y)
            self._dense_equal(x._indices(), y._indices(), prec, message, allow_inf, exact_dtype)
            self._dense_equal(x._values(), y._values(), prec, message, allow_inf, exact_dtype)
        elif x.is_quantized and y.is_quantized:
            self.assertEqual(x.qscheme(), y.qscheme(), prec, message, allow_inf, exact_dtype)
            self.assertEqual(x.dtype, y.dtype)
            self.assertEqual(x.int_repr().to(torch.int32), y.int_repr().to(torch.int32), prec,
                             message, allow_inf, exact_dtype)
        else:
            self._dense_equal(x, y, prec, message, allow_inf, exact_dtype)

    def _dense_equal(self, a, b, prec, message, allow_inf, exact_dtype):
        super(TestCase, self).assertEqual(a.size(), b.size(), message)
        if exact_dtype:
            self.assertEqual(a.dtype, b.dtype)
        if a.numel() == 0:
            return
        if a.device.type == "cpu" and a.dtype in (torch.float16, torch.bfloat16):
            a = a.to(torch.float32)
        b = b.to(a)
        if (a.dtype == torch.bool) != (b.dtype == torch.bool):
            raise TypeError("Was expecting both tensors to be bool type.")
        if a.dtype == torch.bool:
            a, b = a.to(torch.int), b.to(torch.int)
        diff = a - b
        if a.dtype.is_floating_point or a.dtype.is_complex:
            nan = torch.isnan(a)
            self.assertTrue(torch.equal(nan, torch.isnan(b)), message)
            diff[nan] = 0
            if allow_inf:
                inf = torch.isinf(a)
                self.assertTrue(torch.equal(inf.sign(), torch.isinf(b).sign()), message)
                diff[inf] = 0
        if diff.is_signed() and diff.dtype != torch.int8:
            diff = diff.abs()
            if diff.dtype == torch.complex64:
                diff = diff.to(torch.float)
            elif diff.dtype == torch.complex128:
                diff = diff.to(torch.double)
        self.assertLessEqual(diff.max(), prec, message)

    def assertAlmostEqual(self, x, y, places=None, msg=None, delta=None, allow_inf=None):
        prec = 10 ** (-places) if places else delta
        self.assertEqual(x, y, prec, msg, allow_inf)

    def assertNotEqual(self, x, y, prec=None, message=""):
        if isinstance(prec, str) and message == "":
            message, prec = prec, None
        if prec is None:
            prec = self.precision
        base = super(TestCase, self)
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.size() != y.size():
                base.assertNotEqual(x.size(), y.size())
            self.assertGreater(x.numel(), 0)
            y = y.type_as(x)
            nan = x != x
            if torch.equal(nan, y != y):
                if x.dtype == torch.bool and y.dtype == torch.bool:
                    x, y = x.to(torch.int), y.to(torch.int)
                diff = x - y
                if diff.is_signed():
                    diff = diff.abs()
                diff[nan] = 0
                self.assertGreaterEqual(diff.max().item(), prec, message)
        elif isinstance(x, str) and isinstance(y, str):
            base.assertNotEqual(x, y)
        elif is_iterable(x) and is_iterable(y):
            base.assertNotEqual(x, y)
        else:
            try:
                self.assertGreaterEqual(abs(x - y), prec, message)
                return
            except (TypeError, AssertionError):
                pass
            base.assertNotEqual(x, y, message)

    def assertTensorsSlowEqual(self, x, y, prec=None, message=""):
        self.assertEqual(x.size(), y.size())
        self.assertEqual(x.dtype, y.dtype)
        y = y.type_as(x)
        if x.dtype == torch.bool:
            self.assertEqual(x, y)
            return
        worst = 0
        for idx in iter_indices(x):
            worst = max(worst, abs(x[idx] - y[idx]))
        self.assertLessEqual(worst, prec, message)

    def assertObjectIn(self, obj, iterable):
        if not any(id(obj) == id(e) for e in iterable):
            raise AssertionError("object not found in iterable")

    def assertExpectedRaises(self, exc_type, call_fn, *args, **kwargs):
        subname = kwargs.pop("subname", None)
        try:
            call_fn(*args, **kwargs)
        except exc_type as exc:
            self.assertExpected(str(exc), subname)
            return
        self.fail(msg="Did not raise when expected to")

    def assertExpectedStripMangled(self, s, subname=None):
        self.assertExpected(re.sub(r"__torch__[^ ]+", "", s), subname)

    def assertNotWarn(self, call_fn, msg=""):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call_fn()
        self.assertTrue(len(caught) == 0, msg)

    def assertWarns(self, call_fn, msg=""):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call_fn()
        self.assertTrue(len(caught) > 0, msg)

    @contextmanager
    def maybeWarnsRegex(self, category, regex=""):
        """Fails on any warning but the expected ones (``category`` matching ``regex``)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", message=regex, category=category)
            try:
                yield
            finally:
                if caught:
                    self.fail("Caught unexpected warnings:\n" + "\n".join(
                        warnings.formatwarning(w.message, w.category, w.filename, w.lineno,
                                               w.line) for w in caught))

    # -- sparse helpers --------------------------------------------------------------------
    def genSparseTensor(self, size, sparse_dim, nnz, is_uncoalesced, device="cpu"):
        if not (all(size[d] > 0 for d in range(sparse_dim)) or nnz == 0):
            raise RuntimeError("invalid arguments")
        values = torch.randn(*([nnz] + list(size[sparse_dim:])), device=device)
        idx = torch.rand(sparse_dim, nnz, device=device)
        idx.mul_(torch.tensor(size[:sparse_dim]).unsqueeze(1).to(idx))
        idx = idx.to(torch.long)
        if is_uncoalesced:
            values = torch.cat([values, torch.randn_like(values)], 0)
            idx = torch.cat([idx, idx], 1)
        x = torch.sparse_coo_tensor(idx, values, torch.Size(size))
        x = x.coalesce() if not is_uncoalesced else x.detach().clone()
        return x, x._indices().clone(), x._values().clone()

    def safeToDense(self, t):
        return self.safeCoalesce(t).to_dense()

    def safeCoalesce(self, t):
        """``t.coalesce()``, checked against a coalescing done by hand."""
        tc = t.coalesce()
        self.assertEqual(tc.to_dense(), t.to_dense())
        self.assertTrue(tc.is_coalesced())
        if t._nnz() == 0:
            self.assertEqual(t._indices(), tc._indices())
            self.assertEqual(t._values(), tc._values())
            return tc
        sums = {}
        for i, v in zip(t._indices().t(), t._values()):
            key = tuple(i.tolist())
            sums[key] = sums[key] + v if key in sums else v.clone()
        keys = sorted(sums)
        vals = [sums[k] for k in keys]
        vals = t._values().new(vals) if t._values().ndimension() < 2 else torch.stack(vals)
        tg = t.new(t._indices().new(keys).t(), vals, t.size())
        self.assertEqual(tc._indices(), tg._indices())
        self.assertEqual(tc._values(), tg._values())
        if t.is_coalesced():
            self.assertEqual(tc._indices(), t._indices())
            self.assertEqual(tc._values(), t._values())
        return tg
