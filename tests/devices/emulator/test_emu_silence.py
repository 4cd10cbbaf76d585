"""Silence is not support: in a generated profile an op without a rule runs, but the call is
recorded as unverified (and so is plumbing in a dtype the profile model does not know)."""

from __future__ import annotations

from .helpers import run_python

GENERATED = """\
name: gen
device_type: npu
generated: {command: test}
ops:
  aten.mul: {dtypes: [float32]}
"""


def test_unruled_calls_are_recorded_in_a_generated_profile(tmp_path):
    out = run_python("""
        from torchparity.devices.emulator import unverified_ops
        with unverified_ops() as seen:
            x = torch.ones(3, device="npu")
            y = x * 2
            torch.special.i0(y)
            torch.empty(2, dtype=torch.float8_e4m3fn, device="npu")
        print(sorted(seen))
        with unverified_ops() as seen:
            (x * 3).clone()
        print(sorted(seen))
        """, tmp_path, profile_yaml=GENERATED)
    first, second = out.splitlines()
    assert first == "[('aten.empty', 'float8_e4m3fn'), ('aten.i0', 'float32')]"
    assert second == "[]"  # a ruled op and bookkeeping: nothing unverified


def test_a_hand_written_allow_is_a_claim(tmp_path):
    out = run_python("""
        from torchparity.devices.emulator import unverified_ops
        with unverified_ops() as seen:
            torch.special.i0(torch.ones(3, device="npu"))
        print(sorted(seen))
        """, tmp_path, profile_yaml=GENERATED.replace("generated: {command: test}\n", ""))
    assert out.strip() == "[]"


def test_a_pass_through_a_silent_op_says_unverified(tmp_path):
    out = run_python("""
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.results.models import Text
        from torchparity.scenarios.registry import Scenario
        T = Text(en="x", zh="x")
        adapter = get_adapter("emu:" + PROFILE.path)
        adapter.setup()
        sc = Scenario(api="torch.special.i0", id="i0", description=T, expected=T,
                      fn=lambda d, t: torch.special.i0(torch.ones(3, device=d, dtype=t)))
        r, _ = execute(sc, "float32", adapter)
        print(r.status.value if hasattr(r.status, "value") else r.status, r.unverified)
        print(r.detail)
        sc = Scenario(api="torch.mul", id="mul", description=T, expected=T,
                      fn=lambda d, t: torch.ones(3, device=d, dtype=t) * 2)
        r, _ = execute(sc, "float32", adapter)
        print(r.unverified)
        """, tmp_path, profile_yaml=GENERATED)
    lines = out.splitlines()
    assert lines[0] == "pass ['aten.i0[float32]']"
    assert lines[1].endswith("; no capability fact: the emulated pass is unverified (aten.i0[float32])")
    assert lines[2] == "None"
