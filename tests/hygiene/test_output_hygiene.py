"""Nothing lost after a run (issue 10, points 4 and 5): the output folder is checked
before anything runs, a bundle is never half written, a failed write keeps the results
somewhere it names, and ``--out`` is always a folder."""

import errno
import json
import sqlite3

import pytest

from torchparity.app import check as check_mod
from torchparity.app import runloop
from torchparity.deliver.bundle import write_bundle
from torchparity.deliver.sweep_matrix import write_matrix
from torchparity.errors import InputError, OutputError
from torchparity.results.models import DeviceInfo, Environment, Report
from torchparity.results.store import load_report, prepare_out
from torchparity.results.sweep_store import FILENAME, SweepLock, open_store


def _report():
    return Report(tool_version="0", created="now",
                  environment=Environment(os="Linux", arch="x86_64", python="3", torch="2.13"),
                  device=DeviceInfo(type="cpu", spec="cpu"), apis=[])


def test_out_under_a_file_is_refused_before_any_case_runs(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")

    def must_not_run(*_a, **_k):
        raise AssertionError("cases ran although the output folder cannot be made")

    monkeypatch.setattr(runloop, "make_executor", must_not_run)
    with pytest.raises(InputError, match="cannot create folder"):
        check_mod.check(["torch.abs"], "cpu", out=str(tmp_path / "a-file" / "sub"))


def test_prepare_out_creates_the_folder_and_probes_it(tmp_path):
    out = prepare_out(tmp_path / "new" / "deeper")
    assert out.is_dir() and list(out.iterdir()) == []  # the probe file is gone


def test_a_full_disk_leaves_the_old_bundle_whole_and_keeps_the_results(tmp_path, monkeypatch):
    out = tmp_path / "bundle"
    out.mkdir()
    (out / "report.json").write_text("OLD", encoding="utf-8")
    written = []

    def fills_the_disk(report, folder):
        written.append(folder)
        raise OSError(errno.ENOSPC, "No space left on device")

    keep = tmp_path / "kept"
    monkeypatch.setattr("tempfile.tempdir", str(keep))
    keep.mkdir()
    with pytest.raises(OutputError) as err:
        write_bundle(_report(), out, [fills_the_disk])
    message = str(err.value)
    assert "No space left on device" in message and str(keep) in message
    assert "\n" not in message
    assert (out / "report.json").read_text(encoding="utf-8") == "OLD"  # no half bundle
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]  # staging removed
    kept = [p for p in keep.iterdir() if p.name.startswith("torchparity-results-")]
    assert len(kept) == 1 and load_report(kept[0]).model_dump() == _report().model_dump()
    assert str(kept[0]) in message


def test_a_written_bundle_is_complete_and_has_no_staging_left(tmp_path):
    out = tmp_path / "bundle"
    write_bundle(_report(), out)
    assert sorted(p.name for p in out.iterdir()) == ["report.en.md", "report.json", "report.zh.md"]
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["device"]["spec"] == "cpu"


def test_a_dotted_sweep_folder_is_a_folder(tmp_path):
    out = tmp_path / "sweep-2.13.0"
    store = open_store(out)
    store.add(dict(api="torch.abs", variant="abs", sample_set="sample_inputs", dtype="float32",
                   status="pass"))
    store.close()
    assert out.is_dir() and (out / FILENAME).is_file()
    assert open_store(out, must_exist=True).count() == 1


def test_the_matrix_can_be_written_next_to_a_dotted_store(tmp_path):
    from torchparity.deliver.sweep_matrix import build_matrix

    out = tmp_path / "sweep-2.13.0"
    store = open_store(out)
    store.set_meta({"device": {"spec": "cpu", "type": "cpu"}})
    store.add(dict(api="torch.abs", variant="abs", sample_set="sample_inputs", dtype="float32",
                   status="pass"))
    paths = write_matrix(build_matrix(store.rows(), store.meta()), out)
    store.close()
    assert all(p.parent == out and p.is_file() for p in paths)


def test_a_results_sqlite_folder_is_refused(tmp_path):
    (tmp_path / FILENAME).mkdir()
    with pytest.raises(InputError, match="not a file"):
        open_store(tmp_path)
    assert list((tmp_path / FILENAME).iterdir()) == []  # nothing nested in it


def test_a_second_sweep_on_one_folder_is_refused(tmp_path):
    with SweepLock(tmp_path):
        with pytest.raises(InputError, match=r"another sweep \(pid \d+\)"):
            SweepLock(tmp_path).__enter__()
    with SweepLock(tmp_path):  # released with the first
        pass


