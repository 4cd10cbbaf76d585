"""Test files for the generated sources (opinfo, module, member code blocks, docstring):
written, green on cpu and on the emulated A2 through the pytest plugin, refusals asserted
as check recorded them, red when the device computes wrongly, one line without a device."""

import ast
import json
import os
import subprocess
import sys

import pytest

from torchparity.app.gentest import gentest
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
from torchparity.run import standalone

EMU = "emu:ascend-a2"
APIS = ("torch.mm", "torch.Tensor.element_size", "torch.is_tensor")
# an emulated device whose mm adds one and whose element_size lies: a device bug
BROKEN_PLUGIN = '''
import os
import torch

def pytest_configure(config):
    lib = torch.library.Library("aten", "IMPL")
    def wrong_mm(a, b):
        return (torch.mm(a.cpu(), b.cpu()) + 1).to(a.device)
    lib.impl("mm", wrong_mm, "PrivateUse1")
    config._tp_broken_lib = lib
    orig = torch.Tensor.element_size
    torch.Tensor.element_size = lambda self: orig(self) + (self.device.type != "cpu")
'''


def _report(spec=EMU):
    """check's rows for torch.mm float64 on the emulated A2 (refused: dtype_limit, as the
    seed facts say), as the limits gentest records."""
    row = ScenarioResult(id="mm", dtype="float64", status="unsupported", cause="dtype_limit",
                         detail='"mm" not implemented for \'Double\'', source="opinfo",
                         description=Text(en="", zh=""), expected=Text(en="", zh=""))
    api = ApiReport(name="torch.mm", qualified_name="torch.mm",
                    analysis=Analysis(qualified_name="torch.mm", kind="function", implementation="C++"),
                    scenarios=[row], verdict=Verdict(status="partial", summary=Text(en="", zh="")))
    return Report(tool_version="t", created="now", environment=Environment(os="x", arch="x", python="x",
                                                                           torch="2.13.0"),
                  device=DeviceInfo(type="npu", name="emulated", emulated=True, spec=spec), apis=[api])


def _pytest(folder, device, *extra, env=None):
    env = dict(env or os.environ)
    env.pop("TORCHPARITY_DEVICE", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-o", "addopts=", "--torchparity-device", device,
                           *extra, "."], capture_output=True, text=True, env=env, cwd=str(folder),
                          timeout=600)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    for style in ("npu-judged", "device-generic"):
        gentest(list(APIS), style, str(out / style), report=_report(), max_samples=1,
                dtypes=["float32", "float64"])
    return out


