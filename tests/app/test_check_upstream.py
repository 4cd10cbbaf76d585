"""check --tests: the upstream tests the census finds run on the device and on the CPU."""

import json
import os
from pathlib import Path

import pytest
from upstream_tree import IDS, write_tree

from torchparity.app.check import check
from torchparity.scenarios.sources import upstream

REAL_TREE = "TORCHPARITY_REPLAY_TESTS"  # a PyTorch or Ascend/pytorch test/ folder


def _rows(report):
    return {(s.id, s.dtype): s for s in report.apis[0].scenarios if s.source == "upstream"}


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_replay_on_the_emulated_a2(tmp_path):
    tree = write_tree(tmp_path / "test")
    report = check(["torch.mm"], "emu:ascend-a2", tests_dir=str(tree),
                   dtypes=["float32", "float64"], max_samples=1, out=str(tmp_path / "o"))
    rows = _rows(report)
    assert set(rows) == {(IDS["square"], "float32"), (IDS["square"], "float64"),
                         (IDS["wrong_shape"], "-"), (IDS["float32"], "-"), (IDS["float64"], "-"),
                         (IDS["skip"], "-")}
    assert all(s.emulated for s in rows.values())

    def got(key):
        return rows[key].status, rows[key].cause

    assert got((IDS["square"], "float32")) == ("pass", None)
    assert got((IDS["float32"], "-")) == ("pass", None)
    # fails on the device only: float64, refused by the A2 profile (device-generic and
    # through the default device alike)
    assert got((IDS["square"], "float64")) == ("unsupported", "dtype_limit")
    assert got((IDS["float64"], "-")) == ("unsupported", "dtype_limit")
    assert "DOUBLE" in rows[(IDS["float64"], "-")].detail.upper()  # aclnn DT_DOUBLE or c10 Double
    # fails (or is skipped) on the CPU too: not comparable, never a device failure
    assert got((IDS["wrong_shape"], "-")) == ("skip", "not_comparable")
    assert got((IDS["skip"], "-")) == ("skip", "upstream_skip")
    api = report.apis[0]
    assert api.sources_tried["upstream"] == "5 scenario(s)"
    rec = api.evidence.recommendation
    assert sorted(rec.replay_pass) == sorted([f"{IDS['square']} [float32]", IDS["float32"]])
    assert sorted(rec.replay_fail) == sorted([f"{IDS['square']} [float64]", IDS["float64"]])
    assert sorted(rec.replay_not_comparable) == sorted([IDS["wrong_shape"], IDS["skip"]])
    assert api.evidence.tests.direct_sites == 5  # one census fed both the replay and evidence
    saved = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert saved["apis"][0]["evidence"]["recommendation"]["replay_pass"] == rec.replay_pass
    en = (tmp_path / "o" / "report.en.md").read_text(encoding="utf-8")
    assert f"`{IDS['square']}` | upstream" in en
    assert upstream._SETTINGS.tests_dir is None  # check leaves no tree behind


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_replay_on_the_cpu_has_no_false_fail(tmp_path):
    tree = write_tree(tmp_path / "test")
    report = check(["torch.mm"], "cpu", tests_dir=str(tree), dtypes=["float32"], max_samples=1)
    rows = _rows(report)
    assert {s.status for s in rows.values()} <= {"pass", "skip"}
    assert rows[(IDS["float64"], "-")].status == "pass"  # refused by the A2 only
    assert rows[(IDS["wrong_shape"], "-")].cause == "not_comparable"
    assert (IDS["square"], "float64") not in rows  # --dtypes keeps float32 only ...
    assert (IDS["float32"], "-") in rows  # ... and every "-" test, which runs what it has


@pytest.mark.skipif(not os.environ.get(REAL_TREE), reason=f"set {REAL_TREE} to a test/ tree")
def test_replay_from_a_real_test_tree():
    tree = Path(os.environ[REAL_TREE])
    api = os.environ.get("TORCHPARITY_REPLAY_API", "torch.autograd.forward_ad.unpack_dual")
    with upstream.configured(None, max_tests=4):
        report = check([api], "emu:ascend-a2", tests_dir=str(tree), dtypes=["float32"],
                       max_samples=1)
    rows = list(_rows(report).values())
    assert rows, report.apis[0].sources_tried
    for s in rows:
        assert s.detail and s.cause != "harness_error", s
        if s.status == "skip":
            assert s.cause in ("not_comparable", "upstream_skip")
        assert s.status in ("pass", "fail", "unsupported", "error", "crash", "timeout", "skip")


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_the_listed_mode_replays_too(tmp_path):
    from test_check_sources import _docs

    from torchparity.app.check_vendor import check_vendor_docs

    tree = write_tree(tmp_path / "test")
    docs = _docs(tmp_path / "docs", ["torch.mm"])
    summary = check_vendor_docs(str(docs), out=str(tmp_path / "run"), device="cpu",
                                torch_version="2.13.0", jobs=1, dtypes=["float32"],
                                max_samples=1, tests_dir=str(tree))
    doc = json.loads((tmp_path / "run" / "matrix.json").read_text(encoding="utf-8"))
    replayed = {r["variant"]: r for r in doc["rows"] if r["source"] == "upstream"}
    assert set(replayed) == set(IDS.values())
    assert replayed[IDS["float64"]]["status"] == "pass"
    assert replayed[IDS["wrong_shape"]]["cause"] == "not_comparable"
    assert summary.verdicts == {"torch.mm": "supported"}
