"""Prediction semantics: partial support, per-argument docs clauses, bookkeeping ops,
vendor-registered ops against composites, reasons true of their footprint, trivial pairs."""

import re

import pytest

from torchparity.app.predict import Prediction, Refusal, _fold, _SampleFootprint, predict
from torchparity.app.predict_docs import compare_with_docs, vendor_docs_statements
from torchparity.devices.profiles import load_profile
from torchparity.devices.registered_ops import RegisteredOps, extract_op_plugin, registered_ops
from torchparity.evidence.vendor_docs import DocsStatement, parse_dtype_clauses

PROFILE = """\
name: test-sem
device_type: npu
ops:
  aten.linalg_cholesky: {dtypes: [float32]}
  aten.linalg_cholesky_ex: {dtypes: [float32]}
  aten._linalg_check_errors: {supported: false}
  aten._trilinear: {supported: false}
  aten.bmm: {dtypes: [float32, float64]}
  aten.isclose: {dtypes: [float32]}
  aten.abs: {dtypes: [float32, float64]}
  aten.exp: {dtypes: [float32]}
  aten.new_ones: {dtypes: [float32]}
"""


@pytest.fixture(scope="module")
def prof(tmp_path_factory):
    path = tmp_path_factory.mktemp("p") / "sem.yaml"
    path.write_text(PROFILE, encoding="utf-8")
    return load_profile(path)


def one(preds, dtype):
    found = [p for p in preds if p.dtype == dtype]
    assert len(found) == 1, found
    return found[0]


# -- supported means: the forward runs in every sample ----------------------------------------

def test_forward_refused_in_some_samples_is_partial_never_supported(prof):
    ok = _SampleFootprint([("aten.exp.default", "float64")], [])
    mixed = [_SampleFootprint([("aten.add.Tensor", "float64")], []),
             _SampleFootprint([("aten.exp.default", "float64")], []),
             _SampleFootprint([], [], cpu_error="RuntimeError: no")]
    p = _fold("torch.f", "f", "float64", mixed, prof, "opinfo")
    assert (p.status, p.forward, p.forward_ran, p.refused_samples) == ("partial", "some", 1, 1)
    assert _fold("torch.f", "f", "float64", [ok], prof, "opinfo").forward == "none"
    assert _fold("torch.f", "f", "float32", [_SampleFootprint([("aten.exp.default", "float32")], [])],
                 prof, "opinfo").forward == "all"
    cmp = compare_with_docs([p], {"torch.f": ["float64"]}, prof)
    assert cmp.agree == 0 and cmp.disagreements[0]["class"] == "partial"
    assert "refused in 1 of 2 samples" in cmp.disagreements[0]["reason"]
    # a backward refusal does not make the forward partial
    bwd = _fold("torch.f", "f", "float64", [_SampleFootprint([("aten.add.Tensor", "float64")],
                                                             [("aten.exp.default", "float64")])],
                prof, "opinfo")
    assert bwd.status == "partial" and bwd.forward == "all"


# -- docs clauses: the argument, 不支持, chips ------------------------------------------------

def test_negative_chip_and_conditional_clauses():
    c = parse_dtype_clauses("`input`仅支持bf16，fp16，fp32，不支持double，complex64数据类型")
    assert [(x.kind, x.arg, x.dtypes) for x in c] == [
        ("only", "input", ("bfloat16", "float16", "float32")),
        ("not", "input", ("float64", "complex64"))]
    (chip,) = parse_dtype_clauses("- <term>Ascend 950DT</term>：不支持fp64，complex64")
    assert (chip.kind, chip.chips, chip.condition) == ("not", ("Ascend 950DT",), None)
    (cond,) = parse_dtype_clauses("- 带`dim`场景不支持fp16")
    assert cond.condition and "dim" in cond.condition
    assert parse_dtype_clauses("- int16不支持5维以上") == []
    two = parse_dtype_clauses("<term>A</term>：`self`仅支持fp16，<term>B</term>：`self`仅支持fp32")
    assert [x.chips for x in two] == [("A",), ("B",)]


