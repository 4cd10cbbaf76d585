"""Kernel facts from vendor sources: small fake trees written for the tests, read as folders
and as a bare git directory, and the real snapshots when TORCHPARITY_KERNEL_SOURCES names them."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from torchparity.app.profile_build import KERNELS
from torchparity.errors import InputError
from torchparity.evidence.kernels import dump_kernel_facts, extract_kernel_facts, load_kernel_facts

FIX = Path(__file__).resolve().parent / "fixtures" / "kernels"
ENV = "TORCHPARITY_KERNEL_SOURCES"


def _facts(plugin=FIX / "op-plugin", ops=FIX / "ops-fake"):
    return extract_kernel_facts([plugin, ops], "2.13.0")


def test_lists_per_op_and_architecture():
    facts = _facts()
    assert set(facts.ops) == {"aten.abs", "aten.dot", "aten.mm", "aten.relu", "aten.sign",
                              "aten.linalg_vector_norm", "aten.neg", "aten._foreach_mul", "aten.logaddexp",
                              "aten.upsample_bilinear2d", "aten.asin", "aten.adaptive_max_pool2d"}  # old_op: not in 2.13
    dot = facts.ops["aten.dot"]
    assert dot.aclnn == "aclnnDot" and dot.plugin.endswith("op_plugin_functions.yaml:3")
    # GetDtypeSupportListV2: the 910B list on DAV_2201 and on RegBase (DAV_3510)
    for arch in ("dav_2201", "dav_3510"):
        assert dot.chips[arch].dtypes == ["float32", "float16", "bfloat16"]
        # the check that runs (line 9), then the list it checks and where it is declared
        assert dot.chips[arch].source == "ops-fake math/dot/op_api/aclnn_dot.cpp:9 (ASCEND910B_DTYPE_SUPPORT_LIST, :4)"
    # the general path is preferred to a format-specific one, through a helper function
    mm = facts.ops["aten.mm"]
    assert mm.aclnn == "aclnnMm" and mm.calls == ["aclnnMatmulWeightNz"] and "MmKernelNpuOpApi.cpp:7" in mm.plugin
    # lists kept in a helper next to an included header; 950's own list, unknown dtypes kept as written
    assert mm.chips["dav_2201"].dtypes == ["float32", "float16", "bfloat16"]
    assert mm.chips["dav_2201"].source.endswith("matmul/common/op_api/cube_util.cpp:2")
    assert mm.chips["dav_3510"].dtypes == ["float32", "bfloat16", "hifloat8"]
    # per argument: out has its own list; the main list is the input's
    relu = facts.ops["aten.relu"].chips["dav_2201"]
    assert relu.dtypes == ["float32", "float16", "float64", "int32"]
    assert relu.args == {"self": relu.dtypes, "out": ["float32"]}
    # dtypes only the AiCpu fallback of the level-0 op takes
    abs_ = facts.ops["aten.abs"].chips
    assert abs_["dav_2201"].aicpu == ["float64", "int16"]
    assert abs_["dav_3510"].dtypes == ["float32", "float16", "bfloat16"]
    # the AiCore kernel definition next to it: inputs and SoCs, as data
    host = facts.ops["aten.abs"].op_host
    assert [(h.source, h.socs, h.inputs) for h in host] == [
        ("ops-fake math/abs/op_host/abs_def.cpp:6", ["ascend910b", "ascend950"], {"x": ["float16", "float32"]})]
    assert facts.ops["aten.dot"].op_host is None
    # a dtype an architecture switch lets through, with its line
    sign = facts.ops["aten.sign"].chips
    assert sign["dav_2201"].dtypes == ["float32", "float16", "bfloat16"] and sign["dav_2201"].source.endswith("at :8")
    assert sign["dav_3510"].dtypes == ["float32", "float16"]


def test_the_check_that_runs_per_architecture():
    """The path is followed: a list checked only under IsRegbase() is not A2's rule; a
    caller that takes the check as a choice (then casts) does not refuse; an early return
    selects per chip; a list no check uses, and a CheckType that picks a cast, are no rules."""
    facts = _facts()
    norm = facts.ops["aten.linalg_vector_norm"].chips
    assert norm["dav_3510"].dtypes == ["float32", "float16", "bfloat16"]
    assert norm["dav_3510"].source.endswith("aclnn_linalg_vector_norm.cpp:14 (DTYPE_SUPPORT_LIST_910B, :3)")
    assert norm["dav_3510"].branch == "line 20: if (Ops::NN::AclnnUtil::IsRegbase())"
    assert norm["dav_2201"].dtypes is None and "taken as a choice here (:28)" in norm["dav_2201"].unchecked
    neg = facts.ops["aten.neg"].chips
    assert neg["dav_3510"].dtypes == ["float32", "int32", "int64"] and neg["dav_3510"].source.endswith(":11 (REGBASE_LIST, :4)")
    assert neg["dav_2201"].dtypes == ["float32", "int32"]
    assert neg["dav_2201"].branch == "line 10: returns early if (IsRegBase())"


def test_bare_git_dir_records_its_commit(tmp_path):
    work = tmp_path / "ops-fake"
    shutil.copytree(FIX / "ops-fake", work)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fake"]):
        subprocess.run(git + args, cwd=work, check=True)
    bare = tmp_path / "hicann+ops-fake" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True).stdout.strip()
    facts = _facts(ops=bare)
    assert facts.repos["hicann/ops-fake"] == commit
    folder = _facts()
    assert facts.ops["aten.dot"].chips["dav_2201"].source.startswith("hicann/ops-fake math/dot/")
    assert [o.chips["dav_2201"].dtypes for o in facts.ops.values()] == \
        [o.chips["dav_2201"].dtypes for o in folder.ops.values()]


def test_dump_loads_back_and_is_deterministic(tmp_path):
    text = dump_kernel_facts(_facts())
    assert text == dump_kernel_facts(_facts())
    path = tmp_path / "k.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_kernel_facts(path) == _facts()


def test_needs_op_plugin_and_an_operator_repo():
    with pytest.raises(InputError, match="op-plugin"):
        extract_kernel_facts([FIX / "ops-fake"], "2.13.0")
    with pytest.raises(InputError):
        extract_kernel_facts([FIX / "no-such-dir", FIX / "op-plugin"], "2.13.0")


def test_real_snapshots_rebuild_the_shipped_facts():
    dirs = os.environ.get(ENV)
    if not dirs:
        pytest.skip(f"{ENV} not set (os.pathsep-separated op-plugin and hicann/ops-* snapshots)")
    shipped = load_kernel_facts(KERNELS)
    facts = extract_kernel_facts([Path(d) for d in dirs.split(os.pathsep)],
                                 shipped.generated["torch_version"])
    assert facts.repos == shipped.repos, "other commits: regenerate ascend-kernels.yaml"
    assert dump_kernel_facts(facts) == KERNELS.read_text(encoding="utf-8")
    assert "bfloat16" in facts.ops["aten.mm"].chips["dav_2201"].dtypes


def test_architecture_conditions():
    """Conditions as the hicann sources write them; a mixed one excludes no chip; one not
    read is undecided, never a guessed side."""
    from torchparity.evidence import kernel_paths as kp

    fc = kp.parse("static bool IsBf16() { return GetSocVersion() >= SocVersion::ASCEND910B && "
                  "GetSocVersion() <= SocVersion::ASCEND910E; }", set())
    a2, r950, old = {"dav_2201"}, {"dav_3510"}, {"other"}
    assert kp.arch_set("IsRegbase()", fc) == r950
    assert kp.arch_set("npuArch == NpuArch::DAV_2201", fc) == a2
    assert kp.arch_set("IsBf16()", fc) == a2 | r950
    assert kp.arch_set("!IsBf16()", fc) == old
    assert kp.arch_set("GetCurrentPlatformInfo().GetSocVersion() == SocVersion::ASCEND910_95", fc) == r950
    assert kp.arch_set("!IsRegbase() && self->IsEmpty()", fc) == a2 | old  # may hold there
    assert kp.arch_set("!IsRegbase() && self->IsEmpty()", fc, must=True) == set()  # but not always
    with pytest.raises(kp.Undecided):
        kp.arch_set("IsSomething(GetSocVersion())", fc)
    # a predicate written as if (C) { return true; } return false; (aclnn_min.cpp's
    # CheckSocVersionGe910B), the booleans swapped, or with an else
    fc = kp.parse("static inline bool Ge910B(void) {\n  if ((GetSocVersion() >= SocVersion::ASCEND910B &&\n"
                  "       GetSocVersion() <= SocVersion::ASCEND910E) ||\n"
                  "       GetSocVersion() == SocVersion::ASCEND910_95) {\n    return true;\n  }\n"
                  "  return false;\n}\n"
                  "static bool NotA2() { if (GetCurNpuArch() == NpuArch::DAV_2201) return false; else return true; }\n"
                  "static bool Same() { if (IsRegbase()) { return true; } return true; }\n", set())
    assert kp.arch_set("Ge910B()", fc) == a2 | r950
    assert kp.arch_set("!Ge910B()", fc) == old
    assert kp.arch_set("NotA2()", fc) == r950 | old
    with pytest.raises(kp.Undecided):  # both branches true: not a predicate of that shape
        kp.arch_set("Same()", fc)


def test_a_promotion_before_the_check_and_per_soc_configs():
    """``if (promoteType == DT_BOOL) { promoteType = DT_INT8; }`` before CheckType(promoteType, L)
    is recorded on the check (the facts then take bool where int8 is in L: aclnn_ge_tensor.cpp,
    tests/data/kernels-hand-verified.yaml); an AddConfig("soc", config) whose config declares
    other input dtypes is kept per SoC, a config with flags only is not."""
    from torchparity.evidence import kernel_paths as kp
    from torchparity.evidence.kernel_source import read_op_def

    code = ("static const std::initializer_list<DataType> L = {DataType::DT_INT8, DataType::DT_FLOAT};\n"
            "static bool CheckPromote(const aclTensor *self, DataType &promoteType) {\n"
            "  promoteType = PromoteType(self->GetDataType(), self->GetDataType());\n"
            "  if (promoteType == DataType::DT_BOOL) {\n    promoteType = DataType::DT_INT8;\n  }\n"
            "  if (!CheckType(promoteType, L)) {\n    OP_LOGE(1, \"no\");\n    return false;\n  }\n"
            "  return true;\n}\n"
            "aclnnStatus aclnnGeGetWorkspaceSize(const aclTensor *self) {\n  DataType p;\n"
            "  CHECK_RET(CheckPromote(self, p), ACLNN_ERR_PARAM_INVALID);\n  return ACLNN_SUCCESS;\n}\n")
    (site,) = kp.check_sites(kp.parse(code, {"L"}))
    assert site.line == 7 and [(f, t, n) for f, t, n, _ in site.promoted] == [("BOOL", "INT8", 4)]
    assert site.promoted[0][3] == kp.ALL
    other = kp.parse(code.replace("DT_INT8;", "DT_UINT8;"), {"L"})
    assert [(f, t) for f, t, _, _ in kp.check_sites(other)[0].promoted] == [("BOOL", "UINT8")]
    d = read_op_def("x_def.cpp", (
        "this->Input(\"x\").DataType({ge::DT_FLOAT, ge::DT_FLOAT16});\n"
        "this->AICore().AddConfig(\"ascend910\");\n"
        "OpAICoreConfig config;\n"
        "config.Input(\"x\").DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16});\n"
        "this->AICore().AddConfig(\"ascend910b\", config);\n"
        "OpAICoreConfig same;\nsame.DynamicShapeSupportFlag(true);\n"
        "this->AICore().AddConfig(\"ascend950\", same);\n"))
    assert d.socs == ["ascend910", "ascend910b", "ascend950"]
    assert d.soc_inputs == {"ascend910b": {"x": ["float32", "float16", "bfloat16"]}}
    assert d.soc_lines == {"ascend910b": 5}


def test_a_tensor_list_check_gives_the_list_s_dtypes_not_the_scalar_s():
    """Foreach kernels check ``(*self)[0]`` against the tensor list's list (chosen by a SoC
    range helper), then the scalar against a list of its own: the op's dtypes are the list's."""
    mul = _facts().ops["aten._foreach_mul"].chips
    for arch in ("dav_2201", "dav_3510"):
        assert mul[arch].dtypes == ["float32", "float16", "bfloat16", "int32"]
        assert mul[arch].source.endswith("aclnn_foreach_mul_scalar.cpp:20 (ASCEND910B_TENSOR_LIST, :3)")


def test_the_output_check_and_the_dtype_op_plugin_gives_the_output():
    """logaddexp: the inputs' list takes float64, the out list does not, and op-plugin gives the
    output result_type(self, other): the kernel's out check is kept with op-plugin's rule."""
    op = _facts().ops["aten.logaddexp"]
    assert op.out_dtype.expr == "at::native::result_type(self, other)"
    assert op.out_dtype.source.endswith("op_plugin_functions.yaml:56") and op.out_dtype.of("float64") == "float64"
    a2 = op.chips["dav_2201"]
    assert "float64" in a2.dtypes
    assert a2.out.tensor == "out" and a2.out.dtypes == ["float16", "float32", "bfloat16"]
    assert a2.out.source.endswith("aclnn_logaddexp.cpp:16 (OUT_LIST_910B, :2)")
    assert op.chips["dav_3510"].out.dtypes == ["float16", "float32"]  # V1: the 910B list on DAV_2201 only


def test_op_plugin_s_own_check_before_the_call_with_its_words():
    op = _facts().ops["aten.upsample_bilinear2d"]
    assert "float64" in op.chips["dav_2201"].dtypes  # the kernel's list takes it
    assert [(c.dtypes, c.message, c.source) for c in op.plugin_checks] == [
        (["float64"], "upsample_bilinear2d: no float64 here",
         "op-plugin op_plugin/ops/opapi/UpsampleBilinear2dKernelNpuOpApi.cpp:8")]
    assert op.out_dtype is None  # the kernel checks no output here


def test_op_plugin_checks_read_only_on_the_input_at_the_function_s_top_level():
    from torchparity.devices.profiles.model import DTYPES
    from torchparity.evidence import plugin_code as pc

    code = (FIX / "op-plugin/op_plugin/ops/opapi/UpsampleBilinear2dKernelNpuOpApi.cpp").read_text()
    funcs = {f.name: f for f in pc.functions(code)}
    assert [c.line for c in pc.checks_in(code, funcs["upsample_bilinear2d"], DTYPES)] == [8]  # not :11
    assert pc.checks_in(code, funcs["repeat_interleave"], DTYPES) == []  # repeats, not the input
    rule = pc.out_dtype("isIntegralType(self.scalar_type(), true) ? at::kFloat : self.scalar_type()", ["self"], 1)
    assert (rule.of("int32"), rule.of("float16")) == ("float32", "float16")
    assert pc.out_dtype("at::kBool", ["self"], 1).of("float32") == "bool"
    assert pc.out_dtype("npu_group_norm_silu_dst_type(input, weight, bias)", ["input"], 1) is None
    # a dtype kept in a local, changed for integral inputs, then given to the allocation
    code = """at::Tensor tanh(const at::Tensor& self) {
      auto output_dtype = self.dtype();
      if (isIntegralType(self.scalar_type(), true)) {
        output_dtype = at::kFloat;
      }
      at::Tensor result = npu_preparation::apply_tensor_without_format(self.sizes(), self.options().dtype(output_dtype));
      EXEC_NPU_CMD(aclnnTanh, self, result);
      return result;
    }"""
    (fn,) = pc.functions(code)
    rule = pc.allocated_out(code, fn, pc.exec_args(code, fn, "aclnnTanh"))
    assert rule.line == 6 and (rule.of("int64"), rule.of("float64")) == ("float32", "float64")
    # reassigned on a condition not read: no rule
    other = code.replace("isIntegralType(self.scalar_type(), true)", "self.dim() > 2")
    (fn,) = pc.functions(other)
    assert pc.allocated_out(other, fn, pc.exec_args(other, fn, "aclnnTanh")) is None


def test_arch_selector_helpers_are_followed():
    """A switch on the SoC (asin: A2/A3 true, default false) selects the bf16 lists on DAV_2201
    only, checked through the library's CheckDtypeValid1In1Out (input and output); selectors
    that keep the architecture in a local first (adaptive_max_pool2d) give the 910B list on
    DAV_2201 and RegBase; op-plugin's integral -> float32 output rule is kept."""
    facts = _facts()
    asin = facts.ops["aten.asin"]
    assert asin.chips["dav_2201"].dtypes == ["float32", "float16", "int32", "bfloat16"]
    assert asin.chips["dav_2201"].out.dtypes == ["float32", "float16", "bfloat16"]
    assert asin.chips["dav_3510"].dtypes == ["float32", "float16", "int32"]
    assert asin.chips["dav_3510"].source.endswith("aclnn_asin.cpp:30 (IN_LIST_V100, :7)")
    assert asin.out_dtype.of("int32") == "float32" and asin.out_dtype.of("bfloat16") == "bfloat16"
    pool = facts.ops["aten.adaptive_max_pool2d"].chips
    for arch in ("dav_2201", "dav_3510"):
        assert pool[arch].dtypes == ["float32", "float16", "bfloat16"] and pool[arch].undecided is None


