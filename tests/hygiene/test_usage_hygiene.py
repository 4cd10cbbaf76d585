"""Issue 22's smaller probes: usage errors of whatever click typer bundles, malformed store
URLs, vendor docs that are not files, the vendor-list mode's lock and incomplete mark, no
lock file left behind, no private names suggested. Driven in-process: fast."""

import json
import os
import sys
import types

import pytest

from torchparity import cli
from torchparity.app import runloop
from torchparity.errors import InputError, Terminated
from torchparity.results.sweep_store import SweepLock


def _cli(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["torchparity", *args])
    with pytest.raises(SystemExit) as done:
        cli.main()
    return done.value.code, capsys.readouterr().err


def _one_line_exit_2(code, err):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in err and "Traceback" not in err, err


def _separate_click(monkeypatch):
    """A ``click`` package installed next to typer's bundled one: its exception classes
    are other classes than the ones typer raises."""
    exc = types.ModuleType("click.exceptions")

    class ClickException(Exception):
        exit_code = 1

    class Abort(RuntimeError):
        pass

    exc.ClickException, exc.Abort, exc.UsageError = ClickException, Abort, type("UsageError", (ClickException,), {})
    pkg = types.ModuleType("click")
    pkg.exceptions = exc
    monkeypatch.setitem(sys.modules, "click", pkg)
    monkeypatch.setitem(sys.modules, "click.exceptions", exc)


@pytest.mark.parametrize("click", ["bundled", "also installed"])
@pytest.mark.parametrize("args", [("check", "--bogus-flag"), ("check", "torch.mm", "--jobs", "0"),
                                  ("nosuchcmd",)])
def test_usage_errors_are_one_line_exit_2(monkeypatch, capsys, args, click):
    if click == "also installed":
        _separate_click(monkeypatch)
    _one_line_exit_2(*_cli(monkeypatch, capsys, *args))


@pytest.mark.parametrize("url", ["postgresql://u:p@127.0.0.1:abc/db", "postgresql://u:p@[::1",
                                 "postgresql://u@127.0.0.1:99999/db"])
def test_a_malformed_store_url_is_one_line(monkeypatch, capsys, tmp_path, url):
    code, err = _cli(monkeypatch, capsys, "sweep-matrix", url, "--out", str(tmp_path / "m"))
    _one_line_exit_2(code, err)
    assert ":p@" not in err  # the password is not echoed


def _docs(tmp_path):
    version = tmp_path / "docs" / "pytorch_2-13-0"
    version.mkdir(parents=True)
    (version / "torch.md").write_text("# torch\n\n### torch.mm\n", encoding="utf-8")
    return version.parent


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_vendor_docs_symlinked_to_dev_zero_are_refused_unread(tmp_path):
    from torchparity.evidence.vendor_docs import load_vendor_docs

    docs = _docs(tmp_path)
    (docs / "pytorch_2-13-0" / "zero.md").symlink_to("/dev/zero")
    with pytest.raises(InputError, match="not a regular file"):
        load_vendor_docs(docs, "2.13.0")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_among_vendor_docs_does_not_hang(tmp_path):
    from torchparity.evidence.vendor_docs import load_vendor_docs

    docs = _docs(tmp_path)
    os.mkfifo(docs / "pytorch_2-13-0" / "pipe.md")  # nobody writes it: a read blocks forever
    with pytest.raises(InputError, match="not a regular file"):
        load_vendor_docs(docs, "2.13.0")


def test_an_oversized_vendor_docs_file_is_refused(tmp_path):
    from torchparity.evidence.vendor_docs import read_docs_file

    path = tmp_path / "big.md"
    path.write_bytes(b"x" * 2048)
    with pytest.raises(InputError, match="over the"):
        read_docs_file(path, cap=1024)
    assert read_docs_file(path, cap=4096) == "x" * 2048


def _listed(tmp_path, **kw):
    from test_check_sources import _docs as listed_docs

    from torchparity.app.check_vendor import check_vendor_docs

    docs = listed_docs(tmp_path / "vdocs", ["torch.abs"])
    return check_vendor_docs(str(docs), out=str(tmp_path / "run"), device="cpu",
                             torch_version="2.13.0", jobs=1, dtypes=["float32"], max_samples=1, **kw)


@pytest.fixture
def listed_tests_path(monkeypatch):
    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "app")
    monkeypatch.syspath_prepend(here)


def test_the_vendor_list_mode_takes_the_sweep_lock(tmp_path, listed_tests_path):
    (tmp_path / "run").mkdir()
    with SweepLock(tmp_path / "run"):
        with pytest.raises(InputError, match="another sweep"):
            _listed(tmp_path)


@pytest.mark.parametrize("stop", [KeyboardInterrupt, Terminated])
def test_an_interrupted_vendor_list_run_marks_its_matrix_incomplete(tmp_path, monkeypatch, stop,
                                                                    listed_tests_path):
    from torchparity.run.pool import CaseEvent

    class StoppedPool:
        def run(self, cases, timeouts, on_event):
            on_event(CaseEvent(index=0, kind="crash", detail="worker died"))
            raise stop()

    monkeypatch.setattr(runloop, "make_executor", lambda *a, **k: StoppedPool())
    with pytest.raises(stop):  # SIGTERM stays Terminated: exit 143, not 130
        _listed(tmp_path)
    doc = json.loads((tmp_path / "run" / "matrix.json").read_text(encoding="utf-8"))
    assert doc["incomplete"]["recorded"] == 1 and doc["incomplete"]["planned"] >= 1
    assert "Incomplete" in (tmp_path / "run" / "matrix.md").read_text(encoding="utf-8")
    assert not (tmp_path / "run" / "sweep.lock").exists()


def test_a_finished_sweep_leaves_no_lock_file(tmp_path):
    with SweepLock(tmp_path):
        assert (tmp_path / "sweep.lock").read_text().strip() == str(os.getpid())
    assert not (tmp_path / "sweep.lock").exists()
    with SweepLock(tmp_path):  # and the next one takes it as before
        pass


def test_a_lock_removed_under_a_waiting_sweep_is_taken_anew(tmp_path):
    """The holder removes the file between another's open and flock: that one must lock
    the file that is there, not the removed one."""
    first = SweepLock(tmp_path).__enter__()
    first.__exit__(None, None, None)
    stale = os.open(str(tmp_path / "sweep.lock"), os.O_RDWR | os.O_CREAT)  # an old inode
    os.unlink(tmp_path / "sweep.lock")
    with SweepLock(tmp_path) as lock:
        assert os.path.samestat(os.fstat(lock.fd), os.stat(tmp_path / "sweep.lock"))
    os.close(stale)


def test_unknown_names_are_not_offered_private_names():
    from torchparity.api.resolve import resolve
    from torchparity.errors import UnknownApiError

    with pytest.raises(UnknownApiError) as wrong:
        resolve("torch.foobar")
    assert "torch._foobar" not in str(wrong.value) and "did you mean" in str(wrong.value)
    with pytest.raises(UnknownApiError) as private:
        resolve("torch._foobr")  # asked for a private name: private ones may be offered
    assert "torch._foobar" in str(private.value)
