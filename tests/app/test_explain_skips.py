"""explain-skips: parsing the vendor's list, the categories, the outputs, the generated
set_test_configs module under torch's common_device_type, replays, the real list."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from torchparity.app import explain_skips as X
from torchparity.deliver import explain_skips as D

DATA = Path(__file__).resolve().parents[1] / "data" / "explain_skips"
FIXTURE = DATA / "pytorch-disabled-tests.fixture.json"
HAND = DATA / "hand-checked.yaml"
ASCEND = "TORCHPARITY_ASCEND_PYTORCH"  # an Ascend/pytorch checkout (its test/ and the list)

NAMES = X.OpNames({"acos": ("acos", "op_db"), "nn_functional_relu": ("nn.functional.relu", "op_db"),
                   "relu": ("relu", "op_db"), "_refs_abs": ("_refs.abs", "python_ref_db"),
                   "div_floor_rounding": ("div.floor_rounding", "op_db"), "empty": ("empty", "op_db")})


# -- parsing ---------------------------------------------------------------------------------

def test_parse_an_ops_entry_finds_op_dtype_and_test_kind():
    e = X.parse_entry("test_reference_numerics_normal_acos_npu_float16 (__main__.TestUnaryUfuncsPRIVATEUSE1)",
                      ["", [""]], NAMES)
    assert (e.base_cls, e.device, e.dtype) == ("TestUnaryUfuncs", "npu", "float16")
    assert (e.op, e.test_kind, e.kind) == ("acos", "test_reference_numerics_normal", "opinfo")
    assert e.socs == [] and e.reason == ""


def test_parse_takes_the_longest_op_name_and_refs():
    e = X.parse_entry("test_fn_grad_nn_functional_relu_npu_float64 (__main__.TestBwdGradientsPRIVATEUSE1)",
                      None, NAMES)
    assert (e.op, e.test_kind) == ("nn.functional.relu", "test_fn_grad")
    e = X.parse_entry("test_contig_vs_transposed__refs_abs_npu_complex128 (__main__.TestUnaryUfuncsPRIVATEUSE1)",
                      None, NAMES)
    assert (e.op, e.op_db, e.test_kind, e.dtype) == ("_refs.abs", "python_ref_db", "test_contig_vs_transposed", "complex128")
    e = X.parse_entry("test_contig_size1_div_floor_rounding_npu_int8 (__main__.TestBinaryUfuncsPRIVATEUSE1)", None, NAMES)
    assert e.op == "div.floor_rounding"


def test_parse_a_generic_test_that_is_no_ops_test_is_a_replay():
    # test_all_any is no @ops test of TestReductions although "empty" is an OpInfo name
    e = X.parse_entry("test_all_any_empty_npu (__main__.TestReductionsPRIVATEUSE1)", None, NAMES)
    assert e.kind == "replay" and e.op is None and e.head == "test_all_any_empty" and e.dtype is None
    e = X.parse_entry("test_copy__npu_int16 (__main__.TestTorchDeviceTypePRIVATEUSE1)", None, NAMES)
    assert (e.kind, e.head, e.rest, e.dtype) == ("replay", "test_copy_", "int16", "int16")


def test_parse_plain_classes_modules_and_bad_keys():
    e = X.parse_entry("test_ge_cuda (jit.test_tracer.TestTracer)", ["only test_jit_legacy.py", [""]], NAMES)
    assert (e.module, e.cls, e.generic, e.reason) == ("jit.test_tracer", "TestTracer", False, "only test_jit_legacy.py")
    e = X.parse_entry("test_upsamplingNearest1d_mode_nearest-exact_npu (__main__.TestNNDeviceTypePRIVATEUSE1)", None, NAMES)
    assert e.generic and e.head == "test_upsamplingNearest1d_mode_nearest-exact"
    for bad in ("test_neg_view__refs_select_scatter_npu_float64", "test_x ( main .TestFunctionalization)"):
        assert X.parse_entry(bad, None, NAMES).kind == "unparsed"


def test_the_shipped_ops_tests_carry_their_sources():
    shipped = X.shipped_ops_tests()
    assert "test_reference_numerics_normal" in shipped["TestUnaryUfuncs"]["tests"]
    assert "test_fn_grad" in shipped["TestBwdGradients"]["tests"]
    assert all("@" in v["source"] and v["tests"] for v in shipped.values())


def test_every_fixture_key_parses_like_the_real_list(tmp_path):
    raw = json.loads(FIXTURE.read_text())
    assert len(raw) == 307
    entries = [X.parse_entry(k, v, NAMES) for k, v in raw.items()]
    bad = [e.key for e in entries if e.kind == "unparsed"]
    assert len(bad) == 2  # the two keys of the real list that are not "test (module.Class)"


# -- categories ------------------------------------------------------------------------------

def _op_entry(dtype="float64", kind="test_reference_numerics_normal"):
    return X.parse_entry(f"{kind}_acos_npu_{dtype} (__main__.TestUnaryUfuncsPRIVATEUSE1)", None, NAMES)


def test_a_refused_dtype_is_dtype_with_its_kernel_fact():
    facts = {"status": "unsupported", "reason": "...", "refusals": [
        {"op": "aten.acos", "dtype": "float64", "phase": "forward", "supported": True,
         "dtypes": ["float16", "float32"], "source": "kernel aclnnAcos: x.cpp:1@abc"}]}
    a = X.classify_op(_op_entry(), facts, None, True, "emu:ascend-a2")
    assert a.category == "DTYPE" and a.predicted
    assert "aclnnAcos" in a.reason and "float16, float32" in a.reason and "predicted" in a.reason
    facts["refusals"][0]["supported"] = False
    assert X.classify_op(_op_entry(), facts, None, True, "emu:ascend-a2").category == "NOT_SUPPORT"


def test_an_allowed_op_on_the_emulator_is_a_predicted_stale_or_value():
    facts = {"status": "pass", "reason": "every op allowed", "refusals": []}
    err = {"device": 1e-3, "cpu": 1e-3, "scale": 3.0}
    a = X.classify_op(_op_entry("float16"), facts, err, True, "emu:ascend-a2")
    # its samples pass on the emulator as close to float64 as the CPU: a prediction, said so
    assert (a.category, a.predicted) == ("STALE", True) and "predicted stale" in a.reason
    assert X.NOT_CAPABILITY in a.reason and a.evidence["error"] == err
    worse = {"device": 5e-2, "cpu": 1e-3, "scale": 3.0}
    a = X.classify_op(_op_entry("float16"), facts, worse, True, "emu:ascend-a2")
    assert (a.category, a.predicted) == ("VALUE", True) and "predicted on emu:ascend-a2" in a.reason
    # nothing measured: no capability limit, and nothing more to say
    a = X.classify_op(_op_entry("float16"), facts, {"why": "no sample"}, True, "emu:ascend-a2")
    assert a.category == "UNDETERMINED" and X.NOT_CAPABILITY in a.reason
    # an exact dtype: equal to the CPU's results is as close as it gets; any difference is VALUE
    same = {"device": 0.0, "cpu": 0.0, "scale": 1.0, "outputs": 2, "exact": True}
    a = X.classify_op(_op_entry("int32"), facts, same, True, "emu:ascend-a2")
    assert a.category == "STALE" and "equal the CPU's" in a.reason
    a = X.classify_op(_op_entry("int32"), facts, dict(same, device=1.0), True, "emu:ascend-a2")
    assert a.category == "VALUE"
    # on hardware: as close to float64 as the CPU -> stale; clearly farther -> VALUE
    assert X.classify_op(_op_entry("float16"), facts, err, False, "npu:0").category == "STALE"
    worse = {"device": 5e-2, "cpu": 1e-3, "scale": 3.0}
    a = X.classify_op(_op_entry("float16"), facts, worse, False, "npu:0")
    assert a.category == "VALUE" and "0.05" in a.reason


def test_silent_profile_and_cpu_refusal_are_undetermined():
    a = X.classify_op(_op_entry(), {"status": "unknown", "reason": "no capability fact for aten.acos"},
                      None, True, "emu:ascend-a2")
    assert a.category == "UNDETERMINED" and "no capability fact" in a.reason
    a = X.classify_op(_op_entry(), {"status": "unsupported", "cpu_refuses": True, "refusals": []},
                      None, True, "emu:ascend-a2")
    assert a.category == "UNDETERMINED" and "CPU too" in a.reason


def test_a_sweep_row_answers_before_the_prediction(tmp_path):
    from torchparity.results.sweep_store import SweepStore

    store = SweepStore(tmp_path / "results.sqlite")
    store.set_meta({"device": {"spec": "emu:ascend-a2"}})
    store.add({"api": "torch.acos", "variant": "acos", "sample_set": "sample_inputs", "dtype": "float64",
               "status": "unsupported", "cause": "dtype_limit", "detail": "\"acos_npu\" not implemented for 'Double'",
               "emulated": True})
    store.close()
    rows = X.sweep_rows(str(tmp_path), "emu:ascend-a2")
    facts = {"status": "pass", "refusals": []}
    a = X.classify_op(_op_entry(), facts, None, True, "emu:ascend-a2", rows[("acos", "float64")])
    assert (a.category, a.how) == ("DTYPE", "sweep-row") and "acos_npu" in a.reason
    with pytest.raises(X.InputError, match="ran on emu:ascend-a2"):
        X.sweep_rows(str(tmp_path), "npu:0")


@pytest.mark.parametrize("payload, emulated, category", [
    ({"status": "pass", "detail": "same"}, True, "STALE"),
    ({"status": "pass", "detail": "same"}, False, "STALE"),
    ({"status": "unsupported", "cause": "dtype_limit", "detail": "\"mm_npu\" not implemented for 'Double'"}, True, "DTYPE"),
    ({"status": "unsupported", "cause": "no_kernel", "detail": "Could not run 'aten::foo'"}, True, "NOT_SUPPORT"),
    ({"status": "fail", "cause": "mismatch", "detail": "AssertionError: Regex didn't match: 'x' not found in 'y'"}, False, "ERROR_MSG_UNMATCH"),
    ({"status": "error", "cause": "device_error", "detail": "RuntimeError: NPU out of memory. Tried to allocate"}, False, "MEMORY"),
    ({"status": "error", "cause": "device_error", "detail": "RuntimeError: HCCL function error: HcclAllReduce"}, False, "HCCL"),
    ({"status": "fail", "cause": "mismatch", "detail": "AssertionError: Tensor-likes are not close!"}, False, "VALUE"),
    ({"status": "error", "cause": "device_error", "detail": "RuntimeError: something else"}, False, "OTHER"),
    ({"status": "timeout", "cause": "timeout", "detail": "did not finish"}, False, "UNDETERMINED"),
    ({"status": "error", "cause": "emulator_limit", "detail": "the emulator cannot"}, True, "UNDETERMINED"),
    ({"status": "skip", "cause": "not_comparable", "detail": "fails on the CPU too"}, True, "UNDETERMINED"),
])
def test_replay_rows_map_to_categories(payload, emulated, category):
    e = X.parse_entry("test_x_npu (__main__.TestFooPRIVATEUSE1)", None, NAMES)
    a = X.classify_replay(e, payload, emulated, "emu:ascend-a2" if emulated else "npu:0")
    assert a.category == category
    if category in ("UNDETERMINED",) and payload["status"] in ("timeout",):
        assert not a.predicted  # the harness's answer is never the chip's


# -- outputs ---------------------------------------------------------------------------------

def _result(answers, keys, emulated=True):
    entries = [X.parse_entry(k, ["", [""]], NAMES) for k in keys]
    return X.Result(entries, {a.key: a for a in answers}, "emu:ascend-a2" if emulated else "npu:0",
                    emulated, "A2", "ascend-a2", 1.0, "x/.pytorch-disabled-tests.json")


K_DTYPE = "test_reference_numerics_normal_acos_npu_float64 (__main__.TestUnaryUfuncsPRIVATEUSE1)"
K_VALUE = "test_reference_numerics_normal_acos_npu_float16 (__main__.TestUnaryUfuncsPRIVATEUSE1)"
K_STALE = "test_reference_numerics_normal_acos_npu_float32 (__main__.TestUnaryUfuncsPRIVATEUSE1)"
K_GENERIC = "test_mm_square_npu_float64 (__main__.TestMmDevicePRIVATEUSE1)"
K_PLAIN = "test_mm_float64 (__main__.TestMmPlain)"
KEYS = [K_DTYPE, K_VALUE, K_STALE, K_GENERIC, K_PLAIN]
ANSWERS = [X.Answer(K_DTYPE, "DTYPE", "aten.acos × float64 refused", predicted=True),
           X.Answer(K_VALUE, "VALUE", "device max error 0.05", {"error": {"device": 0.05, "cpu": 0.001, "scale": 3.0}}),
           X.Answer(K_STALE, "STALE", "passes"),
           X.Answer(K_GENERIC, "DTYPE", "mm_npu not implemented", {"method": "test_mm_square"}, True),
           X.Answer(K_PLAIN, "UNDETERMINED", X.NOT_CAPABILITY)]


def test_outputs_in_the_vendors_formats(tmp_path):
    raw = {k: ["", [""]] for k in KEYS}
    raw[K_PLAIN] = ["kept as written", ["910A"]]
    res = _result(ANSWERS, KEYS)
    files = D.write_outputs(res, raw, tmp_path)
    assert {Path(f).name for f in files} >= {"pytorch-disabled-tests.json", "disabled_tests_type.json",
                                              "npu_test_configs.py", "explain-skips.yaml", "summary.md", "summary.html"}
    annotated = json.loads((tmp_path / "pytorch-disabled-tests.json").read_text())
    assert list(annotated) == KEYS
    assert annotated[K_DTYPE] == ["DTYPE: aten.acos × float64 refused [prediction]", ["A2"]]
    assert annotated[K_PLAIN] == ["kept as written", ["910A"]]
    typed = json.loads((tmp_path / "disabled_tests_type.json").read_text())
    assert typed[K_DTYPE] == {"DTYPE": "aten.acos × float64 refused"} and K_STALE not in typed and K_PLAIN not in typed
    doc = yaml.safe_load((tmp_path / "explain-skips.yaml").read_text())
    rows = {r["category"]: r for r in doc["ops"]["acos"]["float16"] + doc["ops"]["acos"]["float64"] + doc["ops"]["acos"]["float32"]}
    assert rows["VALUE"]["tolerance"] == {"atol": 0.1, "rtol": 0.033} and rows["VALUE"]["mode"] == "mandatory_success"
    assert rows["DTYPE"]["mode"] == "skip" and rows["STALE"]["mode"] == "mandatory_success"
    assert doc["tests"]["TestMmDevicePRIVATEUSE1"]["test_mm_square_npu_float64"]["category"] == "DTYPE"
    md = (tmp_path / "summary.md").read_text()
    assert "| TestUnaryUfuncs | 1 | 1 | 1 | 0 | 3 |" in md and "prediction" in md
    assert "<td>TestMmDevice</td>" in (tmp_path / "summary.html").read_text()


CONSUMER = r'''
import sys, unittest
from torchparity.devices import get_adapter
get_adapter("emu:ascend-a2").setup()  # the backend first, then torch.testing._internal
import torch
from torch.testing._internal.common_device_type import (PrivateUse1TestBase, instantiate_device_type_tests, ops,
    device_type_test_bases)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase
if PrivateUse1TestBase not in device_type_test_bases:
    device_type_test_bases.append(PrivateUse1TestBase)
sys.path.insert(0, sys.argv[1])
import npu_test_configs  # applies set_test_configs
assert PrivateUse1TestBase.test_exclusions == {"TestMmDevice": ["test_mm_square"]}, PrivateUse1TestBase.test_exclusions

class TestUnaryUfuncs(TestCase):
    @ops([o for o in op_db if o.name == "acos"], allowed_dtypes=(torch.float16, torch.float32, torch.float64))
    def test_reference_numerics_normal(self, device, dtype, op):
        self.assertEqual(self.precision, 0.1 if dtype == torch.float16 else self.precision)

class TestMmDevice(TestCase):
    def test_mm_square(self, device):
        pass
    def test_mm_other(self, device):
        pass

scope = {"TestUnaryUfuncs": TestUnaryUfuncs, "TestMmDevice": TestMmDevice}
instantiate_device_type_tests(TestUnaryUfuncs, scope, only_for=("npu",))
instantiate_device_type_tests(TestMmDevice, scope, only_for=("npu",))
# the generated module resolved the backend's name first: the classes are ...NPU
klass = scope["TestUnaryUfuncsNPU"]
mm = scope["TestMmDeviceNPU"]
assert not hasattr(mm, "test_mm_square_npu") and hasattr(mm, "test_mm_other_npu"), dir(mm)
result = unittest.TestResult()
unittest.TestSuite([klass(n) for n in ("test_reference_numerics_normal_acos_npu_float64",
                                       "test_reference_numerics_normal_acos_npu_float16",
                                       "test_reference_numerics_normal_acos_npu_float32")]).run(result)
skipped = {t._testMethodName: why for t, why in result.skipped}
assert list(skipped) == ["test_reference_numerics_normal_acos_npu_float64"], (skipped, result.errors, result.failures)
assert "DTYPE" in skipped["test_reference_numerics_normal_acos_npu_float64"]
assert not result.errors and not result.failures, (result.errors, result.failures)
npu_test_configs.reset()
assert PrivateUse1TestBase.op_overrides is None
print("APPLIED", result.testsRun)
'''


@pytest.mark.slow
def test_generated_module_applies_under_common_device_type(tmp_path):
    """The generated module imports under torch's common_device_type and its configuration
    takes effect on a device-generic class instantiated for the emulated npu: the DTYPE
    variant is skipped with its category, the VALUE variant runs with the measured
    tolerance, the excluded generic test is not made."""
    res = _result(ANSWERS, KEYS)
    D.write_outputs(res, {k: ["", [""]] for k in KEYS}, tmp_path)
    script = tmp_path / "consumer.py"
    script.write_text(CONSUMER)
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "APPLIED 3" in proc.stdout


def test_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    for args in (["--disabled", str(tmp_path / "none.json")], ["--disabled", str(bad)]):
        proc = subprocess.run([sys.executable, "-m", "torchparity", "explain-skips", *args, "--out", str(tmp_path / "o")],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


# -- runs --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_replays_on_the_emulator(tmp_path):
    """Entries that are no @ops tests replay in the upstream case kind, CPU against device."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from upstream_tree import write_tree

    root = write_tree(tmp_path / "tree")
    listed = {"test_mm_square_npu_float64 (__main__.TestMmDevicePRIVATEUSE1)": "DTYPE",
              "test_mm_square_npu_float32 (__main__.TestMmDevicePRIVATEUSE1)": "STALE",
              "test_mm_wrong_shape_npu (__main__.TestMmDevicePRIVATEUSE1)": "UNDETERMINED",
              "test_mm_float64 (__main__.TestMmPlain)": "DTYPE",
              "test_mm_cpu_only_skip (__main__.TestMmPlain)": "UNDETERMINED",
              "test_nope_npu (__main__.TestMissingPRIVATEUSE1)": "UNDETERMINED"}
    path = tmp_path / "list.json"
    path.write_text(json.dumps({k: ["", [""]] for k in listed}))
    r = X.explain_skips(disabled=str(path), tests=str(root), device="emu:ascend-a2", out=str(tmp_path / "o"))
    got = {k: a.category for k, a in r.answers.items()}
    assert got == listed
    stale = r.answers["test_mm_square_npu_float32 (__main__.TestMmDevicePRIVATEUSE1)"]
    assert stale.predicted and "predicted stale" in stale.reason and "batched" in stale.evidence["replay"]
    assert "fails on the CPU too" in r.answers["test_mm_wrong_shape_npu (__main__.TestMmDevicePRIVATEUSE1)"].reason
    dt = r.answers["test_mm_square_npu_float64 (__main__.TestMmDevicePRIVATEUSE1)"]
    assert dt.predicted and dt.evidence["kernel_facts"][0]["op"] == "aten.mm" and "float64" not in dt.evidence["kernel_facts"][0]["dtypes"]
    # resumable: a second run answers from the store, runs nothing
    again = X.explain_skips(disabled=str(path), tests=str(root), device="emu:ascend-a2", out=str(tmp_path / "o"))
    assert {k: a.category for k, a in again.answers.items()} == listed