def test_a_kernel_list_op_plugin_refuses_whole_is_undecided_with_both():
    """_fft_c2c: op-plugin takes complex inputs only, the list read (a matmul inside) only reals:
    the two readings cannot both be the input's, so the fact is undecided and cites both."""
    from torchparity.evidence.kernels import ChipKernel, PluginRefusal, _disagreeing

    real = ["float32", "float16", "bfloat16"]
    chips = {"dav_2201": ChipKernel(dtypes=list(real), source="ops-nn aclnn_matmul.cpp:56"),
             "dav_3510": ChipKernel(dtypes=real + ["complex64"], source="ops-nn aclnn_matmul.cpp:60")}
    check = PluginRefusal(dtypes=["bool", "int32", "float16", "bfloat16", "float32", "float64"], message="",
                          source="op-plugin FFTc2cKernelNpuOpApi.cpp:513", condition="self.is_complex()")
    _disagreeing(chips, [check])
    assert chips["dav_2201"].dtypes is None and "FFTc2cKernelNpuOpApi.cpp:513" in chips["dav_2201"].undecided
    assert "aclnn_matmul.cpp:56" in chips["dav_2201"].undecided
    assert chips["dav_3510"].dtypes == real + ["complex64"]  # complex64 gets through both: kept


_ACOS = """// written for the test: the in-place API passes its tensor as the out
static const std::initializer_list<op::DataType> IN_LIST = {op::DataType::DT_FLOAT, op::DataType::DT_INT32};
static const std::initializer_list<op::DataType> OUT_LIST = {op::DataType::DT_FLOAT};
static const std::initializer_list<op::DataType> FLOAT_LIST = {op::DataType::DT_FLOAT};

static bool CheckDtypeValid(const aclTensor* input, const aclTensor* out)
{
    OP_CHECK_DTYPE_NOT_SUPPORT(input, IN_LIST, return false);
    OP_CHECK_DTYPE_NOT_SUPPORT(out, OUT_LIST, return false);
    return true;
}

static aclnnStatus ExecAcos(const aclTensor* input, aclTensor* out)
{
    CHECK_RET(CheckDtypeValid(input, out), ACLNN_ERR_PARAM_INVALID);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAcosGetWorkspaceSize(const aclTensor* input, aclTensor* out, uint64_t* workspaceSize,
                                      aclOpExecutor** executor)
{
    return ExecAcos(input, out);
}

aclnnStatus aclnnInplaceAcosGetWorkspaceSize(aclTensor* inputRef, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    auto out = const_cast<aclTensor*>(inputRef);
    return ExecAcos(inputRef, out);
}
"""

