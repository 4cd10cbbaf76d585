"""Vendor (Ascend) support docs: parser, look-up through aliases, the shared data's facts."""

from __future__ import annotations

import pytest

from torchparity.errors import InputError
from torchparity.evidence.vendor_docs import (
    DTYPE_NAMES,
    available_versions,
    load_vendor_docs,
    name_from_url,
    parse_dtype_clauses,
    resolve_chips,
)

from .conftest import FIXTURES

VENDOR = FIXTURES / "vendor"
A2, A3, DT = "Atlas A2 训练系列产品", "Atlas A3 训练系列产品", "Ascend 950DT"


@pytest.fixture(scope="module")
def index():
    return load_vendor_docs(VENDOR, "2.12.0")


def test_versions_and_folder_choice():
    assert available_versions(VENDOR) == ["2.7.1", "2.12.0"]
    assert load_vendor_docs(VENDOR, "2.7.1").version == "2.7.1"
    assert load_vendor_docs(VENDOR, "2.12").version == "2.12.0"  # newest 2.12.x
    assert load_vendor_docs(VENDOR / "pytorch_2-7-1").version == "2.7.1"  # one folder
    with pytest.raises(InputError, match="available: 2.7.1, 2.12.0"):
        load_vendor_docs(VENDOR, "2.13.0")
    with pytest.raises(InputError, match="give a torch version"):
        load_vendor_docs(VENDOR)
    with pytest.raises(InputError, match="not found"):
        load_vendor_docs(VENDOR / "missing", "2.12.0")


def test_entry_fields(index):
    e = index.get("torch.autograd.forward_ad.unpack_dual")
    assert e.chips == {A2: True, A3: True, DT: False}
    assert e.limits == "`input`仅支持fp32"
    assert e.dtypes == ["float32"]
    assert (e.source, e.line) == ("pytorch_2-12-0/torch-fixture.md", 9)
    assert e.section == "Forward-mode"
    assert e.url.endswith("/generated/torch.autograd.forward_ad.unpack_dual.html")


def test_html_entity_mark_and_no_limits(index):
    e = index.get("torch.autograd.gradcheck.gradcheck")
    assert e.chips == {A2: True, A3: True, DT: False}
    assert e.limits is None and e.dtypes is None


def test_short_heading_takes_full_name_from_link(index):
    e = index.get("torch.autograd.profiler.profile.total_average")
    assert e is not None and e.heading == "profile.total_average"
    assert index.get("profile.total_average") is e


def test_class_members(index):
    add = index.get("torch.Tensor.add")
    assert add.cls == "torch.Tensor" and add.heading == "add"
    t = index.get("torch.Tensor.T")
    assert t is not None and t.chips[DT] is False
    init = index.get("torch.nn.Module.__init__")  # escaped underscores in the member line
    assert init is not None and init.chips == {A2: True, A3: False, DT: False}
    assert index.get("torch.Tensor") is None  # a class heading without its own link


def test_per_chip_and_extra_dtypes(index):
    add = index.get("torch.Tensor.add")
    assert add.limits.splitlines()[-1] == "- 可能回退至CPU执行"
    assert add.dtypes == ["bfloat16", "float16", "float32", "int64"]  # union of "仅支持"
    assert add.dtypes_for(A2) == ["bfloat16", "float16", "float32", "int64"]
    assert add.dtypes_for(A3) == ["bfloat16", "float16", "float32", "int64", "float64"]
    assert add.dtypes_for(DT) == ["float16", "float32"]
    assert add.dtypes_for(DT, arg="self") == ["float16", "float32"]
    assert add.dtypes_for(DT, arg="other") is None
    only = [c for c in add.dtype_clauses if c.kind == "only"]
    assert [c.chips for c in only] == [(A2, A3), (DT,)]
    assert all(c.arg == "self" for c in only)


def test_to_dict_is_plain_data(index):
    import json

    d = index.get("torch.Tensor.add").to_dict()
    assert json.loads(json.dumps(d, ensure_ascii=False)) == d
    assert d["class"] == "torch.Tensor" and d["dtype_clauses"][2]["kind"] == "extra"


