import os
import sys

import pytest

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

from support import FIXTURES, SEED_APIS


@pytest.fixture
def fixture_path(monkeypatch):
    """Make tests/fixtures importable here and in worker subprocesses."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(FIXTURES), old) if p))
    yield FIXTURES
    for name in [m for m in sys.modules if m.startswith("tp_fixture")]:
        sys.modules.pop(name, None)


@pytest.fixture(scope="session")
def seed_bundle(tmp_path_factory):
    """One `torchparity check` of the five seed APIs on the CPU with every deliverable."""
    import subprocess

    out = tmp_path_factory.mktemp("seed") / "bundle"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", *SEED_APIS, "--device", "cpu",
                           "--out", str(out), "--gentest", "all", "-q"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out
