"""predict: footprints against a profile, confirmation by a sweep, comparison with docs."""

import os
import subprocess
import sys

import pytest

from torchparity.app.predict import against_rows, predict, refuses
from torchparity.app.predict_docs import compare_with_docs
from torchparity.devices.profiles import load_profile

PROFILE = """\
name: test-no-f64
device_type: npu
ops:
  aten.dot: {dtypes: [float16, bfloat16, float32, int64]}
  aten.linalg_vector_norm: {dtypes: [float16, bfloat16, float32], source: "docs: torch.linalg.vector_norm"}
  aten.mm: {supported: false}
"""


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("p") / "no-f64.yaml"
    path.write_text(PROFILE, encoding="utf-8")
    return str(path)


def by_dtype(preds, api):
    return {p.dtype: p for p in preds if p.api == api}


def test_dot_float64_is_predicted_to_fail_with_the_op(profile):
    preds = by_dtype(predict(["torch.dot"], profile, dtypes=["float32", "float64", "int64"]), "torch.dot")
    assert preds["float32"].status == "pass" and preds["int64"].status == "pass"
    f64 = preds["float64"]
    assert f64.status == "unsupported"
    assert [(r.op, r.dtype, r.phase) for r in f64.refusals] == [("aten.dot", "float64", "forward")]
    assert "aten.dot × float64" in f64.reason


def test_composite_is_predicted_from_its_footprint(profile):
    preds = by_dtype(predict(["torch.nn.functional.normalize"], profile,
                             dtypes=["float32", "float64", "int32"]), "torch.nn.functional.normalize")
    assert preds["float32"].status == "pass"
    assert "aten.linalg_vector_norm" in preds["float32"].ops and len(preds["float32"].ops) > 2
    assert preds["float64"].status == "unsupported"
    assert {r.op for r in preds["float64"].refusals} == {"aten.linalg_vector_norm"}
    assert preds["int32"].cpu_refuses  # the op itself refuses ints; not the profile's doing


def test_refusal_rules(profile):
    p = load_profile(profile)
    assert refuses(p, "aten.dot.default", "float64") and not refuses(p, "aten.dot.default", "float32")
    assert refuses(p, "aten.mm.default", "float32")  # no kernel at all
    assert not refuses(p, "aten.add.Tensor", "float64")  # not listed, default allow
    deny = p.model_copy(update={"default": "deny"})
    assert refuses(deny, "aten.add.Tensor", "float32") and not refuses(deny, "aten.view.default", "float32")


def test_against_a_sweep_lists_disagreements(profile):
    preds = predict(["torch.dot"], profile, dtypes=["float32", "float64"])
    rows = [dict(api="torch.dot", variant="dot", dtype="float32", status="pass"),
            dict(api="torch.dot", variant="dot", dtype="float64", status="pass", cause=None, detail="ran")]
    conf = against_rows(preds, rows)
    assert (conf.compared, conf.agree) == (2, 1)
    d = conf.disagreements[0]
    assert (d["dtype"], d["predicted"], d["observed"]) == ("float64", "unsupported", "pass")
    rows[1].update(status="unsupported", cause="dtype_limit")
    assert against_rows(preds, rows).rate == 1.0


