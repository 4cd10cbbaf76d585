"""The second reader of the kernel facts (benchmarks/kernel_second_reader.py, issue 44 item 4)
reads the arch selectors, skips route-only lists, reads an in-place op's out list and
op-plugin's own checks; and every rule that settles a disagreement cites the line that does."""

import os
import re
from pathlib import Path

import pytest
import yaml
from support import benchmark

ROOT = Path(__file__).resolve().parents[2]
reader = benchmark("kernel_second_reader", "kernel_second_reader")

KERNEL = """
static const std::initializer_list<op::DataType> ASCEND910_DTYPE_SUPPORT_LIST = {
    op::DataType::DT_FLOAT, op::DataType::DT_FLOAT16};
static const std::initializer_list<op::DataType> ASCEND910B_DTYPE_SUPPORT_LIST = {
    op::DataType::DT_FLOAT, op::DataType::DT_FLOAT16, op::DataType::DT_BF16, op::DataType::DT_INT32};
static const std::initializer_list<op::DataType> AICORE_DTYPE_SUPPORT_LIST = {op::DataType::DT_FLOAT};
static const std::initializer_list<op::DataType> DTYPE_OUT_LIST = {op::DataType::DT_FLOAT, op::DataType::DT_BF16};

static bool IsAiCoreSupport(const aclTensor* self)
{
    return CheckType(self->GetDataType(), AICORE_DTYPE_SUPPORT_LIST);
}

static bool CheckDtypeValid(const aclTensor* self, const aclTensor* out)
{
    auto supportList = GetDtypeSupportListV1(ASCEND910B_DTYPE_SUPPORT_LIST, ASCEND910_DTYPE_SUPPORT_LIST);
    OP_CHECK_DTYPE_NOT_SUPPORT(self, supportList, return false);
    return true;
}

static bool CheckInplaceDtypeValid(const aclTensor* selfRef)
{
    auto inplaceSupportList = GetDtypeSupportListV2(DTYPE_OUT_LIST, ASCEND910_DTYPE_SUPPORT_LIST);
    OP_CHECK_DTYPE_NOT_SUPPORT(selfRef, inplaceSupportList, return false);
    return true;
}
"""

SELECTOR = """
static const std::initializer_list<DataType> LIST_A = {DataType::DT_FLOAT, DataType::DT_BF16};
static const std::initializer_list<DataType> LIST_B = {DataType::DT_FLOAT};
static const std::initializer_list<DataType>& GetDtypeSupportList()
{
    if (GetCurrentPlatformInfo().GetCurNpuArch() == NpuArch::DAV_2201 || IsRegBase()) {
        return LIST_A;
    } else {
        return LIST_B;
    }
}
static bool CheckDtypeValid(const aclTensor* self)
{
    OP_CHECK_DTYPE_NOT_SUPPORT(self, GetDtypeSupportList(), return false);
    return true;
}
"""


def test_the_reader_follows_the_v1_selector_and_skips_route_only_lists():
    got = reader.kernel_reading(KERNEL)
    acc, ref, cite = got["dav_2201"]
    assert acc == {"float32", "float16", "bfloat16", "int32"}  # V1 gives l1 on DAV_2201
    assert "float64" in ref
    assert "AICORE" not in cite  # CheckType(x, AICORE...) only picks a route
    acc, ref, _ = got["dav_3510"]
    assert acc == {"float32", "float16"} and "bfloat16" in ref  # V1 gives l2 elsewhere


def test_an_in_place_op_reads_its_out_list():
    outs = reader.inplace_out_lists(KERNEL)
    assert outs["dav_2201"][0] == {"float32", "bfloat16"}  # V2 gives the out list on both chips
    assert outs["dav_3510"][0] == {"float32", "bfloat16"}


def test_the_reader_follows_an_if_else_selector():
    got = reader.kernel_reading(SELECTOR)
    assert got["dav_2201"][0] == {"float32", "bfloat16"}
    assert got["dav_3510"][0] == {"float32", "bfloat16"}  # IsRegBase() takes LIST_A too


