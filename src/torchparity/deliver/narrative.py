"""The sentences of the issue/PR report, composed from the recorded facts in zh or en.

Nothing here copies an English text into the zh report: statuses, causes, kinds and
sources go through vocab.yaml; scenario details are re-told from their known shapes, with
only code, op names and quoted error messages left as they are. report.md.j2 lays the
results out; this module says what each part means, so that the involvement, the status
analysis, the adaptation verdict and the category say the same thing.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..dtypes import DTYPE_FREE
from ..judge.causes import CAUSE_TEXT, LIMIT_CAUSES
from ..results.error_rules import refused_kernels
from ..results.models import Cause, DeviceInfo, Environment, Report
from .format import relpath
from .vocab import term

LIMITS = {c.value for c in LIMIT_CAUSES}
# a refusal message of a device kernel ("linalg_vector_norm_npu" not implemented for 'Double',
# or torch_npu's aclnn failure): results.error_rules.refused_kernels
TORCH_DTYPE = {"Double": "float64", "Float": "float32", "Half": "float16", "BFloat16": "bfloat16",
               "ComplexDouble": "complex128", "ComplexFloat": "complex64", "Long": "int64",
               "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8", "Bool": "bool"}
# views, copies and allocations: folded into one line of the footprint summary
FOLDED = {"alias", "view", "_unsafe_view", "select", "slice", "expand", "as_strided", "t",
          "transpose", "permute", "squeeze", "unsqueeze", "reshape", "detach", "lift_fresh",
          "lift_fresh_copy", "clone", "copy_", "_to_copy", "empty", "empty_strided", "empty_like",
          "zeros", "zeros_like", "ones", "ones_like", "new_zeros", "new_empty", "new_ones",
          "new_empty_strided", "full", "full_like", "scalar_tensor", "zero_", "fill_",
          "is_same_size", "_has_same_storage_numel", "_local_scalar_dense", "split", "unbind",
          "view_as", "set_", "resize_", "unsqueeze_", "squeeze_", "rand", "randn", "uniform_",
          "randn_like", "rand_like", "normal_", "_reshape_alias", "contiguous"}
PLACEHOLDER = {"zh": "【待补充：{what}】", "en": "【to fill: {what}】"}

T = {
    "emulated": {"zh": "模拟设备", "en": "emulated"},
    "sep": {"zh": "、", "en": ", "},
    "semi": {"zh": "；", "en": "; "},
    "stop": {"zh": "。", "en": "."},
    "defined": {"zh": "{impl}，定义于 {src}", "en": "a {impl} defined in {src}"},
    "defined_as": {"zh": "{impl}（即 {qual}）", "en": "a {impl} ({qual})"},
    "plain": {"zh": "{impl}", "en": "a {impl}"},
    "takes": {"zh": "参数 {pos}", "en": "takes {pos}"},
    "takes_kw": {"zh": "，另有 {n} 个关键字参数，如 {some}", "en": " and {n} keyword arguments, e.g. {some}"},
    "takes_kw_all": {"zh": "，另有关键字参数 {some}", "en": " and the keyword arguments {some}"},
    "takes_none": {"zh": "无参数", "en": "takes no argument"},
    "returns": {"zh": "，返回 `{ret}`", "en": ", returns `{ret}`"},
    "harness_callable": {"zh": "它接收用户函数并在设备张量上运行它", "en": "It runs a user function on device tensors"},
    "harness_context": {"zh": "它是上下文管理器，作用于其包裹的代码", "en": "It is a context manager acting on the code it wraps"},
    "python": {"zh": "纯 Python 接口，本身不含硬件算子实现", "en": "a pure-Python API with no hardware-specific operator of its own"},
    "native": {"zh": "C++/aten 实现，在设备上由设备算子执行", "en": "implemented in C++/aten: device kernels run it"},
    "inv_direct_py": {"zh": "直接涉及 —— 其 Python 代码在设备张量上下发通用 aten 算子（见算子足迹），不含硬件专用实现",
                      "en": "direct — its Python code issues generic aten operators on device tensors (see the footprint); nothing hardware-specific"},
    "inv_direct_native": {"zh": "直接涉及 —— API 本身即在设备上执行的算子",
                          "en": "direct — the API itself runs as device operators"},
    "inv_direct_views": {"zh": "直接涉及 —— 在设备张量上只下发视图/拷贝/内存分配类 aten 算子",
                         "en": "direct — it issues only view/copy/allocation aten operators on device tensors"},
    "inv_indirect": {"zh": "间接涉及 —— 自身不下发设备算子，作用于设备张量或其建立的状态",
                     "en": "indirect — it issues no device operator itself; it acts on device tensors or the state it sets up"},
    "inv_indirect_fn": {"zh": "间接涉及 —— 自身不下发设备算子，设备算子来自其运行的用户函数",
                        "en": "indirect — it issues no device operator itself; device operators come from the user function it runs"},
    "inv_indirect_cm": {"zh": "间接涉及 —— 自身不下发设备算子，设备算子来自其包裹的代码",
                        "en": "indirect — it issues no device operator itself; device operators come from the code it wraps"},
    "inv_indirect_prop": {"zh": "间接涉及 —— 读取设备张量的状态，本身不下发设备算子",
                          "en": "indirect — it reads a device tensor's state and issues no device operator itself"},
    "inv_none": {"zh": "不涉及 —— 其场景中没有设备算子执行", "en": "none — no device operator ran in its scenarios"},
    "inv_unknown": {"zh": "未知 —— 没有运行场景", "en": "unknown — no scenario ran"},
    "fp_line": {"zh": "{who}：{ops}", "en": "{who}: {ops}"},
    "fp_fold": {"zh": "视图/拷贝/内存分配类 {n} 种（共 {calls} 次调用）从略",
                "en": "{n} view/copy/allocation ops ({calls} calls) folded"},
    "pass_value": {"zh": "与 CPU 一致，返回 {v}", "en": "matches the CPU, returns {v}"},
    "pass_raised": {"zh": "按预期抛出 {e}", "en": "raised as expected: {e}"},
    "cpu_gave": {"zh": "CPU 参考：{c}", "en": "the CPU reference gave {c}"},
    "not_compared": {"zh": "返回 {v}（不与 CPU 比较）", "en": "returned {v} (not compared)"},
    "refused": {"zh": "设备报错 {e}", "en": "the device raised {e}"},
    "cpu_returned": {"zh": "CPU 参考正常返回 {c}", "en": "the CPU reference returned {c}"},
    "cpu_raised": {"zh": "CPU 参考同样抛出 {c}", "en": "the CPU reference raised {c}"},
    "metric": {"zh": "（指标 {name} = {value}，阈值 {threshold}{std}）", "en": " (metric {name} = {value}, threshold {threshold}{std})"},
    "original": {"zh": "原始记录：{d}", "en": "{d}"},
    "source_gave": {"zh": "适用：{n} 个场景", "en": "{n} scenario(s)"},
    "source_not_applicable": {"zh": "不适用：{why}", "en": "{why}"},
    # a passing row that does not observe its API (run.execute.hollow): why, in the text's words
    "hollow": {"zh": "不构成检验：{why}，该行无法发现 API 的错误；{rest}",
               "en": "hollow: {why}, so this row cannot tell a wrong API; {rest}"},
    "hollow_never_calls": {"zh": "用例从未调用该 API", "en": "the case never calls the API"},
    "hollow_same_without": {"zh": "去掉该 API 后判定结果不变", "en": "the judged outcome is the same without the API"},
    "hollow_replayed": {"zh": "为运行用例的其余部分回放了该 API 记录的结果",
                        "en": "the API's recorded results were replayed to reach the rest of the case"},
    "group": {"zh": "{status}（{n} 项{why}）：{ids}", "en": "{status} ({n}{why}): {ids}"},
    "ops_refused": {"zh": "设备算子 {ops} 不支持 {dtype}", "en": "device kernels {ops} refuse {dtype}"},
    "passed_of": {"zh": "{total} 项中 {n} 项通过（{where}）", "en": "{n} of {total} cases pass ({where})"},
    "limited": {"zh": "{n} 项因{cause}无法运行{ops}", "en": "{n} cannot run ({cause}){ops}"},
    "other_fail": {"zh": "{n} 项{status}：{ids}", "en": "{n} {status}: {ids}"},
    "tensor_out": {"zh": "{device} 上 shape {shape}、{dtype} 的张量",
                   "en": "a {dtype} tensor of shape {shape} on {device}"},
    # what a row's result is called: "实测" only for a run on hardware; the emulated device's
    # results are predictions, and a difference with the docs then awaits hardware
    "measured": {"zh": "实测", "en": "the measurement"},
    "predicted": {"zh": "模拟设备预测", "en": "the emulated device's prediction"},
    "fix_docs": {"zh": "资料需更新", "en": "the docs need updating"},
    "fix_wait": {"zh": "待硬件确认", "en": "to be confirmed on hardware"},
    "docs_differ": {"zh": "资料与{m}不一致：{text}", "en": "docs and {m} disagree: {text}"},
    "chip_mark": {"zh": "资料标注 {chip} {mark}，{m}（{where}）{status}", "en": "the docs mark {chip} {mark}, {m} ({where}): {status}"},
    "chip_partial": {"zh": "：{ok} 通过，{bad} {cause}", "en": ": {ok} pass, {bad}: {cause}"},
    "dtype_more": {"zh": "资料限制写明「{limits}」，{m} {dtypes} 亦通过（{ids}），{fix}",
                   "en": "the docs limit says '{limits}', yet {dtypes} pass too in {m} ({ids}): {fix}"},
    "docs_agree_dtypes": {"zh": "资料与{m}一致：资料列出的数据类型为 {listed}，{m}通过的数据类型 {ran} 均在其中{refused}",
                          "en": "docs and {m} agree: the docs list {listed}, and every dtype that passed ({ran}) is among them{refused}"},
    "docs_agree_refused": {"zh": "，资料未列出的 {dtypes} 不支持", "en": "; {dtypes}, not listed, are refused"},
    "docs_agree_chips": {"zh": "资料的芯片支持标注与{m}一致（资料未写明数据类型限制）",
                         "en": "the docs' chip marks agree with {m} (the docs state no dtype limit)"},
    "docs_outside": {"zh": "资料列出的数据类型为 {listed}；资料未列出的 {dtypes} 在{m}中{status}（{ids}），资料对此未作说明",
                     "en": "the docs list {listed}; {dtypes}, not listed, gave {status} in {m} ({ids}): the docs do not say"},
    # a row whose case code never reads dtype (tag DTYPE_FREE): it answers for any dtype
    "dtype_any": {"zh": "与数据类型无关（用例不使用 dtype；以 {dtype} 张量运行并记录）",
                  "en": "any (the case takes no dtype; run and recorded with {dtype} tensors)"},
    "dtype_any_short": {"zh": "与数据类型无关", "en": "any dtype"},
    "dtype_indep": {"zh": "与数据类型无关：该 API 的用例均不使用 dtype，结论适用于任何数据类型（用例以 {dtype} 张量运行）",
                    "en": "dtype-independent: none of this API's cases takes a dtype, so the answer holds for "
                          "any dtype (the cases ran with {dtype} tensors)"},
    "dtype_indep_adapt": {"zh": "其用例均不使用 dtype，结论与数据类型无关。",
                          "en": "None of its cases takes a dtype: the answer is dtype-independent."},
    "dtype_less": {"zh": "资料列出 {dtypes}，{m}不支持（{ids}）{fix}", "en": "the docs list {dtypes}, unsupported in {m} ({ids}){fix}"},
    "adapt_ok": {"zh": "无需适配，API 已支持：各场景在设备上与 CPU 一致。",
                 "en": "no adaptation needed, the API is supported: every scenario matches the CPU on the device."},
    "adapt_raised": {"zh": "无需适配：各场景在设备与 CPU 上抛出相同的异常（{errs}），行为一致；这些场景没有验证 API 在设备上的正常功能。",
                     "en": "no adaptation needed: every scenario raises the same error on the device and the CPU ({errs}); "
                           "they do not show the API working on the device."},
    "adapt_ok_raised": {"zh": "无需适配，API 已支持：{ok}在设备上与 CPU 一致；{raised}在两侧抛出相同的异常。",
                        "en": "no adaptation needed, the API is supported: {ok}match the CPU on the device; {raised}raise the same error on both sides."},
    "adapt_limits": {"zh": "无需代码适配：{ok}可直接运行；{bad}因{cause}无法运行，属{short}，非 API 实现问题。",
                     "en": "no code adaptation needed: {ok}run as they are; {bad}cannot run ({cause}): a {short}, not a problem of the API's implementation."},
    "adapt_all_limited": {"zh": "无需代码适配：{bad}因{cause}无法运行，属{short}，非 API 实现问题。",
                          "en": "no code adaptation needed: {bad}cannot run ({cause}): a {short}, not a problem of the API's implementation."},
    "adapt_limits_plain": {"zh": "无需代码适配：{ok}可直接运行；{bad}因{cause}无法运行，非 API 实现问题。",
                           "en": "no code adaptation needed: {ok}run as they are; {bad}cannot run: {cause}, not a problem of the API's implementation."},
    "adapt_all_limited_plain": {"zh": "无需代码适配：{bad}因{cause}无法运行，非 API 实现问题。",
                                "en": "no code adaptation needed: {bad}cannot run: {cause}, not a problem of the API's implementation."},
    "adapt_indep": {"zh": "无需适配：其场景中没有归属于该 API 的设备算子运行（仅主机侧），结果与设备无关。",
                    "en": "no adaptation needed: no device operator of the API ran in its scenarios (host only): it does not depend on the device."},
    "adapt_broken": {"zh": "需要适配：{ids} 在设备上的结果与 CPU 不一致（{causes}）。",
                     "en": "adaptation needed: {ids} differ from the CPU on the device ({causes})."},
    "adapt_unknown_none": {"zh": "待定：没有适用于该 API 的场景，设备上的行为未经验证。",
                           "en": "undecided: no scenario applies to this API; its device behaviour is not verified."},
    "adapt_unknown_skipped": {"zh": "待定：{n} 项场景均被跳过（原因见详情），设备上的行为未经验证。",
                              "en": "undecided: all {n} scenarios were skipped (see the details); its device behaviour is not verified."},
    "r_undetermined_skipped": {"zh": "待定：{n} 项场景均被跳过，设备上没有完成判定，不给出分类",
                               "en": "undetermined: all {n} scenarios were skipped, nothing was judged on the device, so no category is claimed"},
    "adapt_unknown": {"zh": "待定：{n} 项场景未得出结论（{causes}），这不是对 API 的判定，需在硬件上或修复用例后重新运行。",
                      "en": "undecided: {n} scenarios gave no answer ({causes}); that is no verdict on the API: rerun on hardware or once the cases are fixed."},
    "nature_is": {"zh": "该接口为{n}。", "en": "It is {n}."},
    # what kind of API it is (kind_of), and what that kind means for the device
    "k_op": {"zh": "aten 算子", "en": "aten operator"},
    "k_method": {"zh": "张量/存储方法", "en": "Tensor/Storage method"},
    "k_property": {"zh": "属性（读取对象状态，不可调用）", "en": "property (reads an object's state; not callable)"},
    "k_class": {"zh": "类", "en": "class"},
    "k_context": {"zh": "上下文管理器", "en": "context manager"},
    "k_config": {"zh": "配置对象（`{type}` 实例，本身不执行计算）", "en": "configuration object (a `{type}` instance; computes nothing itself)"},
    "k_function": {"zh": "函数", "en": "function"},
    "k_module": {"zh": "模块", "en": "module"},
    "n_python": {"zh": "纯 Python {k}，本身不含硬件专用算子实现", "en": "a pure-Python {k} with no hardware-specific operator of its own"},
    "n_native_ops": {"zh": "C++ 实现的{k}，在设备上由设备算子 {ops} 执行", "en": "a C++ {k}: the device operators {ops} run it"},
    "n_native_host": {"zh": "C++ 实现的{k}，其场景中没有归属于它的设备计算算子执行", "en": "a C++ {k}; no device compute operator of its own ran in its scenarios"},
    "n_native_unrun": {"zh": "C++ 实现的{k}（未运行场景，是否下发设备算子未知）", "en": "a C++ {k} (no scenario ran: whether it issues device operators is unknown)"},
    "n_config": {"zh": "{k}", "en": "a {k}"},
    "n_world": {"zh": "；在 {n} 个进程组成的分布式环境中运行，各 rank 的结果与 CPU 上的同一环境逐一比较",
                "en": "; it runs in a world of {n} processes, each rank's results compared with the same world on the CPU"},
    "n_world_some": {"zh": "；其中 {ids} 在 {n} 个进程组成的分布式环境中运行（各 rank 的结果与 CPU 上的同一环境逐一比较），其余场景在单个工作进程内运行",
                     "en": "; of its cases {ids} run in a world of {n} processes (each rank's results compared with the same world on the CPU), the others in one worker process"},
    "n_devtensors": {"zh": "，作用于设备张量", "en": ", acting on device tensors"},
    # an indirect API issues no device operator of its own: what it does act on, by kind
    "n_wraps": {"zh": "，作用于其包裹的代码", "en": ", acting on the code it wraps"},
    "n_runs_fn": {"zh": "，在设备张量上运行用户函数", "en": ", running a user function on device tensors"},
    "n_no_ops": {"zh": "，自身不下发设备算子", "en": ", issuing no device operator itself"},
    # the category, said from the facts of this API
    "r_harness_cm": {"zh": "上下文管理器，作用于其包裹的代码，本身不含硬件专用算子实现：设备上执行的是被包裹代码的算子{own}",
                     "en": "a context manager acting on the code it wraps, with no hardware-specific operator of its own: the device runs the wrapped code's operators{own}"},
    "r_harness_fn": {"zh": "接收用户函数并在设备张量上运行它，本身不含硬件专用算子实现：设备上执行的是用户函数的算子{own}",
                     "en": "it runs a user function on device tensors and has no hardware-specific operator of its own: the device runs the user function's operators{own}"},
    "r_own_ops": {"zh": "与其 Python 代码下发的通用 aten 算子", "en": " and the generic aten operators its Python code issues"},
    "r_indep": {"zh": "{n}；得出结论的场景均为仅主机侧证据（没有归属于该 API 的设备算子运行），与设备无关",
                "en": "{n}; every answering scenario is host-only evidence (no device operator of the API ran): device-independent"},
    "r_none": {"zh": "{n}；其场景中没有设备算子执行", "en": "{n}; no device operator ran in its scenarios"},
    "r_cases": {"zh": "涉及设备 Tensor，{inv}；需要补充设备测试用例", "en": "it involves device tensors, {inv}; device test cases are needed"},
    "r_no_cases": {"zh": "；无需新增用例，提交 issue 说明 + 运行截图 + 支持情况验证",
                   "en": "; no new test cases: issue + run screenshot + support verification"},
    "r_undetermined_none": {"zh": "待定：没有适用的场景来源，设备上未运行任何场景，不给出分类（见已尝试的场景来源）",
                            "en": "undetermined: no scenario source applies, nothing ran on the device, so no category is claimed (see the sources tried)"},
    "r_undetermined": {"zh": "待定：{n} 项场景均未得出结论（{causes}），不给出分类",
                       "en": "undetermined: none of the {n} scenarios gave an answer ({causes}), so no category is claimed"},
    "returned_value": {"zh": "（返回 {v}）", "en": " (returned {v})"},
    "dist_expected": {"zh": "样本分布与 CPU 一致（{m}）", "en": "the samples' distribution matches the CPU ({m})"},
}


def t(key: str, lang: str, **kw: Any) -> str:
    return T[key][lang].format(**kw)


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def code(text: Any) -> str:
    """``text`` as one Markdown code span, fenced by more backticks than any run inside it
    (so ids and messages never end the span early and stay text, not HTML or links)."""
    text = re.sub(r"\s+", " ", str(text)).strip()
    if "`" not in text:
        return f"`{text}`"
    ticks = "`" * (_longest_backtick_run(text) + 1)
    return f"{ticks} {text} {ticks}"


def fence(text: Any, info: str = "") -> str:
    """``text`` as a fenced code block whose fence is longer than any backtick run in it."""
    body = str(text).rstrip("\n")
    ticks = "`" * max(3, _longest_backtick_run(body) + 1)
    return f"{ticks}{info}\n{body}\n{ticks}"


def short_name(api: str) -> str:
    return api.rsplit(".", 1)[-1]


def device_where(report: Report, lang: str) -> str:
    """Where the results come from: the chip (emulated or not) or the device type."""
    return where_of(report.environment, report.device, lang)


def where_of(env: Environment, device: DeviceInfo, lang: str) -> str:
    """As device_where, for one device of a run (the report's own or a ``Report.runs`` one):
    the environment record's name (deliver/env_record.py), "模拟设备" before it where emulated."""
    from .env_record import record

    name = record(env, device, lang).name
    if device.emulated:
        return f"{t('emulated', lang)} {name}" if lang == "zh" else f"{name}, {t('emulated', lang)}"
    return name


def chip_name(chip: Any, lang: str) -> str:
    """A chip family's product name in ``lang`` (the vendor docs' term in zh)."""
    return chip.name(lang) if hasattr(chip, "name") else str(chip)


def status_word(status: str, emulated: bool, lang: str) -> str:
    word = term("verdict_status", status, lang)
    return f"{word}（{t('emulated', lang)}）" if emulated and lang == "zh" else (
        f"{word} ({t('emulated', lang)})" if emulated else word)


# ----------------------------------------------------------------------------- 1. function


def signature_parts(signature: Optional[str]) -> Tuple[List[str], List[str], Optional[str]]:
    """(positional names, keyword-only names, return annotation) of ``(a, *, b=1) -> R``."""
    if not signature:
        return [], [], None
    try:
        fn = ast.parse(f"def f{signature}: pass").body[0]
    except SyntaxError:
        return [], [], None
    assert isinstance(fn, ast.FunctionDef)
    pos = [a.arg for a in fn.args.posonlyargs + fn.args.args if a.arg not in ("self", "cls")]
    kw = [a.arg for a in fn.args.kwonlyargs]
    if fn.args.vararg:
        pos.append("*" + fn.args.vararg.arg)
    ret = ast.unparse(fn.returns) if fn.returns is not None else None
    return pos, kw, ret


def api_summary(api: Dict[str, Any], lang: str) -> str:
    """What the API is, where it lives, what it takes and returns, and whether it issues
    device operators itself — composed from the analysis, not from the docstring."""
    a = api["analysis"]
    what = kind_word(api, lang)
    impl = term("implementation", a["implementation"], lang)
    impl = what if kind_of(api) in ("property", "config", "context") else impl
    if a.get("source_file"):
        head = t("defined", lang, impl=impl, src=code(f"{relsource(a.get('source_file'))}:{a.get('source_line')}"))
    elif a.get("qualified_name") and a["qualified_name"] != api["name"]:
        head = t("defined_as", lang, impl=impl, qual=code(a["qualified_name"]))
    else:
        head = t("plain", lang, impl=impl)
    parts = [head]
    if a.get("source_file") and a.get("qualified_name") and a["qualified_name"] != api["name"]:
        parts[0] += ("（即 " if lang == "zh" else " (") + code(a["qualified_name"]) + ("）" if lang == "zh" else ")")
    pos, kw, ret = signature_parts(a.get("signature"))
    if pos or kw:
        takes = t("takes", lang, pos=t("sep", lang).join(code(p) for p in pos)) if pos else ""
        if kw:
            if len(kw) <= 3:
                takes += t("takes_kw_all", lang, some=t("sep", lang).join(code(k) for k in kw))
            else:
                takes += t("takes_kw", lang, n=len(kw), some=t("sep", lang).join(code(k) for k in kw[:3]))
        parts.append(takes.lstrip("，, "))
    elif a.get("signature"):
        parts.append(t("takes_none", lang))
    text = ("，" if lang == "zh" else ", ").join(p for p in parts if p)
    if ret:
        text += t("returns", lang, ret=ret)
    text += t("stop", lang)
    if a.get("harness"):
        key = "harness_context" if kind_of(api) == "context" else "harness_callable"
        text += (" " if lang == "en" else "") + t(key, lang) + t("stop", lang)
    inv = involvement_text(a, lang, api)
    text += (" " + inv[:1].upper() + inv[1:] if lang == "en" else inv) + t("stop", lang)
    return text


def relsource(path: Optional[str]) -> str:
    return relpath(path or "")


def docstring_line(api: Dict[str, Any]) -> Optional[str]:
    text = (api["analysis"].get("summary") or "").strip()
    if not text:
        return None
    text = re.sub(r"\s+", " ", text)
    m = re.match(r"(.+?\.)(\s|$)", text)
    return m.group(1) if m else text


PROPERTY_TYPES = ("getset_descriptor", "property", "member_descriptor", "cached_property")
WORLD_SOURCES = ("distributed", "distpar", "distsvc")
KNOWN_KINDS = ("function", "class", "method", "module", "builtin", "op", "property")


def _live_type(name: str) -> Optional[str]:
    """The type name of the object ``name`` resolves to in this torch (None if it does not)."""
    return _LIVE.get(name) if name in _LIVE else _LIVE.setdefault(name, _resolve_type(name))


_LIVE: Dict[str, Optional[str]] = {}


def _resolve_type(name: str) -> Optional[str]:
    try:
        from ..api.resolve import maybe_resolve

        found = maybe_resolve(name)
    except Exception:
        return None
    return type(found.obj).__name__ if found is not None else None


def kind_of(api: Dict[str, Any]) -> str:
    """op | method | property | class | context | config | function | module: what the
    API is, from the analysis (and, for descriptors the analysis calls builtins, the
    object's type)."""
    a = api["analysis"]
    kind = a.get("kind")
    if kind == "property" or (kind == "builtin" and _live_type(api["name"]) in PROPERTY_TYPES):
        return "property"
    if kind == "class":
        return "context" if a.get("harness") else "class"
    if kind == "module":
        return "module"
    if kind not in KNOWN_KINDS:
        return "config"
    member = re.match(r"torch\.(Tensor|\w*Storage)\.", api["name"]) is not None
    if a.get("implementation") == "aten_operator":
        return "method" if member else "op"
    if kind in ("builtin", "method") and member:
        return "method"
    return "function"


def kind_word(api: Dict[str, Any], lang: str) -> str:
    kind = kind_of(api)
    if kind == "config":
        return t("k_config", lang, type=api["analysis"].get("kind") or "?")
    return t(f"k_{kind}", lang)


def api_compute_ops(api_or_analysis: Dict[str, Any]) -> List[str]:
    """The compute ops (views, copies, allocations left out) the API itself issued."""
    a = api_or_analysis.get("analysis", api_or_analysis)
    out: List[str] = []
    for e in a.get("footprint") or []:
        if e.get("source", "api") != "api":
            continue
        op = e["op"].split(".", 1)[1] if e["op"].startswith("aten.") else e["op"]
        op = op.split(".", 1)[0]
        if op not in FOLDED and op not in out:
            out.append(op)
    return out


WORLD_ID = re.compile(r"^world(\d+)-")


def world_size(s: Dict[str, Any]) -> Optional[int]:
    """The ranks a row ran in (its id, ``world2-…``, says so), None for an in-process row
    (a distributed source's local pieces run in the worker process itself)."""
    m = WORLD_ID.match(s.get("id") or "")
    return int(m.group(1)) if m else None


def world_rows(api: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [s for s in api.get("scenarios") or [] if s.get("status") != "skip" and world_size(s)]


def in_world(api: Dict[str, Any]) -> bool:
    return bool(world_rows(api))


def world_text(api: Dict[str, Any], lang: str) -> str:
    """Where the rows ran, from their ids: a world of N ranks for all, for some (named), or
    "" where every row ran in-process."""
    rows = world_rows(api)
    if not rows:
        return ""
    sizes = sorted({world_size(s) for s in rows})
    n = "/".join(str(x) for x in sizes)
    counted = [s for s in api.get("scenarios") or [] if s.get("status") != "skip"]
    if len(rows) == len(counted):
        return t("n_world", lang, n=n)
    return t("n_world_some", lang, n=n, ids=_ids(rows, lang, 3))


def involvement_text(analysis: Dict[str, Any], lang: str, api: Optional[Dict[str, Any]] = None) -> str:
    inv = analysis.get("device_involvement")
    python = analysis["implementation"] in ("python_function", "python_class", "module")
    if inv == "direct":
        if python:
            return t("inv_direct_py", lang)
        if not api_compute_ops(analysis):
            return t("inv_direct_views", lang)
        return t("inv_direct_native", lang)
    if inv is None and api is not None and api.get("scenarios"):
        return t("inv_none", lang)
    if inv == "indirect" and api is not None:
        kind = kind_of(api)
        if kind == "context":
            return t("inv_indirect_cm", lang)
        if kind == "property":
            return t("inv_indirect_prop", lang)
        if analysis.get("harness"):
            return t("inv_indirect_fn", lang)
    return t({"indirect": "inv_indirect", "none": "inv_none"}.get(inv or "", "inv_unknown"), lang)


def nature(analysis: Dict[str, Any], lang: str, api: Optional[Dict[str, Any]] = None) -> str:
    """What the API is, true for its kind and for what ran: pure Python, a C++ API whose
    own device operators ran (named), one whose scenarios ran none, or one nothing ran for."""
    api = api or {"name": analysis.get("qualified_name", ""), "analysis": analysis, "scenarios": []}
    kind = kind_of(api)
    word = kind_word(api, lang)
    python = analysis["implementation"] in ("python_function", "python_class", "module")
    if kind == "config":
        text = t("n_config", lang, k=word)
    elif python:
        text = t("n_python", lang, k=word)
        inv = analysis.get("device_involvement")
        if inv == "direct":  # its own Python code issued operators on device tensors
            text += t("n_devtensors", lang)
        elif inv == "indirect":  # nothing of its own ran on the device: say what it acts on
            text += t("n_wraps" if kind == "context" else "n_runs_fn" if analysis.get("harness")
                      else "n_no_ops", lang)
    else:
        ops = api_compute_ops(analysis)
        ran = any(s.get("status") != "skip" for s in api.get("scenarios") or [])
        if ops:
            text = t("n_native_ops", lang, k=word, ops=t("sep", lang).join(code(o) for o in ops[:6]))
        elif ran:
            text = t("n_native_host", lang, k=word)
        else:
            text = t("n_native_unrun", lang, k=word)
    return text + world_text(api, lang)


NO_ANSWER = {"timeout", "harness_error", "emulator_limit", "not_comparable", "upstream_skip"}


def category_reason(api: Dict[str, Any], lang: str) -> str:
    """Why the API has its category, from its own facts (the rule that fired, its kind,
    what ran on the device) — never a sentence of another kind of API."""
    v = api["verdict"]
    a = api["analysis"]
    rule = v.get("category_rule")
    if v.get("category") == "undetermined" or not v.get("category"):
        counted = [s for s in api["scenarios"] if s["status"] != "skip"]
        if not counted and api["scenarios"]:
            return t("r_undetermined_skipped", lang, n=len(api["scenarios"]))
        if not counted:
            return t("r_undetermined_none", lang)
        causes = t("sep", lang).join(dict.fromkeys(term("cause", s.get("cause") or s["status"], lang) for s in counted))
        return t("r_undetermined", lang, n=len(counted), causes=causes)
    tail = t("r_no_cases", lang)
    if rule == "harness around user code":
        own = t("r_own_ops", lang) if api_compute_ops(a) else ""
        key = "r_harness_cm" if kind_of(api) == "context" else "r_harness_fn"
        return t(key, lang, own=own) + tail
    if rule == "device-independent":
        return t("r_indep", lang, n=nature(a, lang, api)) + tail
    if rule == "device tensors involved":
        inv = involvement_text(a, lang, api).replace(" —— ", "：").replace(" — ", ": ")
        return t("r_cases", lang, inv=inv)
    if v["category"].startswith("1.2"):
        return t("r_none", lang, n=nature(a, lang, api)) + tail
    reason = (v.get("category_reason") or {}).get(lang)
    return (reason or "—").rstrip("。.")


def footprint_summary(entries: Sequence[Dict[str, Any]], lang: str) -> List[str]:
    """One line per issuer: its compute ops by dtype; views, copies and allocations folded."""
    lines = []
    for source in ("api", "callable", "scenario"):
        mine = [e for e in entries if e.get("source", "api") == source]
        if not mine:
            continue
        by_dtype: Dict[str, List[str]] = {}
        folded, calls = set(), 0
        for e in mine:
            op = e["op"].split(".", 1)[1] if e["op"].startswith("aten.") else e["op"]
            op = op.split(".", 1)[0]
            if op in FOLDED:
                folded.add(op)
                calls += e["count"]
                continue
            key = "/".join(e["dtypes"]) or "—"
            if op not in by_dtype.setdefault(key, []):
                by_dtype[key].append(op)
        if source == "scenario" and (not by_dtype or lines):
            continue  # the scenario's own checks matter only where nothing else ran
        groups = [f"{dt}: " + t("sep", lang).join(code(o) for o in sorted(ops))
                  for dt, ops in sorted(by_dtype.items())]
        if folded:
            groups.append(t("fp_fold", lang, n=len(folded), calls=f"{calls:,}"))
        lines.append(t("fp_line", lang, who=term("footprint_source", source, lang),
                       ops=t("semi", lang).join(groups)))
    return lines


# ----------------------------------------------------------------------------- 4. results


def _value(text: str) -> str:
    return code(text.strip())


# run.execute's reasons for a hollow row, each said in the text's language (an unknown one
# keeps the whole detail as the original record)
HOLLOW_REASONS = {"the case never calls the API": "hollow_never_calls",
                  "the judged outcome is the same without the API": "hollow_same_without",
                  "the API's recorded results were replayed to reach the rest of the case": "hollow_replayed"}


def detail_text(s: Dict[str, Any], lang: str) -> str:
    """The scenario's detail re-told in ``lang``; values and messages stay code spans."""
    d = (s.get("detail") or "").strip()
    if d.startswith("warn: "):
        d = d[6:]
    metric = s.get("metric")
    mtext = ""
    if metric:
        std = f", {code(metric['standard'])}" if metric.get("standard") else ""
        std = std.replace(", ", "，标准 ") if lang == "zh" else std
        mtext = t("metric", lang, name=code(metric["name"]), value=metric["value"],
                  threshold=metric["threshold"], std=std)
    if m := re.fullmatch(r"hollow: (.*?), so this row cannot tell a wrong API; (.*)", d, re.S):
        parts = [HOLLOW_REASONS.get(p) for p in m.group(1).split("; ")]
        if all(parts):
            rest = detail_text(dict(s, detail=m.group(2), metric=None), lang)
            return t("hollow", lang, why=("，" if lang == "zh" else "; ").join(t(k, lang) for k in parts), rest=rest) + mtext
    if m := re.fullmatch(r"matches the CPU: (.*)", d, re.S):
        return t("pass_value", lang, v=_value(m.group(1))) + mtext
    if m := re.fullmatch(r"raised as expected: (.*?)(?:; note: the CPU reference gave (.*))?", d, re.S):
        text = t("pass_raised", lang, e=code(m.group(1)))
        if m.group(2):
            text += t("semi", lang) + t("cpu_gave", lang, c=code(m.group(2)))
        return text
    if m := re.fullmatch(r"returned (.*) \(not compared\)", d, re.S):
        return t("not_compared", lang, v=_value(m.group(1)))
    if m := re.fullmatch(r"(.*?); the CPU reference (raised|returned) (.*)", d, re.S):
        key = "cpu_raised" if m.group(2) == "raised" else "cpu_returned"
        return t("refused", lang, e=code(m.group(1))) + t("semi", lang) + t(key, lang, c=code(m.group(3)))
    if s.get("status") in ("unsupported", "error") and re.match(r"\w+(Error|Exception)\b", d):
        return t("refused", lang, e=code(d))
    if not d:
        return mtext.strip("（）() ") or "—"
    return t("original", lang, d=code(d)) + mtext


def refused_ops(scenarios: Sequence[Dict[str, Any]], lang: str = "en") -> List[str]:
    """``op`` (dtype) of every device kernel refusal in the details, whole names."""
    out: List[str] = []
    lp, rp = ("（", "）") if lang == "zh" else (" (", ")")
    for s in scenarios:
        for op, dt, _ in refused_kernels(s.get("detail") or ""):
            label = f"{code(op)}{lp}{TORCH_DTYPE.get(dt, dt)}{rp}"
            if label not in out:
                out.append(label)
    return out


def refused_phrase(scenarios: Sequence[Dict[str, Any]], lang: str) -> str:
    """"设备算子 `a`、`b` 不支持 float64": the refused kernels of the details, by dtype."""
    by_dtype: Dict[str, List[str]] = {}
    for s in scenarios:
        for op, dt, _ in refused_kernels(s.get("detail") or ""):
            ops = by_dtype.setdefault(TORCH_DTYPE.get(dt, dt), [])
            if op not in ops:
                ops.append(op)
    return t("semi", lang).join(t("ops_refused", lang, ops=t("sep", lang).join(code(o) for o in ops), dtype=dt)
                                for dt, ops in by_dtype.items())


def _ids(scenarios: Sequence[Dict[str, Any]], lang: str, limit: int = 0) -> str:
    seen: List[str] = []
    for s in scenarios:
        if s["id"] not in seen:
            seen.append(s["id"])
    shown = seen[:limit] if limit else seen
    text = t("sep", lang).join(code(i) for i in shown)
    if limit and len(seen) > limit:
        text += f" 等 {len(seen)} 项" if lang == "zh" else f", … ({len(seen)} cases)"
    return text


def dtype_free(s: Dict[str, Any]) -> bool:
    """Whether a row's case code never reads ``dtype``: it stands for no dtype in particular."""
    return DTYPE_FREE in (s.get("tags") or [])


def all_dtype_free(scenarios: Sequence[Dict[str, Any]]) -> bool:
    """Whether every counted row (skips aside) is dtype-free: the API's answer is
    dtype-independent, no dtype list of it is a finding."""
    counted = [s for s in scenarios if s["status"] != "skip"]
    return bool(counted) and all(dtype_free(s) for s in counted)


def dtype_cell(s: Dict[str, Any], lang: str) -> str:
    """A row's dtype as the tables show it: its dtype, or for a dtype-free row that it
    answers for any dtype (and the dtype it was run and recorded with)."""
    if dtype_free(s):
        return t("dtype_any", lang, dtype=s.get("dtype") or "float32")
    return s.get("dtype") or "—"


def dtype_word(s: Dict[str, Any], lang: str) -> str:
    """A row's dtype in a list of dtypes: its dtype, "any dtype" for a dtype-free row."""
    if dtype_free(s):
        return t("dtype_any_short", lang)
    return s.get("dtype") or ""


def _dtypes(scenarios: Sequence[Dict[str, Any]], lang: str) -> str:
    return "/".join(dict.fromkeys(w for s in scenarios if (w := dtype_word(s, lang))))


def support_lines(api: Dict[str, Any], lang: str) -> List[str]:
    """Seed 000's 支持情况验证: the cases grouped by outcome, with the reason of each group."""
    counted = [s for s in api["scenarios"] if s["status"] != "skip"]
    groups: Dict[Tuple[str, Optional[str]], List[Dict[str, Any]]] = {}
    for s in counted:
        groups.setdefault((s["status"], s.get("cause")), []).append(s)
    lines = []
    for (status, cause), cases in groups.items():
        why = ""
        if cause:
            why = f"，{term('cause', cause, lang)}" if lang == "zh" else f", {term('cause', cause, lang)}"
            ops = refused_phrase(cases, lang)
            if ops:
                why += t("semi", lang) + ops
        dts = _dtypes(cases, lang)
        ids = _ids(cases, lang) + (f"（{dts}）" if lang == "zh" and dts else f" ({dts})" if dts else "")
        lines.append(t("group", lang, status=term("scenario_status", status, lang), n=len(cases), why=why, ids=ids))
    if all_dtype_free(api["scenarios"]):
        ran = next((s.get("dtype") for s in counted if s.get("dtype")), "float32")
        lines.append(t("dtype_indep", lang, dtype=ran))
    return lines


PRINTABLE = re.compile(r"(True|False|None|-?\d[\w.+\-]*|'[^'{}<>]*'|\(?tensor\(shape=.*\)\)?|\w+(?:Error|Exception)\b.*)")
SNIPPET_LINES = 40


def printed_value(s: Dict[str, Any]) -> Optional[str]:
    """What the snippet's last ``print(...)`` printed in this run, where the record says it
    whole: a plain value, tensors (by shape, dtype, device) or the raised error; None when
    the recorded value is a normalised form print() would not show (``{'type': ...}``)."""
    d = (s.get("detail") or "").strip()
    out = None
    if m := re.fullmatch(r"matches the CPU: (.*)", d, re.S):
        out = m.group(1)
    elif m := re.fullmatch(r"returned (.*) \(not compared\)", d, re.S):
        out = m.group(1)
    elif m := re.match(r"raised as expected: (.*?)(?:; note:|$)", d, re.S):
        out = m.group(1)
    elif s["status"] in ("unsupported", "error"):
        out = re.split(r"; the CPU reference ", d, maxsplit=1)[0]
    if not out:
        return None
    out = re.sub(r"\s+", " ", out).strip()
    if len(out) > 160 or "{'" in out or not PRINTABLE.fullmatch(out):
        return None
    return out


def snippet_with_output(s: Dict[str, Any], lang: str) -> Optional[str]:
    """The scenario's snippet whose last ``print(...)`` line ends with what it printed here;
    a snippet whose output the record cannot give whole is shown without a comment."""
    text, _ = snippet_and_comment(s, lang)
    return text


def snippet_and_comment(s: Dict[str, Any], lang: str) -> Tuple[Optional[str], bool]:
    snippet = (s.get("snippet") or "").rstrip("\n")
    if not snippet:
        return None, False
    lines = snippet.split("\n")
    out = printed_value(s)
    if out and lines[-1].startswith("print("):
        out = re.sub(r"tensor\(shape=(\(.*?\)), dtype=(\w+), device=(\w+)\)",
                     lambda m: t("tensor_out", lang, shape=m.group(1), dtype=m.group(2), device=m.group(3)), out)
        lines[-1] = f"{lines[-1]}  # {out}"
        return "\n".join(lines) + "\n", True
    return "\n".join(lines) + "\n", False


def pick_snippets(api: Dict[str, Any], limit: int = 3) -> List[Dict[str, Any]]:
    """The verification commands shown: the first passing case, then the first case of each
    other outcome (a refusal per cause), at most ``limit``; a snippet longer than
    SNIPPET_LINES lines is left to the generated test file. A passing case whose value is
    the point (a bool, a number) comes first."""
    picked, seen = [], set()
    cases = [s for s in api["scenarios"] if s.get("snippet") and s["status"] != "skip"  # a skipped case never ran
             and len(s["snippet"].rstrip("\n").split("\n")) <= SNIPPET_LINES]
    # a verification command calls the API it verifies: a case that does not (a world
    # case run through the tool's harness, an is_available() check) is left to the table
    # and the generated test file
    cases = [s for s in cases if calls_api(s["snippet"], api["name"]) and not NEEDS_TOOL.search(s["snippet"])]
    cases.sort(key=lambda s: (s["status"] != "pass", shown_value(s) is None))
    for s in cases:
        key = (s["status"], s.get("cause"))
        if key in seen:
            continue
        seen.add(key)
        picked.append(s)
    return picked[:limit]


# a command that needs this tool installed is no command a community reviewer can run
NEEDS_TOOL = re.compile(r"^\s*(?:from|import)\s+torchparity\b", re.M)


def calls_api(snippet: str, api: str) -> bool:
    """Whether ``snippet`` calls the API: names it (``unpack_dual(``, ``.baddbmm(``,
    ``StudentT(``, ``d.expand(``) other than as a name the snippet defines itself (the
    case's own ``def unpack_dual_device_kept``), or passes its whole name."""
    short = api.rsplit(".", 1)[-1]
    own = set(re.findall(r"^\s*def (\w+)", snippet, re.M))
    body = re.sub(r"\b(" + "|".join(map(re.escape, own)) + r")\b", "", snippet) if own else snippet
    return re.search(rf"(?<![\w]){re.escape(short)}(?![\w])", body) is not None or api in snippet


def shown_value(s: Dict[str, Any]) -> Optional[str]:
    """The value a passing row returned, when it is a plain scalar worth showing in the
    row (an ``is_available()`` that returns False is the point of its row)."""
    if s.get("status") != "pass":
        return None
    scalar = r"(True|False|None|-?\d+(?:\.\d+)?|'[^']{0,40}')"
    d = (s.get("detail") or "").strip()
    m = re.fullmatch(r"matches the CPU: " + scalar, d) or re.fullmatch(r"returned " + scalar + r" \(not compared\)", d)
    return m.group(1) if m else None


def result_cell(s: Dict[str, Any], lang: str) -> str:
    """The row's status, "emulated" and the value it returned when that is the point, in
    one pair of parentheses."""
    word = term("scenario_status", s["status"], lang)
    value = shown_value(s)
    notes = [t("emulated", lang)] if s.get("emulated") else []
    if value is not None:
        notes.append(("返回 " if lang == "zh" else "returned ") + code(value))
    if not notes:
        return word
    return f"{word}（{'，'.join(notes)}）" if lang == "zh" else f"{word} ({', '.join(notes)})"


# descriptions a source gives every case alike: the row says nothing of what it compared
GENERIC = re.compile(r"设备上的结果与 CPU 相同|在设备上追踪、编辑、运行|观察器、伪量化、QAT 模块或 prepare/convert 流程"
                     r"|the same answer on the device as on the CPU|traced / edited / run on the device"
                     r"|observers, fake-quantize, QAT modules or prepare/convert flows", re.I)
GENERIC_EXPECTED = re.compile(r"^(与 CPU 结果一致|图与输出与 CPU 一致|the same answer as the CPU|the same graph and outputs as the CPU)$")
COMPARED = {
    "device-compute": {"zh": ("设备算子的输出", "设备算子的输出与 CPU 一致"),
                       "en": ("the device operators' outputs", "the device operators' outputs match the CPU")},
    "device-state": {"zh": ("设备张量的状态、元数据与返回值", "状态、元数据与返回值与 CPU 一致"),
                     "en": ("the device tensors' state, metadata and the values returned", "state, metadata and values match the CPU")},
    "host-only": {"zh": ("返回值（设备上没有归属于该 API 的算子运行，仅主机侧）", "返回值与 CPU 一致"),
                  "en": ("the values returned (no device operator of the API ran: host only)", "the values returned match the CPU")},
}


def _compared(s: Dict[str, Any], lang: str) -> Tuple[str, str]:
    return COMPARED.get(s.get("evidence") or "", {}).get(lang) or (
        ("结果", "结果与 CPU 一致") if lang == "zh" else ("the results", "the results match the CPU"))


def covers_text(s: Dict[str, Any], api: Dict[str, Any], lang: str) -> str:
    """覆盖内容: the source's own words, unless they are the words it gives every case
    alike — then what this row ran and compared, from its dtype and evidence."""
    text = (s.get("description") or {}).get(lang) or "—"
    if not GENERIC.search(text):
        return text
    what, _ = _compared(s, lang)
    name = short_name(api["name"])
    dtype = None if dtype_free(s) else s.get("dtype")
    case = "" if api["name"].endswith(s["id"]) else (f"（{s['id']}）" if lang == "zh" else f" ({s['id']})")
    if lang == "zh":
        on = f" {dtype} 设备张量上" if dtype else "设备上"
        return f"{name}：在{on}运行用例代码{case}，比较{what}"
    on = f"on {dtype} device tensors" if dtype else "on the device"
    return f"{name}: the case code{case} {on}, comparing {what}"


def compared_how(s: Dict[str, Any], lang: str) -> Optional[str]:
    """What a row's own description says it compares ("按形状、dtype、设备与支撑集比较")."""
    d = (s.get("description") or {}).get(lang) or ""
    m = re.search(r"按(.+?)比较", d) if lang == "zh" else re.search(r"compared by (.+?)(?: \(|;|$)", d)
    return m.group(1) if m else None


def expected_text(s: Dict[str, Any], lang: str) -> str:
    """预期结果 as the row was compared: sampled draws compared by shape, dtype, device and
    support never promise values equal to the CPU's; a source's generic promise becomes
    what this row's evidence compared."""
    text = (s.get("expected") or {}).get(lang) or "—"
    how = compared_how(s, lang)
    if how and ("random" in (s.get("tags") or []) or GENERIC_EXPECTED.match(text)):
        return f"{how}与 CPU 一致" if lang == "zh" else f"{how} match the CPU"
    if GENERIC_EXPECTED.match(text) and GENERIC.search((s.get("description") or {}).get(lang) or ""):
        return _compared(s, lang)[1]
    return text


# ----------------------------------------------------------------------------- 3. docs


def provenance_words(report: Report, lang: str) -> Tuple[str, str]:
    """(what the results are called, what a difference with the docs asks for): "实测" and
    "资料需更新" for a run on hardware, "模拟设备预测" and "待硬件确认" for the emulated
    device — a prediction never asks the vendor to change its docs."""
    if report.device.emulated:
        return t("predicted", lang), t("fix_wait", lang)
    return t("measured", lang), t("fix_docs", lang)


def _vendor(api: Dict[str, Any]) -> Dict[str, Any]:
    return ((api.get("evidence") or {}).get("docs") or {}).get("vendor") or {}


def docs_differences(api: Dict[str, Any], report: Report, lang: str) -> List[str]:
    """Every difference between the vendor docs and the results: a chip marked ✔/✘
    against the verdict, a "仅支持" dtype list against the dtypes that passed or failed,
    in the words of the results' provenance (hardware: 实测; emulated: 模拟设备预测)."""
    from .env_record import record
    from .matrix import chips_of

    vendor = _vendor(api)
    if not vendor.get("present"):
        return []
    m, fix = provenance_words(report, lang)
    fix_tail = ("，" if lang == "zh" else ": ") + fix
    status = api["verdict"]["status"]
    # "模拟设备预测（模拟设备 …）" says it twice: the prediction names the chip alone
    where = record(report.environment, report.device, lang).name if report.device.emulated else device_where(report, lang)
    counted = [s for s in api["scenarios"] if s["status"] != "skip"]
    ok = [s for s in counted if s["status"] == "pass"]
    bad = [s for s in counted if s["status"] != "pass"]
    out = []
    for chip in chips_of(report):
        mark = vendor.get("chips", {}).get(chip.term)
        if mark is None:
            continue
        words = term("verdict_status", status, lang)
        name = chip_name(chip, lang)
        if mark and status in ("unsupported", "broken"):
            out.append(t("chip_mark", lang, chip=name, mark="✔", m=m, where=where, status=words) + fix_tail)
        elif not mark and status in ("supported", "partial", "device-independent"):
            text = t("chip_mark", lang, chip=name, mark="✘", m=m, where=where, status=words)
            if bad:
                causes = t("sep", lang).join(dict.fromkeys(term("cause", s.get("cause"), lang) for s in bad))
                text += t("chip_partial", lang, ok=_ids(ok, lang), bad=_ids(bad, lang), cause=causes)
            out.append(text + fix_tail)
    listed = vendor.get("dtypes") or []
    if listed:
        extra = [s for s in ok if s.get("dtype") and s["dtype"] not in listed and not dtype_free(s)]
        if extra:
            out.append(t("dtype_more", lang, limits=re.sub(r"\s+", " ", vendor.get("limits") or ""), m=m, fix=fix,
                         dtypes=t("sep", lang).join(dict.fromkeys(s["dtype"] for s in extra)),
                         ids=_ids(extra, lang, 3)))
        missing = [s for s in bad if s.get("dtype") in listed and s.get("cause") in LIMITS and not dtype_free(s)]
        if missing:
            out.append(t("dtype_less", lang, dtypes=t("sep", lang).join(dict.fromkeys(s["dtype"] for s in missing)),
                         ids=_ids(missing, lang, 3), m=m, fix=fix_tail))
    return [t("docs_differ", lang, m=m, text=d) for d in out]


def docs_agreement(api: Dict[str, Any], report: Report, lang: str) -> Optional[str]:
    """What the docs check says where docs_differences found nothing, from what ran: that
    the docs' dtype list holds every dtype that passed (and those outside it were refused);
    rows outside the list that neither passed nor were refused for a limit are said as
    they are, never called agreement; with no dtype list, only the chip marks agree. None
    without a vendor entry or where nothing ran."""
    vendor = _vendor(api)
    if not vendor.get("present") or docs_differences(api, report, lang):
        return None
    counted = [s for s in api["scenarios"] if s["status"] != "skip" and not dtype_free(s) and s.get("dtype")]
    m, _ = provenance_words(report, lang)
    listed = vendor.get("dtypes") or []
    sep = t("sep", lang)
    if not listed:
        return t("docs_agree_chips", lang, m=m) if api["scenarios"] else None
    if not counted:
        return None
    outside = [s for s in counted if s["dtype"] not in listed]
    odd = [s for s in outside if s["status"] != "pass" and s.get("cause") not in LIMITS]
    if odd:
        status = sep.join(dict.fromkeys(term("scenario_status", s["status"], lang).lstrip("✘✔–◐ ") for s in odd))
        return t("docs_outside", lang, listed="/".join(listed), m=m, status=status,
                 dtypes=sep.join(dict.fromkeys(s["dtype"] for s in odd)), ids=_ids(odd, lang, 3))
    ran = [s["dtype"] for s in counted if s["status"] == "pass"]
    if not ran:
        return None
    refused = [s["dtype"] for s in outside if s.get("cause") in LIMITS]
    tail = t("docs_agree_refused", lang, dtypes=sep.join(dict.fromkeys(refused))) if refused else ""
    return t("docs_agree_dtypes", lang, m=m, listed="/".join(listed), ran="/".join(dict.fromkeys(ran)), refused=tail)


# ----------------------------------------------------------------------------- 5. conclusion


def status_analysis(api: Dict[str, Any], report: Report, lang: str) -> str:
    """现状分析 of one API: how many cases pass where, why the others do not (every refused
    kernel named), and every docs-vs-measurement difference."""
    counted = [s for s in api["scenarios"] if s["status"] != "skip"]
    ok = [s for s in counted if s["status"] == "pass"]
    parts = [t("passed_of", lang, total=len(counted), n=len(ok), where=device_where(report, lang))]
    by_cause: Dict[str, List[Dict[str, Any]]] = {}
    for s in counted:
        if s["status"] != "pass":
            by_cause.setdefault(s.get("cause") or "", []).append(s)
    for cause, cases in by_cause.items():
        if cause in LIMITS:
            ops = refused_phrase(cases, lang)
            ops_text = ("：" if lang == "zh" else ": ") + ops if ops else ""
            parts.append(t("limited", lang, n=len(cases), cause=term("cause", cause, lang), ops=ops_text))
        else:
            status = term("scenario_status", cases[0]["status"], lang).lstrip("✘✔–◐ ")
            parts.append(t("other_fail", lang, n=len(cases), status=status, ids=_ids(cases, lang)))
    text = t("semi", lang).join(parts) + t("stop", lang)
    diffs = docs_differences(api, report, lang)
    if diffs:
        text += (" " if lang == "en" else "") + t("semi", lang).join(diffs) + t("stop", lang)
    return text


def long_cause(cause: str, lang: str) -> str:
    try:
        return getattr(CAUSE_TEXT[Cause(cause)], lang)
    except (ValueError, KeyError):
        return term("cause", cause, lang)


def ids_dtypes(scenarios: Sequence[Dict[str, Any]], lang: str, limit: int = 4) -> str:
    """The case ids with the dtypes they ran in: "`a`、`b`（float64）", or per id where the
    dtypes differ ("`mm`（float32/float16）") — so the two sides of a split can be told apart."""
    by_id: Dict[str, List[str]] = {}
    for s in scenarios:
        dts = by_id.setdefault(s["id"], [])
        word = dtype_word(s, lang)
        if word and word not in dts:
            dts.append(word)
    lp, rp = ("（", "）") if lang == "zh" else (" (", ")")
    items = list(by_id.items())
    shown = items[:limit] if limit else items
    more = ""
    if limit and len(items) > limit:
        more = f" 等 {len(items)} 项" if lang == "zh" else f", … ({len(items)} cases)"
    sets = {tuple(d) for _, d in items}
    if len(sets) == 1:
        dts = next(iter(sets))
        text = t("sep", lang).join(code(i) for i, _ in shown) + more
        return text + (f"{lp}{'/'.join(dts)}{rp}" if dts else "")
    return t("sep", lang).join(code(i) + (f"{lp}{'/'.join(d)}{rp}" if d else "") for i, d in shown) + more


def adaptation(api: Dict[str, Any], lang: str) -> str:
    """Seed 000's API 适配 paragraph: what runs (and in which dtypes) and why the rest does
    not (a device or build limit, not the API's implementation), then the API's nature —
    each part composed from this API's cases and kind."""
    v = api["verdict"]
    head = f"{code(api['name'])}{'：' if lang == 'zh' else ': '}"
    tail = (" " if lang == "en" else "") + t("nature_is", lang, n=nature(api["analysis"], lang, api))
    if all_dtype_free(api["scenarios"]):
        tail += (" " if lang == "en" else "") + t("dtype_indep_adapt", lang)
    counted = [s for s in api["scenarios"] if s["status"] != "skip"]
    ok = [s for s in counted if s["status"] == "pass"]
    limited = [s for s in counted if s["status"] == "unsupported" and s.get("cause") in LIMITS]
    if v["status"] == "supported":
        raised = [s for s in ok if both_raised(s)]
        if raised and len(raised) == len(ok):
            errs = t("sep", lang).join(dict.fromkeys(code(e) for s in raised if (e := raised_error(s))))
            return head + t("adapt_raised", lang, errs=errs or "—") + tail
        if raised:
            values = [s for s in ok if not both_raised(s)]
            return head + t("adapt_ok_raised", lang, ok=_spaced(ids_dtypes(values, lang), lang),
                            raised=_spaced(ids_dtypes(raised, lang), lang)) + tail
        return head + t("adapt_ok", lang) + tail
    if v["status"] == "device-independent":
        return head + t("adapt_indep", lang) + tail
    if v["status"] in ("partial", "unsupported") and limited and len(ok) + len(limited) == len(counted):
        causes = sorted({s["cause"] for s in limited})
        ops = refused_phrase(limited, lang)
        why = ops or t("sep", lang).join(long_cause(c, lang) for c in causes)
        short = t("sep", lang).join(term("cause", c, lang) for c in causes)
        bad = _spaced(ids_dtypes(limited, lang), lang)
        why = why + (" " if lang == "zh" and re.search(r"[\w`]$", why) else "")
        plain = "" if ops else "_plain"  # the long cause names the short one already
        if ok:
            return head + t("adapt_limits" + plain, lang, ok=_spaced(ids_dtypes(ok, lang), lang), bad=bad, cause=why,
                            short=short) + tail
        return head + t("adapt_all_limited" + plain, lang, bad=bad, cause=why, short=short) + tail
    if v["status"] == "broken":
        wrong = [s for s in counted if s["status"] != "pass" and s.get("cause") not in LIMITS
                 and (s.get("cause") or "") not in NO_ANSWER]
        if wrong:
            causes = t("sep", lang).join(dict.fromkeys(term("cause", s.get("cause") or s["status"], lang) for s in wrong))
            return head + t("adapt_broken", lang, ids=ids_dtypes(wrong, lang), causes=causes) + tail
    if v["status"] == "unknown":
        if not counted and api["scenarios"]:
            return head + t("adapt_unknown_skipped", lang, n=len(api["scenarios"])) + tail
        if not counted:
            return head + t("adapt_unknown_none", lang) + tail
        left = [s for s in counted if s["status"] != "pass"]
        causes = t("sep", lang).join(dict.fromkeys(term("cause", s.get("cause") or s["status"], lang) for s in left))
        return head + t("adapt_unknown", lang, n=len(left), causes=causes) + tail
    text = (v.get("adaptation") or {}).get(lang) or "—"
    return head + text + tail


def both_raised(s: Dict[str, Any]) -> bool:
    """A passing row where the device and the CPU both raised (the same error): it shows
    the two sides agree, not that the API works on the device."""
    return s.get("status") == "pass" and (s.get("detail") or "").startswith("raised as expected")


def raised_error(s: Dict[str, Any]) -> Optional[str]:
    m = re.match(r"raised as expected: (\w+(?:Error|Exception|Warning)?)", s.get("detail") or "")
    return m.group(1) if m else None


def _spaced(ids: str, lang: str) -> str:
    """ids followed by the space a code span (or English) needs before the next word."""
    return ids + (" " if ids.endswith("`") or lang == "en" else "")


SCENARIOS_FOUND = re.compile(r"(\d+) scenario\(s\)")


def source_said(said: str, lang: str) -> str:
    """What a scenario source said of an API, in the text's language: the scenarios it gave
    (the source applies), or why it does not apply; an unknown reason is quoted as it is."""
    if m := SCENARIOS_FOUND.fullmatch(said.strip()):
        return t("source_gave", lang, n=m.group(1))
    known = term("source_said", said, lang)
    if lang == "zh":
        return t("source_not_applicable", lang, why=known) if known != said else f"不适用（原文：{code(said)}）"
    return said


def placeholder(what: str, lang: str) -> str:
    return PLACEHOLDER[lang].format(what=what)
