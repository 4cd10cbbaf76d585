"""``gentest --style npu`` (issue 46 item 7): files for Ascend/pytorch's test tree that import
only torch, torch_npu and torch.testing._internal; the emulated device only through a
conftest outside them (``torchparity.npu_testing.CONFTEST``)."""

from __future__ import annotations

import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchparity.app.gentest import gentest
from torchparity.deliver.gentest import file_name
from torchparity.results.models import (
    Analysis,
    ApiReport,
    DeviceInfo,
    Environment,
    Report,
    ScenarioResult,
    Text,
    Verdict,
)

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
# what a file may import: the two projects and their testing helpers, and the standard
# library (the code-block cases' own imports: math, warnings, ...)
ALLOWED_ROOTS = {"torch", "torch_npu"} | set(sys.stdlib_module_names)


def imported_roots(text: str) -> set:
    tree = ast.parse(text)
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots.add((node.module or "").split(".")[0])
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                ("__import__", "import_module")) and node.args:
            # a scenario's own dynamic import (torch.backends.cuda by a variable): only a
            # literal name can be checked, and it must not be torchparity
            # (a torch.package importer's import_module reads its own package, not sys.path)
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                root = first.value.split(".")[0]
                if root == "torchparity" or ast.unparse(node.func) in (
                        "__import__", "importlib.import_module"):
                    roots.add(root)
    return roots


def _report(spec="emu:ascend-a2"):
    t = Text(en="x", zh="x")
    rows = [ScenarioResult(id="fmod", source="opinfo", dtype="int16", status="unsupported",
                           cause="dtype_limit",
                           detail="fmod: call aclnnFmodTensor failed\n\"\"\"; import os #"),
            ScenarioResult(id="fmod", source="opinfo", dtype="float32", status="pass")]
    api = ApiReport(name="torch.fmod", qualified_name="torch.fmod",
                    analysis=Analysis(qualified_name="torch.fmod", kind="function",
                                      implementation="builtin"),
                    scenarios=rows, verdict=Verdict(status="partial", summary=t))
    return Report(tool_version="0", created="now",
                  environment=Environment(os="x", arch="x", python="3", torch="2.13",
                                          device_name="Ascend910B3 (emulated)"),
                  device=DeviceInfo(type="npu", name="Ascend910B3 (emulated)", emulated=True,
                                    spec=spec), apis=[api])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = tmp_path_factory.mktemp("npu")
    files = gentest(["torch.fmod", "torch.Tensor.element_size"], "npu", str(out),
                    report=_report(), max_samples=2, dtypes=["float32", "int16"])
    return out, files


def test_npu_files_import_no_torchparity_and_name_their_op_db_entries(made):
    out, files = made
    assert sorted(f.name for f in files) == ["test_Tensor_element_size.py", "test_fmod.py"]
    for f in files:
        text = (out / f.name).read_text(encoding="utf-8")
        roots = imported_roots(text)
        assert "torchparity" not in roots and roots <= ALLOWED_ROOTS, (f.name, roots)
        assert 'instantiate_device_type_tests(' in text and 'only_for="privateuse1"' in text
        assert "TORCHPARITY_DEVICE" not in text  # the device is the test framework's
    fmod = (out / "test_fmod.py").read_text(encoding="utf-8")
    assert "(op.name, op.variant_test_name) == ('fmod', '')" in fmod
    assert "max_samples=2" in fmod  # check's cap: the same samples check judged


def test_a_recorded_refusal_is_a_skip_with_the_fact_not_a_failing_test(made):
    out, _ = made
    tree = ast.parse((out / "test_fmod.py").read_text(encoding="utf-8"))
    tests = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
             and n.name.startswith("test_")}
    limited = next(n for name, n in tests.items() if name.endswith("_recorded_limit"))
    skip = next(d for d in limited.decorator_list if ast.unparse(d).startswith("unittest.skipIf"))
    assert ast.unparse(skip.args[0]) == "ON_LIMITS_CHIP"
    reason = skip.args[1].value
    assert "int16" in reason and "dtype_limit" in reason and "aclnnFmodTensor" in reason
    assert "recorded by torchparity check on emu:ascend-a2 (emulated), chip Ascend910B3" in reason
    ops = next(d for d in limited.decorator_list if ast.unparse(d).startswith("ops("))
    assert "torch.int16" in ast.unparse(ops) and "torch.float32" not in ast.unparse(ops)
    plain = next(n for name, n in tests.items() if not name.endswith("_limit"))
    assert "torch.float32" in ast.unparse(plain.decorator_list[0])
    # the hostile detail is one string constant, no statement
    assert "import os" not in [ast.unparse(n) for n in tree.body]


