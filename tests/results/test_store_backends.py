"""The sweep store on each backend (SQLite file, PostgreSQL): same API, same rows, one row
per key; Alembic migrations; a bad --store is one line."""

import sqlite3
import subprocess
import sys

import pytest
from pgcluster import free_port

from torchparity.errors import InputError
from torchparity.results import store_schema
from torchparity.results.sweep_store import SweepStore, open_store


def row(api="torch.add", dtype="float32", status="pass", **kw):
    return dict(api=api, variant="add", sample_set="sample_inputs", dtype=dtype, status=status, **kw)


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "results.sqlite")
    return request.getfixturevalue("pg_url")


def test_rows_meta_and_one_row_per_key(location):
    s = SweepStore(location)
    s.set_meta({"device": {"spec": "cpu"}, "no_scenarios": ["torch.x"]})
    s.set_meta({"no_scenarios": ["torch.x", "torch.y"]})  # upserted, not duplicated
    s.add(row(metric={"name": "m", "value": 1.0}, counts={"samples": 3}, claimed=True,
              note="upstream xfail"))
    s.add(row(dtype="float64"))
    s.add(row(status="fail", cause="mismatch"))  # same key: replaced, fields it lacks emptied
    assert s.count() == 2
    assert s.done_keys() == {("torch.add", "add", "sample_inputs", "float32"),
                             ("torch.add", "add", "sample_inputs", "float64")}
    f32 = next(r for r in s.rows() if r["dtype"] == "float32")
    assert (f32["status"], f32["cause"]) == ("fail", "mismatch")
    assert f32["claimed"] is None and f32["metric"] is None and f32["note"] is None
    s.delete(("torch.add", "add", "sample_inputs", "float64"))
    assert [r["dtype"] for r in s.rows()] == ["float32"]
    s.close()
    again = SweepStore(location)  # reopened: already at the head revision
    assert again.meta() == {"device": {"spec": "cpu"}, "no_scenarios": ["torch.x", "torch.y"]}
    assert again.rows(keys=[("torch.add", "add", "sample_inputs", "float32")])[0]["status"] == "fail"
    with again.engine.connect() as conn:
        assert store_schema.current_revision(conn) == store_schema.HEAD
    again.close()


def test_head_is_the_newest_migration():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(store_schema.MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == store_schema.HEAD


def test_a_store_from_before_the_migrations_is_adopted_as_it_is(tmp_path):
    path = tmp_path / "results.sqlite"
    db = sqlite3.connect(str(path))
    db.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE results (api TEXT NOT NULL, variant TEXT NOT NULL, sample_set TEXT NOT NULL,
            dtype TEXT NOT NULL, status TEXT NOT NULL, cause TEXT, detail TEXT NOT NULL DEFAULT '',
            metric TEXT, counts TEXT, claimed INTEGER, claimed_backward INTEGER, kind TEXT,
            seconds REAL, emulated INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL, note TEXT,
            PRIMARY KEY (api, variant, sample_set, dtype));
        INSERT INTO meta VALUES ('device', '{"spec": "cpu"}');
        INSERT INTO results (api, variant, sample_set, dtype, status, created)
            VALUES ('torch.abs', 'abs', 'sample_inputs', 'float32', 'pass', 1.0);
    """)
    db.commit()
    db.close()
    s = open_store(tmp_path, must_exist=True)
    assert s.meta() == {"device": {"spec": "cpu"}} and s.count() == 1
    assert s.rows()[0]["evidence"] is None  # revision 0002 adds the column; no guessed value
    s.add(dict(row(api="torch.abs"), variant="abs", status="fail"))  # the old key is upserted
    assert [r["status"] for r in s.rows()] == ["fail"]
    s.close()
    raw = sqlite3.connect(str(path))
    assert raw.execute("SELECT version_num FROM alembic_version").fetchall() == [(store_schema.HEAD,)]


@pytest.mark.parametrize("url, message", [
    ("mysql://u@127.0.0.1/x", "unsupported database 'mysql'"),
    ("sqlite://", "name a SQLite file"),
    ("postgresql://u:secret@127.0.0.1:{port}/x", "cannot open this sweep store"),
])
def test_a_bad_store_url_is_one_line_without_the_password(url, message):
    with pytest.raises(InputError) as err:
        SweepStore(url.format(port=free_port()))  # nothing listens on that port
    text = str(err.value)
    if url.startswith("postgresql") and "driver is not installed" in text:
        message = "the PostgreSQL driver is not installed"  # without the postgres extra
    assert message in text and "\n" not in text and "secret" not in text


def test_cli_store_without_vendor_docs_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", "torch.abs", "--store",
                           f"sqlite:///{tmp_path}/x.sqlite"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "--store goes with --apis-from-vendor-docs" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_matrix_points_a_sweep_store_to_sweep_matrix(tmp_path):
    from torchparity.app.matrix import matrix

    SweepStore(tmp_path).close()
    for given in (str(tmp_path), "postgresql://u:secret@db-host/sweep"):
        with pytest.raises(InputError, match="sweep-matrix") as err:
            matrix([given])
        assert "secret" not in str(err.value)


def test_every_row_keeps_its_evidence_into_the_matrix(tmp_path):
    """Issue 18 item 3: the store and the matrix carry each row's evidence."""
    from torchparity.deliver.sweep_matrix import build_matrix, render_csv, render_markdown

    s = SweepStore(str(tmp_path / "results.sqlite"))
    s.add(row(evidence="device-compute"))
    s.add(row(api="torch.backends.mkl.is_available", dtype="float32", evidence="host-only"))
    s.add(row(api="torch.distributed.fsdp.fully_shard", status="skip", cause="emulator_limit",
              evidence="none"))
    got = {r["api"]: r["evidence"] for r in s.rows()}
    s.close()
    assert got == {"torch.add": "device-compute", "torch.backends.mkl.is_available": "host-only",
                   "torch.distributed.fsdp.fully_shard": "none"}
    doc = build_matrix(SweepStore(str(tmp_path / "results.sqlite")).rows(), {"device": {"type": "npu"}})
    assert {r["api"]: r["evidence"] for r in doc["rows"]} == got
    assert doc["counts"]["by_evidence"] == {"device-compute": 1, "host-only": 1, "none": 1}
    assert render_csv(doc).splitlines()[0].endswith(",evidence")
    assert "| evidence (from the footprint) | results |" in render_markdown(doc)
