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


def test_device_transfers_and_views_are_not_a_path_but_casts_are():
    # "meta" stands for another device: the CPU-only build has no other
    x = torch.ones(2, 3)
    moved = record_path(lambda: x.to("meta"))
    assert moved == Counter(), moved  # a pure transfer (what every scenario does to its inputs)
    assert record_path(lambda: (x.t(), x.view(6), x[1:])) == Counter()  # views: metadata only
    cast = record_path(lambda: x.to("meta", torch.float64))  # a transfer that also casts is a path
    assert cast == Counter({("aten._to_copy", ("float32", "dtype=float64")): 1}), cast
    same_device = record_path(lambda: x.to(torch.float64))
    assert same_device == Counter({("aten._to_copy", ("float32", "dtype=float64")): 1})
    assert record_path(lambda: x.clone()) == Counter({("aten.clone", ("float32",)): 1})
    assert record_path(lambda: torch._has_compatible_shallow_copy_type(x, x)) == Counter()
    cross = record_path(lambda: torch.empty(2, 3, device="meta").copy_(x))
    assert ("aten.copy_", ("float32", "float32")) not in cross, cross
    # the CPU run's ops against a device run that only adds transfers: the same path
    cpu = record_path(lambda: (x * 2).sum())
    dev = record_path(lambda: (x.to("meta") * 2).sum())
    assert path_difference(cpu, dev, "meta") is None