_CAST = """// written for the test: a default list replaced per architecture before the check
static const std::initializer_list<op::DataType> OLD_LIST = {op::DataType::DT_FLOAT};
static const std::initializer_list<op::DataType> A2_LIST = {op::DataType::DT_FLOAT, op::DataType::DT_BF16};
static const std::initializer_list<op::DataType> RB_LIST = {op::DataType::DT_FLOAT, op::DataType::DT_BF16,
                                                            op::DataType::DT_INT8};

static bool CheckDtypeValid(const aclTensor* self)
{
    auto curArch = GetCurrentPlatformInfo().GetCurNpuArch();
    auto selfList = OLD_LIST;
    if (curArch == NpuArch::DAV_2201) {
        selfList = A2_LIST;
    } else if (IsRegBase(curArch)) {
        selfList = RB_LIST;
    }
    OP_CHECK_DTYPE_NOT_SUPPORT(self, selfList, return false);
    return true;
}

aclnnStatus aclnnCeilGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize,
                                      aclOpExecutor** executor)
{
    CHECK_RET(CheckDtypeValid(self), ACLNN_ERR_PARAM_INVALID);
    return ACLNN_SUCCESS;
}
"""

_PLUGIN = """
  - func: acos(Tensor self) -> Tensor
    op_api: all_version
    gen_opapi:
      exec: aclnnAcos

  - func: acos_(Tensor(a!) self) -> Tensor(a!)
    op_api: all_version
    gen_opapi:
      exec: aclnnInplaceAcos

  - func: ceil(Tensor self) -> Tensor
    op_api: all_version
    gen_opapi:
      exec: aclnnCeil
"""


