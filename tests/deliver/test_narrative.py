"""The report's sentences, composed from facts: details re-told, docs set against results."""

from torchparity.deliver import narrative as nv
from torchparity.results.models import DeviceInfo, Environment, Report


def _report():
    return Report(tool_version="0", created="now",
                  environment=Environment(os="Linux", arch="x86_64", python="3", torch="2.13.0+cpu",
                                          extra={"chips": "Atlas A2 训练系列产品", "profile": "ascend-a2"}),
                  device=DeviceInfo(type="npu", emulated=True, profile="ascend-a2", spec="emu:ascend-a2",
                                    name="Atlas A2 training series (emulated)"))


def _case(sid, dtype, status, cause=None, detail=""):
    return {"id": sid, "dtype": dtype, "status": status, "cause": cause, "detail": detail, "metric": None}


def test_signature_parts():
    pos, kw, ret = nv.signature_parts("(func: Callable[..., T], inputs, *, eps: float = 1e-06) -> bool")
    assert (pos, kw, ret) == (["func", "inputs"], ["eps"], "bool")
    assert nv.signature_parts("not a signature") == ([], [], None)


def test_details_are_retold_and_keep_messages_as_code():
    refused = _case("fast_mul", "float64", "unsupported", "dtype_limit",
                    "RuntimeError: \"linalg_vector_norm_npu\" not implemented for 'Double'; "
                    "the CPU reference returned True")
    zh = nv.detail_text(refused, "zh")
    assert zh == ("设备报错 `RuntimeError: \"linalg_vector_norm_npu\" not implemented for 'Double'`"
                  "；CPU 参考正常返回 `True`")
    assert nv.detail_text(_case("a", "float32", "pass", detail="matches the CPU: True"), "zh") == \
        "与 CPU 一致，返回 `True`"
    odd = nv.detail_text(_case("a", "float32", "fail", "mismatch", "max abs diff 3 > 1"), "zh")
    assert odd == "原始记录：`max abs diff 3 > 1`"


def test_refused_ops_keep_whole_kernel_names():
    cases = [_case("x", "float64", "unsupported", "dtype_limit", '"linalg_vector_norm_npu" not implemented for \'Double\''),
             _case("y", "float64", "unsupported", "dtype_limit", '"normal__npu" not implemented for \'Double\'')]
    assert nv.refused_ops(cases, "zh") == ["`linalg_vector_norm`（float64）", "`normal_`（float64）"]


def test_docs_out_of_step_with_the_measurement_are_said():
    report = _report()
    unpack = {"name": "torch.autograd.forward_ad.unpack_dual", "verdict": {"status": "supported"},
              "scenarios": [_case("square_tangent", "float16", "pass"), _case("square_tangent", "float32", "pass")],
              "evidence": {"docs": {"vendor": {"present": True, "chips": {"Atlas A2 训练系列产品": True},
                                               "limits": "`input`仅支持fp32", "dtypes": ["float32"]}}}}
    diffs = nv.docs_differences(unpack, report, "zh")
    assert len(diffs) == 1 and diffs[0].startswith("资料与实测不一致：资料限制写明「`input`仅支持fp32」")
    assert "float16 亦通过" in diffs[0]
    itt = {"name": "torch.autograd.profiler.emit_itt", "verdict": {"status": "partial"},
           "scenarios": [_case("disabled_noop", "float32", "pass"),
                         _case("enabled", "float32", "unsupported", "build_config")],
           "evidence": {"docs": {"vendor": {"present": True, "chips": {"Atlas A2 训练系列产品": False}}}}}
    diffs = nv.docs_differences(itt, report, "zh")
    assert diffs == ["资料与实测不一致：资料标注 Atlas A2 训练系列产品 ✘，实测（模拟设备 Atlas A2 训练系列产品）"
                     "部分支持：`disabled_noop` 通过，`enabled` 编译配置限制"]
    assert "资料与实测不一致" in nv.status_analysis(itt, report, "zh")


def test_involvement_and_category_agree_for_a_harness_that_issues_ops():
    """gradcheck issues aten ops itself (direct) and wraps user code (1.2①): the texts say
    it has no hardware-specific operator, never that all device work is the user's."""
    analysis = {"device_involvement": "direct", "implementation": "python_function"}
    text = nv.involvement_text(analysis, "zh")
    assert text.startswith("直接涉及") and "不含硬件专用实现" in text
    from torchparity.judge.verdict import load_rules

    harness = next(r for r in load_rules().rules if r.when == {"harness": True})
    assert "本身不含硬件算子实现" in harness.zh and "设备侧工作来自用户算子" not in harness.zh


def test_snippet_ends_with_what_it_printed():
    s = _case("slow_mul", "float64", "pass", detail="matches the CPU: True")
    s["snippet"] = "import torch\nprint(f('npu', torch.float64))\n"
    assert nv.snippet_with_output(s, "zh").endswith("print(f('npu', torch.float64))  # True\n")
