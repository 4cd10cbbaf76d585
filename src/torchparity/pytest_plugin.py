"""torchparity's pytest plugin (the ``pytest11`` entry point ``torchparity``).

``pytest --torchparity-device SPEC`` picks the device of a test run with one flag, before
collection:

- it sets ``TORCHPARITY_DEVICE`` (which the files ``torchparity gentest`` writes read), so
  the flag and the variable agree; the variable alone keeps working as before;
- it registers the device in this process (``setup()`` of its adapter: the emulated
  accelerator's PrivateUse1 backend, or torch_npu) before any test module is imported, so
  upstream device-generic test files instantiate their PRIVATEUSE1 class
  (``instantiate_device_type_tests`` fixes the device types when it is first imported);
- the session header names the device, its profile and, for ``emu:``, that results are
  emulated (predictions, not hardware results);
- for ``emu:``, where no real torch_npu is installed, the emulator stands in for
  ``torch_npu`` (``npu_testing.activate``), so ``--style npu`` files and Ascend's own test
  files run unchanged.

Without the flag the plugin does nothing and imports nothing heavy: it is loaded in every
pytest session of an environment where torchparity is installed.
"""

from __future__ import annotations

import os
from typing import List, Optional

OPTION = "--torchparity-device"
ENV = "TORCHPARITY_DEVICE"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("torchparity")
    group.addoption(OPTION, action="store", default=None, metavar="SPEC",
                    help="Device for generated and device-generic tests (cpu, npu[:N], cuda[:N], "
                         "emu:ascend-a2, ...): registered before collection; sets "
                         f"{ENV} for the generated test files.")


def _spec(config) -> Optional[str]:
    return config.getoption(OPTION, default=None)


def pytest_configure(config) -> None:
    spec = _spec(config)
    if not spec:
        return
    import pytest

    from .errors import TorchparityError

    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    try:
        from .devices import get_adapter

        adapter = get_adapter(spec)
        reason = adapter.unavailable_reason()
        if reason:
            raise pytest.UsageError(f"{OPTION} {spec}: {reason}")
        adapter.setup()
    except TorchparityError as exc:
        raise pytest.UsageError(f"{OPTION} {spec}: {exc}") from None
    os.environ[ENV] = spec  # the generated files read it; this process and its children agree
    config._torchparity_adapter = adapter
    if spec.startswith("emu:"):
        _stand_in_for_torch_npu(spec)


def _stand_in_for_torch_npu(spec: str) -> None:
    """``--style npu`` files (and Ascend's own) ``import torch_npu``: on the emulated device,
    with no real torch_npu installed, the emulator stands in for it
    (``npu_testing.activate``), as the conftest of docs/deliverables.md does."""
    from . import npu_testing

    if npu_testing.real_torch_npu():
        return  # a real torch_npu is never shadowed
    npu_testing.activate(spec)


def pytest_report_header(config) -> Optional[List[str]]:
    adapter = getattr(config, "_torchparity_adapter", None)
    if adapter is None:
        return None
    info = adapter.info()
    parts = [f"torchparity device: {info.spec}", f"type {info.type}"]
    if info.profile:
        parts.append(f"profile {info.profile}")
    if info.name:
        parts.append(f"name {info.name}")
    if info.emulated:
        from .results.models import EMULATED_BANNER

        parts.append(EMULATED_BANNER)
    return [", ".join(parts)]
