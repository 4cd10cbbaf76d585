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
ASCEND_TESTS_ENV = "TORCHPARITY_ASCEND_TESTS"


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
    given = os.environ.get(ASCEND_TESTS_ENV)
    if not given:
        pytest.skip(f"{ASCEND_TESTS_ENV} is unset: it names an Ascend/pytorch test/ tree")
    tree = Path(given)
    if not (tree / "test_autograd.py").is_file():
        pytest.skip(f"{ASCEND_TESTS_ENV}={tree}: no Ascend/pytorch test tree there")
    return tree
