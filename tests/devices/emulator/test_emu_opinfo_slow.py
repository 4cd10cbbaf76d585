"""OpInfo conformance of the emulated device (a whole-surface sweep: marked slow)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .helpers import REPO


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["values", "gradcheck"])
def test_opinfo_agreement(tmp_path, mode):
    report = tmp_path / "opinfo.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "emulator_opinfo.py"), "--mode", mode,
         "--json", str(report)],
        capture_output=True, text=True, timeout=3600, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr[-4000:]
    data = json.loads(report.read_text())
    assert data["ran_on_cpu"] > (600 if mode == "values" else 500)
    disagreements = [f"{r['op']}: {r.get('reason')}" for r in data["results"]
                     if r["verdict"] not in ("pass", "not applicable", "not comparable")]
    assert data["agreement"] >= 0.98, "\n".join(disagreements)
    assert not [r for r in data["results"] if r["verdict"] in ("crash", "timeout")]
