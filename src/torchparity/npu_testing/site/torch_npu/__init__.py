"""torchparity's stand-in for ``torch_npu`` over the emulated device. It is not torch_npu.

Loaded only where ``torchparity.npu_testing.environ()`` put this folder's parent on
``sys.path`` and set ``TORCHPARITY_TORCH_NPU=emu:<profile>``; refused where a real
torch_npu is importable. Importing it registers the emulated device (``torch.npu``), and
``torch_npu.npu`` is that device module: its name, properties and SoC version are those
of the profile's chip. Names the adapter lacks raise AttributeError / ModuleNotFoundError
saying whether the emulator does not emulate what they need or the adapter lacks them.
"""

import importlib
import importlib.abc
import os
import sys
import types

from torchparity import npu_testing

if __name__ != "torch_npu":
    raise ImportError("torchparity's torch_npu adapter is imported as 'torch_npu' only "
                      "(python -m torchparity.npu_testing FILE.py)")

_problem = npu_testing.activation_problem()
if _problem:
    raise ImportError(_problem)

# the emulator's registration lets the emulated 'npu' register under this module
__torchparity_adapter__ = True

import torch  # noqa: E402

from torchparity.devices import get_adapter  # noqa: E402

_device = get_adapter(os.environ[npu_testing.ENV_VAR])
_device.setup()

npu = torch.npu
npu.__path__ = []  # a package to the import system: torch_npu.npu.<x> reaches _Missing below
sys.modules["torch_npu.npu"] = npu
for _sub in ("utils", "amp"):
    sys.modules[f"torch_npu.npu.{_sub}"] = getattr(npu, _sub)


def _submodule(name, members):
    """``torch_npu.npu.<name>``: a module over the device module's own members."""
    mod = types.ModuleType(f"torch_npu.npu.{name}")
    for member in members:
        if member in vars(npu):
            setattr(mod, member, getattr(npu, member))

    def missing_member(attr):
        raise AttributeError(npu_testing.missing(f"torch_npu.npu.{name}.{attr}"))

    mod.__getattr__ = missing_member
    sys.modules[mod.__name__] = mod
    if name not in vars(npu):
        setattr(npu, name, mod)
    return mod


_submodule("memory", [m for m in vars(npu) if "memory" in m or m in (
    "empty_cache", "mem_get_info", "caching_allocator_alloc", "caching_allocator_delete",
    "list_gpu_processes", "max_memory_cached", "memory_cached")])
_submodule("streams", ["Stream", "Event"])


def _npu_member_missing(name):
    raise AttributeError(npu_testing.missing(f"torch_npu.npu.{name}"))


npu.__getattr__ = _npu_member_missing  # PEP 562: consulted only for names the module lacks


class _Missing(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: a torch_npu submodule no file here provides."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("torch_npu."):
            raise ModuleNotFoundError(npu_testing.missing(fullname), name=fullname)
        return None


sys.meta_path.append(_Missing())

_SUBPACKAGES = ("_C", "testing", "utils")


def _autoload():
    """torch's device-backend autoload (entry point ``torch.backends``, as torch_npu declares
    in its setup.py) imports this package on ``import torch``; importing it did the work."""

from . import _C, utils  # noqa: E402,F401


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"torch_npu.{name}")
    raise AttributeError(npu_testing.missing(f"torch_npu.{name}"))
