"""Issue 45, second round, item 2: the member cases that convert (``Tensor.type``,
``Tensor.copy_``, ``Module.bfloat16`` / ``half``) convert values that need rounding and are
judged bit for bit: a device that truncates where it must round to nearest even fails
(before, they converted values exact in bfloat16, or nothing, within a tolerance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchparity.devices.emulator import faults

EXAMPLE = str(Path(__file__).resolve().parents[3] / "docs" / "examples" / "fault_example.py")

# a conversion bug outside the project: any float -> bfloat16 / float16 conversion (a cast
# or a copy between dtypes) truncates the mantissa
TRUNCATE = '''
import torch
FAULTS = {"cast-truncate": "float -> bfloat16 / float16 casts and copies truncate instead of rounding"}
def _cut(x, dtype):
    x32 = x.detach().to(torch.float32).contiguous()
    keep = 16 if dtype == torch.bfloat16 else 13
    return (x32.view(torch.int32) >> keep << keep).view(torch.float32).to(dtype)
def wrap(fault, op, call, fire=None):
    name = op._schema.name.split("::")[-1]
    if name == "_to_copy":
        def run(x, *a, **k):
            out = call(x, *a, **k)
            if x.is_floating_point() and x.dtype != out.dtype and out.dtype in (torch.bfloat16, torch.float16):
                cut = _cut(x, out.dtype)
                if not torch.equal(cut, out):
                    out.copy_(cut)
                    if fire:
                        fire()
            return out
        return run
    if name == "copy_":
        def run(dst, src, *a, **k):
            out = call(dst, src, *a, **k)
            if src.is_floating_point() and src.dtype != dst.dtype and dst.dtype in (torch.bfloat16, torch.float16):
                cut = _cut(src, dst.dtype)
                if not torch.equal(cut, dst):
                    dst.copy_(cut)
                    if fire:
                        fire()
            return out
        return run
    return None
'''


@pytest.fixture(scope="module")
def adapter(dev):
    from torchparity.devices import get_adapter

    a = get_adapter("emu:allow-all")
    a.setup()
    return a


@pytest.fixture
def truncate(tmp_path):
    path = tmp_path / "truncate.py"
    path.write_text(TRUNCATE)
    return str(path)


def _row(adapter, api, dtype):
    from torchparity.run.execute import execute
    from torchparity.scenarios.sources import member

    (sc,) = member.scenarios(api, None)
    return execute(sc, dtype, adapter)[0]


@pytest.mark.parametrize("api,dtype", [
    ("torch.Tensor.type", "float32"), ("torch.Tensor.type", "bfloat16"),
    ("torch.Tensor.copy_", "bfloat16"), ("torch.Tensor.copy_", "float16"),
    ("torch.nn.Module.bfloat16", "float32"), ("torch.nn.Module.half", "float32"),
])
def test_a_truncating_conversion_fails_the_member_case(adapter, truncate, api, dtype):
    assert _row(adapter, api, dtype).status == "pass"
    with faults.injecting(["cast-truncate"], modules=[truncate]):
        bad = _row(adapter, api, dtype)
    assert bad.status == "fail", bad.detail
    assert "exact" in bad.detail, bad.detail


def test_the_documented_truncation_fails_module_bfloat16(adapter):
    with faults.injecting(["convert-truncate"], modules=[EXAMPLE]):
        bad = _row(adapter, "torch.nn.Module.bfloat16", "float32")
    assert bad.status == "fail", bad.detail


@pytest.mark.parametrize("api,dtype", [("torch.Tensor.type", "float16"), ("torch.Tensor.copy_", "bfloat16"),
                                       ("torch.nn.Module.bfloat16", "float32")])
def test_exact_member_cases_pass_under_device_noise(adapter, api, dtype):
    with faults.injecting((), noise=True):
        ok = _row(adapter, api, dtype)
    assert ok.status == "pass", ok.detail
