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
    from torchparity.scenarios.sources.member.cases import On

    plain = On(dev).plain_type
    assert plain(f"torch.{dev}.FloatTensor") == "torch.FloatTensor"
    assert plain(f"torch_{dev}.{dev}.FloatStorage") == "torch.FloatStorage"  # torch_npu's module
    assert plain(f"torch.{dev}.sparse.FloatTensor") == "torch.sparse.FloatTensor"
    assert plain("torch.storage.TypedStorage") == "torch.storage.TypedStorage"


def test_new_makes_an_empty_storage_on_the_device(dev):
    # C++ new() allocates with the storage's allocator, which a device storage of the
    # emulator lacks (it killed the worker with SIGSEGV)
    n = torch.arange(6.0).to(dev).untyped_storage().new()
    assert (n.device.type, n.nbytes()) == (dev, 0)
    assert torch.empty(0, device=dev).set_(n).cpu().numel() == 0
    assert torch.arange(3.0).untyped_storage().new().device.type == "cpu"  # CPU storages unchanged


def test_resize_of_device_storages_as_on_the_cpu(dev):
    """What fully_shard does to its parameters (issue 20: emulated in place, no longer an
    emulator limit); CPU storages resize as before."""
    for st in (torch.arange(6.0).to(dev).untyped_storage(), torch.arange(6.0).to(dev).storage()):
        st.resize_(48 if isinstance(st, torch.UntypedStorage) else 12)
        raw = st if isinstance(st, torch.UntypedStorage) else st.untyped()
        assert raw.nbytes() == 48 and raw.device.type == dev
    kept = torch.arange(6.0).to(dev)
    kept.untyped_storage().resize_(48)
    assert torch.equal(torch.empty(0, device=dev).set_(kept.untyped_storage(), 0, (6,), (1,)).cpu(),
                       torch.arange(6.0))
    host = torch.arange(3.0).untyped_storage()
    host.resize_(24)
    assert host.nbytes() == 24


def test_torchs_own_hook_message_for_resize_is_an_emulator_limit():
    # what torch raises where a C++ path reaches resizePrivateUse1Bytes of a Python backend
    from torchparity.devices.emulated import EmulatedAdapter
    from torchparity.results.error_rules import classify_exception

    msg = ("You should register `PrivateUse1HooksInterface`by `RegisterPrivateUse1HooksInterface` "
           "and implement `resizePrivateUse1Bytes` at the same time for PrivateUse1.")
    rows = EmulatedAdapter("emu:allow-all", "allow-all").error_patterns()
    status, cause = classify_exception("NotImplementedError", msg, rows)
    assert (status.value, cause.value) == ("skip", "emulator_limit")
    assert classify_exception("NotImplementedError", msg) is None  # an emulator limit only


def test_module_to_device_keeps_parameter_objects_as_cuda_does(dev):
    # param.data = moved: the lazy module's UninitializedParameter survives .to(device)
    # and is materialised by the first forward (it stayed a plain Parameter of shape [0])
    assert torch._has_compatible_shallow_copy_type(torch.empty(2), torch.empty(2, device=dev))
    lin = torch.nn.Linear(3, 2)
    w = lin.weight
    assert lin.to(dev).weight is w and w.device.type == dev
    lazy = torch.nn.LazyConv1d(4, 2).to(dev)
    assert isinstance(lazy.weight, torch.nn.UninitializedParameter)
    x = torch.randn(2, 3, 5)
    torch.manual_seed(0)
    ref = torch.nn.LazyConv1d(4, 2)
    out_cpu = ref(x)
    torch.manual_seed(0)
    out = lazy(x.to(dev))
    assert lazy.weight.shape == (4, 3, 2) and lazy.weight.device.type == dev
    torch.testing.assert_close(out.cpu(), out_cpu)
