"""torch.autograd.profiler.emit_itt (seed 000).

A context manager that wraps each autograd op in an Intel ITT range. enabled=False is a
no-op everywhere (a no-op taken away is the same no-op: that case cannot observe the API,
it is reported hollow); enabled=True turns the autograd profiler on, which the cases read
inside the block (ITT's ranges themselves go to VTune, out of a case's sight), and needs a
PyTorch built with ITT: a build without it raises
"Can't use ITT profiler - PyTorch was compiled without ITT" (a build-configuration limit).
"""

from ..registry import scenario

API = "torch.autograd.profiler.emit_itt"


@scenario(API, "disabled_noop", dtypes=["float32"], tags=["enabled=False"],
          en="emit_itt(enabled=False) around a device op is a no-op",
          zh="emit_itt(enabled=False) 包裹设备算子时为 no-op",
          expect_en="the op runs and matches the CPU", expect_zh="算子正常执行，结果与 CPU 一致")
def emit_itt_disabled_noop(device, dtype):
    import torch
    from torch.autograd.profiler import emit_itt

    a = torch.tensor([1, 2, 3], dtype=dtype).to(device)
    with emit_itt(enabled=False):
        b = a.add(1.0)
    return b


@scenario(API, "itt_is_available", dtypes=["float32"], tags=["availability"], compare="none",
          en="torch.profiler.itt.is_available() reports whether this build has ITT",
          zh="torch.profiler.itt.is_available() 报告当前构建是否包含 ITT",
          expect_en="a bool; True only in builds compiled with ITT",
          expect_zh="返回 bool；仅编译了 ITT 的构建为 True")
def emit_itt_is_available(device, dtype):
    import torch

    return torch.profiler.itt.is_available()


@scenario(API, "enabled", dtypes=["float32"], tags=["enabled=True"],
          en="emit_itt(enabled=True) around device ops with autograd",
          zh="emit_itt(enabled=True) 包裹带 autograd 的设备算子",
          expect_en="runs where torch.profiler.itt.is_available(); otherwise RuntimeError "
                    "(PyTorch compiled without ITT)",
          expect_zh="torch.profiler.itt.is_available() 为 True 时正常执行；否则抛出 RuntimeError"
                    "（PyTorch 未编译 ITT）")
def emit_itt_enabled(device, dtype):
    import torch
    from torch.autograd.profiler import emit_itt

    a = torch.tensor([1.0, 2.0, 3.0], dtype=dtype).to(device).requires_grad_()
    with emit_itt(enabled=True):
        b = (a * 2).sum()
        b.backward()
        profiling = torch.autograd._profiler_enabled()  # what emit_itt itself turns on
    return b.detach(), a.grad, profiling


@scenario(API, "record_shapes", dtypes=["float32"],
          shapes=[(2, 3), (4, 5)], tags=["enabled=True", "record_shapes"],
          en="emit_itt(enabled=True, record_shapes=True) also records argument shapes",
          zh="emit_itt(enabled=True, record_shapes=True) 同时记录参数形状",
          expect_en="runs where torch.profiler.itt.is_available(); otherwise RuntimeError "
                    "(PyTorch compiled without ITT)",
          expect_zh="torch.profiler.itt.is_available() 为 True 时正常执行；否则抛出 RuntimeError"
                    "（PyTorch 未编译 ITT）")
def emit_itt_record_shapes(device, dtype, shape=(2, 3)):
    import torch
    from torch.autograd.profiler import emit_itt

    a = torch.rand(shape, dtype=dtype).to(device)
    with emit_itt(enabled=True, record_shapes=True):
        b = a.matmul(a.t())
        profiling = torch.autograd._profiler_enabled()  # what emit_itt itself turns on
    return b, profiling