def test_in_place_self_is_the_out_and_an_arch_reassignment_replaces_the_default(tmp_path):
    """aclnnInplaceAcos checks its tensor as the input (f32/int32) and as the out (f32): int32
    is refused in place, not out of place; a list variable reassigned under an arch-only
    condition replaces its default on those chips (no OLD_LIST on A2 or the 950)."""
    plugin, ops = tmp_path / "op-plugin", tmp_path / "ops-fake"
    shutil.copytree(FIX / "op-plugin", plugin)
    shutil.copytree(FIX / "ops-fake", ops)
    yml = plugin / "op_plugin" / "config" / "op_plugin_functions.yaml"
    text = yml.read_text(encoding="utf-8")
    yml.write_text(text.replace("official:\n", "official:\n" + _PLUGIN.lstrip("\n") + "\n", 1), encoding="utf-8")
    for name, code in (("acos/op_api/aclnn_acos.cpp", _ACOS), ("ceil/op_api/aclnn_ceil.cpp", _CAST)):
        path = ops / "math" / name
        path.parent.mkdir(parents=True)
        path.write_text(code, encoding="utf-8")
    facts = _facts(plugin, ops)
    for arch in ("dav_2201", "dav_3510"):
        assert facts.ops["aten.acos"].chips[arch].dtypes == ["float32", "int32"]
        inplace = facts.ops["aten.acos_"].chips[arch]
        assert inplace.dtypes == ["float32"]
        assert inplace.source.startswith("ops-fake math/acos/op_api/aclnn_acos.cpp:9 (OUT_LIST, :3)")
    ceil = facts.ops["aten.ceil"].chips
    assert ceil["dav_2201"].dtypes == ["float32", "bfloat16"]
    assert ceil["dav_3510"].dtypes == ["float32", "bfloat16", "int8"]


