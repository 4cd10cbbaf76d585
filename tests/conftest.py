import os
import sys

import pytest

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

from support import FIXTURES, SEED_APIS


@pytest.fixture
def fixture_path(monkeypatch):
    """Make tests/fixtures importable here and in worker subprocesses."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(FIXTURES), old) if p))
    yield FIXTURES
    for name in [m for m in sys.modules if m.startswith("tp_fixture")]:
        sys.modules.pop(name, None)


@pytest.fixture(scope="session")
def seed_bundle(tmp_path_factory):
    """One `torchparity check` of the five seed APIs on the CPU with every deliverable."""
    import subprocess

    out = tmp_path_factory.mktemp("seed") / "bundle"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", *SEED_APIS, "--device", "cpu",
                           "--out", str(out), "--gentest", "all", "--jobs", "2"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (out.parent / "stdout.txt").write_text(proc.stdout, encoding="utf-8")  # the terminal's table
    return out


@pytest.fixture(scope="session")
def seed_bundle_a2(tmp_path_factory):
    """One `torchparity check` of the five seed APIs on emu:ascend-a2 with the shipped vendor
    docs and both styles of test files (README command 1 plus --gentest all): the seed facts
    and the zh report are read from the same run."""
    import subprocess

    from support import VENDOR_DOCS

    out = tmp_path_factory.mktemp("seed_a2") / "bundle"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", *SEED_APIS,
                           "--device", "emu:ascend-a2", "--vendor-docs", str(VENDOR_DOCS), "--out", str(out),
                           "--quiet", "--gentest", "all", "--no-html", "--jobs", "2"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server for the store tests (see tests/pgcluster.py)."""
    import atexit

    import pgcluster

    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    given = os.environ.get(pgcluster.ENV)
    if given:
        yield given
        return
    cluster = pgcluster.Cluster()
    why = cluster.why_not()
    if why:
        pytest.skip(f"no PostgreSQL: set {pgcluster.ENV} to a server URL ({why})")
    atexit.register(cluster.stop)  # also when the session ends abruptly
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the test server, dropped afterwards."""
    import pgcluster

    url = pgcluster.create_database(pg_server)
    yield url
    pgcluster.drop_database(pg_server, url)
