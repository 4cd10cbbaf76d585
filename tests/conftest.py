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