def _hand():
    return yaml.safe_load(HAND.read_text())


@pytest.mark.slow
def test_hand_checked_sample(tmp_path):
    """50 fixture entries whose category on emu:ascend-a2 was checked by hand against the
    shipped profile's facts (hand-checked.yaml)."""
    hand = _hand()["entries"]
    assert len(hand) == 50
    raw = json.loads(FIXTURE.read_text())
    path = tmp_path / "hand.json"
    path.write_text(json.dumps({k: raw[k] for k in hand}))
    r = X.explain_skips(disabled=str(path), tests=None, device="emu:ascend-a2", out=str(tmp_path / "o"))
    def agrees(a, want):
        if want == "ALLOWED":  # no capability limit: the measured numerics answer, predicted
            return a.category in ("STALE", "VALUE", "UNDETERMINED") and a.predicted
        return a.category == want
    wrong = {k: (a.category, hand[k]["category"]) for k, a in r.answers.items() if not agrees(a, hand[k]["category"])}
    assert not wrong
    for k, want in hand.items():
        if want.get("op"):
            facts = r.answers[k].evidence.get("kernel_facts") or []
            assert facts and facts[0]["op"] == want["op"], k


@pytest.mark.slow
def test_fixture_every_entry_categorised_and_dtype_agrees_with_the_facts(tmp_path):
    from torchparity.devices.profiles import load_profile

    r = X.explain_skips(disabled=str(FIXTURE), tests=None, device="emu:ascend-a2", out=str(tmp_path))
    assert len(r.answers) == 307 and all(a.category in X.CATEGORIES and a.reason for a in r.answers.values())
    prof = load_profile("ascend-a2")
    dtype = [a for a in r.answers.values() if a.category == "DTYPE"]
    assert dtype
    agree = [a for a in dtype if any(f["dtype"] not in (prof.op_support(f["op"]).dtypes or [])
                                     for f in a.evidence["kernel_facts"] if prof.op_support(f["op"]))]
    assert len(agree) >= 0.99 * len(dtype)
    assert all(a.predicted for a in r.answers.values() if a.category in X.VENDOR_CATEGORIES)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get(ASCEND), reason=f"set {ASCEND} to an Ascend/pytorch checkout")
