import pytest

from torchparity.devices import get_adapter
from torchparity.devices.backends import NpuAdapter
from torchparity.devices.environment import capture
from torchparity.devices.profiles import load_profile
from torchparity.errors import InputError, ProfileError


def test_spec_parsing():
    assert get_adapter("cpu").torch_device == "cpu"
    assert get_adapter("cuda:1").torch_device == "cuda:1"
    assert get_adapter("npu").type == "npu"
    assert get_adapter("auto").type == "cpu"  # no accelerator on this machine
    with pytest.raises(InputError):
        get_adapter("tpu")
    with pytest.raises(InputError):
        get_adapter("cuda:x")


def test_missing_backends_say_why_in_one_line():
    for spec in ("cuda", "npu", "xpu", "mps"):
        reason = get_adapter(spec).unavailable_reason()
        assert reason and "\n" not in reason and reason.startswith(spec)


def test_npu_without_torch_npu_names_the_package(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert "torch_npu is not installed" in NpuAdapter("npu").unavailable_reason()


def test_environment_capture():
    env = capture(get_adapter("cpu"))
    assert env.torch and env.python and env.os


def test_profile_errors_name_file_key_and_problem(tmp_path):
    with pytest.raises(ProfileError) as info:
        load_profile("no-such-profile")
    assert "unknown profile" in str(info.value)
    bad = tmp_path / "p.yaml"
    bad.write_text("name: x\ndevice_type: npu\nops:\n  aten.dot: {dtypes: [float99]}\n")
    with pytest.raises(ProfileError) as info:
        load_profile(bad)
    msg = str(info.value)
    assert str(bad) in msg and "ops.aten.dot.dtypes" in msg and "float99" in msg
    bad.write_text("name: x\ndevice_type: cuda\n")
    with pytest.raises(ProfileError, match="device_type"):
        load_profile(bad)
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ProfileError, match="invalid YAML"):
        load_profile(bad)


def test_profile_rules(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text("name: t\ndevice_type: npu\nops:\n  aten.dot: {dtypes: [float32]}\n"
                 "  aten.foo: {supported: false}\n")
    prof = load_profile(p)
    assert prof.allows("aten.dot.default", "float32")
    assert not prof.allows("aten.dot", "float64")
    assert not prof.allows("aten.foo", "float32")
    assert prof.allows("aten.mm", "float64")  # not listed: default allow
