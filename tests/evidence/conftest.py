"""Shared fixtures of the evidence tests.

fixtures/ holds trees the code under test *reads*: their test_*.py files are data, never
collected or run by pytest.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

collect_ignore_glob = ["fixtures/*"]

FIXTURES = Path(__file__).parent / "fixtures"
# A copy of Ascend's published support docs ships with the tests (tests/data/README.md).
ASCEND_DOCS = Path(__file__).resolve().parents[1] / "data" / "ascend-native-api-docs"
# A checkout of Ascend/pytorch's test/ tree (not in this repository: fetched separately).
ASCEND_TESTS = Path(os.environ.get("TORCHPARITY_ASCEND_TESTS", "/work/data/ascend-pytorch/test"))


@pytest.fixture(scope="session")
def fakepkg_on_path():
    path = str(FIXTURES / "fakepkg")
    sys.path.insert(0, path)
    yield path
    sys.path.remove(path)
    for name in [m for m in sys.modules if m == "tpfake" or m.startswith("tpfake.")]:
        del sys.modules[name]


@pytest.fixture(scope="session")
def ascend_docs() -> Path:
    assert (ASCEND_DOCS / "pytorch_2-12-0").is_dir(), f"test data missing: {ASCEND_DOCS}"
    return ASCEND_DOCS


@pytest.fixture(scope="session")
def ascend_tests() -> Path:
    if not (ASCEND_TESTS / "test_autograd.py").is_file():
        pytest.skip(f"Ascend/pytorch test tree not found at {ASCEND_TESTS} "
                    "(set TORCHPARITY_ASCEND_TESTS)")
    return ASCEND_TESTS
