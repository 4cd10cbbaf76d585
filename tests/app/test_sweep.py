"""Sweeps on the CPU: no false fails, resume, kill -9 safety, planning."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from torchparity.app.sweep import DTYPES, SourceCase, plan, sweep
from torchparity.errors import InputError

# one or two of each family: elementwise, reductions, index outputs, linalg, nn, fft,
# bitwise, random (with and without OpInfo skips), uninitialised, partial views
SUBSET = [
    "add", "mul", "div.no_rounding_mode", "exp", "atan2", "sum", "mean", "var_mean", "cumsum",
    "sort", "topk", "max.reduction_with_dim", "unique", "mm", "addmm", "linalg.vector_norm",
    "linalg.solve", "nn.functional.relu", "softmax", "nn.functional.conv2d",
    "nn.functional.layer_norm", "nn.functional.embedding", "nn.functional.normalize", "cdist",
    "nn.functional.dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.rrelu", "empty_like", "new_empty", "bitwise_and", "fft.fft", "where",
    "index_select", "scatter_add", "floor_divide", "nan_to_num", "as_strided.partial_views",
]
BAD = ("fail", "error", "crash", "timeout")


@pytest.mark.slow
def test_cpu_against_cpu_subset_has_no_false_fails(tmp_path):
    summary = sweep(out=str(tmp_path), device="cpu", catalogue=True, only=SUBSET, jobs=2)
    assert summary.planned == len(SUBSET) * len(DTYPES) == summary.ran
    bad = {k: v for k, v in summary.counts.items() if k in BAD}
    assert not bad, _offenders(tmp_path)
    assert summary.counts.get("pass", 0) > 150
    # a rerun skips what is done
    again = sweep(out=str(tmp_path), device="cpu", catalogue=True, only=SUBSET, jobs=2)
    assert (again.ran, again.already_done) == (0, summary.planned)
    with pytest.raises(InputError, match="holds a sweep on 'cpu'"):
        sweep(out=str(tmp_path), device="auto", catalogue=True, only=SUBSET)


def _offenders(out):
    db = sqlite3.connect(str(out / "results.sqlite"))
    return db.execute("SELECT api, variant, dtype, status, detail FROM results WHERE status IN "
                      "('fail','error','crash','timeout')").fetchall()


def _count(db_path):
    try:
        db = sqlite3.connect(str(db_path), timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_killed_sweep_resumes_without_lost_or_duplicated_rows(tmp_path):
    apis = tmp_path / "apis.txt"
    apis.write_text("torch.add\ntorch.mul\ntorch.sub\ntorch.exp\ntorch.sum\ntorch.nn.functional.relu\n")
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchparity", "sweep", "--apis", str(apis), "--device", "cpu",
         "--out", str(out), "--jobs", "1", "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while _count(out / "results.sqlite") < 8 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the parent's process group, mid-sweep
    proc.wait(timeout=30)
    before = {tuple(r[:4]): r[4] for r in sqlite3.connect(str(out / "results.sqlite")).execute(
        "SELECT api, variant, sample_set, dtype, status FROM results")}
    planned = len(plan(apis=[ln for ln in apis.read_text().split()], dtypes=DTYPES).cases)
    assert 8 <= len(before) < planned

    summary = sweep(out=str(out), device="cpu", apis=apis.read_text().split(), jobs=2)
    assert summary.already_done == len(before)
    assert summary.ran == planned - len(before)
    db = sqlite3.connect(str(out / "results.sqlite"))
    total, distinct = db.execute(
        "SELECT COUNT(*), COUNT(DISTINCT api || '|' || variant || '|' || sample_set || '|' || dtype) "
        "FROM results").fetchone()
    assert total == distinct == planned
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    after = {tuple(r[:4]): r[4] for r in db.execute(
        "SELECT api, variant, sample_set, dtype, status FROM results")}
    assert all(after[k] == v for k, v in before.items())  # nothing recorded was lost


def test_planning_namespaces_and_lists():
    p = plan(namespace="torch.nn.functional", dtypes=["float32"])
    # OpInfo cases, and the other sources' (nnutil's F leftovers such as fold; docstring examples)
    apis = {c.api if isinstance(c, SourceCase) else c.entry.api for c in p.cases}
    assert {c.scenario.source for c in p.cases if isinstance(c, SourceCase)} <= {"docstring", "hand", "module", "nnutil"}
    assert "torch.nn.functional.relu" in apis and "torch.nn.functional.normalize" in apis
    assert p.no_scenarios and all(n.startswith("torch.nn.functional.") for n in p.no_scenarios)
    assert not set(p.no_scenarios) & apis
    assert "torch.nn.functional.Optional" not in p.no_scenarios  # a typing import, not an API
    p = plan(apis=["torch.Tensor.add_", "torch.absolute"], dtypes=["float32"])
    assert {(c.entry.api, c.entry.variant) for c in p.cases} == {
        ("torch.Tensor.add_", "add[inplace]"), ("torch.absolute", "abs[alias:absolute]")}
    with pytest.raises(InputError, match="unknown"):
        plan(catalogue=True, dtypes=["float8"])


@pytest.mark.slow
def test_full_op_db_float32_has_no_false_fails(tmp_path):
    summary = sweep(out=str(tmp_path), device="cpu", catalogue=True, dtypes=["float32"])
    assert summary.planned >= 700
    assert not {k: v for k, v in summary.counts.items() if k in BAD}, _offenders(tmp_path)


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_cli_sweep_writes_the_matrix(tmp_path):
    apis = tmp_path / "apis.txt"
    apis.write_text("# two APIs\ntorch.dot\ntorch.nn.functional.normalize\ntorch.nn.functional.nope_nothing\n")
    out = tmp_path / "o"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "sweep", "--apis", str(apis),
                           "--device", "cpu", "--dtypes", "float32,int64", "--out", str(out), "-q"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "4 case(s) run" in proc.stdout and "no scenarios" in proc.stdout
    for name in ("results.sqlite", "matrix.json", "matrix.md", "matrix.csv"):
        assert (out / name).is_file()
    md = (out / "matrix.md").read_text(encoding="utf-8")
    assert "`torch.dot`" in md and "torch.nn.functional.nope_nothing" in md
    bad = subprocess.run([sys.executable, "-m", "torchparity", "sweep", "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "nothing to sweep" in bad.stderr