def test_one_file_per_api_with_its_sources_as_cases(files):
    names = sorted(p.name for p in (files / "npu-judged").iterdir())
    assert names == ["test_Tensor_element_size.py", "test_is_tensor.py", "test_mm.py"]
    text = (files / "npu-judged" / "test_mm.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    cases = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "CASES")
    mm = ast.literal_eval(ast.unparse(cases.value).replace("LIMITS_DEVICE", "None"))["opinfo:mm"]
    assert mm["case"]["kind"] == "opinfo" and mm["runs"] == [("float32", 0), ("float64", 0)]
    assert mm["limits"] == {"float64": {"status": "unsupported", "cause": "dtype_limit"}}
    assert "LIMITS_DEVICE = 'emu:ascend-a2'" in text
    assert "op_db" in text  # the block / op_db snippet shown for reading
    for style in ("npu-judged", "device-generic"):
        block = (files / style / "test_Tensor_element_size.py").read_text(encoding="utf-8")
        assert "'source': 'member'" in block and "element_size()" in block
        doc = (files / style / "test_is_tensor.py").read_text(encoding="utf-8")
        assert "'source': 'docstring'" in doc


@pytest.mark.parametrize("style,device", [
    ("npu-judged", EMU),
    pytest.param("npu-judged", "cpu", marks=pytest.mark.slow),
    pytest.param("device-generic", EMU, marks=pytest.mark.slow),
    pytest.param("device-generic", "cpu", marks=pytest.mark.slow),
])
def test_green_on_cpu_and_emulated_refusal_asserted(files, style, device, tmp_path):
    log = tmp_path / f"{device.replace(':', '_')}.jsonl"
    proc = _pytest(files / style, device, env=dict(os.environ, TORCHPARITY_GENTEST_LOG=str(log)))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    rows = [json.loads(ln) for ln in log.read_text(encoding="utf-8").splitlines()]
    mm64 = [r for r in rows if r["api"] == "torch.mm" and r["dtype"] == "float64"]
    assert mm64, rows
    # the emulated A2 refuses float64 mm as check recorded; the CPU runs it
    want = "refused" if device == EMU else "pass"
    assert {r["verdict"] for r in mm64} == {want}, mm64
    assert {r["api"] for r in rows} == set(APIS)


@pytest.mark.slow  # one more pytest run on the emulated device (~20-40 s here)
def test_red_when_the_device_computes_wrongly(files, tmp_path):
    (tmp_path / "tp_broken_device.py").write_text(BROKEN_PLUGIN, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = _pytest(files / "npu-judged", EMU, "-rf", "-p", "tp_broken_device", env=env)
    assert proc.returncode == 1, proc.stdout[-3000:]
    out = proc.stdout
    assert "FAILED test_mm.py::TestMm::test_opinfo_mm_float32_sample0" in out, out[-3000:]
    assert "FAILED test_Tensor_element_size.py" in out, out[-3000:]
    assert "FAILED test_is_tensor.py" not in out  # what the bug does not touch stays green


# judges a generated file's case with the file's own body, and with that body edited so
# that the device's answer differs (run in its own process: one emulated profile each)
JUDGE_OWN_CODE = """
import ast, sys
from torchparity.run import standalone
text = open(sys.argv[1], encoding="utf-8").read()
code = text.split("# " + "-" * 64 + " the cases' code")[1].split("# " + "-" * 64 + " tests")[0]
ns = {}
exec(compile(code, "generated_case_code", "exec"), ns)
cases = next(n for n in ast.parse(text).body if isinstance(n, ast.Assign) and n.targets[0].id == "CASES")
(entry,) = ast.literal_eval(ast.unparse(cases.value).replace("LIMITS_DEVICE", "None")).values()
body = ns[sys.argv[2]]
def tampered(device, dtype):
    return body(device, dtype) if device == "cpu" else -1
for fn in (body, tampered, None):
    print(standalone.judge(entry["case"], "float32", spec=sys.argv[3], body=fn).status)
"""


def test_a_code_block_case_is_code_in_the_file_and_that_code_is_what_runs(files):
    path = files / "npu-judged" / "test_Tensor_element_size.py"
    text = path.read_text(encoding="utf-8")
    # the body is a module-level function of the file, handed to the judge by the test
    assert "body=Tensor_element_size)" in text
    assert "\ndef Tensor_element_size(device, dtype):" in text
    assert "#def Tensor_element_size" not in text.replace("# def", "#def")  # not a comment
    proc = subprocess.run([sys.executable, "-c", JUDGE_OWN_CODE, str(path), "Tensor_element_size", EMU],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the file's code passes; edited, it fails; the data form alone judges the source's code
    assert proc.stdout.split() == ["pass", "fail", "pass"], proc.stdout


def test_case_code_that_would_rebind_a_name_stays_data():
    from torchparity.deliver.gentest import CaseCode

    code = CaseCode(reserved=["TestMm"])
    assert code.add("import torch\nimport torch.fx as fx\n\ndef f(device, dtype):\n    return 1\n", {})
    assert code.add("import torch.fx\n\ndef g(device, dtype):\n    return f(device, dtype)\n", {})
    assert not code.add("def f(device, dtype):\n    return 2\n", {})  # another f
    assert not code.add("import numpy as fx\n", {})  # another fx
    assert not code.add("class TestMm:\n    pass\n", {})  # the template's test class
    assert not code.add("def CASES():\n    pass\n", {})  # a name of the template
    assert not code.add("def h(device, dtype):\n    pass\n", {"x": object()})  # not a literal
    text = code.text()
    assert text.startswith("import torch\nimport torch.fx as fx\nimport torch.fx\n")
    assert text.count("def f(") == 1 and "def g(" in text and "return 2" not in text


def test_a_limit_that_no_longer_holds_fails_and_other_devices_ignore_it():
    limit = {"status": "unsupported", "cause": "dtype_limit"}
    ok = standalone.Outcome("unsupported", "dtype_limit", "refused")
    assert standalone._decide(ok, limit, 0)[0] == "refused"
    assert standalone._decide(standalone.Outcome("pass", None, ""), limit, 0)[0] == "fail"
    assert standalone._decide(standalone.Outcome("unsupported", "no_kernel", ""), limit, 0)[0] == "fail"
    assert standalone._decide(ok, None, None)[0] == "fail"  # a refusal nobody recorded
    assert standalone._decide(standalone.Outcome("fail", "mismatch", "x"), None, None)[0] == "fail"
    partial = {"status": "partial", "cause": "dtype_limit"}
    assert standalone._decide(standalone.Outcome("pass", None, ""), partial, 1)[0] == "pass"
    assert standalone.limits_apply(EMU, EMU) and not standalone.limits_apply(EMU, "emu:ascend-950dt")
    assert not standalone.limits_apply(EMU, "cpu") and standalone.limits_apply("npu:0", "npu:1")


@pytest.mark.parametrize("api", ["torch.mm", pytest.param("torch.autograd.forward_ad.unpack_dual",
                                                          marks=pytest.mark.slow)])
def test_no_device_and_no_torch_npu_is_one_line(api, tmp_path):
    if __import__("importlib").util.find_spec("torch_npu") is not None:
        pytest.skip("torch_npu is installed here: npu is a working default")
    (f,) = gentest([api], "npu-judged", str(tmp_path), max_samples=1, dtypes=["float32"])
    env = {k: v for k, v in os.environ.items() if k != "TORCHPARITY_DEVICE"}
    proc = subprocess.run([sys.executable, f.name], cwd=str(tmp_path), capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "TORCHPARITY_DEVICE" in lines[0] and "torch_npu" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and "ModuleNotFoundError" not in proc.stderr
