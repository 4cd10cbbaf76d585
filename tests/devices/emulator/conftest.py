"""Fixtures for the emulated accelerator.

The pytest process hosts the emulator with the ``allow-all`` profile (a process can host
one profile). Restricted profiles, and anything that depends on import order, run in a
subprocess through :func:`helpers.run_python`.
"""

from __future__ import annotations

import pytest


def pytest_configure(config):
    """Register the emulator while tests are collected, before any test runs a backward:
    torch's autograd engine sizes its device queues at the first backward of a process."""
    from torchparity.devices.emulator import activate
    from torchparity.devices.profiles import load_profile

    activate(load_profile("allow-all"))


@pytest.fixture(scope="session")
def dev() -> str:
    """The emulated device type, registered in this process with the allow-all profile."""
    from torchparity.devices.emulator import activate
    from torchparity.devices.profiles import load_profile

    profile = load_profile("allow-all")
    activate(profile)
    return profile.device_type
