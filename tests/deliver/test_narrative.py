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


def _hardware_report():
    return Report(tool_version="0", created="now",
                  environment=Environment(os="Linux", arch="aarch64", python="3", torch="2.7.1", cann="8.5.0",
                                          backend={"torch_npu": "2.7.1"}, device_name="Ascend910B3"),
                  device=DeviceInfo(type="npu", emulated=False, spec="npu", name="Ascend910B3"))


UNPACK_DOCS = {"docs": {"vendor": {"present": True, "chips": {"Atlas A2 训练系列产品": True},
                                   "limits": "`input`仅支持fp32", "dtypes": ["float32"]}}}


def test_docs_out_of_step_with_the_measurement_are_said():
    """On hardware a difference with the docs is 实测 and asks for a docs update."""
    report = _hardware_report()
    unpack = {"name": "torch.autograd.forward_ad.unpack_dual", "verdict": {"status": "supported"},
              "scenarios": [_case("square_tangent", "float16", "pass"), _case("square_tangent", "float32", "pass")],
              "evidence": UNPACK_DOCS}
    diffs = nv.docs_differences(unpack, report, "zh")
    assert diffs == ["资料与实测不一致：资料限制写明「`input`仅支持fp32」，实测 float16 亦通过（`square_tangent`），资料需更新"]
    itt = {"name": "torch.autograd.profiler.emit_itt", "verdict": {"status": "partial"},
           "scenarios": [_case("disabled_noop", "float32", "pass"),
                         _case("enabled", "float32", "unsupported", "build_config")],
           "evidence": {"docs": {"vendor": {"present": True, "chips": {"Atlas A2 训练系列产品": False}}}}}
    diffs = nv.docs_differences(itt, report, "zh")
    assert diffs == ["资料与实测不一致：资料标注 Atlas A2 训练系列产品 ✘，实测（Atlas A2 训练系列产品 / Ascend910B3）"
                     "部分支持：`disabled_noop` 通过，`enabled` 编译配置限制，资料需更新"]
    assert "资料与实测不一致" in nv.status_analysis(itt, report, "zh")


def test_an_emulated_run_is_a_prediction_never_a_measurement():
    """Issue 46 item 2: the emulated device's results are "模拟设备预测" in every docs-check
    sentence, and a difference with the docs awaits hardware ("待硬件确认"), never "资料需更新"."""
    report = _report()
    unpack = {"name": "torch.autograd.forward_ad.unpack_dual", "verdict": {"status": "supported"},
              "scenarios": [_case("square_tangent", "float16", "pass"), _case("square_tangent", "float32", "pass")],
              "evidence": UNPACK_DOCS}
    itt = {"name": "torch.autograd.profiler.emit_itt", "verdict": {"status": "partial"},
           "scenarios": [_case("disabled_noop", "float32", "pass"),
                         _case("enabled", "float32", "unsupported", "build_config")],
           "evidence": {"docs": {"vendor": {"present": True, "chips": {"Atlas A2 训练系列产品": False}}}}}
    refused = {"name": "torch.mm", "verdict": {"status": "partial"},
               "scenarios": [_case("mm", "float32", "unsupported", "dtype_limit"), _case("mm", "float16", "pass")],
               "evidence": {"docs": {"vendor": {"present": True, "chips": {}, "limits": "仅支持fp32",
                                                "dtypes": ["float32", "float16"]}}}}
    for api in (unpack, itt, refused):
        diffs = nv.docs_differences(api, report, "zh") + [nv.status_analysis(api, report, "zh")]
        text = "".join(diffs)
        assert "实测" not in text and "资料需更新" not in text, text
        assert "模拟设备预测" in text and "待硬件确认" in text, text
        en = "".join(nv.docs_differences(api, report, "en"))
        assert "measure" not in en and "need updating" not in en and "confirmed on hardware" in en


def test_docs_agree_only_where_the_documented_dtypes_hold_what_ran():
    """"资料与…一致" is said only where every dtype that passed is in the docs' list (those
    outside it refused); a row outside the list that failed otherwise is said as it is."""
    report = _hardware_report()
    docs = {"docs": {"vendor": {"present": True, "chips": {"Atlas A2 训练系列产品": True}, "limits": "仅支持fp32",
                                "dtypes": ["float32"]}}}
    agree = {"name": "torch.x", "verdict": {"status": "partial"}, "evidence": docs,
             "scenarios": [_case("a", "float32", "pass"), _case("a", "float64", "unsupported", "dtype_limit")]}
    text = nv.docs_agreement(agree, report, "zh")
    assert text.startswith("资料与实测一致") and "float64 不支持" in text
    outside = {"name": "torch.x", "verdict": {"status": "partial"}, "evidence": docs,
               "scenarios": [_case("a", "float32", "pass"), _case("a", "bfloat16", "fail", "mismatch")]}
    text = nv.docs_agreement(outside, report, "zh")
    assert not text.startswith("资料与实测一致") and "bfloat16 在实测中结果不一致" in text
    more = {"name": "torch.x", "verdict": {"status": "supported"}, "evidence": docs,
            "scenarios": [_case("a", "float32", "pass"), _case("a", "bfloat16", "pass")]}
    assert nv.docs_agreement(more, report, "zh") is None and nv.docs_differences(more, report, "zh")
    from torchparity.deliver.format import label_table
    from torchparity.deliver.report_view import ReportView

    lines = ReportView(report, "zh", label_table("zh"), {}).docs(outside)
    assert not any(line.startswith("资料与实测一致") for line in lines), lines


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


