"""Code paths: recorded above the backend, compared as multisets."""

from collections import Counter

import torch

from torchparity.judge.paths import path_difference
from torchparity.run.paths import record_path


def test_records_ops_with_dtypes_dtype_and_string_options_not_numbers():
    x = torch.ones(3, dtype=torch.float16)
    calls = record_path(lambda: (x.to(torch.float32) * 2.5).sum())
    assert calls[("aten._to_copy", ("float16", "dtype=float32"))] == 1
    assert calls[("aten.mul.Tensor", ("float32",))] == 1  # the scalar 2.5 is not part of the path
    assert calls[("aten.sum", ("float32",))] == 1
    x = torch.ones(2, 2)
    assert ("aten.div.Tensor_mode", ("float32", "float32", "'floor'")) in record_path(
        lambda: torch.div(x, x, rounding_mode="floor"))


def test_an_exception_ends_the_record_without_raising():
    def fails():
        torch.ones(2).neg()
        raise RuntimeError("boom")

    assert record_path(fails) == Counter({("aten.ones", ()): 1, ("aten.neg", ("float32",)): 1})


def test_same_ops_in_another_order_are_the_same_path():
    a = Counter({("aten.mm", ("float16", "float16")): 2, ("aten.add.Tensor", ("float16", "float16")): 1})
    assert path_difference(a, Counter(dict(reversed(list(a.items())))), "npu") is None


def test_difference_names_both_sides_most_frequent_first():
    cpu = Counter({("aten.mm", ("float32", "float32")): 2, ("aten.sum", ("float32",)): 1})
    dev = Counter({("aten.mm", ("float16", "float16")): 2, ("aten.sum", ("float32",)): 1,
                   ("aten._to_copy", ("float16", "dtype=float32")): 1})
    why = path_difference(cpu, dev, "npu", limit=1)
    assert why == ("the API takes another code path on npu: only there aten.mm(float16, float16) x2 "
                   "and 1 more; only on the CPU aten.mm(float32, float32) x2")
    # a count alone differing is another path too
    assert "only on the CPU nothing" in path_difference(cpu, cpu + cpu, "cuda")
