"""Nothing of the user's overwritten (issue 47, point 4): a generated test file carries a
marker line; a file at its path without that line is the user's and is kept (the user told,
``--force`` overwrites); two checks on one ``--out`` cannot interleave (a lock, as sweep's)."""

import os
import sys

import pytest

from torchparity import cli
from torchparity.app.gentest import gentest
from torchparity.deliver.artifacts import GENERATED_MARKER, artifacts, is_generated
from torchparity.deliver.gentest import (
    KEPT,
    OVERWRITTEN,
    REPLACED,
    WRITTEN,
    file_name,
    write_generated,
)
from torchparity.results.sweep_store import SweepLock

FIXTURE_API = "tp_gentest_scenarios.target"
MINE = "# my own tests, hand-written\ndef test_mine():\n    assert True\n"


def test_write_generated_keeps_a_file_without_the_marker(tmp_path):
    path = tmp_path / "test_x.py"
    assert write_generated(path, '"""gen"""\n') == WRITTEN
    assert path.read_text(encoding="utf-8").startswith(GENERATED_MARKER) and is_generated(path)
    assert write_generated(path, '"""gen 2"""\n') == REPLACED
    assert "gen 2" in path.read_text(encoding="utf-8")
    path.write_text(MINE, encoding="utf-8")
    assert write_generated(path, '"""gen 3"""\n') == KEPT
    assert path.read_text(encoding="utf-8") == MINE
    assert write_generated(path, '"""gen 3"""\n', force=True) == OVERWRITTEN
    assert "gen 3" in path.read_text(encoding="utf-8")


def test_a_fifo_at_a_generated_path_is_neither_read_nor_replaced(tmp_path):
    path = tmp_path / "test_x.py"
    os.mkfifo(str(path))
    assert write_generated(path, '"""gen"""\n') == KEPT  # would block if it were read
    assert not path.is_file()


def test_gentest_out_keeps_the_users_file(tmp_path, fixture_path, monkeypatch, capsys):
    out = tmp_path / "tests" / "npu"
    out.mkdir(parents=True)
    mine = out / file_name(FIXTURE_API)
    mine.write_text(MINE, encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["torchparity", "gentest", FIXTURE_API, "--style", "npu",
                                      "--out", str(out), "--scenarios", "tp_gentest_scenarios"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    printed = capsys.readouterr().out
    assert done.value.code == 0
    assert mine.read_text(encoding="utf-8") == MINE
    assert f"kept {mine}" in printed and "summary: 1 kept" in printed
    # a bundle lists only its own files: the user's is no generated test of the report
    assert artifacts(tmp_path)["tests"] == {}


def test_gentest_force_overwrites(tmp_path, fixture_path):
    mine = tmp_path / file_name(FIXTURE_API)
    mine.write_text(MINE, encoding="utf-8")
    files = gentest([FIXTURE_API], "npu", str(tmp_path), scenario_modules=["tp_gentest_scenarios"],
                    force=True)
    assert [f.outcome for f in files] == [OVERWRITTEN]
    assert mine.read_text(encoding="utf-8").startswith(GENERATED_MARKER)


def test_a_second_check_on_one_out_is_refused(tmp_path, monkeypatch, capsys):
    out = tmp_path / "bundle"
    out.mkdir()
    with SweepLock(out, name="check.lock", what="check"):
        monkeypatch.setattr(sys, "argv", ["torchparity", "check", "torch.abs", "--device", "cpu",
                                          "-q", "--out", str(out)])
        with pytest.raises(SystemExit) as done:
            cli.main()
    err = capsys.readouterr().err
    assert done.value.code == 2 and "another check" in err and len(err.strip().splitlines()) == 1
    assert not (out / "report.json").exists()


def _empty_report():
    from torchparity.results.models import DeviceInfo, Environment, Report

    return Report(tool_version="0", created="now",
                  environment=Environment(os="Linux", arch="x86_64", python="3", torch="2.13"),
                  device=DeviceInfo(type="cpu", spec="cpu"), apis=[])


def _writes_a_test_file(report, folder):
    (folder / "tests" / "npu").mkdir(parents=True, exist_ok=True)
    write_generated(folder / "tests" / "npu" / "test_abs.py", '"""generated"""\n')


def test_check_out_keeps_the_users_test_file_in_the_bundle(tmp_path):
    """check --out renders into a staging folder and moves it into place: the move, too,
    leaves a file of the user's alone (was: replaced by the generated one, without a word)."""
    from torchparity.deliver.bundle import write_bundle

    out = tmp_path / "bundle"
    (out / "tests" / "npu").mkdir(parents=True)
    mine = out / "tests" / "npu" / "test_abs.py"
    mine.write_text(MINE, encoding="utf-8")
    kept = write_bundle(_empty_report(), out, [_writes_a_test_file])
    assert kept == ["tests/npu/test_abs.py"] and mine.read_text(encoding="utf-8") == MINE
    assert artifacts(out)["tests"] == {}  # the report links no file of the user's
    assert write_bundle(_empty_report(), out, [_writes_a_test_file], force=True) == []
    assert is_generated(mine)
    assert write_bundle(_empty_report(), out, [_writes_a_test_file]) == []  # ours now: replaced