def test_the_real_list_from_an_ascend_tree(tmp_path):
    """The whole list parses; a spread sample of it is answered with the tree's @ops tests."""
    root = Path(os.environ[ASCEND])
    listed = root / "test" / "unsupported_test_cases" / ".pytorch-disabled-tests.json"
    raw = X.load_disabled(str(listed))
    names = X.OpNames.load()
    entries = [X.parse_entry(k, v, names) for k, v in raw.items()]
    assert len(entries) > 30000
    assert sum(e.kind == "opinfo" for e in entries) > len(entries) / 2
    r = X.explain_skips(disabled=str(listed), tests=str(root / "test"), device="emu:ascend-a2",
                        out=str(tmp_path), sample=40, side_timeout=60)
    assert len(r.answers) == 40 and all(a.category in X.CATEGORIES for a in r.answers.values())


# -- the sample and the batched replays -------------------------------------------------------

def test_a_stratified_sample_keeps_every_stratum_in_proportion():
    keys = ([f"test_reference_numerics_normal_acos_npu_float{b} (__main__.TestUnaryUfuncsPRIVATEUSE1)"
             for b in (16, 32, 64)] * 30
            + [f"test_x{i}_npu (__main__.TestFooPRIVATEUSE1)" for i in range(8)]
            + ["test_y (__main__.TestPlain)"])
    entries = [X.parse_entry(k, None, NAMES) for k in keys]
    for i, e in enumerate(entries):  # make the keys distinct, as a real list's are
        e.key = f"{e.key}#{i}"
    got = X.stratified(entries, 20)
    assert len(got) == 20
    strata = {(e.base_cls, e.kind) for e in got}
    assert strata == {("TestUnaryUfuncs", "opinfo"), ("TestFoo", "replay"), ("TestPlain", "replay")}
    assert sum(e.base_cls == "TestUnaryUfuncs" for e in got) >= 15  # 90 of 99 entries
    assert X.stratified(entries, 20) == got  # deterministic
    assert X.stratified(entries, 500) == entries


