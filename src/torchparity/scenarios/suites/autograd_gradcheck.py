"""torch.autograd.gradcheck / gradgradcheck (seed 000).

Both are pure-Python harnesses around a user function. Slow mode perturbs inputs and
compares Jacobians; fast mode (fast_mode=True) projects them on random vectors and so
issues aten.dot and aten.linalg_vector_norm itself, on the inputs' dtype (float64).
"""

from ..registry import Raises, scenario

GC = "torch.autograd.gradcheck"
GGC = "torch.autograd.gradgradcheck"


@scenario(GC, "slow_mul", dtypes=["float64"], shapes=[(10,), (2, 5)], tags=["slow_mode"],
          en="gradcheck(fast_mode=False) of x.mul(5) on a float64 device tensor",
          zh="slow mode（fast_mode=False）下对 float64 设备张量的 x.mul(5) 做 gradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_slow_mul(device, dtype, shape=(10,)):
    import torch
    from torch.autograd import gradcheck

    def f(x):
        return x.mul(5)

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(f, (x,), fast_mode=False)


@scenario(GC, "slow_sin_cos", dtypes=["float64"], shapes=[(10,), (3, 3)], tags=["slow_mode"],
          en="gradcheck(fast_mode=False) of sin(x)*cos(x)",
          zh="slow mode 下对 sin(x)*cos(x) 做 gradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_slow_sin_cos(device, dtype, shape=(10,)):
    import torch
    from torch.autograd import gradcheck

    def f(x):
        return torch.sin(x) * torch.cos(x)

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(f, (x,), fast_mode=False)


@scenario(GC, "slow_exp", dtypes=["float64"], shapes=[(10,), (4, 2)], tags=["slow_mode"],
          en="gradcheck(fast_mode=False) of exp(x)",
          zh="slow mode 下对 exp(x) 做 gradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_slow_exp(device, dtype, shape=(10,)):
    import torch
    from torch.autograd import gradcheck

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(torch.exp, (x,), fast_mode=False)


@scenario(GC, "slow_sum", dtypes=["float64"], shapes=[(3, 4), (6,)], tags=["slow_mode"],
          en="gradcheck(fast_mode=False) of a reduction x.sum()",
          zh="slow mode 下对归约 x.sum() 做 gradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_slow_sum(device, dtype, shape=(3, 4)):
    import torch
    from torch.autograd import gradcheck

    def f(x):
        return x.sum()

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(f, (x,), fast_mode=False)


@scenario(GC, "slow_linear", dtypes=["float64"], shapes=[(5,), (2, 3)], tags=["slow_mode"],
          en="gradcheck(fast_mode=False) of the linear function 3*x + b of two inputs x and b",
          zh="slow mode 下对双输入线性函数 3*x + b 做 gradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_slow_linear(device, dtype, shape=(5,)):
    import torch
    from torch.autograd import gradcheck

    def f(x, b):
        return 3 * x + b

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    b = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(f, (x, b), fast_mode=False)


@scenario(GC, "fast_mul", dtypes=["float64"], shapes=[(10,), (2, 5)], tags=["fast_mode"],
          en="gradcheck(fast_mode=True) of x.mul(5): fast mode issues dot and vector_norm itself",
          zh="fast mode（fast_mode=True）下对 x.mul(5) 做 gradcheck：fast mode 自身调用 dot 与 vector_norm",
          expect_en="returns True where the device supports float64 dot and linalg_vector_norm",
          expect_zh="设备支持 float64 的 dot 与 linalg_vector_norm 时返回 True")
def gradcheck_fast_mul(device, dtype, shape=(10,)):
    import torch
    from torch.autograd import gradcheck

    def f(x):
        return x.mul(5)

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(f, (x,), fast_mode=True)


@scenario(GC, "fast_exp", dtypes=["float64"], shapes=[(10,), (4, 2)], tags=["fast_mode"],
          en="gradcheck(fast_mode=True) of exp(x)",
          zh="fast mode 下对 exp(x) 做 gradcheck",
          expect_en="returns True where the device supports float64 dot and linalg_vector_norm",
          expect_zh="设备支持 float64 的 dot 与 linalg_vector_norm 时返回 True")
def gradcheck_fast_exp(device, dtype, shape=(10,)):
    import torch
    from torch.autograd import gradcheck

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(torch.exp, (x,), fast_mode=True)


@scenario(GC, "raise_exception_false", dtypes=["float64"],
          shapes=[(4,), (2, 2)], tags=["raise_exception"],
          en="raise_exception=False with a deliberately wrong backward: reports failure as a value",
          zh="raise_exception=False 且反向故意写错：以返回值报告失败",
          expect_en="returns False (no exception)", expect_zh="返回 False（不抛异常）")
def gradcheck_raise_exception_false(device, dtype, shape=(4,)):
    import torch
    from torch.autograd import gradcheck

    class WrongGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3  # wrong on purpose: the true derivative is 2

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(WrongGrad.apply, (x,), raise_exception=False, fast_mode=False)


@scenario(GC, "raise_exception_true", dtypes=["float64"],
          shapes=[(4,), (2, 2)], tags=["raise_exception"],
          raises=Raises("GradcheckError", "Jacobian mismatch"),
          en="raise_exception=True (default) with a deliberately wrong backward",
          zh="raise_exception=True（默认）且反向故意写错",
          expect_en="raises GradcheckError: Jacobian mismatch",
          expect_zh="抛出 GradcheckError: Jacobian mismatch")
def gradcheck_raise_exception_true(device, dtype, shape=(4,)):
    import torch
    from torch.autograd import gradcheck

    class WrongGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(WrongGrad.apply, (x,), fast_mode=False)


@scenario(GC, "check_undefined_grad", dtypes=["float64"],
          shapes=[(6,), (2, 3)], tags=["check_undefined_grad"],
          en="check_undefined_grad=True: backward must accept undefined output gradients",
          zh="check_undefined_grad=True：反向需能处理未定义的输出梯度",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_check_undefined_grad(device, dtype, shape=(6,)):
    import torch
    from torch.autograd import gradcheck

    def f(x):
        return x * 2, x.sin()

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(f, (x,), check_undefined_grad=True, fast_mode=False)


@scenario(GC, "check_batched_grad", dtypes=["float64"],
          shapes=[(6,), (2, 3)], tags=["check_batched_grad"],
          en="check_batched_grad=True: batched gradients through vmap",
          zh="check_batched_grad=True：通过 vmap 计算批量梯度",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_check_batched_grad(device, dtype, shape=(6,)):
    import torch
    from torch.autograd import gradcheck

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(torch.sin, (x,), check_batched_grad=True, fast_mode=False)


@scenario(GC, "check_forward_ad", dtypes=["float64"],
          shapes=[(6,), (2, 3)], tags=["check_forward_ad"],
          en="check_forward_ad=True: forward-mode gradients checked too",
          zh="check_forward_ad=True：同时检查前向模式梯度",
          expect_en="returns True", expect_zh="返回 True")
def gradcheck_check_forward_ad(device, dtype, shape=(6,)):
    import torch
    from torch.autograd import gradcheck

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradcheck(torch.exp, (x,), check_forward_ad=True, fast_mode=False)


# ---------------------------------------------------------------- gradgradcheck


@scenario(GGC, "slow_mul", dtypes=["float64"], shapes=[(10,), (2, 5)], tags=["slow_mode"],
          en="gradgradcheck(fast_mode=False) of x.mul(5)",
          zh="slow mode 下对 x.mul(5) 做 gradgradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_slow_mul(device, dtype, shape=(10,)):
    import torch
    from torch.autograd import gradgradcheck

    def f(x):
        return x.mul(5)

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(f, (x,), fast_mode=False)


@scenario(GGC, "slow_sin_cos", dtypes=["float64"], shapes=[(6,), (2, 3)], tags=["slow_mode"],
          en="gradgradcheck(fast_mode=False) of sin(x)*cos(x)",
          zh="slow mode 下对 sin(x)*cos(x) 做 gradgradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_slow_sin_cos(device, dtype, shape=(6,)):
    import torch
    from torch.autograd import gradgradcheck

    def f(x):
        return torch.sin(x) * torch.cos(x)

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(f, (x,), fast_mode=False)


@scenario(GGC, "slow_exp", dtypes=["float64"], shapes=[(6,), (3, 2)], tags=["slow_mode"],
          en="gradgradcheck(fast_mode=False) of exp(x)",
          zh="slow mode 下对 exp(x) 做 gradgradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_slow_exp(device, dtype, shape=(6,)):
    import torch
    from torch.autograd import gradgradcheck

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(torch.exp, (x,), fast_mode=False)


@scenario(GGC, "slow_sum", dtypes=["float64"], shapes=[(3, 4), (5,)], tags=["slow_mode"],
          en="gradgradcheck(fast_mode=False) of (x*x).sum()",
          zh="slow mode 下对 (x*x).sum() 做 gradgradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_slow_sum(device, dtype, shape=(3, 4)):
    import torch
    from torch.autograd import gradgradcheck

    def f(x):
        return (x * x).sum()

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(f, (x,), fast_mode=False)


@scenario(GGC, "slow_linear", dtypes=["float64"], shapes=[(5,), (2, 2)], tags=["slow_mode"],
          en="gradgradcheck(fast_mode=False) of the linear function 3*x + 2",
          zh="slow mode 下对线性函数 3*x + 2 做 gradgradcheck",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_slow_linear(device, dtype, shape=(5,)):
    import torch
    from torch.autograd import gradgradcheck

    def f(x):
        return 3 * x + 2

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(f, (x,), fast_mode=False)


@scenario(GGC, "fast_mul", dtypes=["float64"], shapes=[(6,), (2, 3)], tags=["fast_mode"],
          en="gradgradcheck(fast_mode=True) of x*x: fast mode issues dot and vector_norm itself",
          zh="fast mode 下对 x*x 做 gradgradcheck：fast mode 自身调用 dot 与 vector_norm",
          expect_en="returns True where the device supports float64 dot and linalg_vector_norm",
          expect_zh="设备支持 float64 的 dot 与 linalg_vector_norm 时返回 True")
def gradgradcheck_fast_mul(device, dtype, shape=(6,)):
    import torch
    from torch.autograd import gradgradcheck

    def f(x):
        return x * x

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(f, (x,), fast_mode=True)


@scenario(GGC, "raise_exception_false", dtypes=["float64"],
          shapes=[(4,), (2, 2)], tags=["raise_exception"],
          en="raise_exception=False with a wrong double backward: reports failure as a value",
          zh="raise_exception=False 且二阶反向故意写错：以返回值报告失败",
          expect_en="returns False (no exception)", expect_zh="返回 False（不抛异常）")
def gradgradcheck_raise_exception_false(device, dtype, shape=(4,)):
    import torch
    from torch.autograd import gradgradcheck

    class WrongDoubleGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.detach() * 2  # detached: the second derivative is lost

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(WrongDoubleGrad.apply, (x,), raise_exception=False, fast_mode=False)


@scenario(GGC, "check_undefined_grad", dtypes=["float64"],
          shapes=[(5,), (2, 2)], tags=["check_undefined_grad"],
          en="check_undefined_grad=True for second derivatives",
          zh="二阶梯度下 check_undefined_grad=True",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_check_undefined_grad(device, dtype, shape=(5,)):
    import torch
    from torch.autograd import gradgradcheck

    def f(x):
        return x * x, x.sin()

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(f, (x,), check_undefined_grad=True, fast_mode=False)


@scenario(GGC, "check_batched_grad", dtypes=["float64"],
          shapes=[(5,), (2, 2)], tags=["check_batched_grad"],
          en="check_batched_grad=True for second derivatives (vmap)",
          zh="二阶梯度下 check_batched_grad=True（vmap）",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_check_batched_grad(device, dtype, shape=(5,)):
    import torch
    from torch.autograd import gradgradcheck

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(torch.sin, (x,), check_batched_grad=True, fast_mode=False)


@scenario(GGC, "check_fwd_over_rev", dtypes=["float64"],
          shapes=[(5,), (2, 2)], tags=["check_forward_ad"],
          en="check_fwd_over_rev=True: forward-over-reverse second derivatives",
          zh="check_fwd_over_rev=True：前向套反向的二阶梯度",
          expect_en="returns True", expect_zh="返回 True")
def gradgradcheck_check_fwd_over_rev(device, dtype, shape=(5,)):
    import torch
    from torch.autograd import gradgradcheck

    x = torch.rand(shape, dtype=dtype).to(device).requires_grad_()
    return gradgradcheck(torch.exp, (x,), check_fwd_over_rev=True, fast_mode=False)