def test_code_block_cases_are_their_own_functions(made):
    out, _ = made
    text = (out / "test_Tensor_element_size.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert "Tensor_element_size" in defs  # the scenario code, inlined
    assert "_check_code(self, Tensor_element_size, device, dtype" in text


def test_files_pass_ruff(made):
    out, _ = made
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated",
                           str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_conftest_stands_the_emulator_in_for_torch_npu():
    from torchparity import npu_testing

    assert "npu_testing.activate()" in npu_testing.CONFTEST
    ast.parse(npu_testing.CONFTEST)


# ---------------------------------------------------------------- slow: a fixed-seed sample

SEED = 46
PER_SOURCE = 3
EMU = "emu:ascend-a2"
FAULT = "numeric-1e-2"  # every floating compute op's output off by 1e-2 relative


def draw(seed: int = SEED, per_source: int = PER_SOURCE):
    """``per_source`` APIs of each source with hand-written, OpInfo or code-block cases,
    drawn in a fixed order (``random.Random(seed)``); an API none of whose cases an npu
    file can hold (all random draws, re-made scenarios, ...) gives way to the next."""
    from torchparity.scenarios import registry, sources
    from torchparity.scenarios.sources import opinfo as so
    from torchparity.scenarios.sources.base import BlockSource

    registry.load_suites([])
    pools = {"hand": sorted(registry.registered_apis()),
             "opinfo": sorted({e.api for e in so.entries()})}
    for s in sources.all_sources():
        if isinstance(s, BlockSource):
            pools[s.name] = sorted({a for r in s.table() for a in getattr(r, "apis", ())})
    rng = random.Random(seed)
    picked = {}
    for name, apis in sorted(pools.items()):
        got = []
        for api in rng.sample(apis, len(apis)):
            if len(got) == per_source:
                break
            try:
                if gentest([api], "npu", None, max_samples=2):
                    got.append(api)
            except Exception:  # noqa: BLE001  (an API gentest refuses: the next one)
                continue
        picked[name] = got
    return picked


def _ascend_tree(root: Path, files: Path, base: Path = None) -> Path:
    """A folder laid out like Ascend/pytorch's test/ (or a copy of ``base``, a real one):
    the files under test/npu/, and a conftest that stands torchparity's emulated device in
    for torch_npu."""
    from torchparity import npu_testing

    test = root / "test"
    if base is not None:
        shutil.copytree(base, test, symlinks=True)
        assert not (test / "conftest.py").exists(), "the checkout has a conftest of its own"
    (test / "npu").mkdir(parents=True, exist_ok=True)
    for f in files.glob("test_*.py"):
        assert not (test / "npu" / f.name).exists(), f"{f.name} is a file of the checkout"
        shutil.copy(f, test / "npu" / f.name)
    (test / "conftest.py").write_text(npu_testing.CONFTEST, encoding="utf-8")
    return test


def _pytest(test: Path, fault: str = "", log: Path = None, targets=("npu",)):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TORCHPARITY_") and k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    env["PYTHONPATH"] = str(SRC)  # torchparity for the conftest only, never for the files
    if fault:
        env["TORCHPARITY_EMU_FAULT"] = fault
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
                           "-o", "addopts=", *targets] + (["--junitxml", str(log)] if log else []),
                          capture_output=True, text=True, env=env, cwd=str(test), timeout=1800)


def _by_file(junit: Path):
    """{file: {passed, failed, skipped}} from pytest's JUnit XML."""
    import xml.etree.ElementTree as ET

    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("classname", "").split(".")[1] + ".py"
        row = out.setdefault(name, {"passed": 0, "failed": 0, "skipped": 0})
        kinds = {c.tag for c in case}
        row["failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds
            else "passed"] += 1
    return out