def test_sweep_takes_the_lock_before_it_runs(tmp_path, monkeypatch):
    from torchparity.app import sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "plan", lambda **_k: sweep_mod.Plan(cases=[], apis=[]))
    with SweepLock(tmp_path):
        with pytest.raises(InputError, match="another sweep"):
            sweep_mod.sweep(out=str(tmp_path), device="cpu", apis=["torch.abs"])
    summary = sweep_mod.sweep(out=str(tmp_path), device="cpu", apis=["torch.abs"], write_matrix=False)
    assert summary.planned == 0


@pytest.mark.parametrize("damage", ["bit flips", "garbage", "other schema", "bad meta"])
def test_a_damaged_store_is_one_line(tmp_path, damage):
    path = tmp_path / FILENAME
    if damage == "garbage":
        path.write_bytes(b"\x00\xff" * 3000)
    elif damage == "other schema":
        db = sqlite3.connect(str(path))
        db.executescript("CREATE TABLE results (x TEXT); CREATE TABLE meta (key TEXT, value TEXT);")
        db.commit()
        db.close()
    else:
        store = open_store(tmp_path)
        for i in range(300):
            store.add(dict(api=f"torch.api{i}", variant="v", sample_set="s", dtype="float32",
                           status="pass", detail="x" * 200))
        store.set_meta({"device": {"spec": "cpu"}})
        store.close()
        db = sqlite3.connect(str(path))
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        if damage == "bad meta":
            db = sqlite3.connect(str(path))
            db.execute("UPDATE meta SET value = '{not json'")
            db.commit()
            db.close()
        else:
            data = bytearray(path.read_bytes())
            for at in range(4096 + 16, len(data), 997):  # every page after the first
                data[at] ^= 0xFF
            path.write_bytes(bytes(data))
    with pytest.raises(InputError) as err:
        store = open_store(tmp_path, must_exist=True)
        store.meta()
        store.rows()
    assert str(tmp_path) in str(err.value) and "\n" not in str(err.value)


def test_a_matrix_that_cannot_be_written_names_where_the_results_are(tmp_path, monkeypatch):
    from torchparity.app import sweep as sweep_mod
    from torchparity.deliver import sweep_matrix

    def disk_full(doc, out_dir):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sweep_mod, "plan", lambda **_k: sweep_mod.Plan(cases=[], apis=[]))
    monkeypatch.setattr(sweep_matrix, "write_matrix", disk_full)
    with pytest.raises(OutputError) as err:
        sweep_mod.sweep(out=str(tmp_path), device="cpu", apis=["torch.abs"])
    assert str(tmp_path / FILENAME) in str(err.value) and "sweep-matrix" in str(err.value)
    assert (tmp_path / FILENAME).is_file()
    with SweepLock(tmp_path):  # the failed sweep let go of its lock
        pass


def test_deliverables_get_normal_permissions_under_the_umask(tmp_path):
    """Issue 10 point 10: files written atomically respect the umask (0644 under 0022),
    not the 0600 of a temporary file."""
    import os
    import stat

    from torchparity.results.store import write_text_atomic

    old = os.umask(0o022)
    try:
        write_bundle(_report(), tmp_path / "bundle")
        write_text_atomic(tmp_path / "one.txt", "x")
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "bundle").rglob("*") if p.is_file()] + [tmp_path / "one.txt"]
    assert len(files) >= 3
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files}
    assert set(modes.values()) == {0o644}, modes


def test_an_interrupted_sweep_marks_its_matrix_incomplete(tmp_path, monkeypatch):
    """Issue 10 point 10: Ctrl-C mid-sweep keeps what ran, and the matrix says it is not whole
    (a field in matrix.json, a line in matrix.md)."""
    from torchparity.app import sweep as sweep_mod
    from torchparity.run.pool import CaseEvent

    class StoppedPool:
        def run(self, payloads, timeouts, on_event):
            on_event(CaseEvent(index=0, kind="crash", detail="worker died"))
            raise KeyboardInterrupt

    monkeypatch.setattr(runloop, "make_executor", lambda *a, **k: StoppedPool())
    with pytest.raises(KeyboardInterrupt):
        sweep_mod.sweep(out=str(tmp_path), device="cpu", apis=["torch.abs"], jobs=1)
    doc = json.loads((tmp_path / "matrix.json").read_text(encoding="utf-8"))
    assert doc["incomplete"]["recorded"] == 1 and doc["incomplete"]["planned"] > 1
    assert "Incomplete" in (tmp_path / "matrix.md").read_text(encoding="utf-8")
