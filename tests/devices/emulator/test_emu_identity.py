"""The emulated device answers the chip API as the profile's chip does (chips/identity.yaml):
name, properties, SoC version, CANN release; torchparity's own reports still say emulated."""

from __future__ import annotations

import pytest

from torchparity.devices.profiles import Profile, chip_identity, load_profile
from torchparity.errors import ProfileError

from .helpers import run_python


def test_identity_of_the_seed_environment():
    ident = chip_identity(load_profile("ascend-a2"))
    assert (ident.device_name, ident.soc_version, ident.cann) == ("Ascend910B3", 223, "8.5.0")
    assert "emulated" not in ident.device_name


@pytest.mark.parametrize("profile,prefix", [("ascend-a2", "Ascend910B"),
                                            ("ascend-a3", "Ascend910_93"),
                                            ("ascend-950dt", "Ascend950")])
def test_supported_devices_prefix(profile, prefix):
    # torch_npu.testing's SupportedDevices cuts the name to 10 characters, to 12 for
    # "Ascend910_" names and to 9 for "Ascend950..." names
    name = chip_identity(load_profile(profile)).device_name
    cut = name[:10]
    if cut == "Ascend910_":
        cut = name[:12]
    elif cut.startswith("Ascend950"):
        cut = name[:9]
    assert cut == prefix


def test_a_profile_without_identity_keeps_its_own_name():
    assert chip_identity(Profile(name="mine", device_name="X1")).device_name == "X1"
    assert chip_identity(Profile(name="mine")).device_name == "mine (emulated)"
    assert chip_identity(Profile(name="mine", identity="ascend-a2")).soc_version == 223
    with pytest.raises(ProfileError, match="names identity 'nope'"):
        chip_identity(Profile(name="mine", identity="nope"))


def test_device_module_answers_as_the_chip(tmp_path):
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        p = torch.npu.get_device_properties(0)
        print(torch.npu.get_device_name(0), p.name, p.cube_core_num, p.vector_core_num,
              p.total_memory > 0)
        print(torch.npu.utils.get_soc_version(), torch.npu.utils.get_cann_version(),
              torch.npu.utils._is_gte_cann_version("8.3.RC1"),
              torch.npu.utils._is_gte_cann_version("9.1.0"))
        print(adapter.device_name(), adapter.info().emulated)
        """, tmp_path)
    lines = out.splitlines()
    assert lines[0] == "Ascend910B3 Ascend910B3 20 40 True"
    assert lines[1] == "223 8.5.0 True False"
    assert lines[2] == "Ascend910B3 (emulated) True"


def test_device_module_members_torch_npu_tests_touch(tmp_path):
    # legacy tensor types, _get_device_index and get_cann_version per module, as torch_npu has
    out = run_python("""
        import torch
        from torchparity.devices import get_adapter
        get_adapter("emu:ascend-a2").setup()
        t = torch.npu.FloatTensor(2, 3)
        print(t.device.type, t.dtype, tuple(t.shape), isinstance(t, torch.npu.FloatTensor),
              isinstance(t.cpu(), torch.npu.FloatTensor), isinstance(t, torch.npu.HalfTensor))
        print(torch.npu.LongTensor([1, 2]).tolist(), torch.npu._get_device_index("npu:0"),
              torch.npu._get_device_index(None, optional=True))
        for bad in ("npu0", torch.device("cpu")):
            try:
                torch.npu._get_device_index(bad, optional=True)
            except (RuntimeError, ValueError) as exc:
                print(type(exc).__name__, str(exc).splitlines()[0][:40])
        u = torch.npu.get_device_properties(0).uuid
        print(len(str(u)), len(u.bytes))
        print(repr(torch.npu.utils.get_cann_version("DRIVER")),
              torch.npu.utils.get_cann_version())
        """, tmp_path, timeout=600)
    lines = out.splitlines()
    assert lines[0] == "npu torch.float32 (2, 3) True False False"
    assert lines[1] == "[1, 2] 0 0"
    assert lines[2].startswith("RuntimeError Invalid device string")
    assert lines[3] == "ValueError Expected a npu device, but got: cpu"
    assert lines[4] == "36 16"
    assert lines[5] == "'' 8.5.0"