def _docs(tmp_path, entries):
    chips = ("Atlas A2 训练系列产品", "Ascend 950DT")
    text = "# torch\n\n"
    for name, limits in entries:
        rows = "\n".join(f"| <term>{c}</term> | ✔ |" for c in chips)
        text += (f"### {name}\n\n<div>\n\n**原生文档**：[{name}](https://pytorch.org/docs/2.13/"
                 f"generated/{name}.html)\n\n**支持情况**：\n\n| 硬件 | 是否支持 |\n| ---- | :----: |\n"
                 f"{rows}\n\n**限制与说明**：\n\n{limits}\n\n</div>\n\n")
    folder = tmp_path / "pytorch_2-13-0"
    folder.mkdir()
    (folder / "torch.md").write_text(text, encoding="utf-8")
    return str(tmp_path)


def test_docs_statement_is_about_the_named_argument_and_chip(tmp_path):
    root = _docs(tmp_path, [
        ("torch.nn.functional.bilinear", "- `weight`仅支持fp32"),  # another argument only
        ("torch.Tensor.new_ones", "- `self`仅支持fp32"),  # the template tensor
        ("torch.nn.functional.l1_loss", "- `input`仅支持fp16，fp32\n- `target`不支持bf16"),
        ("torch.isclose", "- 不支持double数据类型\n- <term>Ascend 950DT</term>：不支持fp16"),
        ("torch.unique", "- `input`仅支持fp16，fp32\n- 带`dim`场景不支持fp16"),
    ])
    a2 = vendor_docs_statements(root, chip="A2", torch_version="2.13.0")
    dt = vendor_docs_statements(root, chip="950DT", torch_version="2.13.0")
    assert "torch.nn.functional.bilinear" not in a2  # says nothing about `input`
    assert a2["torch.Tensor.new_ones"].allowed == ("float32",)
    l1 = a2["torch.nn.functional.l1_loss"]
    assert l1.says("bfloat16") is False and l1.refused == () and l1.other_args == ("target",)
    assert a2["torch.isclose"].says("float64") is False and a2["torch.isclose"].says("float16") is None
    assert dt["torch.isclose"].says("float16") is False  # the chip's own line
    assert a2["torch.unique"].says("float16") is True  # a conditional clause is no limit


# -- bookkeeping ops, registered ops, composites -----------------------------------------------

def test_bookkeeping_never_hides_the_compute_op(prof):
    plain = predict(["torch.linalg.cholesky"], prof, dtypes=["float32"], max_samples=2,
                    grads=False, registered=False)
    p = one(plain, "float32")
    assert "aten._linalg_check_errors" in p.bookkeeping
    assert "aten._linalg_check_errors" not in p.ops and p.status == "pass"
    assert "aten.linalg_cholesky_ex" in p.ops
    # the vendor registers linalg_cholesky: the device receives it, and its own rule holds
    native = predict(["torch.linalg.cholesky"], prof, dtypes=["float32", "float64"],
                     max_samples=2, grads=False)
    assert one(native, "float32").native_op == "aten.linalg_cholesky"
    f64 = one(native, "float64")
    assert f64.status == "unsupported"
    assert [(r.op, r.dtype) for r in f64.refusals] == [("aten.linalg_cholesky", "float64")]


def test_registered_op_keeps_its_rule_and_a_composite_is_decomposed(prof):
    assert registered_ops("npu").has("aten.isclose.default")
    assert not registered_ops("npu").has("aten._trilinear")
    iso = one(predict(["torch.isclose"], prof, dtypes=["float64"], max_samples=2, grads=False),
              "float64")
    assert iso.native_op == "aten.isclose" and iso.ops == ["aten.isclose"]
    assert [r.op for r in iso.refusals] == ["aten.isclose"]  # never abs/sub/le of the CPU
    bil = one(predict(["torch.nn.functional.bilinear"], prof, dtypes=["float32"], max_samples=2,
                      grads=False), "float32")
    # _trilinear has no vendor kernel: the device gets its parts, so its rule is never asked
    assert bil.status == "pass" and "aten._trilinear" in bil.decomposed
    assert "aten.bmm" in bil.ops and "aten._trilinear" not in bil.ops
    old = one(predict(["torch.nn.functional.bilinear"], prof, dtypes=["float32"], max_samples=2,
                      grads=False, registered=False), "float32")
    assert old.status == "unsupported" and "aten._trilinear" in old.ops
    only_isclose = RegisteredOps(frozenset({"aten.isclose.default"}))
    bil2 = one(predict(["torch.nn.functional.bilinear"], prof, dtypes=["float32"],
                       max_samples=1, grads=False, registered=only_isclose), "float32")
    assert "aten._trilinear" in bil2.decomposed