class _FakeRepos:
    cache: dict = {}

    def __init__(self, text):
        self.text = text
        self.cache = {}

    def grep(self, repo, commit, pattern, under):
        return [f"{commit}:op_plugin/ops/opapi/UpKernelNpuOpApi.cpp:{n}:{line}"
                for n, line in enumerate(self.text.splitlines(), 1) if re.search(pattern, line)]

    def show(self, repo, commit, path):
        return self.text


PLUGIN = """at::Tensor upsample_bilinear2d(
    const at::Tensor& self_ex,
    at::IntArrayRef output_size)
{
    at::Tensor self = self_ex;
    TORCH_CHECK(
        self.scalar_type() != at::ScalarType::Double,
        "not support torch.fp64 dtypes");
    EXEC_NPU_CMD(aclnnUpsampleBilinear2d, self, output_size, result);
}
"""


def test_op_plugin_checks_on_an_alias_of_the_first_tensor_refuse():
    refused, only, cite = reader.plugin_reading(_FakeRepos(PLUGIN), "0" * 40, "aten.upsample_bilinear2d")
    assert refused == {"float64"} and only is None
    assert "UpKernelNpuOpApi.cpp:6@" in cite


def test_every_settled_disagreement_cites_its_line_and_who_is_right():
    rules = reader.load_explained()
    assert rules
    for r in rules:
        assert r["right"] in ("profile", "reader")
        assert r["reading"] in ("kernel", "op-plugin", "docs")
        assert "op" in r or "op_prefix" in r
        assert re.search(r"\S+\.(cpp|h|yaml):\d+", r["settled_by"]) and "@" in r["settled_by"], r["settled_by"]
        if r["reading"] == "docs":  # narrow: one op, its profiles, its dtypes, the profile's verdict, a class
            assert r["class"] in DOCS_CLASSES and r["dtypes"] and r["profiles"] and "profile_says" in r, r
            assert "op_prefix" not in r and "ops" not in r, r


DOCS_CLASSES = {"docs-narrower-than-kernel", "docs-broader-than-kernel", "docs-chip-table", "inplace-integer-self",
                "kernel-rule", "op-plugin-fallback", "op-plugin-route"}


def test_the_docs_rules_hold_the_docs_readings_disagreements_exactly():
    """The docs reading needs no vendor repository: every disagreement of the shipped profiles
    with the vendor docs is settled by a rule, and every docs rule settles at least one (a new
    disagreement fails, and so does a rule whose disagreement went away)."""
    explained = reader.load_explained()
    docs_rules = [e for e in explained if e["reading"] == "docs"]
    used, unexplained = set(), []
    for pname in reader.DEFAULT_PROFILES:
        profile = reader.load_yaml(reader.PROFILES / f"{pname}.yaml")
        for row in reader.docs_rows(pname, profile, ROOT / "tests" / "data" / "ascend-native-api-docs", explained):
            if row["profile_says"] == row["reader_says"]:
                continue
            if row["why"] is None:
                unexplained.append((pname, row["op"], row["dtype"], row["profile_says"]))
            else:
                used.add(id(row["why"]))
    assert not unexplained, f"{len(unexplained)} docs disagreements no rule settles, e.g. {unexplained[:5]}"
    stale = [(e["op"], e["class"], e["dtypes"]) for e in docs_rules if id(e) not in used]
    assert not stale, f"docs rules that settle no disagreement any more: {stale[:5]}"


def _docs_row(op, dtype, says, section):
    return {"op": op, "dtype": dtype, "profile_says": says, "reader_says": not says, "chip": "dav_2201",
            "reader_source": f"docs {section} (pytorch_2-13-0/torch.md:1)", "why": None}


