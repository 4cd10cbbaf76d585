"""gentest --tests: the upstream tests the census finds are replayed by the generated files
too, with the test tree read from $TORCHPARITY_TESTS (no folder of this machine in a file),
and their outcomes on the emulated A2 are check's rows."""

import ast
import json
import os
import subprocess
import sys

import pytest
from upstream_tree import IDS, write_tree

from torchparity.app.check import check
from torchparity.app.gentest import gentest
from torchparity.errors import InputError
from torchparity.run import standalone

EMU = "emu:ascend-a2"


def _cases(text):
    tree = ast.parse(text)
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "CASES")
    return ast.literal_eval(ast.unparse(node.value).replace("LIMITS_DEVICE", "None"))


def test_replays_become_cases_that_name_no_folder(tmp_path):
    tree = write_tree(tmp_path / "upstream-test-tree")
    files = gentest(["torch.mm"], "npu-judged", str(tmp_path / "out"), tests_dir=str(tree),
                    dtypes=["float32"], max_samples=1)
    text = "\n".join(f.text for f in files)
    cases = _cases(text)
    replays = {k: v for k, v in cases.items() if k.startswith("upstream:")}
    # float32 keeps the device-generic test's float32 and every test run in its own dtypes
    assert set(replays) == {f"upstream:{IDS[k]}" for k in ("square", "wrong_shape", "float32",
                                                           "float64", "skip")}
    assert replays[f"upstream:{IDS['square']}"]["runs"] == [("float32", None)]
    assert replays[f"upstream:{IDS['float32']}"]["runs"] == [("-", None)]
    assert all(c["case"]["root"] == standalone.FROM_ENV for c in replays.values())
    assert str(tree) not in text and "upstream-test-tree" not in text
    assert "opinfo:mm" in cases  # the other sources' cases stay in the same file
    case = replays[f"upstream:{IDS['float32']}"]["case"]
    os.environ.pop(standalone.TESTS_ENV, None)
    assert standalone.TESTS_ENV in standalone.missing_tree(case)
    os.environ[standalone.TESTS_ENV] = str(tree)
    try:
        assert standalone.missing_tree(case) is None
        assert standalone.located(case)["root"] == str(tree)
    finally:
        os.environ.pop(standalone.TESTS_ENV, None)


def test_without_a_tree_no_replay_and_a_missing_tree_is_one_line(tmp_path):
    files = gentest(["torch.mm"], "npu-judged", None, dtypes=["float32"], max_samples=1)
    assert not any(k.startswith("upstream:") for f in files for k in _cases(f.text))
    with pytest.raises(InputError, match="--tests .*: no such folder"):
        gentest(["torch.mm"], "npu-judged", None, tests_dir=str(tmp_path / "absent"))


@pytest.mark.slow  # check with replays, then the file under pytest on the emulated A2 (~1-2 min)
def test_replay_outcomes_on_the_emulator_are_checks_rows(tmp_path):
    tree = write_tree(tmp_path / "tree")
    report = check(["torch.mm"], EMU, tests_dir=str(tree), dtypes=["float32", "float64"],
                   max_samples=1)
    rows = {(s.id, s.dtype): s for s in report.apis[0].scenarios if s.source == "upstream"}
    out = tmp_path / "files"
    gentest(["torch.mm"], "npu-judged", str(out), report=report, tests_dir=str(tree),
            dtypes=["float32", "float64"], max_samples=1)
    log = tmp_path / "log.jsonl"
    env = dict(os.environ, TORCHPARITY_GENTEST_LOG=str(log), TORCHPARITY_TESTS=str(tree))
    env.pop("TORCHPARITY_DEVICE", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-o", "addopts=", "--torchparity-device",
                           EMU, "."], capture_output=True, text=True, env=env, cwd=str(out),
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    logged = [json.loads(ln) for ln in log.read_text(encoding="utf-8").splitlines()]
    replayed = {(r["id"].split(":", 1)[1], r["dtype"]): r for r in logged
                if r["id"].startswith("upstream:")}
    assert set(replayed) == set(rows)
    for key, row in rows.items():
        got = replayed[key]
        assert (got["status"], got["cause"]) == (row.status, row.cause), (key, got, row)
    # float64 is refused on the A2 as check recorded it; a test failing on the CPU too skips
    assert replayed[(IDS["float64"], "-")]["verdict"] == "refused"
    assert replayed[(IDS["wrong_shape"], "-")]["verdict"] == "skip"
    assert replayed[(IDS["square"], "float32")]["verdict"] == "pass"