def test_the_template_list_of_new_ones_is_not_the_result_dtype(prof):
    # corrcoef makes a bool tensor with new_ones; the `self` list of Tensor.new_ones (the
    # profile's aten.new_ones rule) is about the template, and the device, with no kernel
    # of its own for new_ones, receives new_empty + fill_ in the result dtype instead
    p = one(predict(["torch.corrcoef"], prof, dtypes=["float32"], max_samples=1, grads=False),
            "float32")
    assert p.status == "pass" and "aten.new_ones" in p.decomposed
    assert "aten.new_ones" not in p.ops  # (fill_ is plumbing: not a compute op)
    old = one(predict(["torch.corrcoef"], prof, dtypes=["float32"], max_samples=1, grads=False,
                      registered=False), "float32")
    assert [(r.op, r.dtype) for r in old.refusals] == [("aten.new_ones", "bool")]


def test_op_plugin_extraction_reads_version_ranges():
    text = """\
all_version: [v2.1, v2.2, v2.13, v2.14]
official:
  - func: mm(Tensor self, Tensor mat2) -> Tensor
    op_api: all_version
  - func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
    acl_op: [v2.1, newest]
  - func: old_op(Tensor self) -> Tensor
    op_api: [v2.1, v2.2]
  - func: npu_special(Tensor self) -> Tensor
    op_api: all_version
custom:
  - func: my_custom(Tensor self) -> Tensor
    op_api: all_version
"""
    assert extract_op_plugin(text, "2.13") == {"aten.mm": ["default", "out"]}
    assert "aten.old_op" in extract_op_plugin(text, "2.2")
    shipped = registered_ops("npu")
    assert "Ascend/op-plugin" in shipped.source and re.search(r"\b[0-9a-f]{40}\b", shipped.source)


# -- reasons true of the footprint; trivial pairs apart ----------------------------------------

_NAMED = re.compile(r"(aten\.[A-Za-z0-9_]+) × ([a-z0-9]+)")


def test_every_reason_is_true_of_its_footprint(prof):
    preds = predict(["torch.nn.functional.bilinear", "torch.isclose", "torch.linalg.cholesky"],
                    prof, dtypes=["float16", "float32", "float64", "int64"], max_samples=2)
    docs = {"torch.nn.functional.bilinear": ["float16", "float64"],
            "torch.isclose": DocsStatement(None, ("float32",)),
            "torch.linalg.cholesky": ["float16", "float64"]}
    cmp = compare_with_docs(preds, docs, prof)
    assert cmp.disagreements
    for d in cmp.disagreements:
        shown = {(line.split(" × ")[0], line.split(" × ")[1].split(" ")[0].rstrip(":"))
                 for line in d["footprint"]}
        named = set(_NAMED.findall(d["reason"]))
        assert named <= shown, (d["reason"], d["footprint"])
        for line in d["footprint"]:  # what the footprint says of each op is the profile's rule
            op, rest = line.split(" × ")
            dtype = rest.split(" ")[0].rstrip(":")
            assert line.endswith("no rule") == (prof.op_support(op) is None)
            if line.endswith(": refused"):
                assert not prof.allows(op, dtype)


