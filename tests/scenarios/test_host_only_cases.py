"""APIs that a source once left out as "no device question" now run a case (issue 20 item 5):
``torch.Tag`` / ``torch.Tag.name`` and ``*Storage.from_buffer`` answer on the host (evidence
``host-only``, verdict device-independent), ``SobolEngine.draw`` reaches the device through
``out=`` (evidence ``device-compute``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from torchparity.devices import get_adapter
from torchparity.run.execute import execute
from torchparity.scenarios.sources import member, runtime

CASES = {"torch.Tag": runtime, "torch.Tag.name": runtime,
         "torch.quasirandom.SobolEngine.draw": runtime,
         "torch.UntypedStorage.from_buffer": member, "torch.TypedStorage.from_buffer": member,
         # left out as "no device involved" until stop 33: a host answer is an answer
         "torch.UntypedStorage.from_file": member, "torch.TypedStorage.from_file": member,
         "torch.compiled_with_cxx11_abi": runtime}


@pytest.mark.parametrize("api", sorted(CASES))
def test_each_runs_a_case_on_the_cpu_against_itself(api):
    source = CASES[api]
    scenarios = source.scenarios(api, None)
    assert scenarios, source.why_not(api, None)
    adapter = get_adapter("cpu")
    for sc in scenarios:
        r, _ = execute(sc, sc.dtypes[0], adapter)
        assert (r.status, r.cause) == ("pass", None), (api, r.detail)


@pytest.mark.slow
def test_evidence_on_the_emulated_a2(tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "torchparity", "check", *sorted(CASES), "--device", "emu:ascend-a2",
           "-o", str(out), "-q", "--no-html", "--no-screenshot", "--gentest", "none"]
    subprocess.run(cmd, check=True, timeout=600, capture_output=True)
    report = json.loads((out / "report.json").read_text())
    evidence = {a["name"]: {s["evidence"] for s in a["scenarios"]} for a in report["apis"]}
    statuses = {a["name"]: {s["status"] for s in a["scenarios"]} for a in report["apis"]}
    for api in CASES:
        assert statuses[api] == {"pass"}, (api, statuses[api])
    for api in ("torch.Tag", "torch.Tag.name", "torch.UntypedStorage.from_buffer",
                "torch.TypedStorage.from_buffer", "torch.UntypedStorage.from_file",
                "torch.TypedStorage.from_file", "torch.compiled_with_cxx11_abi"):
        assert evidence[api] == {"host-only"}, (api, evidence[api])
    assert evidence["torch.quasirandom.SobolEngine.draw"] == {"device-compute"}
