"""Adapters the scenario-source tests run their cases on."""

import pytest

from torchparity.devices import get_adapter


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
