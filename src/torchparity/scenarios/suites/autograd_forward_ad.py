"""torch.autograd.forward_ad.enter_dual_level / unpack_dual (seed 001).

enter_dual_level opens a forward-AD level (an int); make_dual/unpack_dual attach and read
tangents on device tensors at that level; exit_dual_level drops them.
"""

from ..registry import Raises, scenario

ENTER = "torch.autograd.forward_ad.enter_dual_level"
UNPACK = "torch.autograd.forward_ad.unpack_dual"


@scenario(ENTER, "returns_int_level", dtypes=["float32"], tags=["lifecycle"],
          en="enter_dual_level() creates a forward-AD level",
          zh="直接调用 enter_dual_level() 创建前向 AD 层级",
          expect_en="returns a valid int level (>= 0)", expect_zh="返回有效的整数 level（>= 0）")
def enter_dual_level_returns_int(device, dtype):
    import torch.autograd.forward_ad as fwAD

    level = fwAD.enter_dual_level()
    try:
        assert isinstance(level, int) and level >= 0, level
        return level
    finally:
        fwAD.exit_dual_level(level=level)


@scenario(ENTER, "explicit_level", dtypes=["float32"], shapes=[(4,), (2, 3)], tags=["level"],
          en="make_dual and unpack_dual with the level returned by enter_dual_level()",
          zh="使用返回的 level 调用 make_dual 和 unpack_dual",
          expect_en="a device dual tensor is made and unpacked; values match the CPU",
          expect_zh="成功创建并解析设备 dual tensor，结果与 CPU 一致")
def enter_dual_level_explicit_level(device, dtype, shape=(4,)):
    import torch
    import torch.autograd.forward_ad as fwAD

    x = torch.rand(shape, dtype=dtype).to(device)
    t = torch.rand(shape, dtype=dtype).to(device)
    level = fwAD.enter_dual_level()
    try:
        dual = fwAD.make_dual(x, t, level=level)
        primal, tangent = fwAD.unpack_dual(dual, level=level)
        return primal, tangent
    finally:
        fwAD.exit_dual_level(level=level)


@scenario(ENTER, "exit_clears_tangent", dtypes=["float32"],
          shapes=[(4,), (2, 3)], tags=["lifecycle"],
          en="after exit_dual_level the dual tensor is unpacked again",
          zh="调用 exit_dual_level 后重新解析原 dual tensor",
          expect_en="the tangent is cleared: None", expect_zh="tangent 被清除并返回 None")
def enter_dual_level_exit_clears_tangent(device, dtype, shape=(4,)):
    import torch
    import torch.autograd.forward_ad as fwAD

    x = torch.rand(shape, dtype=dtype).to(device)
    t = torch.rand(shape, dtype=dtype).to(device)
    level = fwAD.enter_dual_level()
    dual = fwAD.make_dual(x, t, level=level)
    fwAD.exit_dual_level(level=level)
    return fwAD.unpack_dual(dual).tangent


@scenario(ENTER, "nested_raises", dtypes=["float32"], tags=["lifecycle", "error"],
          raises=Raises("RuntimeError", "[Nn]ested forward mode AD is not supported"),
          en="entering a second level while one is open",
          zh="在已有层级未退出时再次进入层级",
          expect_en="raises RuntimeError: nested forward mode AD is not supported",
          expect_zh="抛出 RuntimeError：不支持嵌套的前向 AD")
def enter_dual_level_nested_raises(device, dtype):
    import torch.autograd.forward_ad as fwAD

    level = fwAD.enter_dual_level()
    try:
        fwAD.enter_dual_level()
    finally:
        fwAD.exit_dual_level(level=level)


@scenario(UNPACK, "device_kept", dtypes=["float16", "float32"],
          shapes=[(3, 2), (5,)], tags=["device"],
          en="primal and tangent unpacked from a device dual tensor",
          zh="检查解析出的 primal 和 tangent 所在设备",
          expect_en="both stay on the device, with the input's dtype",
          expect_zh="primal 和 tangent 均位于设备上，dtype 保持不变")
def unpack_dual_device_kept(device, dtype, shape=(3, 2)):
    import torch
    import torch.autograd.forward_ad as fwAD

    x = torch.rand(shape, dtype=dtype).to(device)
    t = torch.rand(shape, dtype=dtype).to(device)
    with fwAD.dual_level():
        primal, tangent = fwAD.unpack_dual(fwAD.make_dual(x, t))
        assert primal.device == x.device and tangent.device == x.device
        assert primal.dtype == dtype and tangent.dtype == dtype
        return primal, tangent


@scenario(UNPACK, "square_tangent", dtypes=["float16", "float32"],
          shapes=[(5,), (2, 3)], tags=["forward_grad"],
          en="unpack_dual of x * x computed on a device dual tensor",
          zh="对设备 dual tensor 计算 x * x 并解析结果",
          expect_en="primal equals x², tangent equals 2·x·t; both match the CPU",
          expect_zh="primal 等于 x²，tangent 等于 2·x·t，且与 CPU 一致")
def unpack_dual_square_tangent(device, dtype, shape=(5,)):
    import torch
    import torch.autograd.forward_ad as fwAD

    x = torch.rand(shape, dtype=dtype).to(device)
    t = torch.rand(shape, dtype=dtype).to(device)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        primal, tangent = fwAD.unpack_dual(dual * dual)
    torch.testing.assert_close(primal, x * x)
    torch.testing.assert_close(tangent, 2 * x * t)
    return primal, tangent


@scenario(UNPACK, "plain_tensor", dtypes=["float16", "float32"],
          shapes=[(4,), (2, 2)], tags=["non_dual"],
          en="unpack_dual of a plain (non-dual) device tensor inside a level",
          zh="对非 dual 的普通设备张量调用 unpack_dual",
          expect_en="primal equals the input, tangent is None",
          expect_zh="primal 等于原始输入，tangent 为 None")
def unpack_dual_plain_tensor(device, dtype, shape=(4,)):
    import torch
    import torch.autograd.forward_ad as fwAD

    x = torch.rand(shape, dtype=dtype).to(device)
    with fwAD.dual_level():
        primal, tangent = fwAD.unpack_dual(x)
    assert tangent is None
    return primal, tangent


@scenario(UNPACK, "no_level", dtypes=["float32"], shapes=[(4,), (3, 1)], tags=["non_dual"],
          en="unpack_dual outside any forward-AD level",
          zh="在任何前向 AD 层级之外调用 unpack_dual",
          expect_en="returns the tensor itself and tangent None",
          expect_zh="返回张量本身，tangent 为 None")
def unpack_dual_no_level(device, dtype, shape=(4,)):
    import torch
    import torch.autograd.forward_ad as fwAD

    x = torch.rand(shape, dtype=dtype).to(device)
    primal, tangent = fwAD.unpack_dual(x)
    return primal, tangent