def test_comparison_with_vendor_docs(profile):
    apis = ["torch.nn.functional.normalize", "torch.dot"]
    preds = predict(apis, profile, dtypes=["float16", "float32", "float64", "int64"])
    docs = {
        # docs claim float64, the footprint needs linalg_vector_norm x float64: docs error
        "torch.nn.functional.normalize": ["float16", "float32", "float64"],
        # docs leave out int64 although aten.dot is explicitly allowed for it: docs error
        "torch.dot": ["float16", "float32"],
        "torch.not_predicted": ["float32"],
    }
    cmp = compare_with_docs(preds, docs, profile)
    assert cmp.apis == 2 and cmp.compared == 8
    # normalize x int64: left out by the docs and refused by the CPU too: counted apart
    assert cmp.trivial == 1
    found = {(d["api"], d["dtype"]): d for d in cmp.disagreements}
    assert set(found) == {("torch.nn.functional.normalize", "float64"), ("torch.dot", "int64")}
    norm = found[("torch.nn.functional.normalize", "float64")]
    assert norm["verdict"] == "suspected docs error" and norm["class"] == "profile_refuses"
    assert "aten.linalg_vector_norm × float64" in norm["reason"]
    assert "docs: torch.linalg.vector_norm" in norm["reason"]
    assert "aten.linalg_vector_norm × float64: refused" in norm["footprint"]
    assert found[("torch.dot", "int64")]["class"] == "ops_allowed"
    assert cmp.agree == 5 and cmp.rate == 5 / 7 and cmp.rate_with_trivial == 6 / 8
    # a dtype allowed only because the profile is silent: suspected tool error
    cmp2 = compare_with_docs(predict(["torch.mul"], profile, dtypes=["float64"]),
                             {"torch.mul": ["float32"]}, profile)
    assert cmp2.disagreements[0]["verdict"] == "suspected tool error"
    assert cmp2.disagreements[0]["class"] == "profile_silent"
    assert "aten.mul × float64 have no profile rule" in cmp2.disagreements[0]["reason"]


@pytest.mark.slow  # > 10 s; the same path has a faster test in the default suite
def test_cli_predict_names_dtype_and_op(profile):
    proc = subprocess.run([sys.executable, "-m", "torchparity", "predict", "torch.dot",
                           "--profile", profile, "--dtypes", "float32,float64"],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "torch.dot [dot] float64: unsupported — the profile refuses aten.dot × float64" in proc.stdout


def test_docs_verdicts_from_synthetic_predictions(profile):
    from torchparity.app.predict import Prediction, Refusal

    def pred(dtype, status, refusals=(), calls=(("aten.dot", None, "forward"),), ran=2, refused=0):
        calls = [(op, d or dtype, ph) for op, d, ph in calls]
        return Prediction("torch.f", "f", dtype, status, "r", list(refusals),
                          sorted({c[0] for c in calls}), [], samples=ran + refused,
                          refused_samples=refused, forward_ran=ran, calls=calls)

    vn = ("aten.linalg_vector_norm", None, "forward")
    preds = [
        pred("float16", "unsupported", [Refusal("aten.linalg_vector_norm", "float16", "forward")],
             calls=[vn], ran=0, refused=2),
        pred("float32", "unsupported", [Refusal("aten.min", "int32", "forward")],
             calls=[("aten.min", "int32", "forward"), vn], ran=0, refused=2),
        pred("float64", "pass", calls=[("aten.foo", None, "forward")]),
        pred("bfloat16", "pass"),
    ]
    cmp = compare_with_docs(preds, {"torch.f": ["float16", "float32"]}, profile)
    v = {d["dtype"]: (d["class"], d["verdict"]) for d in cmp.disagreements}
    assert v == {"float16": ("profile_refuses", "suspected docs error"),  # a part refuses it
                 "float32": ("auxiliary_refused", "suspected tool error"),  # via an int32 tensor
                 "float64": ("profile_silent", "suspected tool error"),  # the profile's silence
                 "bfloat16": ("ops_allowed", "suspected docs error")}  # every part allows it
    assert cmp.rate == 0.0 and cmp.apis == 1 and cmp.apis_agreeing == 0


def test_a_generated_profile_silent_on_an_op_predicts_unknown(tmp_path):
    # silence is not support: no fact for aten.i0 in a generated profile -> unknown
    path = tmp_path / "gen.yaml"
    path.write_text("name: gen\ndevice_type: npu\ngenerated: {command: test}\n"
                    "ops:\n  aten.mul: {dtypes: [float32]}\n  aten.sum: {}\n", encoding="utf-8")
    preds = by_dtype(predict(["torch.special.i0", "torch.mul"], str(path), dtypes=["float32"]),
                     "torch.special.i0")
    assert preds["float32"].status == "unknown"
    assert "no capability fact for aten.i0" in preds["float32"].reason
    mul = by_dtype(predict(["torch.mul"], str(path), dtypes=["float32"]), "torch.mul")
    assert mul["float32"].status == "pass"
