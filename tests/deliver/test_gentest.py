"""Generated test files: lint-clean, green on the CPU, able to fail, not injectable."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import SEED_APIS

from torchparity.app.gentest import gentest
from torchparity.deliver.gentest import check_api_name, file_name, generate, safe_identifier
from torchparity.errors import InputError
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
FIXTURE_API = "tp_gentest_scenarios.target"


def _pytest(folder, *args, env=None):
    env = dict(env or os.environ)
    env.setdefault("TORCHPARITY_DEVICE", "cpu")
    return subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-o", "addopts=", *args, str(folder)],
                          capture_output=True, text=True, env=env, cwd=str(folder), timeout=600)


def _ruff(folder, *config):
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *config, str(folder)],
                          capture_output=True, text=True, cwd=str(folder), timeout=120)


@pytest.fixture(scope="module")
def seed_files(seed_bundle):
    """The files `check --gentest all` wrote for the five seed APIs (via gentest())."""
    return seed_bundle / "tests"


def test_one_file_per_api_and_style(seed_files):
    for style in ("device-generic", "npu-judged"):
        names = sorted(p.name for p in (seed_files / style).iterdir())
        assert names == sorted(file_name(a) for a in SEED_APIS)


def test_files_pass_ruff_with_project_and_default_rules(seed_files):
    proc = _ruff(seed_files, "--config", str(ROOT / "pyproject.toml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _ruff(seed_files, "--isolated")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_hard_coded_device_and_header_says_how_it_is_picked(seed_files):
    for path in seed_files.rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        header = ast.get_docstring(tree)
        # the npu style's device is the test framework's (only_for="privateuse1")
        assert ("instantiate_device_type_tests(" in text if path.parent.name == "npu"
                else "TORCHPARITY_DEVICE" in header), path
        assert 'device="npu"' not in text and ".npu()" not in text, path
        for node in ast.walk(tree):  # no device literal reaches a call, but the env default
            if isinstance(node, ast.Call) and ast.unparse(node.func) != "os.environ.get":
                for arg in list(node.args) + [k.value for k in node.keywords]:
                    if isinstance(arg, ast.Constant) and arg.value in ("npu", "npu:0", "cuda"):
                        raise AssertionError(f"{path}: hard-coded device in a call")


def test_device_generic_registers_the_backend_before_torch_testing(seed_files):
    text = (seed_files / "device-generic" / file_name(SEED_APIS[0])).read_text(encoding="utf-8")
    assert text.index("adapter.setup()") < text.index("torch.testing._internal.common_device_type")
    assert "instantiate_device_type_tests(" in text and "@dtypes(" in text


def test_npu_style_follows_ascend_conventions(seed_files):
    text = (seed_files / "npu-judged" / file_name(SEED_APIS[0])).read_text(encoding="utf-8")
    assert "from torch_npu.testing.testcase import TestCase, run_tests" in text
    assert "from torch_npu.testing.common_utils import SupportedDevices" in text
    assert "@SupportedDevices(SUPPORTED_DEVICES)" in text
    assert "run_tests()" in text


def test_generated_seed_tests_run_green_on_cpu(seed_files):
    # the npu style's files need torch_npu (tests/deliver/test_gentest_npu.py runs them)
    proc = _pytest(seed_files, "--ignore", str(seed_files / "npu"))
    tail = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout and "failed" not in proc.stdout, tail
    # every scenario of every seed API became a test, in both styles, and ran:
    # device-generic has one test per scenario and dtype, npu-judged one per scenario
    from torchparity.api.resolve import resolve
    from torchparity.scenarios import registry

    registry.load_suites()
    scs = [s for a in SEED_APIS for s in registry.scenarios_for_object(resolve(a).obj)]
    expected = sum(len(s.dtypes) for s in scs) + len(scs)
    assert f"{expected} passed" in proc.stdout, tail


def test_unittest_entry_point_runs_too(seed_files):
    path = seed_files / "device-generic" / file_name("torch.autograd.forward_ad.unpack_dual")
    # run as a developer does: torch's run_tests() switches to JUnit XML (and needs the
    # xmlrunner package) whenever CI is set, which is torch's behaviour, not the file's
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TORCHPARITY_DEVICE"] = "cpu"
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Ran 7 tests" in proc.stderr  # 4 scenarios, 3 of them in two dtypes


@pytest.fixture
def fixture_files(tmp_path, fixture_path):
    return tmp_path


def _report_with_refused(device_type="cpu"):
    t = Text(en="x", zh="x")
    api = ApiReport(
        name=FIXTURE_API, qualified_name=FIXTURE_API,
        analysis=Analysis(qualified_name=FIXTURE_API, kind="function", implementation="python_function"),
        scenarios=[ScenarioResult(id="refused", dtype="float64", status="unsupported", cause="dtype_limit",
                                  detail='"dot_npu" not implemented for \'Double\'\n"""; import os #')],
        verdict=Verdict(status="partial", summary=t))
    return Report(tool_version="0", created="now",
                  environment=Environment(os="x", arch="x", python="3", torch="2.13"),
                  device=DeviceInfo(type=device_type, spec=device_type), apis=[api])


