import torch

from torchparity.judge import standards
from torchparity.judge.compare import compare_outputs
from torchparity.results.models import Cause, Status


def test_equal_structures_pass():
    out = (torch.ones(3), None, True, 2, {"a": torch.zeros(2, dtype=torch.int64)})
    assert compare_outputs(out, out, "cpu").status == Status.PASS


def test_value_mismatch_names_metric_and_threshold():
    j = compare_outputs(torch.ones(3), torch.ones(3) + 1e-2, "cpu")
    assert (j.status, j.cause) == (Status.FAIL, Cause.MISMATCH)
    assert j.metric.name in ("max_rel_diff", "mean_rel_diff") and j.metric.value > 0.009
    assert j.metric.threshold == standards.THRESHOLDS["cpu"]["float32"][j.metric.name + "_fail"]
    assert j.metric.standard == "cpu float32"


def test_integers_are_exact():
    j = compare_outputs(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), "cpu")
    assert j.status == Status.FAIL and j.metric.standard == "exact"


def test_nan_positions_must_match():
    a = torch.tensor([1.0, float("nan")])
    assert compare_outputs(a, a.clone(), "cpu").status == Status.PASS
    assert compare_outputs(a, torch.tensor([float("nan"), 1.0]), "cpu").status == Status.FAIL


def test_metadata_checks():
    assert compare_outputs(torch.ones(2), torch.ones(2, dtype=torch.float64), "cpu").cause == Cause.METADATA
    assert compare_outputs(torch.ones(2), torch.ones(1, 2), "cpu").cause == Cause.METADATA
    assert compare_outputs(None, torch.ones(2), "cpu").cause == Cause.METADATA
    assert compare_outputs(torch.ones(2), None, "cpu").cause == Cause.METADATA
    # a CPU tensor where the device run should have produced a device tensor
    assert compare_outputs(torch.ones(2), torch.ones(2), "npu").cause == Cause.METADATA


def test_scalars_and_bools():
    assert compare_outputs(True, False, "cpu").status == Status.FAIL
    assert compare_outputs(1.0, 1.0 + 1e-9, "cpu").status == Status.PASS
    assert compare_outputs(1, 2, "cpu").status == Status.FAIL
    assert compare_outputs([1, 2], [1, 2, 3], "cpu").cause == Cause.METADATA



def test_output_kinds_names_what_the_comparison_walks():
    from torchparity.judge.compare import output_kinds
    from torchparity.scenarios.registry import Draws

    t = torch.zeros(3, 4)
    answer = {"a": (t.half(), t.t()), "b": [1, 2.5, None, "x", torch.float32], "c": object()}
    assert output_kinds(answer) == ["float16", "float32", "opaque", "strided"]
    assert output_kinds(Draws(torch.zeros(5, dtype=torch.bfloat16))) == ["bfloat16"]
    assert output_kinds(True) == [] and output_kinds(None) == []
    # a single-element tensor has no layout worth naming
    assert output_kinds(torch.zeros(1, 1).t()) == ["float32"]
