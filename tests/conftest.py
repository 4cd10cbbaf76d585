import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED_APIS = [
    "torch.autograd.gradcheck",
    "torch.autograd.gradgradcheck",
    "torch.autograd.profiler.emit_itt",
    "torch.autograd.forward_ad.enter_dual_level",
    "torch.autograd.forward_ad.unpack_dual",
]


@pytest.fixture
def fixture_path(monkeypatch):
    """Make tests/fixtures importable here and in worker subprocesses."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(FIXTURES), old) if p))
    yield FIXTURES
    for name in [m for m in sys.modules if m.startswith("tp_fixture")]:
        sys.modules.pop(name, None)


def require_chromium():
    """Skip without Chromium, unless TORCHPARITY_REQUIRE_CHROMIUM is set (CI): then fail."""
    from torchparity.app.convert import find_chromium

    exe = find_chromium()
    if exe is None:
        if os.environ.get("TORCHPARITY_REQUIRE_CHROMIUM"):
            pytest.fail("TORCHPARITY_REQUIRE_CHROMIUM is set but no Chromium was found "
                        "(apt-get install -y chromium)")
        pytest.skip("no Chromium here (set TORCHPARITY_REQUIRE_CHROMIUM=1 to make this a failure)")
    return exe


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
