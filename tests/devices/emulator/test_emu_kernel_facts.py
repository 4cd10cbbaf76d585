"""What the shipped A2 profile's kernel facts make of real calls (issue 44): the foreach
kernels take the tensor list's dtypes (optimizers step in float16/bfloat16), the output
tensor's check refuses logaddexp float64, op-plugin's own check refuses
upsample_bilinear2d float64 — each refusal citing the lines that decide it."""

from __future__ import annotations

import yaml

from torchparity.devices.profiles import load_profile

from .helpers import run_python

ASCEND = ("ascend-a2", "ascend-a2-latest", "ascend-a3", "ascend-950dt")


def test_optimizer_steps_and_vendor_refusals_on_the_emulated_a2(tmp_path):
    out = run_python("""
        import torch
        from torchparity.devices.emulator import activate
        from torchparity.devices.profiles import load_profile
        from torchparity.results.error_rules import classify_exception
        activate(load_profile("ascend-a2"))

        def outcome(fn):
            try:
                fn()
                return "ok"
            except Exception as exc:
                verdict = classify_exception(type(exc).__name__, str(exc))
                return f"{verdict[1].value if verdict else 'unclassified'}: {exc}".replace("\\n", " ")

        def step(opt, dtype):
            torch.manual_seed(0)
            p = torch.nn.Parameter(torch.randn(4, 3, dtype=dtype, device="npu"))
            o = opt([p], lr=0.01)
            (p.float() ** 2).sum().backward()
            o.step()

        for opt in (torch.optim.AdamW, torch.optim.Adam, torch.optim.Adagrad, torch.optim.RAdam):
            for dtype in (torch.float16, torch.bfloat16):
                print(opt.__name__, dtype, outcome(lambda: step(opt, dtype)))
        x = torch.randn(2, 3, dtype=torch.float64)
        print("logaddexp", outcome(lambda: torch.logaddexp(x.to("npu"), x.to("npu"))))
        img = torch.randn(1, 1, 4, 4, dtype=torch.float64)
        print("upsample", outcome(lambda: torch.nn.functional.interpolate(
            img.to("npu"), scale_factor=2, mode="bilinear", align_corners=False)))
        """, tmp_path, timeout=300)
    lines = out.splitlines()
    for opt in ("AdamW", "Adam", "Adagrad", "RAdam"):
        for dtype in ("torch.float16", "torch.bfloat16"):
            assert f"{opt} {dtype} ok" in lines, out
    logaddexp = next(line for line in lines if line.startswith("logaddexp "))
    upsample = next(line for line in lines if line.startswith("upsample "))
    # refused as the chip's dtype limit, in the vendor's own words: aclnn's check on the
    # output tensor, op-plugin's TORCH_CHECK (the profile's refusals)
    assert logaddexp.startswith("logaddexp dtype_limit:"), logaddexp
    assert "Tensor out not implemented for DT_DOUBLE" in logaddexp and "aclnn_logaddexp.cpp:64" in logaddexp
    assert upsample.startswith("upsample dtype_limit:"), upsample
    assert "upsample_binlinear_2d not support torch.fp64 dtypes" in upsample, upsample


def test_profiles_carry_the_refusals_with_the_vendor_s_lines():
    a2 = load_profile("ascend-a2")
    assert not a2.allows("aten.logaddexp", "float64") and a2.allows("aten.logaddexp", "float32")
    (out,) = a2.ops["aten.logaddexp"].refusals
    assert "float64" in out.dtypes and out.message.startswith("Tensor out not implemented for %s")
    assert "aclnn_logaddexp.cpp:64" in out.source and "result_type(self, other)" in out.source
    assert not a2.allows("aten.upsample_bilinear2d", "float64") and a2.allows("aten.upsample_bilinear2d", "float32")
    (up,) = a2.ops["aten.upsample_bilinear2d"].refusals
    assert up.dtypes == ["float64"] and up.message == "upsample_binlinear_2d not support torch.fp64 dtypes"
    assert "UpsampleBilinear2dKernelNpuOpApi.cpp:" in up.source


def test_every_foreach_entry_lists_the_tensor_list_s_dtypes():
    """In every shipped Ascend profile and facts file, each aten._foreach_* fact is the list
    checked on the tensor list (all of them take float32, float16 and bfloat16), never the
    scalar argument's (float32/float64, int8/int64)."""
    from torchparity.app.profile_build import KERNELS, KERNELS_CANN

    seen = 0
    for name in ASCEND:
        profile = load_profile(name)
        for op, rule in profile.ops.items():
            if op.startswith("aten._foreach_") and rule.source and "kernel aclnn" in rule.source:
                seen += 1
                assert {"float32", "float16", "bfloat16"} <= set(rule.dtypes or ()), (name, op, rule.dtypes)
    assert seen >= 4 * 30
    for path in (KERNELS, *KERNELS_CANN.values()):
        ops = yaml.safe_load(path.read_text(encoding="utf-8"))["ops"]
        for op, fact in ops.items():
            if op.startswith("aten._foreach_"):
                for chip in fact["chips"].values():
                    assert {"float32", "float16", "bfloat16"} <= set(chip["dtypes"]), (path.name, op)
