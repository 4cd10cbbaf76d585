"""The sweep's SQLite store: WAL, one row per key, resumable."""

import sqlite3

from torchparity.results.sweep_store import SweepStore, open_store


def row(api="torch.add", dtype="float32", status="pass", **kw):
    return dict(api=api, variant="add", sample_set="sample_inputs", dtype=dtype, status=status, **kw)


def test_rows_meta_and_unique_keys(tmp_path):
    s = SweepStore(tmp_path)
    wal = sqlite3.connect(str(tmp_path / "results.sqlite"))
    assert wal.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    wal.close()
    s.set_meta({"device": {"spec": "cpu"}, "no_scenarios": ["torch.x"]})
    s.add(row(metric={"name": "m", "value": 1.0, "threshold": 2.0, "standard": "s"},
              counts={"samples": 3}, claimed=True))
    s.add(row(dtype="float64"))
    s.add(row(status="fail"))  # same key: replaced, not duplicated
    assert s.count() == 2
    assert s.done_keys() == {("torch.add", "add", "sample_inputs", "float32"),
                             ("torch.add", "add", "sample_inputs", "float64")}
    f32 = next(r for r in s.rows() if r["dtype"] == "float32")
    assert f32["status"] == "fail" and f32["claimed"] is None and f32["metric"] is None
    s.close()
    s2 = open_store(tmp_path, must_exist=True)
    assert s2.meta()["no_scenarios"] == ["torch.x"]
    assert {r["dtype"] for r in s2.rows()} == {"float32", "float64"}
    raw = sqlite3.connect(str(tmp_path / "results.sqlite"))
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
