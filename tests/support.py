"""Constants and helpers shared by tests (importable: pyproject puts tests/ on sys.path)."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
VENDOR_DOCS = Path(__file__).resolve().parent / "data" / "ascend-native-api-docs"
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SEED_APIS = [
    "torch.autograd.gradcheck",
    "torch.autograd.gradgradcheck",
    "torch.autograd.profiler.emit_itt",
    "torch.autograd.forward_ad.enter_dual_level",
    "torch.autograd.forward_ad.unpack_dual",
]



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


def require_ray():
    """The ray module; skips without it, unless CI is set: then fails (CI installs it)."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI is set but Ray is not installed (pip install 'torchparity[ray]')")
        pytest.skip("Ray is not installed here (pip install 'torchparity[ray]')")
    return ray


def ranks_alive() -> set:
    """This process's children and those of its rank zygote (``sources.world``: the
    zygote itself outlives worlds, the ranks it forks must not)."""
    from torchparity.run import proctree
    from torchparity.scenarios.sources import world

    zygote = world.zygote_pid()
    mine = set(proctree.children(os.getpid())) - {zygote}
    return mine | (set(proctree.children(zygote)) if zygote else set())


def benchmark(name: str, module: str = ""):
    """A fresh import of ``benchmarks/<name>.py`` (a script, not a package), registered in
    ``sys.modules`` as ``module`` (default ``<name>_bench``) so that its dataclasses resolve."""
    module = module or f"{name}_bench"
    spec = importlib.util.spec_from_file_location(module, BENCHMARKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return mod