ASCEND_ENV = "TORCHPARITY_ASCEND_TESTS"  # the test/ folder of an Ascend/pytorch checkout


@pytest.fixture(scope="module")
def sample_files(tmp_path_factory):
    """The fixed-seed sample checked on the emulated device with ``--gentest npu``: its
    draw and the folder of the files written."""
    picked = draw()
    apis = [a for got in picked.values() for a in got]
    assert len(apis) >= 20 and len([s for s, got in picked.items() if got]) >= 8, picked
    out = tmp_path_factory.mktemp("sample") / "bundle"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", *apis, "--device", EMU,
                           "--out", str(out), "--gentest", "npu", "--max-samples", "2",
                           "--no-html", "--no-screenshot", "--quiet", "--timeout", "60"],
                          capture_output=True, text=True, timeout=2400,
                          env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert proc.returncode in (0, 1), proc.stderr[-3000:]  # 1: some API is not supported
    files = out / "tests" / "npu"
    written = sorted(p.name for p in files.glob("test_*.py"))
    assert written == sorted(file_name(a) for a in apis)
    return picked, files, written


@pytest.mark.slow
def test_a_fixed_seed_sample_runs_in_an_ascend_tree_and_turns_red_under_a_fault(tmp_path, sample_files):
    picked, files, written = sample_files
    for name in written:
        roots = imported_roots((files / name).read_text(encoding="utf-8"))
        assert "torchparity" not in roots and roots <= ALLOWED_ROOTS, (name, roots)

    test = _ascend_tree(tmp_path / "ascend", files)
    run = _pytest(test, log=tmp_path / "clean.xml")
    clean = _by_file(tmp_path / "clean.xml")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert sorted(clean) == written
    assert sum(1 for r in clean.values() if r["passed"]) >= 20, clean

    faulty = _pytest(test, fault=FAULT, log=tmp_path / "fault.xml")
    red = {f: r for f, r in _by_file(tmp_path / "fault.xml").items() if r["failed"]}
    assert faulty.returncode == 1 and len(red) >= 3, faulty.stdout[-3000:]
    assert re.search(r"Mismatched elements|Greatest (absolute|relative) difference",
                     faulty.stdout), faulty.stdout[-3000:]
    (tmp_path / "numbers.json").write_text(json.dumps({
        "apis": picked, "files": len(written), "tests_passed": sum(r["passed"] for r in clean.values()),
        "tests_skipped": sum(r["skipped"] for r in clean.values()),
        "red_files_under_fault": sorted(red)}, indent=1))
    print(json.dumps({"files": len(written), "red": len(red)}))


@pytest.mark.slow
def test_the_sample_runs_unchanged_inside_a_real_ascend_checkout(tmp_path, sample_files):
    """The same files copied into a copy of a real Ascend/pytorch test/ folder (its
    ``testing/`` helpers and every other file beside them), run there by pytest from that
    folder with only a conftest added: the clean run passes, the faulty one turns red."""
    base = os.environ.get(ASCEND_ENV)
    if not base:
        pytest.skip(f"{ASCEND_ENV} is not set (the test/ folder of an Ascend/pytorch checkout)")
    picked, files, written = sample_files
    test = _ascend_tree(tmp_path / "checkout", files, base=Path(base))
    targets = [f"npu/{name}" for name in written]
    run = _pytest(test, log=tmp_path / "clean.xml", targets=targets)
    clean = _by_file(tmp_path / "clean.xml")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert sorted(clean) == written
    assert sum(1 for r in clean.values() if r["passed"]) >= 20, clean
    faulty = _pytest(test, fault=FAULT, log=tmp_path / "fault.xml", targets=targets)
    red = {f: r for f, r in _by_file(tmp_path / "fault.xml").items() if r["failed"]}
    assert faulty.returncode == 1 and len(red) >= 3, faulty.stdout[-3000:]
    print(json.dumps({"files": len(written), "passed": sum(r["passed"] for r in clean.values()),
                      "skipped": sum(r["skipped"] for r in clean.values()), "red": len(red)}))