def test_generated_tests_can_fail_and_hostile_texts_stay_data(fixture_files):
    out = fixture_files / "plain"
    gentest([FIXTURE_API], "device-generic", str(out), scenario_modules=["tp_gentest_scenarios"])
    path = out / file_name(FIXTURE_API)
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    # hostile texts are string constants, never statements
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [a.name for n in imports for a in n.names] == ["contextlib", "importlib", "importlib.util", "math", "os", "re", "sys", "torch"]
    calls = [ast.unparse(n.value.func) for n in tree.body
             if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    assert calls == ["instantiate_device_type_tests"]
    in_strings = sum(n.value.count("PWNED") for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str))
    test_name = next(n.name for n in ast.walk(tree)
                     if isinstance(n, ast.FunctionDef) and n.name.startswith("test_evil"))
    assert in_strings == text.replace(test_name, "").count("PWNED") >= 3
    called = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert not called & {"os.system", "__import__", "os.getcwd", "eval", "exec"}
    assert _ruff(out, "--config", str(ROOT / "pyproject.toml")).returncode == 0

    proc = _pytest(out, "-v")
    assert not list(out.glob("PWNED*")) and not list(Path(out).rglob("PWNED*"))
    assert proc.returncode == 1, proc.stdout[-3000:]
    lines = proc.stdout
    assert "test_matches_cpu_float32 PASSED" in lines
    assert "test_differs_cpu_float64 FAILED" in lines  # values differ: the test says so
    assert "test_declared_raise_missing_cpu_float32 FAILED" in lines
    assert "test_refused_cpu_float64 FAILED" in lines  # no recorded limit: an error fails
    assert "PASSED" in lines.split("test_evil_")[1].splitlines()[0]


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_recorded_limit_skips_only_where_it_still_raises(fixture_files):
    out = fixture_files / "limits"
    gentest([FIXTURE_API], "device-generic", str(out), scenario_modules=["tp_gentest_scenarios"],
            report=_report_with_refused("cpu"))
    text = (out / file_name(FIXTURE_API)).read_text(encoding="utf-8")
    assert "recorded by torchparity check on cpu" in text
    proc = _pytest(out, "-k", "refused or matches")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "SKIPPED" in proc.stdout and "dtype_limit" in proc.stdout, proc.stdout[-3000:]
    # a limit recorded for another device type does not excuse the CPU
    out2 = fixture_files / "other"
    gentest([FIXTURE_API], "device-generic", str(out2), scenario_modules=["tp_gentest_scenarios"],
            report=_report_with_refused("npu"))
    proc = _pytest(out2, "-k", "refused")
    assert proc.returncode == 1


def test_names_are_validated():
    for bad in ("torch.x; import os", "torch.x\nimport os", "torch.class", "", "torch..x"):
        with pytest.raises(InputError):
            check_api_name(bad)
    ident = safe_identifier("evil'); import os #")
    assert ident.isidentifier() and "import" in ident and " " not in ident
    assert safe_identifier("class") == "class_"
    assert safe_identifier("1abc").isidentifier()


def test_generate_refuses_unknown_style_and_empty_scenarios():
    with pytest.raises(InputError):
        generate("torch.x", "torch.x", [], "npu", tool_version="0")
    with pytest.raises(InputError):
        gentest(["torch.autograd.gradcheck"], "pytest-style", None)