def test_agreements_where_the_cpu_refuses_are_counted_apart(prof):
    def pred(dtype, cpu):
        return Prediction("torch.g", "g", dtype, "unsupported", "r", [Refusal("aten.exp", dtype, "forward")]
                          if not cpu else [], ["aten.exp"], samples=2, cpu_refuses=cpu,
                          refused_samples=0 if cpu else 2, cpu_error_samples=2 if cpu else 0,
                          calls=[("aten.exp", dtype, "forward")])

    preds = [pred("bool", True), pred("float64", False), pred("int64", True)]
    cmp = compare_with_docs(preds, {"torch.g": DocsStatement(("float32", "int64"))}, prof)
    # bool: docs leave it out, the CPU refuses: trivial; float64: a real agreement;
    # int64: the docs allow what the CPU refuses: a disagreement
    assert (cmp.compared, cmp.trivial, cmp.agree) == (3, 1, 1)
    assert [d["class"] for d in cmp.disagreements] == ["cpu_refuses"]
    assert cmp.rate == 0.5 and cmp.rate_with_trivial == pytest.approx(2 / 3)


@pytest.mark.slow
def test_cli_docs_comparison_prints_class_and_footprint(prof, tmp_path):
    import os
    import subprocess
    import sys

    root = _docs(tmp_path, [("torch.isclose", "- `input`仅支持fp32，fp64")])
    proc = subprocess.run([sys.executable, "-m", "torchparity", "predict", "torch.isclose",
                           "--profile", prof.path, "--vendor-docs", root, "--torch-version",
                           "2.13.0", "--chip", "A2", "--dtypes", "float32,float64,float16",
                           "--max-samples", "2", "--no-grads"],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "vendor docs: 2 of 3 (api, dtype) pairs agree" in out  # float16: left out, refused
    assert "as the npu device receives them" in out.splitlines()[0]
    assert ("suspected docs error [profile_refuses]: torch.isclose float64: the docs allow "
            "float64, but the profile refuses aten.isclose × float64") in out
    assert "footprint: aten.isclose × float64: refused" in out
    plain = subprocess.run([sys.executable, "-m", "torchparity", "predict", "torch.isclose",
                            "--profile", prof.path, "--dtypes", "float64", "--max-samples", "1",
                            "--no-grads", "--no-vendor-ops"],
                           capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines()[0].endswith("from a dispatch mode on the CPU; no device ran")
    assert "the profile refuses aten.isclose" not in plain.stdout  # abs, sub, le... instead


def test_a_dtype_no_op_sees_is_converted_not_silent(prof):
    p = Prediction("torch.h", "h", "int8", "pass", "r", [], ["aten.sin"], samples=1,
                   forward_ran=1, calls=[("aten.sin", "float32", "forward")])
    (d,) = compare_with_docs([p], {"torch.h": ["float32"]}, prof).disagreements
    assert d["class"] == "converted" and "sees another dtype (float32)" in d["reason"]


def test_a_sample_with_an_empty_input_says_nothing_to_the_docs(prof):
    # bilinear's (0, 3) sample never reaches bmm: where every sample with elements is
    # refused, the docs comparison reads "none"; the prediction itself stays partial
    import torch

    def fp(op, empty):
        return _SampleFootprint([(op, "int8")], [], empty=empty)

    p = _fold("torch.b", "b", "int8", [fp("aten.bmm.default", False), fp("aten.view.default", True)],
              prof, "opinfo")
    assert (p.status, p.forward, p.forward_with_elements, p.empty_ran) == ("partial", "some", "none", 1)
    cmp = compare_with_docs([p], {"torch.b": ["float32"]}, prof)
    assert cmp.agree == 1 and not cmp.disagreements
    # an empty sample let through beside a sample with elements let through: still "some"
    q = _fold("torch.b", "b", "int8", [fp("aten.bmm.default", False), fp("aten.view.default", True),
                                       fp("aten.add.Tensor", False)], prof, "opinfo")
    assert q.forward_with_elements == "some"
    # the recorder marks the sample by its input
    from torch.testing._internal.opinfo.core import SampleInput

    from torchparity.app.predict import _record_opinfo_sample

    f = _record_opinfo_sample(torch.sin, SampleInput(torch.zeros(0, 3)), False)
    assert f.empty and not _record_opinfo_sample(torch.sin, SampleInput(torch.zeros(2)), False).empty
