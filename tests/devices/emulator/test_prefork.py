"""A rank forked from a warmed process (``devices.prefork``) sets the emulated device up as a
fresh process does: the same kernels, from a profile nobody else's changes reach."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from torchparity.devices.profiles import builtin_profiles, load_profile

# the PrivateUse1 registrations of a process that activated ascend-a2, as JSON
_REGISTERED = """
import json, os, sys, torch
if sys.argv[1] == "prefork":
    from torchparity.devices import prefork
    before = torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
    prefork("emu:ascend-a2")
    assert torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1") == before, "prefork registered"
    pid = os.fork()
    if pid:
        sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
from torchparity.devices import get_adapter
get_adapter("emu:ascend-a2").setup()
keys = ("PrivateUse1", "AutogradPrivateUse1")
regs = {k: sorted(torch._C._dispatch_get_registrations_for_dispatch_key(k)) for k in keys}
print(json.dumps(regs))
sys.stdout.flush()
os._exit(0)
"""


def _registered(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _REGISTERED, mode], capture_output=True,
                         text=True, timeout=300,
                         env=dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0"))
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_rank_forked_after_prefork_registers_what_a_fresh_process_does():
    fresh, forked = _registered("fresh"), _registered("prefork")
    assert len(fresh["PrivateUse1"]) > 500  # the structured ops' direct kernels among them
    assert forked == fresh


def test_a_loaded_profile_is_a_copy_and_a_changed_file_is_read_again(tmp_path):
    first = load_profile("ascend-a2")
    first.name = "changed by a caller"
    assert load_profile("ascend-a2").name == "ascend-a2"
    path = tmp_path / "chip.yaml"
    text = builtin_profiles()["ascend-a2"].read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    assert load_profile(str(path)).name == "ascend-a2"
    path.write_text(text.replace("name: ascend-a2", "name: my-chip", 1), encoding="utf-8")
    assert load_profile(str(path)).name == "my-chip"