def test_listed_names_on_each_side_and_the_side_rows():
    e = X.parse_entry("test_copy__npu_int16 (__main__.TestTorchDeviceTypePRIVATEUSE1)", None, NAMES)
    assert X._listed_names(e, "device")[0] == "test_copy__npu_int16"
    assert "test_copy__privateuse1_int16" in X._listed_names(e, "device")
    assert X._listed_names(e, "cpu") == ["test_copy__cpu_int16"]
    plain = X.parse_entry("test_mm_float64 (__main__.TestMmPlain)", None, NAMES)
    assert X._listed_names(plain, "device") == X._listed_names(plain, "cpu") == ["test_mm_float64"]
    assert X._side({"outcome": "timeout", "detail": "t"}) == {"timeout": "t"}
    assert "does not import" in X._side({"outcome": "file_error", "detail": "ImportError"})["error"]
    assert X._side({"outcome": "fail", "detail": "d", "method": "m"}) == {"variants": {"-": {"outcome": "fail", "detail": "d"}}}


def test_a_rerun_after_an_interruption_runs_only_the_cpu_round_left(tmp_path, monkeypatch):
    """A replay whose device round ran but whose CPU round was interrupted keeps its device
    row in the store: the rerun asks only the CPU side of it, and the answer compares both."""
    from torchparity.app import explain_skips_replay as R
    from torchparity.devices import get_adapter

    e = X.parse_entry("test_mm_square_npu_float32 (__main__.TestMmDevicePRIVATEUSE1)", None, NAMES)
    case = {"root": str(tmp_path), "file": "test_mm.py", "generic": True, "test": e.test}
    adapter = get_adapter("emu:ascend-a2")
    asked = []

    def fake(reqs, spec, env, jobs, on_row, pool=None):
        for req in reqs:
            asked.append(req["side"])
            if req["side"] == "cpu" and len(asked) == 2 and not interrupted:
                interrupted.append(True)
                raise KeyboardInterrupt
            outcome = "fail" if req["side"] == "device" else "pass"
            on_row(req, 0, {"outcome": outcome, "detail": "AssertionError: x", "method": e.test, "seconds": 0.1})

    interrupted = []
    monkeypatch.setattr(R, "run_requests", fake)
    store = X.Store(tmp_path / "o")
    with pytest.raises(KeyboardInterrupt):
        X._answer_replays_batched([case], [e], {}, store, adapter, True, 30.0, 1, None)
    store.close()
    assert asked == ["device", "cpu"]
    store = X.Store(tmp_path / "o")
    answers = {}
    X._answer_replays_batched([case], [e], answers, store, adapter, True, 30.0, 1, None)
    assert asked == ["device", "cpu", "cpu"]  # the device round is not run again
    # both rounds in the answer: the kept device row and the CPU round of the rerun
    assert "passes on the CPU, not on the device" in answers[e.key].reason
    assert answers[e.key].evidence["seconds"]["device"] == 0.1 and "cpu" in answers[e.key].evidence["seconds"]


