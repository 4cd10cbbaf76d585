"""The OpInfo adapter: name and object mapping, samples, upstream skips, claims, footprints."""

import torch

from torchparity.scenarios import opinfo as oi


def keys(api):
    return [(e.key, e.call) for e in oi.opinfo_for(api, include_refs=False)]


def test_api_names_map_to_entries_both_ways():
    assert keys("torch.mm") == [("mm", "op")]
    assert ("nn.functional.relu", "op") in keys("torch.nn.functional.relu")
    assert ("linalg.vector_norm", "op") in keys("torch.linalg.vector_norm")
    # aliases, methods and in-place variants are found through their objects
    assert ("abs", "alias:absolute") in keys("torch.absolute")
    assert ("add", "method") in keys("torch.Tensor.add")
    assert ("add", "inplace") in keys("torch.Tensor.add_")
    # several variants of one API
    assert {k for k, _ in keys("torch.max")} >= {"max.reduction_with_dim", "max.binary"}
    # entries are filed under the name asked for, and callables resolve
    e = oi.opinfo_for("torch.absolute")[0]
    assert e.api == "torch.absolute" and e.callable() is torch.absolute
    assert oi.opinfo_for("torch.Tensor.add_", include_refs=False)[0].callable() is torch.Tensor.add_
    assert oi.opinfo_for("torch.no_such_api") == []
    # python_ref_db where useful: the refs themselves
    assert any(e.db == "python_ref_db" for e in oi.opinfo_for("torch._refs.abs"))


def test_all_opinfo_apis_and_entries():
    apis = oi.all_opinfo_apis()
    assert len(oi.entries()) >= 700 and len(apis) > 500
    for name in ("torch.mm", "torch.nn.functional.relu", "torch.linalg.vector_norm",
                 "torch.Tensor.__radd__", "torch.Tensor.float"):
        assert name in apis, name
    assert len({e.key for e in oi.entries()}) == len(oi.entries())  # keys are unique


def test_samples_are_made_on_the_cpu_and_seeded():
    op = oi.entry("op_db", "add")
    a = oi.make_samples(op, torch.float32)
    b = oi.make_samples(op, torch.float32)
    assert len(a) == len(b) > 3
    for x, y in zip(a, b):
        assert x.input.device.type == "cpu"
        assert torch.equal(x.input, y.input)
    ref = oi.make_samples(op, torch.float32, reference=True)
    assert len(ref) > len(a)


def test_upstream_skips_are_read_with_device_type_and_dtype():
    lu = oi.entry("op_db", "linalg.lu")
    assert "expected failure" in oi.upstream_skip(lu, "cpu", torch.float32)
    drop = oi.entry("op_db", "nn.functional.dropout")
    assert "non-deterministic" in oi.upstream_skip(drop, "npu", torch.float16)
    assert oi.upstream_skip(oi.entry("op_db", "add"), "cpu", torch.float32) is None
    # device-type specific entries only where they apply
    grid = oi.entry("op_db", "grid_sampler_3d")
    assert oi.upstream_skip(grid, "cpu", torch.float32) is not None
    assert oi.upstream_skip(grid, "npu", torch.float32) is None
    renorm = oi.entry("op_db", "renorm")
    assert oi.upstream_skip(renorm, "mps", torch.float32, oi.DTYPE_TESTS) == (
        "OpInfo 'renorm' marks test_dtypes on mps for float32: expected failure")
    assert oi.upstream_skip(renorm, "cpu", torch.float32, oi.DTYPE_TESTS) is None


def test_claimed_dtypes_fall_back_to_the_cpu_for_unknown_device_types():
    op = oi.entry("op_db", "cdist")
    assert oi.claimed_dtypes(op, "npu") == oi.claimed_dtypes(op, "cpu") == ["float32", "float64"]
    # known device types keep their own claims
    assert "bool" in oi.claimed_dtypes(oi.entry("op_db", "abs"), "cuda")
    assert "bool" not in oi.claimed_dtypes(oi.entry("op_db", "abs"), "npu")


def test_output_kinds():
    assert oi.output_kind(oi.entry("op_db", "empty_like")) == "uninitialised"
    assert oi.output_kind(oi.entry("op_db", "bernoulli")) == "random"
    assert oi.output_kind(oi.entry("op_db", "nn.functional.feature_alpha_dropout.without_train")) == "values"
    assert oi.output_kind(oi.entry("op_db", "add")) == "values"


def test_api_compute_ops_from_the_first_sample():
    assert oi.api_compute_ops("torch.dot") == ["aten.dot"]
    assert oi.api_compute_ops("torch.mm") == ["aten.mm"]
    ops = oi.api_compute_ops("torch.nn.functional.normalize")
    assert "aten.linalg_vector_norm" in ops and len(ops) > 1  # a composite
    assert oi.api_compute_ops("torch.no_such_api") is None


def test_a_dtype_opinfo_claims_for_an_accelerator_only_is_asked_where_the_cpu_computes_it():
    """Issue 48 item 7 (hand-read Tensor.round / round_): round.decimals_3 claims float16 on
    CUDA only, so rounding to 3 decimals in float16 (an Ascend dtype) was never asked; the
    CPU computes it, so it is. A dtype the CPU cannot compute stays out (no reference)."""
    from torchparity.api.resolve import resolve
    from torchparity.scenarios import sources

    sc = {s.id: s for s in sources.source("opinfo").scenarios("torch.Tensor.round", resolve("torch.Tensor.round").obj)}
    dec3 = next(s for k, s in sc.items() if k.startswith("round.decimals_3"))
    assert "float16" in dec3.dtypes and "float32" in dec3.dtypes
    # fft.rfft claims float16 on CUDA only too, but the CPU refuses it: no reference, not asked
    rfft = sources.source("opinfo").scenarios("torch.fft.rfft", torch.fft.rfft)
    assert rfft and all("float16" not in s.dtypes for s in rfft)
    add = next(iter(sources.source("opinfo").scenarios("torch.add", torch.add)))
    assert "float16" in add.dtypes  # claimed on the CPU already: unchanged