_ATTN_PLUGIN = """// written for the test: a helper, then an op whose own call uses another EXEC macro
#include "op_plugin/utils/op_api_common.h"
at::Tensor gen_mask(const at::Tensor &query, double p)
{
    at::Tensor mask;
    EXEC_NPU_CMD(aclnnDropoutGenMaskV2, p, mask);
    return mask;
}

#if VERSION_BETWEEN(V2R1, VERSION_NEWEST)
at::Tensor npu_fake_attention_symint(const at::Tensor &query, int64_t num_heads)
{
    at::Tensor output = npu_preparation::apply_tensor_without_format(query);
    EXEC_NPU_NO_FORMAT_CHECK_CMD(aclnnFakeAttentionV4, query, num_heads, output);
    return output;
}
#endif

#if VERSION_BETWEEN(V2R6, VERSION_NEWEST)
at::Tensor gen_mask_tensor(const at::Tensor &query, double p)
{
    return gen_mask(query, p);
}
#endif

template <typename T>
void run_quant(const at::Tensor &x, const T &scale)
{
    EXEC_NPU_CMD(aclnnFakeQuantV2, x, scale);
}

at::Tensor npu_fake_quant(const at::Tensor &x, const c10::optional<at::Tensor> &scale)
{
    run_quant<c10::optional<at::Tensor>>(x, scale);
    return x;
}
"""