def test_a_replayed_refusal_names_its_dtype_in_the_kernel_fact():
    """The emulator names the refused dtype as torch does ('uint16'); c10 names it by its
    scalar type ('UInt16', 'Double'): both reach the fact, so a DTYPE answer can be checked
    against the op's dtype list."""
    from torchparity.devices.profiles import load_profile

    prof = load_profile("ascend-a2")
    for msg, want in [("\"random__npu\" not implemented for 'uint16'", "uint16"),
                      ("\"random__npu\" not implemented for 'UInt32'", "uint32"),
                      ("\"random__npu\" not implemented for 'Double'", "float64")]:
        a = X.Answer(key="k", category="DTYPE", reason=f"error on npu: RuntimeError: {msg}")
        X._add_kernel_fact(a, prof)
        fact = a.evidence["kernel_facts"][0]
        assert fact["op"] == "aten.random_" and fact["dtype"] == want
    assert "uint16" not in prof.op_support("aten.random_").dtypes


_REPLAY_ONE = """\
import json, sys, unittest, warnings
warnings.filterwarnings("ignore")
import torch
from torchparity.devices import get_adapter
get_adapter("emu:ascend-a2").setup()
from torchparity.app.explain_skips_replay import _Outcomes

class T(unittest.TestCase):
    def test_close(self):
        x = torch.ones(2, dtype=torch.complex64, device="npu")
        torch.testing.assert_close(x, x.clone())

result = _Outcomes()
unittest.TestSuite([T("test_close")]).run(result)
print(json.dumps(result.row))
"""


