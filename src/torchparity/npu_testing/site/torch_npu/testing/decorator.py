"""``torch_npu.testing.decorator``: ``Dtypes``/``Formats`` marks and ``instantiate_tests``.

As in torch_npu: ``@Dtypes(torch.float, torch.half)`` and ``@Formats(0, 3)`` mark a test;
``@instantiate_tests`` on the class replaces each marked test by one test per combination,
named ``<test>_<format>`` / ``<test>_<dtype name>``, calling it with the value bound to the
argument whose name contains "dtype" / "format" (and ``device="npu"`` when it takes
``device``).
"""

import functools
import inspect
import itertools

import torch


def feed_data(func, new_name, *args, **kwargs):
    @functools.wraps(func)
    def wrapper(self):
        return func(self, *args, **kwargs)
    wrapper.__name__ = new_name
    wrapper.__wrapped__ = func
    return wrapper


def _bind(func_args, key):
    found = [a for a in func_args if key in a]
    if len(found) > 1:
        raise RuntimeError(f"Multiple matches for {key}")
    return found[0] if found else None


def instantiate_tests(arg=None, **kwargs):
    cls = arg
    for name, func in list(cls.__dict__.items()):
        marks = {}
        if hasattr(func, "dtypes"):
            marks["dtype"] = func.dtypes
        if hasattr(func, "formats"):
            marks["format"] = func.formats
        if not marks:
            continue
        func_args = inspect.getfullargspec(func).args
        for combo in itertools.product(*marks.values()):
            bound = {"device": "npu"} if "device" in func_args else {}
            test_name = name
            for key, value in zip(marks, combo):
                test_name += "_" + (str(value).split(".")[1] if key == "dtype" else str(value))
                bound[_bind(func_args, key)] = value
            setattr(cls, test_name, feed_data(func, test_name, **bound))
        delattr(cls, name)
    return cls


class Dtypes:
    def __init__(self, *args):
        if not args:
            raise RuntimeError("No dtypes given")
        if not all(isinstance(a, torch.dtype) for a in args):
            raise RuntimeError(f"Unknown dtype in {args}")
        self.args = args

    def __call__(self, fn):
        fn.dtypes = self.args
        return fn


class Formats:
    def __init__(self, *args):
        if not args:
            raise RuntimeError("No formats given")
        self.args = args

    def __call__(self, fn):
        fn.formats = self.args
        return fn