def test_a_docs_disagreement_is_classed_by_the_kernel_reading_and_torchs_own_promotion():
    agree = {"reader_says": False, "why": None}
    # acos_ on int32: the float result cannot go back into an integer self
    assert reader.docs_class(_docs_row("aten.acos_", "int32", False, "torch.acos"), agree) == "inplace-integer-self"
    # remainder_ keeps an integer result: its int16 refusal is the kernel list's, not the promotion's
    assert reader.docs_class(_docs_row("aten.remainder_", "int16", False, "torch.remainder"),
                             agree) == "docs-broader-than-kernel"
    assert reader.docs_class(_docs_row("aten.acos", "bfloat16", True, "torch.acos"),
                             {"reader_says": True, "why": None}) == "docs-narrower-than-kernel"
    # no kernel reading of the cell: left for a hand reading
    assert reader.docs_class(_docs_row("aten.acos", "bfloat16", True, "torch.acos"), None) is None


def test_a_docs_rule_matches_only_the_profiles_verdict_it_names():
    rule = {"op": "aten.acos", "reading": "docs", "dtypes": ["int8"], "profile_says": False, "right": "profile"}
    row = {"op": "aten.acos", "reading": "docs", "profile": "ascend-a2", "dtype": "int8", "profile_says": True}
    assert reader._explain(row, [rule]) is None
    assert reader._explain(dict(row, profile_says=False), [rule]) is rule


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("TORCHPARITY_KERNEL_REPOS"),
                    reason="needs the vendor repositories (TORCHPARITY_KERNEL_REPOS: folder of owner+name/repo)")
def test_every_reading_has_no_unexplained_disagreement_and_no_stale_rule():
    args = reader.argparse.Namespace(repos_root=os.environ["TORCHPARITY_KERNEL_REPOS"],
                                     docs=str(ROOT / "tests" / "data" / "ascend-native-api-docs"),
                                     profiles=reader.DEFAULT_PROFILES,
                                     **{s.replace("-", "_"): None for s in reader.REPOS.values()})
    rows = reader.run(args)
    bad = [r for r in rows if r["profile_says"] != r["reader_says"] and not r["why"]]
    assert not bad, [(r["profile"], r["op"], r["dtype"], r["reading"]) for r in bad[:5]]
    used = {id(r["why"]) for r in rows if r["why"] and r["profile_says"] != r["reader_says"]}
    # run() loads the rules itself: compare by content
    used_keys = {yaml.safe_dump(r["why"]) for r in rows if r["why"] and r["profile_says"] != r["reader_says"]}
    assert used and all(yaml.safe_dump(e) in used_keys for e in reader.load_explained())


HELPER = """
static const std::initializer_list<op::DataType> LIST_BF16 = {op::DataType::DT_FLOAT, op::DataType::DT_BF16};
static const std::initializer_list<op::DataType> LIST_OLD = {op::DataType::DT_FLOAT};
static const std::initializer_list<op::DataType> OUTPUT_SUPPORT_LIST = {op::DataType::DT_FLOAT};
static inline bool CheckSocVersionGe910B(void)
{
    auto curArch = GetCurrentPlatformInfo().GetCurNpuArch();
    return curArch == NpuArch::DAV_2201 || IsRegBase(curArch);
}
static const std::initializer_list<op::DataType>& GetDtypeSupportList()
{
    if (CheckSocVersionGe910B()) {
        return LIST_BF16;
    } else {
        return LIST_OLD;
    }
}
static bool CheckDtypeValid(const aclTensor* self)
{
    OP_CHECK_DTYPE_NOT_SUPPORT(self, GetDtypeSupportList(), return false);
    if (!CheckType(self->GetDataType(), OUTPUT_SUPPORT_LIST)) {
        OP_LOGW("no accuracy guarantee");
    }
    return true;
}
"""


def test_a_condition_calling_a_helper_reads_the_helpers_arch_tokens_and_a_warning_list_is_no_check():
    got = reader.kernel_reading(HELPER)
    assert got["dav_3510"][0] == {"float32", "bfloat16"}
    assert reader.inplace_out_lists(HELPER) == {}  # OUTPUT_SUPPORT_LIST only warns
