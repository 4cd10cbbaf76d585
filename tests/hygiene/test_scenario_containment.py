"""A ``--scenarios`` module that ends the process or leaves a thread running at import is
contained and named in one line (issue 47, point 7): it is imported first in a throwaway
process with a time limit (was: ``os._exit(3)`` ended check silently, a non-daemon thread
kept it from ever exiting)."""

import sys

import pytest

from torchparity import cli
from torchparity.app.check_inputs import probe_scenario_modules
from torchparity.errors import InputError


def _check(monkeypatch, capsys, path):
    monkeypatch.setattr(sys, "argv", ["torchparity", "check", "torch.abs", "--device", "cpu", "-q",
                                      "--scenarios", str(path)])
    with pytest.raises(SystemExit) as done:
        cli.main()
    return done.value.code, capsys.readouterr().err


def test_os_exit_at_import_is_named_not_silent(tmp_path, monkeypatch, capsys):
    path = tmp_path / "exits.py"
    path.write_text("import os\nos._exit(3)\n", encoding="utf-8")
    code, err = _check(monkeypatch, capsys, path)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "exits.py" in err and "ended the process (exit status 3" in err


def test_a_thread_left_running_at_import_is_named(tmp_path, monkeypatch, capsys):
    path = tmp_path / "threads.py"
    path.write_text("import threading, time\n"
                    "threading.Thread(target=time.sleep, args=(3600,), name='left-running').start()\n",
                    encoding="utf-8")
    code, err = _check(monkeypatch, capsys, path)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "left-running" in err and "threads.py" in err


def test_a_module_that_hangs_at_import_is_stopped(tmp_path):
    path = tmp_path / "hangs.py"
    path.write_text("import time\ntime.sleep(3600)\n", encoding="utf-8")
    with pytest.raises(InputError, match="took over 1 s"):
        probe_scenario_modules([str(path)], limit_s=1.0)


def test_a_plain_scenario_module_passes_the_probe(tmp_path):
    path = tmp_path / "fine.py"
    path.write_text("X = 1\n", encoding="utf-8")
    probe_scenario_modules([str(path)])
