"""``torch_npu.testing.common_utils``: tensor makers and skip decorators of Ascend's tests.

Semantics as in torch_npu (Ascend/pytorch torch_npu/testing/common_utils.py), written anew:
``create_common_tensor((np_dtype, npu_format, shape), lo, hi)`` draws uniform numpy data and
returns a CPU tensor and its copy on the device (``npu_format`` -1: left as is, any other
value goes through ``torch_npu.npu_format_cast``, which the emulator does not emulate);
``SupportedDevices([...])`` skips a test unless the device name, cut to 10 characters (12
for "Ascend910_..." names, 9 for "Ascend950..."), is listed — on the emulated device the
name is the profile's chip's (``emu:ascend-a2``: "Ascend910B3", cut "Ascend910B").
"""

import functools
import os
import unittest
from contextlib import contextmanager
from itertools import product
from typing import List

import numpy as np
import torch
import torch_npu

PERF_TEST_ENABLE = os.getenv("PERF_TEST_ENABLE", "").upper() in ("ON", "1", "YES", "TRUE", "Y")


@contextmanager
def freeze_rng_state():
    state = torch.get_rng_state()
    try:
        yield
    finally:
        torch.set_rng_state(state)


def iter_indices(tensor):
    if tensor.dim() == 0:
        return range(0)
    if tensor.dim() == 1:
        return range(tensor.size(0))
    return product(*(range(n) for n in tensor.size()))


def is_iterable(obj):
    try:
        iter(obj)
    except TypeError:
        return False
    return True


def get_npu_device():
    index = os.environ.get("SET_NPU_DEVICE")
    return "npu:0" if index is None else f"npu:{index}"


def set_npu_device():
    device = get_npu_device()
    torch.npu.set_device(device)
    return device


def _to_device(array, device, npu_format):
    cpu = torch.from_numpy(array)
    dev = torch.from_numpy(array).to(device)
    if npu_format != -1:
        dev = torch_npu.npu_format_cast(dev, npu_format)
    return cpu, dev


def create_common_tensor(item, minValue, maxValue, device=None):
    dtype, npu_format, shape = item[0], item[1], item[2]
    data = np.random.uniform(minValue, maxValue, shape).astype(dtype)
    return _to_device(data, device or get_npu_device(), npu_format)


def create_dtype_tensor(shape, dtype, npu_format=-1, min_value=-5, max_value=5, no_zero=False,
                        device=None):
    if dtype == torch.bool:
        data = np.random.randint(0, 2, size=shape).astype(bool)
    elif dtype == torch.half:
        data = np.random.uniform(min_value, max_value, shape).astype(np.float16)
    elif dtype == torch.float:
        data = np.random.uniform(min_value, max_value, shape).astype(np.float32)
    else:
        data = np.random.randint(min_value, max_value + 1, size=shape).astype(np.int32)
    if no_zero:
        data = np.where(data != 0, data, np.ones_like(data))
    fmt = npu_format if dtype in (torch.float, torch.half) else -1
    return _to_device(data, device or get_npu_device(), fmt)


def test_2args_broadcast(fn):
    """``fn`` on two broadcasting pairs, on the CPU and on the device: [[cpu, npu], ...]."""
    device = get_npu_device()
    out = []
    for xs, ys in (((2, 3, 4, 5), (1, 1, 1)), ((2, 3, 4, 5), (4, 5))):
        x = np.random.rand(*xs).astype(np.float32)
        y = np.random.rand(*ys).astype(np.float32)
        cpu = fn(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        dev = fn(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)).to("cpu").numpy()
        out.append([cpu, dev])
    return out


test_2args_broadcast.__test__ = False  # a helper, not a test


def check_operators_in_prof(expected_operators, prof, unexpected_operators=None):
    """Whether every expected operator (and no unexpected one) appears in the profile."""
    unexpected = unexpected_operators or []
    averages = prof.key_averages()
    if not averages:
        print("torch profiling is empty, please check it")
        return None
    for item in averages:
        key = item.key.replace("cached_", "")
        if key in unexpected:
            return False
        if key in expected_operators:
            expected_operators.remove(key)
    return not expected_operators


class SkipIfNoLapack:
    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not torch._C.has_lapack:
                raise unittest.SkipTest("PyTorch compiled without Lapack")
            fn(*args, **kwargs)
        return wrapper


def _device_name_key():
    name = torch_npu.npu.get_device_name(0)
    key = name[:10]
    if key == "Ascend910_":
        return name[:12]
    if key.startswith("Ascend950"):
        return name[:9]
    return key


class SupportedDevices:
    def __init__(self, supported_devices: List[str]) -> None:
        self.supported_devices = supported_devices

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(slf, *args, **kwargs):
            key = _device_name_key()
            if key not in self.supported_devices:
                raise unittest.SkipTest(f"Only run on {self.supported_devices!r}, current "
                                        f"device is {key}.")
            return fn(slf, *args, **kwargs)
        return wrapper


class SkipIfNotGteCANNVersion:
    def __init__(self, base_version, module="CANN"):
        self.base_version = base_version
        self.module = module

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(slf, *args, **kwargs):
            if not torch_npu.npu.utils._is_gte_cann_version(self.base_version,
                                                            module=self.module):
                current = torch_npu.utils.get_cann_version(module=self.module)
                raise unittest.SkipTest(f"Only run on {self.base_version} or greater, current "
                                        f"cann version is {current}.")
            return fn(slf, *args, **kwargs)
        return wrapper


def _create_scaling_models_optimizers(device="npu", optimizer_ctor=torch.optim.SGD,
                                      optimizer_kwargs=None):
    """Two equal two-layer models and their optimizers: one to scale, one as control."""
    control = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)).to(device=device)
    scaling = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)).to(device=device)
    with torch.no_grad():
        for c, s in zip(control.parameters(), scaling.parameters()):
            s.copy_(c)
    kwargs = dict({"lr": 1.0}, **(optimizer_kwargs or {}))
    return (control, scaling, optimizer_ctor(control.parameters(), **kwargs),
            optimizer_ctor(scaling.parameters(), **kwargs))


def _create_scaling_case(device="npu", dtype=torch.float, optimizer_ctor=torch.optim.SGD,
                         optimizer_kwargs=None):
    data = [(torch.randn((8, 8), dtype=dtype, device=device),
             torch.randn((8, 8), dtype=dtype, device=device)) for _ in range(4)]
    loss_fn = torch.nn.MSELoss().npu()
    skip_iter = 2
    return _create_scaling_models_optimizers(device, optimizer_ctor, optimizer_kwargs) + (
        data, loss_fn, skip_iter)
