"""torchparity scaffold API: a suite module that imports, registers, and is never a pass."""

import ast
import json
import os
import subprocess
import sys

import pytest

from torchparity.app.scaffold import scaffold


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "torchparity", *args], capture_output=True,
                          text=True, env=dict(os.environ), timeout=600)


@pytest.mark.slow
def test_scaffold_of_vjp_is_prefilled_and_check_reports_it_as_not_done(tmp_path):
    sc = scaffold("torch.autograd.functional.vjp", str(tmp_path / "suites"))
    text = sc.path.read_text(encoding="utf-8")
    ast.parse(text)
    assert sc.examples == 1 and sc.runnable == 1 and sc.covered_by == []
    assert "# Signature: vjp(func, inputs, v=None, create_graph=False, strict=False)" in text
    assert "#   >>> vjp(exp_reducer, inputs, v)" in text and "#   ...     return x.exp().sum(dim=1)" in text
    # the footprint of the docstring run: the example's own ops and the API's
    assert "aten.exp [float32]" in text and "(api)" in text
    assert "TODO (open questions)" in text and "raise NotRunnable(" in text

    # loaded with --scenarios, as a contributor would: it imports, registers, and is not done
    out = tmp_path / "o"
    proc = _cli("check", sc.api, "--device", "cpu", "--scenarios", str(sc.path), "--out", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    api = json.loads((out / "report.json").read_text(encoding="utf-8"))["apis"][0]
    (todo,) = [r for r in api["scenarios"] if r["id"] == "todo"]
    assert todo["source"] == "hand"
    assert (todo["status"], todo["cause"]) == ("skip", "not_comparable")
    assert "not written yet" in todo["detail"]
    # the hand suite now covers it, so the docstring source yields: nothing runs, nothing passes
    assert all(r["status"] != "pass" for r in api["scenarios"])
    assert api["verdict"]["status"] not in ("supported", "partial")


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_scaffold_cli_prints_or_writes_and_a_bad_name_is_one_line(tmp_path):
    proc = _cli("scaffold", "torch.autograd.functional.hvp", "--no-run")
    assert proc.returncode == 0, proc.stderr
    assert "API = 'torch.autograd.functional.hvp'" in proc.stdout and "not run here" in proc.stdout
    proc = _cli("scaffold", "torch.autograd.functionl.hvp")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "did you mean" in proc.stderr
    assert "Traceback" not in proc.stderr