def test_only_without_dtypes_is_not_a_dtype_limit(index):
    t = index.get("torch.Tensor.T")
    assert "仅支持True" in t.limits and t.dtypes is None


def test_dtype_clause_parsing():
    clauses = parse_dtype_clauses("`other`仅支持 fp16、bf16 和 complex64，其余回退")
    assert len(clauses) == 1
    assert clauses[0].dtypes == ("float16", "bfloat16", "complex64")
    assert clauses[0].arg == "other"
    assert parse_dtype_clauses("仅支持PyTorch 2.7.1以上版本") == []
    assert parse_dtype_clauses("仅支持int80") == []  # not a dtype token
    assert set(DTYPE_NAMES.values()) >= {"float16", "bfloat16", "float32", "float64", "uint8",
                                         "int8", "int16", "int32", "int64", "bool",
                                         "complex64", "complex128"}


def test_lookup_through_aliases(index):
    # gradcheck is listed under its defining module's name
    entry, how = index.match("torch.autograd.gradcheck")
    assert entry.name == "torch.autograd.gradcheck.gradcheck" and how == "qualified"
    assert index.match("torch.autograd.forward_ad.unpack_dual")[1] == "exact"
    assert index.lookup("torch.autograd.forward_ad.enter_dual_level") is None
    model = index.docs_evidence("torch.autograd.gradcheck")
    assert model.present and model.matched_by == "qualified" and model.line == 27
    assert index.docs_evidence("torch.autograd.forward_ad.enter_dual_level").present is False


def test_iteration_and_chips(index):
    assert len(index) == len(list(index)) == 6
    assert index.chips == [A2, A3, DT]


def test_name_from_url():
    assert name_from_url("https://x/docs/2.12/generated/torch.a.b.html") == "torch.a.b"
    assert name_from_url("https://x/docs/2.12/autograd.html#torch.a.b") == "torch.a.b"
    assert name_from_url("https://x/docs/2.12/tensors.html") is None


def test_resolve_chips():
    known = [A2, A3, DT]
    assert resolve_chips(["A2", "950DT", A3], known) == [A2, DT, A3]
    with pytest.raises(InputError, match="matches several chips"):
        resolve_chips(["Atlas"], known)
    with pytest.raises(InputError, match="matches no chip"):
        resolve_chips(["A9"], known)


# -- the shared data (Ascend/pytorch docs/zh/api/native_api at 9e73e708a) ---------------

def test_shared_data_facts_2_12(ascend_docs):
    index = load_vendor_docs(ascend_docs, "2.12.0")
    assert index.lookup("torch.autograd.forward_ad.enter_dual_level") is None
    unpack = index.lookup("torch.autograd.forward_ad.unpack_dual")
    assert unpack.limits == "`input`仅支持fp32" and unpack.dtypes == ["float32"]
    itt = index.lookup("torch.autograd.profiler.emit_itt")
    assert itt.chips and not any(itt.chips.values())
    assert set(itt.chips) == {A2, A3, DT}
    entry, how = index.match("torch.autograd.gradcheck")
    assert entry.name == "torch.autograd.gradcheck.gradcheck" and how == "qualified"


def test_shared_data_counts_2_7_1(ascend_docs):
    index = load_vendor_docs(ascend_docs, "2.7.1")
    # 3,388 blocks; torch.nn.Module.npu links to the Module page, so 3,387 distinct pages
    assert len(index) == 3388
    assert len({e.url for e in index}) == 3387
    assert sum(1 for e in index if e.dtypes is not None) == 1249


@pytest.mark.parametrize("version", ["2.7.1", "2.11.0", "2.12.0", "2.13.0"])
def test_shared_data_every_entry_has_a_table(ascend_docs, version):
    index = load_vendor_docs(ascend_docs, version)
    assert len(index) > 3000
    assert all(e.chips for e in index)
    assert all(e.url and e.url.startswith("https://") for e in index)
