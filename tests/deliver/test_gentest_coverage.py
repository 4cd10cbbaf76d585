"""benchmarks/gentest_coverage.py: its sample, its whole-list estimate and its comparison
with check's rows (fast), and, slow, one real run on two APIs (check, gentest, pytest on
cpu and emu:ascend-a2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import benchmark

REPO = Path(__file__).resolve().parents[2]


def _bench():
    return benchmark("gentest_coverage")


LISTED = ([f"torch.distributions.D{i}.mean" for i in range(90)]
          + [f"torch.Tensor.m{i}" for i in range(60)] + ["torch.cuda.graph", "torch.hub.get_dir"])


def test_the_sample_is_fixed_by_its_seed_and_reaches_every_namespace():
    g = _bench()
    a, b = g.stratified(LISTED, 12, 0), g.stratified(LISTED, 12, 0)
    assert a == b and len(a) == 12 and a != g.stratified(LISTED, 12, 1)
    assert {g.namespace(x) for x in a} == {"torch.distributions", "torch.Tensor", "torch.cuda", "torch.hub"}
    assert g.stratified(LISTED, 500, 0) == LISTED  # a sample as big as the list is the list


def test_the_estimate_weights_each_namespace_by_its_size_in_the_list():
    g = _bench()
    sample = g.stratified(LISTED, 12, 0)
    # the two one-API namespaces pass, nothing else: 2 APIs of the list, not 2/12 of it
    passing = ["torch.cuda.graph", "torch.hub.get_dir"]
    w = g.extrapolated(passing, sample, LISTED)
    assert w["estimate"] == 2 and w["low_95"] == 2
    assert w["unweighted"]["estimate"] == round(len(LISTED) * 2 / 12)  # what it was before
    every = g.extrapolated(sample, sample, LISTED)
    assert every["estimate"] == len(LISTED) and every["high_95"] == len(LISTED)
    assert every["low_95"] < len(LISTED)  # 10 of 150 drawn: not certain


def test_a_check_row_wants_the_matching_test_outcomes():
    g = _bench()

    def t(verdict):
        return {"verdict": verdict, "status": "", "cause": "", "detail": ""}

    assert g.agrees({"status": "pass", "cause": None}, [t("pass"), t("skip")])[0]
    assert not g.agrees({"status": "pass", "cause": None}, [t("pass"), t("fail")])[0]
    assert g.agrees({"status": "fail", "cause": "numeric"}, [t("fail")])[0]
    assert not g.agrees({"status": "fail", "cause": "numeric"}, [t("pass")])[0]
    assert g.agrees({"status": "unsupported", "cause": "dtype_limit"}, [t("refused")])[0]
    assert not g.agrees({"status": "unsupported", "cause": "dtype_limit"}, [t("pass")])[0]
    assert g.agrees({"status": "skip", "cause": None}, [t("skip")])[0]
    assert "timeout" not in g.RED and "timeout" in g.NO_ANSWER  # a timed-out row is not compared


def test_the_whole_list_is_an_option():
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gentest_coverage.py"), "--help"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "--all" in out.stdout and "--sample" in out.stdout


@pytest.mark.slow
def test_two_apis_get_files_that_pass_on_cpu_and_emulated_and_agree_with_check(tmp_path):
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "gentest_coverage.py"), "--api", "torch.logaddexp2",
         "--api", "torch.Tensor.type_as", "--max-samples", "1", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-2000:]
    s = json.loads((tmp_path / "gentest_coverage.json").read_text())
    assert s["with_file"] == 2 and s["green_cpu"] == 2 and s["green_emu"] == 2
    assert s["rows_compared"] > 0 and s["rows_agree"] + len(s["rows_not_compared"]) >= s["rows_compared"]
    assert not s["disagreements"], s["disagreements"]
    assert s["passing_files_agreeing"] == 2
