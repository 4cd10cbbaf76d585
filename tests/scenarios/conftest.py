"""Adapters the scenario-source tests run their cases on."""

import pytest

from torchparity.devices import get_adapter


def pytest_configure(config):
    """Host the emulator (allow-all) from collection on, before any test of this folder runs
    a backward: torch's autograd engine sizes its device queues at a process's first
    backward, so these tests run alone as they do after tests/devices."""
    from torchparity.devices.emulator import activate
    from torchparity.devices.profiles import load_profile

    activate(load_profile("allow-all"))


@pytest.fixture(scope="module")
def cpu():
    adapter = get_adapter("cpu")
    adapter.setup()
    return adapter


@pytest.fixture(scope="module")
def emu():
    # allow-all: the profile the test process hosts (tests/devices/emulator/conftest.py
    # registers it at collection; a process hosts one profile)
    adapter = get_adapter("emu:allow-all")
    adapter.setup()
    return adapter