def _api(name, scenarios, **analysis):
    a = {"implementation": "python_function", "device_involvement": "direct", "kind": "function"}
    a.update(analysis)
    return {"name": name, "analysis": a, "scenarios": scenarios,
            "verdict": {"status": "supported", "category": "1.1①", "category_rule": "device tensors involved"}}


def test_a_world_is_said_only_for_rows_that_ran_in_one():
    """Issue 46 item 1: "在 2 个进程组成的分布式环境中运行" is said of world rows (``world2-…``)
    only; a distributed source's in-process rows ran in the worker process."""
    local = _api("torch.distributed.x", [dict(_case("local_piece", "float32", "pass"), source="distpar")])
    assert "分布式环境" not in nv.nature(local["analysis"], "zh", local)
    world = _api("torch.distributed.y", [dict(_case("world2-all_reduce", "float32", "pass"), source="distributed")])
    assert "在 2 个进程组成的分布式环境中运行" in nv.nature(world["analysis"], "zh", world)
    mixed = _api("torch.distributed.z", [dict(_case("world2-all_reduce", "float32", "pass"), source="distpar"),
                                         dict(_case("local_piece", "float32", "pass"), source="distpar")])
    text = nv.nature(mixed["analysis"], "zh", mixed)
    assert "其中 `world2-all_reduce` 在 2 个进程" in text and "其余场景在单个工作进程内运行" in text


def test_api_supported_is_never_said_where_both_sides_refused():
    """Issue 46 item 1: rows that pass because the device and the CPU raised alike show
    agreement, not that the API works: no "API 已支持" when they are all there is."""
    raised = _case("call", "float32", "pass", detail="raised as expected: NotImplementedError: no rsample")
    api = _api("torch.distributions.StudentT", [raised])
    zh = nv.adaptation(api, "zh")
    assert "API 已支持" not in zh and "抛出相同的异常（`NotImplementedError`）" in zh
    assert "the API is supported" not in nv.adaptation(api, "en")
    value = _case("mean", "float32", "pass", detail="matches the CPU: 1.0")
    both = _api("torch.distributions.StudentT", [value, raised])
    zh = nv.adaptation(both, "zh")
    assert "API 已支持：`mean`（float32）在设备上与 CPU 一致；`call`（float32）在两侧抛出相同的异常" in zh


def test_a_verification_command_calls_the_api_it_verifies():
    """Issue 46 item 4: a case that never calls the API (emit_itt's is_available() check)
    is no verification command of it while a case that does call it exists."""
    avail = dict(_case("itt_is_available", "float32", "pass", detail="matches the CPU: False"),
                 snippet="import torch\n\ndef emit_itt_is_available(device, dtype):\n"
                         "    return torch.profiler.itt.is_available()\n\n"
                         "print(emit_itt_is_available('npu', torch.float32))\n")
    noop = dict(_case("disabled_noop", "float32", "pass", detail="matches the CPU: None"),
                snippet="import torch\nfrom torch.autograd.profiler import emit_itt\n\ndef emit_itt_disabled_noop(device, dtype):\n"
                        "    with emit_itt(enabled=False):\n        return None\n\n"
                        "print(emit_itt_disabled_noop('npu', torch.float32))\n")
    api = {"name": "torch.autograd.profiler.emit_itt", "scenarios": [avail, noop]}
    assert [s["id"] for s in nv.pick_snippets(api)] == ["disabled_noop"]
    assert nv.calls_api("x = getattr(st, api.rsplit('.', 1)[-1])()\nprint(f(api='torch.UntypedStorage.long'))",
                        "torch.UntypedStorage.long")
    assert not nv.calls_api(avail["snippet"], "torch.autograd.profiler.emit_itt")


def test_no_command_from_a_skipped_case_or_one_that_needs_this_tool():
    """Issue 46 item 4: emit_nvtx showed a skipped docstring example (it names `model`, `x`
    it never defines) and distributed APIs a `torchparity` world harness as 可直接运行."""
    skipped = dict(_case("example1", "float32", "skip", "not_comparable", "not runnable"),
                   snippet="import torch\nwith torch.autograd.profiler.emit_nvtx():\n    model(x)\n")
    assert nv.pick_snippets({"name": "torch.autograd.profiler.emit_nvtx", "scenarios": [skipped]}) == []
    world = dict(_case("world2-gather", "float32", "pass"),
                 snippet="from torchparity.scenarios.sources.world import run_world\n"
                         "per_rank = run_world('gather', 'npu', torch.float32)\n")
    assert nv.pick_snippets({"name": "torch.distributed.gather", "scenarios": [world]}) == []
