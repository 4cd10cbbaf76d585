"""Storage members on the emulated device: the legacy storage classes of the device module,
resizing, and storages made from a storage."""

from __future__ import annotations

import warnings

import pytest
import torch


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        yield


def test_device_module_names_its_legacy_storage_classes(dev):
    mod = getattr(torch, dev)
    x = torch.arange(6.0).to(dev)
    assert x.storage_type() is mod.FloatStorage
    assert x.storage().type() == f"torch.{dev}.FloatStorage"
    assert isinstance(x.storage(), mod.FloatStorage) and not isinstance(x.storage(), torch.FloatStorage)
    assert x.to(torch.bfloat16).storage_type() is mod.BFloat16Storage
    assert x.to(torch.complex64).storage_type() is None  # torch_npu defines no complex class
    s = mod.HalfStorage(3)
    assert (s.device.type, s.dtype, s.size()) == (dev, torch.float16, 3)


def test_member_source_normalises_the_device_module_in_type_strings(dev):
    from torchparity.scenarios.sources._member_table import PRELUDE

    ns = {"torch": torch, "device": dev, "dtype": torch.float32}
    exec(PRELUDE, ns)
    plain = ns["plain_type"]
    assert plain(f"torch.{dev}.FloatTensor") == "torch.FloatTensor"
    assert plain(f"torch_{dev}.{dev}.FloatStorage") == "torch.FloatStorage"  # torch_npu's module
    assert plain(f"torch.{dev}.sparse.FloatTensor") == "torch.sparse.FloatTensor"
    assert plain("torch.storage.TypedStorage") == "torch.storage.TypedStorage"
