"""The shipped census index: used without --tests, labelled with its source and commit."""

import gzip
import json

from torchparity.app.evidence import evidence
from torchparity.evidence import census_index


def test_index_is_small_and_records_its_source():
    assert census_index.INDEX_FILE.stat().st_size < 3_000_000
    with gzip.open(census_index.INDEX_FILE, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    assert data["source"] == "Ascend/pytorch" and len(data["commit"]) == 40
    assert "torch.autograd.forward_ad.unpack_dual" in data["apis"]


def test_lookup_by_name_or_qualified_name_is_labelled():
    ev = census_index.lookup("torch.autograd.gradcheck")
    assert ev is not None and ev.direct_sites > 0 and ev.tree.startswith("Ascend/pytorch@")
    assert census_index.INDEX_NOTE in ev.notes
    assert census_index.lookup("torch.nope", "torch.autograd.gradcheck.gradcheck") is not None
    assert census_index.lookup("torch.nope") is None


def test_evidence_uses_the_index_only_without_a_test_tree(tmp_path):
    api = "torch.autograd.forward_ad.unpack_dual"
    ev = evidence([api], device_involvement={api: "direct"})[api]
    assert ev.tests is not None and "tests" not in ev.not_run
    assert (ev.recommendation.add_tests, ev.recommendation.priority) == (True, "high")
    off = evidence([api], use_index=False)[api]
    assert off.tests is None and off.not_run["tests"] == "--tests DIR"
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "test_x.py").write_text("import torch\n\ndef test_a():\n    torch.autograd.forward_ad.unpack_dual(1)\n")
    own = evidence([api], tests_dir=tree)[api]
    assert own.tests.direct_sites == 1 and census_index.INDEX_NOTE not in own.tests.notes
