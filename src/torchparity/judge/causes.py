"""Classifying exceptions: is the device refusing (unsupported), or is something broken?

The table below is the whole rule set: ordered (regex, status, cause) rows, first match
wins. Backends add rows through ``DeviceAdapter.error_patterns()``. Every row must be
reachable (a test feeds each one an example message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple

from ..results.models import Cause, Status, Text


@dataclass(frozen=True)
class ErrorRule:
    pattern: str
    status: Status
    cause: Cause
    example: str  # a real message of that shape; tests check the rule matches it


ERROR_RULES: Tuple[ErrorRule, ...] = (
    # a world whose rank was killed from outside (SIGKILL / SIGTERM: the machine's load, an
    # operator, the harness's own limit): not the device's answer
    ErrorRule(r"^(\w+: )+rank \d+ exited with -(9|15) without a result",
              Status.ERROR, Cause.HARNESS_ERROR,
              "RuntimeError: rank 1 exited with -9 without a result: "),
    # a rank process of a distributed world died (signal) before giving its result: the
    # device run crashed, whatever its last stderr lines say (checked first for that reason)
    ErrorRule(r"^(\w+: )+rank \d+ exited with -\d+ without a result",
              Status.CRASH, Cause.CRASH,
              "rank 0 exited with -6 without a result: terminate called without an active exception"),
    # a build without a feature (ITT, distributed, LAPACK, ...)
    ErrorRule(r"compiled without|was not compiled with|not compiled with|built without|"
              r"compiled with \w+ disabled|without \w+ support",
              Status.UNSUPPORTED, Cause.BUILD_CONFIG,
              "Can't use ITT profiler - PyTorch was compiled without ITT"),
    # the dtype-dispatch macros of every backend, torch_npu's "dot_npu" included
    ErrorRule(r"not implemented for '(\w+)'", Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "\"dot_npu\" not implemented for 'Double'"),
    ErrorRule(r"(?i)(dtype|data type)\b.{0,80}\b(is )?not supported|not support(ed)? (the )?dtype|"
              r"unsupported (data ?type|dtype)|doesn't support float64|does not support float64|"
              r"DT_DOUBLE",
              Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "EZ1001: The dtype of self is not supported: DT_DOUBLE"),
    ErrorRule(r"Cannot convert a MPS Tensor to float64", Status.UNSUPPORTED, Cause.DTYPE_LIMIT,
              "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64"),
    # no kernel for the op on that backend at all
    ErrorRule(r"Could not run '[\w:.]+' with arguments from the '\w+' backend",
              Status.UNSUPPORTED, Cause.NO_KERNEL,
              "Could not run 'aten::_foo' with arguments from the 'PrivateUse1' backend."),
    ErrorRule(r"is not currently implemented for the \w+ device|no kernel image is available",
              Status.UNSUPPORTED, Cause.NO_KERNEL,
              "The operator 'aten::foo' is not currently implemented for the MPS device."),
    # a capability rule of the chip's profile (autocast switched off for the chip): the
    # emulator names the profile that refuses — the chip's answer, a prediction
    ErrorRule(r"not supported by the emulated device \(profile '[^']+'\)",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "autocast on 'npu' is not supported by the emulated device (profile 'ascend-a2')"),
    # something the emulator itself cannot do (generators, pinned memory, sparse and nested
    # layouts, storage resizing, IPC): a gap of the emulator, not a rule of the chip's
    # profile — not an answer; needs hardware to decide. The emulated adapter's own
    # patterns (tried first) keep the profile's capability rules apart (feature_limit).
    ErrorRule(r"(?i)not supported (by|on) the emulated device|cannot be emulated",
              Status.SKIP, Cause.EMULATOR_LIMIT,
              "torch.Generator(device='npu') is not supported by the emulated device"),
    # the device module (torch.npu, ...) has no counterpart of a torch.cuda member
    ErrorRule(r"the device module [\w.]+ has no member",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "the device module torch.npu has no member memory_usage (counterpart of "
              "torch.cuda.memory_usage): not supported by this device's module"),
    # torch's own refusal for a backend whose hooks lack a runtime feature
    ErrorRule(r"Backend doesn't support [\w ]+\.",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "Backend doesn't support getting device capabilities."),
    # a torch.distributed feature only one collective backend has (monitored_barrier: gloo)
    ErrorRule(r"is only implemented for (the )?\w+ backend",
              Status.UNSUPPORTED, Cause.FEATURE_LIMIT,
              "monitored_barrier is only implemented for GLOO backend."),
)


def classify_exception(exc_type: str, message: str,
                       extra_rules: Sequence[Tuple[str, str, str]] = ()) -> Optional[Tuple[Status, Cause]]:
    """(status, cause) for a device exception that means "unsupported", else None."""
    rules: List[ErrorRule] = [ErrorRule(p, Status(s), Cause(c), "") for p, s, c in extra_rules]
    rules.extend(ERROR_RULES)
    text = f"{exc_type}: {message}"
    for rule in rules:
        if re.search(rule.pattern, text):
            return rule.status, rule.cause
    return None


# What each cause means, for verdicts and reports (the seeds' vocabulary in zh).
CAUSE_TEXT = {
    Cause.DTYPE_LIMIT: Text(en="hardware capability limit (dtype not supported by the device kernel)",
                            zh="硬件能力限制（设备算子不支持该数据类型）"),
    Cause.NO_KERNEL: Text(en="operator not implemented on the device",
                          zh="设备未实现该算子"),
    Cause.BUILD_CONFIG: Text(en="build configuration limit (feature not compiled in)",
                             zh="编译配置限制（未编译该特性）"),
    Cause.FEATURE_LIMIT: Text(en="device feature not available", zh="设备不具备该特性"),
    Cause.MISMATCH: Text(en="result differs from the CPU", zh="结果与 CPU 不一致"),
    Cause.DEVICE_PATH: Text(en="the API takes another code path on the device (other ops or dtypes "
                                "than on the CPU)",
                            zh="API 在设备上走了不同的代码路径（下发的算子或数据类型与 CPU 不同）"),
    Cause.METADATA: Text(en="output dtype, device or shape differs from the CPU",
                         zh="输出的 dtype、设备或形状与 CPU 不一致"),
    Cause.EXCEPTION_MISMATCH: Text(en="CPU and device disagree on raising an exception",
                                   zh="CPU 与设备在是否抛出异常上不一致"),
    Cause.DEVICE_ERROR: Text(en="the device raised an unexpected error", zh="设备上出现非预期错误"),
    Cause.CRASH: Text(en="the process crashed", zh="进程崩溃"),
    Cause.TIMEOUT: Text(en="did not finish in time", zh="执行超时"),
    Cause.HARNESS_ERROR: Text(en="the scenario itself failed (also on the CPU)",
                              zh="用例自身出错（CPU 上同样失败）"),
    Cause.NOT_COMPARABLE: Text(en="output not comparable (random or uninitialised)",
                               zh="输出不可比较（随机或未初始化）"),
    Cause.UPSTREAM_SKIP: Text(en="skipped by the upstream OpInfo entry", zh="上游 OpInfo 标记跳过"),
    Cause.OP_LIMIT: Text(en="the op itself does not support this (the CPU refuses it too)",
                         zh="算子本身不支持（CPU 上同样报错）"),
    Cause.EMULATOR_LIMIT: Text(en="emulator limit: the emulated device cannot do this; needs hardware "
                                  "to decide",
                               zh="模拟器限制：模拟设备无法执行该操作，需要在硬件上判定"),
    Cause.STATE: Text(en="a counter or runtime state differs from the CPU's",
                      zh="计数器或运行时状态与 CPU 不一致"),
}

# What is not an answer about the device (never counted in coverage, categories, verdicts)
NOT_ANSWER_CAUSES = frozenset({Cause.TIMEOUT, Cause.HARNESS_ERROR, Cause.EMULATOR_LIMIT,
                               Cause.NOT_COMPARABLE, Cause.UPSTREAM_SKIP})

# The first real difference, when a case differs in several ways: metadata (dtype, shape,
# device, kind) before a counter or runtime state before values; ``device_path`` names a
# values difference whose only other sign is the footprint (see run.execute).
DIFFERENCE_ORDER = (Cause.METADATA, Cause.STATE, Cause.MISMATCH, Cause.DEVICE_PATH)

# Causes that are limits of the device or build, not bugs of the API's implementation.
LIMIT_CAUSES = frozenset({Cause.DTYPE_LIMIT, Cause.NO_KERNEL, Cause.BUILD_CONFIG,
                          Cause.FEATURE_LIMIT, Cause.OP_LIMIT})


def cause_text(cause: Optional[str]) -> Optional[Text]:
    if cause is None:
        return None
    return CAUSE_TEXT.get(Cause(cause))


def iter_examples() -> Iterable[ErrorRule]:
    return iter(ERROR_RULES)