_MASK = """// written for the test: a mask factory; P_LIST belongs to a helper fed the V2 API's dtype
static const std::initializer_list<op::DataType> MASK_LIST = {op::DataType::DT_UINT8};
static const std::initializer_list<op::DataType> P_LIST = {op::DataType::DT_FLOAT16, op::DataType::DT_FLOAT};

static inline bool CheckDtypeValid(const aclTensor* out)
{
    OP_CHECK_DTYPE_NOT_SUPPORT(out, MASK_LIST, return false);
    return true;
}

static aclScalar* CreateDropout(float prob, op::DataType dtype)
{
    switch (dtype) {
        case op::DataType::DT_FLOAT16:
            return nullptr;
        default:
            OP_LOGE(ACLNN_ERR_PARAM_INVALID, "not in %s", op::ToString(P_LIST).GetString());
            return nullptr;
    }
}

aclnnStatus aclnnFakeGenMaskGetWorkspaceSize(const aclIntArray* shape, double prob, aclTensor* out,
                                             uint64_t* workspaceSize, aclOpExecutor** executor)
{
    CHECK_RET(CheckDtypeValid(out), ACLNN_ERR_PARAM_INVALID);
    CreateDropout(prob, DataType::DT_FLOAT);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFakeGenMaskV2GetWorkspaceSize(const aclIntArray* shape, double prob, op::DataType dtype,
                                               aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    CHECK_RET(CheckDtypeValid(out), ACLNN_ERR_PARAM_INVALID);
    CreateDropout(prob, dtype);
    return ACLNN_SUCCESS;
}
"""

_ATTN_YAML = """
  - func: npu_fake_attention(Tensor query, int num_heads) -> Tensor
    op_api: all_version

  - func: npu_fake_gen_mask(int[] size, float p) -> Tensor
    op_api: all_version
    gen_opapi:
      exec: aclnnFakeGenMask

  - func: npu_fake_gen_mask_v2(int[] size, float p, ScalarType dtype) -> Tensor
    op_api: all_version
    gen_opapi:
      exec: aclnnFakeGenMaskV2
"""


def _tree_with(tmp_path, plugin_yaml: str, plugin_files, kernel_files):
    plugin, ops = tmp_path / "op-plugin", tmp_path / "ops-fake"
    shutil.copytree(FIX / "op-plugin", plugin)
    shutil.copytree(FIX / "ops-fake", ops)
    yml = plugin / "op_plugin" / "config" / "op_plugin_functions.yaml"
    text = yml.read_text(encoding="utf-8")
    yml.write_text(text.replace("official:\n", "official:\n" + plugin_yaml.lstrip("\n") + "\n", 1), encoding="utf-8")
    for root, files in ((plugin / "op_plugin" / "ops" / "opapi", plugin_files), (ops, kernel_files)):
        for name, code in files:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code, encoding="utf-8")
    return _facts(plugin, ops)