@pytest.mark.slow
def test_a_replayed_assert_close_over_a_refused_isclose_is_the_devices_dtype_refusal(tmp_path):
    """assert_close on the emulated A2 in complex64: its isclose is refused, and torch.testing
    re-raises "Comparing ... resulted in the unexpected exception above". The replay's row
    keeps the device's refusal under that wrapper and the entry classifies on it (DTYPE),
    not on the wrapper (an unknown device error, OTHER)."""
    from torchparity.run.upstream_handler import compare

    script = tmp_path / "one.py"
    script.write_text(_REPLAY_ONE)
    env = dict(os.environ, PYTHONPATH=str(Path(X.__file__).resolve().parents[2]), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    assert row["outcome"] == "error" and "Comparing" in row["detail"]
    payload = compare({"variants": {"-": {"outcome": "pass", "detail": ""}}}, X._side(row), "npu")
    assert payload["cause"] == "dtype_limit", payload
    e = X.parse_entry("test_close_npu (__main__.TPRIVATEUSE1)", None, NAMES)
    a = X.classify_replay(e, payload, True, "emu:ascend-a2")
    assert a.category == "DTYPE" and "isclose" in a.reason and "Comparing" in a.reason


def test_a_renamed_generic_test_runs_its_parametrized_copies():
    """test_addcmul gained @parametrize("use_cpu_scalar") after the vendor listed
    test_addcmul_npu_int16: the listed name matches no method, its copies do (their
    function is the generic test's), and a different test sharing the prefix does not."""
    from torchparity.app.explain_skips_replay import renamed_copies

    def test_addcmul(self, device, dtype):
        pass

    def test_addcmul_cuda_errors_with_cpu_scalars(self, device):
        pass

    klass = type("TestTorchDeviceTypeNPU", (), {
        "test_addcmul_use_cpu_scalar_True_npu_int16": test_addcmul,
        "test_addcmul_use_cpu_scalar_False_npu_int16": test_addcmul,
        "test_addcmul_use_cpu_scalar_True_npu_float32": test_addcmul,
        "test_addcmul_cuda_errors_with_cpu_scalars_npu": test_addcmul_cuda_errors_with_cpu_scalars})
    assert renamed_copies(klass, "test_addcmul", "_int16", ("npu",)) == [
        "test_addcmul_use_cpu_scalar_False_npu_int16", "test_addcmul_use_cpu_scalar_True_npu_int16"]
    assert renamed_copies(klass, "test_addcmul", "", ("npu",)) == []  # no dtype: no copy is its
    assert renamed_copies(klass, "test_addcmul", "_int16", ("cpu",)) == []


def test_a_class_upstream_never_runs_on_the_cpu_is_answered_by_the_device_alone():
    """TestDevicePrecision.test_advancedindex_mixed_devices_error mixes the device with the
    CPU: on the CPU it fails too (nothing is mixed), which is no reference; upstream
    instantiates the class except_for='cpu' (explain_skips_no_cpu.yaml, with its source)."""
    from torchparity.devices import get_adapter

    assert "except_for='cpu'" in X.no_cpu_classes()["TestDevicePrecision"]["source"]
    e = X.parse_entry("test_advancedindex_mixed_devices_error_npu (__main__.TestDevicePrecisionPRIVATEUSE1)",
                      None, NAMES)
    row = {"outcome": "fail", "detail": "AssertionError: RuntimeError not raised", "exc_type": "AssertionError"}
    payload = X._device_only(row, e.base_cls, get_adapter("emu:ascend-a2"))
    a = X.classify_replay(e, payload, True, "emu:ascend-a2")
    assert a.category == "ERROR_MSG_UNMATCH" and "no CPU round" in a.reason and "except_for='cpu'" in a.reason


VENDOR_EXPLAINED = DATA / "vendor-typed-explained.yaml"


def test_every_explained_vendor_entry_says_why_with_the_lines():
    why = yaml.safe_load(VENDOR_EXPLAINED.read_text(encoding="utf-8"))
    assert why and all(k.endswith(")") and " (__main__." in k for k in why)
    for key, e in why.items():
        assert e["kind"] in ("renamed", "outdated", "host", "no_fact"), key
        assert len(e["why"]) > 80 and e["shown_by"], key
        assert all(re.search(r"@[0-9a-f]{12}|torch 2\.13", s) for s in e["shown_by"]), key


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get(ASCEND), reason=f"set {ASCEND} to an Ascend/pytorch checkout")
def test_the_vendors_typed_entries_get_its_category_or_an_explanation(tmp_path):
    """The vendor's 31 typed entries (disabled_tests_type.json) replayed on emu:ascend-a2:
    each gets the vendor's category or is explained in vendor-typed-explained.yaml."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from explain_skips import vendor_agreement

    root = Path(os.environ[ASCEND])
    typed = root / "test" / "unsupported_test_cases" / "disabled_tests_type.json"
    r = X.explain_skips(disabled=str(typed), tests=str(root / "test"), device="emu:ascend-a2",
                        out=str(tmp_path), side_timeout=60)
    got = vendor_agreement(str(typed), {k: a.category for k, a in r.answers.items()}, str(VENDOR_EXPLAINED))
    assert not got["unexplained"], got["unexplained"]
    assert got["agree"][0] >= 25 and got["agree"][1] == 31, got["agree"]
