"""Official PyTorch docs check on a hand-written docs/source fixture (MyST and reST)."""

from __future__ import annotations

import pytest

from torchparity.errors import InputError
from torchparity.evidence import official_docs as od

from .conftest import FIXTURES

DOCS = FIXTURES / "docs"
V = "2.12.0"
BASE = "https://pytorch.org/docs/2.12/"


@pytest.fixture(scope="module")
def index():
    return od.load_official_docs(DOCS)


def check(index, api):
    ev = index.evidence(api, V)
    return ev.status, ev.url


def test_autosummary_with_toctree_gives_own_page(index):
    assert check(index, "torch.autograd.forward_ad.unpack_dual") == (
        "own_page", BASE + "generated/torch.autograd.forward_ad.unpack_dual.html")
    ev = index.evidence("torch.autograd.backward", V)
    assert ev.source == "autograd.md" and ev.line == 14


def test_autosummary_without_toctree_gives_no_page(index):
    assert check(index, "torch.Tensor.backward")[0] == "absent"


def test_autodoc_directives_give_anchors(index):
    assert check(index, "torch.autograd.profiler.emit_itt") == (
        "anchor", BASE + "autograd.html#torch.autograd.profiler.emit_itt")
    # relative to currentmodule, in an eval-rst block
    assert check(index, "torch.autograd.Function") == (
        "anchor", BASE + "autograd.html#torch.autograd.Function")
    # MyST fenced directive nested in another fence, and a colon fence
    assert check(index, "torch.autograd.graph.increment_version")[0] == "anchor"
    assert check(index, "torch.autograd.graph.register_multi_grad_hook")[0] == "anchor"


def test_currentmodule_switch_and_alias(index):
    ev = index.evidence("torch.autograd.gradcheck", V)  # docs list ...gradcheck.gradcheck
    assert ev.status == "own_page" and ev.name == "torch.autograd.gradcheck.gradcheck"
    assert ev.url == BASE + "generated/torch.autograd.gradcheck.gradcheck.html"
    assert "documented as" in ev.note


def test_rst_sources(index):
    assert check(index, "torch.nn.Linear") == ("own_page", BASE + "generated/torch.nn.Linear.html")
    assert check(index, "torch.nn.ReLU")[0] == "own_page"  # "~torch.nn.ReLU" entry
    assert check(index, "torch.nn.init.xavier_uniform_") == (
        "anchor", BASE + "nn.html#torch.nn.init.xavier_uniform_")
    assert check(index, "torch.nn.functional.relu")[0] == "anchor"  # inside a note
    # a page in a subfolder: the toctree folder is relative to it
    assert check(index, "torch.library.custom_op") == (
        "own_page", BASE + "notes/api/torch.library.custom_op.html")


def test_automodule_members(index):
    ev = index.evidence("torch.nn.utils.rnn.pad_sequence", V)
    assert ev.status == "anchor" and ev.url == BASE + "nn.html#torch.nn.utils.rnn.pad_sequence"
    assert "automodule" in ev.note


def test_absent(index):
    ev = index.evidence("torch.autograd.forward_ad.enter_dual_level", V)
    assert ev.status == "absent" and ev.url is None


def test_without_a_tree():
    ev = od.unknown("torch.autograd.forward_ad.enter_dual_level", V)
    assert ev.status == "unknown"
    assert ev.url == BASE + "generated/torch.autograd.forward_ad.enter_dual_level.html"
    assert "no PyTorch docs source tree" in ev.note
    assert od.url_pattern("torch.mm", None) == "https://pytorch.org/docs/stable/generated/torch.mm.html"


def test_source_folder_forms_and_errors():
    assert od.find_source_dir(DOCS) == DOCS / "source"
    assert od.find_source_dir(DOCS / "source") == DOCS / "source"
    with pytest.raises(InputError, match="docs folder not found"):
        od.load_official_docs(DOCS / "nope")
    with pytest.raises(InputError, match="no .rst or .md"):
        od.load_official_docs(FIXTURES / "fakepkg")
    with pytest.raises(InputError, match="bad torch version"):
        od.version_path("latest")
