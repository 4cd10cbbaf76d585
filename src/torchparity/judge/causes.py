"""What each cause means (the seeds' vocabulary), which causes are answers about the
device, and in which order a case's differences are named.

The table that turns an exception message into (status, cause) is
``results.error_rules``, read by every layer."""

from __future__ import annotations

from typing import Optional

from ..results.models import Cause, Text

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