def test_an_op_plugin_function_is_its_own_body_and_every_exec_macro_counts(tmp_path):
    """npu_fake_attention runs aclnnFakeAttentionV4 (EXEC_NPU_NO_FORMAT_CHECK_CMD); the next
    function's header (gen_mask_tensor, after an #endif) is not part of its body, so the dropout
    helper's aclnnDropoutGenMaskV2 is not its kernel (issue 44: npu_incre_flash_attention)."""
    from torchparity.evidence.kernels import _functions, _reach

    funcs = _functions(_ATTN_PLUGIN)
    assert _reach("npu_fake_attention_symint", funcs) == [("aclnnFakeAttentionV4", 14)]
    assert _reach("gen_mask_tensor", funcs) == [("aclnnDropoutGenMaskV2", 6)]
    # a template helper called with its template arguments is followed
    assert _reach("npu_fake_quant", funcs) == [("aclnnFakeQuantV2", 29)]
    kernel = _MASK.replace("aclnnFakeGenMaskGetWorkspaceSize", "aclnnFakeAttentionV4GetWorkspaceSize", 1)
    kernel += kernel.replace("aclnnFakeAttentionV4", "aclnnDropoutGenMaskV2").replace("aclnnFakeGenMaskV2", "aclnnUnused")
    facts = _tree_with(tmp_path, _ATTN_YAML, [("FakeAttentionKernelNpuOpApi.cpp", _ATTN_PLUGIN)],
                       [("random/fake/op_api/aclnn_fake_attention.cpp", kernel)])
    assert facts.ops["aten.npu_fake_attention"].aclnn == "aclnnFakeAttentionV4"


def test_a_mask_factory_without_a_dtype_argument_checks_no_dtype_of_the_op(tmp_path):
    """aclnnFakeGenMask checks only its uint8 mask out and takes no dtype: unchecked, citing the
    mask check, not a helper's list read by name; the V2 API with a dtype argument keeps it."""
    facts = _tree_with(tmp_path, _ATTN_YAML, [], [("random/fake_gen_mask/op_api/aclnn_fake_gen_mask.cpp", _MASK)])
    for arch in ("dav_2201", "dav_3510"):
        ck = facts.ops["aten.npu_fake_gen_mask"].chips[arch]
        assert ck.dtypes is None and "only the output out is checked here (:7" in ck.unchecked
        assert ck.source == "ops-fake random/fake_gen_mask/op_api/aclnn_fake_gen_mask.cpp:7"
        assert facts.ops["aten.npu_fake_gen_mask_v2"].chips[arch].dtypes == ["float16", "float32"]


_MV = """// written for the test: the API checks through a per-architecture rule object
#include "matmul/common/op_api/cube_util.h"
#include "matmul/common/op_api/fake_rule.h"

static aclnnStatus CheckInputParams(const aclTensor* self, const aclTensor* vec, aclTensor* out, int8_t cubeMathType)
{
    auto archRule = BuildRule();
    CHECK_RET(archRule != nullptr, ACLNN_ERR_PARAM_INVALID);
    CHECK_RET(archRule->CheckInput(self, vec, nullptr, out, cubeMathType), ACLNN_ERR_PARAM_INVALID);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFakeMvGetWorkspaceSize(const aclTensor* self, const aclTensor* vec, aclTensor* out,
                                        int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    return CheckInputParams(self, vec, out, cubeMathType);
}
"""

_RULE = """// written for the test: the rule objects and the base check
std::shared_ptr<RuleBase> BuildRule()
{
    auto npuArch = op::GetCurrentPlatformInfo().GetCurNpuArch();
    if (npuArch == NpuArch::DAV_3510) {
        return std::make_shared<NewRule>(npuArch);
    } else {
        return std::make_shared<OldRule>(npuArch);
    }
}

bool RuleBase::CheckInputTensorDtypeValid(const aclTensor* matA, const aclTensor* matB, const aclTensor* out)
{
    auto dtypeList = GetSupportedDTypes();
    OP_CHECK_DTYPE_NOT_SUPPORT(matA, dtypeList, return false);
    return true;
}

bool NewRule::CheckInput(const aclTensor* matA, const aclTensor* matB, const aclTensor* out, int8_t cubeMathType)
{
    return CheckInputTensorDtypeValid(matA, matB, out);
}

std::initializer_list<op::DataType> NewRule::GetSupportedDTypes()
{
    static constexpr std::initializer_list<op::DataType> dtypeSupportList = {
        op::DataType::DT_FLOAT, op::DataType::DT_BF16};
    return dtypeSupportList;
}

bool OldRule::CheckInput(const aclTensor* matA, const aclTensor* matB, const aclTensor* out, int8_t cubeMathType)
{
    return CheckInputTensorDtypeValid(matA, matB, out);
}

std::initializer_list<op::DataType> OldRule::GetSupportedDTypes()
{
    static constexpr std::initializer_list<op::DataType> dtypeSupportList = {op::DataType::DT_FLOAT16};
    return dtypeSupportList;
}
"""


