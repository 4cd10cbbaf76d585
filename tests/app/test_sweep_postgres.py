"""Sweeps into a PostgreSQL store (--store postgresql://...): the same rows as into SQLite,
resume across machines (another --out, one store), concurrent writers each row once."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

from pgcluster import libpq  # noqa: E402

from torchparity.app.sweep import sweep  # noqa: E402
from torchparity.results.sweep_store import open_store  # noqa: E402

APIS = ["torch.dot", "torch.abs", "torch.nn.functional.relu"]
DTYPES = ["float32", "float64", "int64"]
SAME = ("api", "variant", "sample_set", "dtype", "status", "cause", "claimed", "emulated")


def _rows(location):
    store = open_store(location, must_exist=True)
    try:
        return sorted(tuple(r[c] for c in SAME) for r in store.rows())
    finally:
        store.close()


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_postgres_gives_the_rows_sqlite_gives_and_resumes_from_another_folder(tmp_path, pg_url):
    opts = dict(device="emu:ascend-a2", apis=APIS, dtypes=DTYPES, jobs=1, max_samples=2)
    lite = sweep(out=str(tmp_path / "sqlite"), **opts)
    pg = sweep(out=str(tmp_path / "pg"), store=pg_url, **opts)
    assert pg.planned == lite.planned == pg.ran > 0
    assert _rows(pg_url) == _rows(tmp_path / "sqlite")
    assert not (tmp_path / "pg" / "results.sqlite").exists()  # the results went to Postgres
    statuses = {r[4] for r in _rows(pg_url)}
    assert "unsupported" in statuses and "pass" in statuses  # float64 dot on A2, the rest

    # another machine (another --out) on the same store: everything is done already
    again = sweep(out=str(tmp_path / "machine2"), store=pg_url, **opts)
    assert (again.ran, again.already_done) == (0, pg.planned)
    with pytest.raises(Exception, match="holds a sweep on 'emu:ascend-a2'"):
        sweep(out=str(tmp_path / "cpu"), store=pg_url, **dict(opts, device="cpu"))

    # sweep-matrix reads the store by its URL: the matrix the SQLite sweep wrote
    proc = subprocess.run([sys.executable, "-m", "torchparity", "sweep-matrix", pg_url,
                           "--out", str(tmp_path / "m")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _matrix(tmp_path / "m") == _matrix(tmp_path / "sqlite")
    assert "emulated" in (tmp_path / "m" / "matrix.md").read_text(encoding="utf-8")


def _matrix(folder):
    doc = json.loads((folder / "matrix.json").read_text(encoding="utf-8"))
    assert doc["emulated"] is True
    return [(r["device"], r["api"], r["variant"], r["dtype"], r["status"], r["cause"])
            for r in doc["rows"]]


@pytest.mark.slow
def test_two_sweep_processes_on_one_store_write_each_row_once(tmp_path, pg_url):
    apis = tmp_path / "apis.txt"
    apis.write_text("torch.add\ntorch.mul\ntorch.sub\ntorch.exp\n")
    procs = [subprocess.Popen(
        [sys.executable, "-m", "torchparity", "sweep", "--apis", str(apis), "--device", "cpu",
         "--dtypes", "float32,float64,int64", "--max-samples", "2", "--jobs", "1", "-q",
         "--out", str(tmp_path / f"machine{i}"), "--store", pg_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in (1, 2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
        assert "wrote the results into postgresql" in out
    with psycopg.connect(libpq(pg_url)) as conn:
        total, distinct = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT (api, variant, sample_set, dtype)) FROM results").fetchone()
    from torchparity.app.sweep import plan

    planned = len(plan(apis=apis.read_text().split(), dtypes=["float32", "float64", "int64"]).cases)
    assert total == distinct == planned
    assert {r[4] for r in _rows(pg_url)} <= {"pass", "unsupported", "skip"}


@pytest.mark.slow
def test_check_vendor_docs_into_postgres_resumes_from_another_folder(tmp_path, pg_url):
    docs = Path(__file__).resolve().parents[1] / "data" / "ascend-native-api-docs"

    def run(out):
        return subprocess.run(
            [sys.executable, "-m", "torchparity", "check", "--apis-from-vendor-docs", str(docs),
             "--torch-version", "2.13.0", "--limit", "3", "--device", "emu:ascend-a2",
             "--dtypes", "float32", "--max-samples", "1", "--jobs", "1", "--quiet",
             "--out", str(tmp_path / out), "--store", pg_url],
            capture_output=True, text=True, timeout=600)

    first = run("machine1")
    assert first.returncode in (0, 1), first.stderr[-3000:]
    assert "wrote the results into postgresql" in first.stdout
    assert (tmp_path / "machine1" / "matrix.json").is_file()
    assert not (tmp_path / "machine1" / "results.sqlite").exists()
    stored = _rows(pg_url)
    assert stored and {r[0] for r in stored}  # the listed APIs' rows are in Postgres
    again = run("machine2")
    assert again.returncode == first.returncode, again.stderr[-3000:]
    assert "0 case(s) run" in again.stdout
    assert _rows(pg_url) == stored