def test_a_per_architecture_rule_object_gives_each_chip_its_class_s_list(tmp_path):
    """aclnnFakeMv checks through ``BuildRule()->CheckInput``: each architecture takes the list of
    the class BuildRule returns there, checked at the base class's line, not cube_util's lists
    read by name (issue 44: mv on the 950 is Dav2201MatMulRule's f32/f16/bf16, not hifloat8)."""
    yml = "\n  - func: npu_fake_mv(Tensor self, Tensor vec) -> Tensor\n    op_api: all_version\n" \
          "    gen_opapi:\n      exec: aclnnFakeMv\n"
    facts = _tree_with(tmp_path, yml, [], [("matmul/fake_mv/op_api/aclnn_fake_mv.cpp", _MV),
                                           ("matmul/common/op_api/fake_rule.cpp", _RULE)])
    chips = facts.ops["aten.npu_fake_mv"].chips
    assert chips["dav_3510"].dtypes == ["float32", "bfloat16"]
    assert chips["dav_3510"].source == \
        "ops-fake matmul/common/op_api/fake_rule.cpp:15 (NewRule::GetSupportedDTypes, :26)"
    assert chips["dav_2201"].dtypes == ["float16"]
    assert chips["dav_2201"].source.endswith("fake_rule.cpp:15 (OldRule::GetSupportedDTypes, :38)")


_QCONV = """// written for the test: dtype combinations per architecture, the input first
const std::vector<std::vector<DataType>> GROUPS_OLD = {
    // input, weight, output
    {DataType::DT_INT8, DataType::DT_INT8, DataType::DT_FLOAT16}};

const std::vector<std::vector<DataType>> GROUPS_NEW = {
    // input, weight, output
    {DataType::DT_INT8, DataType::DT_INT8, DataType::DT_BF16},
    {DataType::DT_HIFLOAT8, DataType::DT_HIFLOAT8, DataType::DT_FLOAT},
    {DataType::DT_INT8, DataType::DT_INT8, DataType::DT_FLOAT16}};

static bool IsNew() { return GetCurrentPlatformInfo().GetCurNpuArch() == NpuArch::DAV_3510; }

static std::vector<std::vector<DataType>> GetGroups()
{
    return IsNew() ? GROUPS_NEW : GROUPS_OLD;
}

static aclnnStatus CheckGroups(const aclTensor* input)
{
    auto groups = GetGroups();
    for (uint64_t i = 0; i < groups.size(); i++) {
        if (groups[i][0] == input->GetDataType()) {
            return ACLNN_SUCCESS;
        }
    }
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus aclnnFakeQconvGetWorkspaceSize(const aclTensor* input, const aclTensor* weight, aclTensor* output,
                                           uint64_t* workspaceSize, aclOpExecutor** executor)
{
    return CheckGroups(input);
}
"""


def test_dtype_combination_tables_give_the_input_column_of_the_chip_s_table(tmp_path):
    """aclnnFakeQconv checks (input, weight, output) rows of a table a helper picks per
    architecture: the input's dtypes are the first column of the chip's table, cited at the
    match (issue 44: npu_quant_conv2d on the 950 is int8/hifloat8/fp8, not cube_util's floats)."""
    yml = "\n  - func: npu_fake_qconv(Tensor input, Tensor weight) -> Tensor\n    op_api: all_version\n" \
          "    gen_opapi:\n      exec: aclnnFakeQconv\n"
    facts = _tree_with(tmp_path, yml, [], [("conv/fake_qconv/op_api/aclnn_fake_qconv.cpp",
                                            '#include "matmul/common/op_api/cube_util.h"\n' + _QCONV)])
    chips = facts.ops["aten.npu_fake_qconv"].chips
    assert chips["dav_3510"].dtypes == ["int8", "hifloat8"]
    assert chips["dav_3510"].source == "ops-fake conv/fake_qconv/op_api/aclnn_fake_qconv.cpp:24 (GROUPS_NEW, :7)"
    assert chips["dav_2201"].dtypes == ["int8"]
    assert chips["dav_2201"].source.endswith("aclnn_fake_qconv.cpp:24 (GROUPS_OLD, :3)")
