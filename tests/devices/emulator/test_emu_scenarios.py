"""The seed scenario suites end to end on an emulated 'npu' with float64 dot/norm refused."""

from __future__ import annotations

import json

import pytest

from .helpers import run_python

PROFILE = """\
name: fp64-limited
device_type: npu
ops:
  aten.dot: {dtypes: [float16, bfloat16, float32]}
  aten.linalg_vector_norm: {dtypes: [float16, bfloat16, float32]}
features:
  itt: false
"""


def test_brief_gradcheck_case(tmp_path):
    out = run_python("""
        import torch
        x = torch.rand(10, dtype=torch.float64).to("npu").requires_grad_()
        print(torch.autograd.gradcheck(lambda x: x.mul(5), (x,), fast_mode=False))
        try:
            torch.autograd.gradcheck(lambda x: x.mul(5), (x,), fast_mode=True)
        except RuntimeError as exc:
            print(exc)
        """, tmp_path, PROFILE)
    first, second = out.splitlines()
    assert first == "True" and "not implemented for 'Double'" in second


@pytest.mark.slow  # 7-13 s: run by .ci/run in the slow suite, keeping the default run under 10 min
def test_seed_suites_run_end_to_end(tmp_path):
    (tmp_path / "limited.yaml").write_text(PROFILE, encoding="utf-8")
    out = run_python(f"""
        import json
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.scenarios.registry import load_suites, registered_apis, scenarios_for

        adapter = get_adapter("emu:{tmp_path / 'limited.yaml'}")
        assert adapter.unavailable_reason() is None
        adapter.setup()
        load_suites()
        rows = []
        for api in registered_apis():
            for sc in scenarios_for([api]):
                for dtype in sc.dtypes:
                    result, entries = execute(sc, dtype, adapter, footprint=True)
                    rows.append([api, sc.id, dtype, str(result.status),
                                 None if result.cause is None else str(result.cause),
                                 result.detail,
                                 sorted({{e.op for e in entries}})])
        print(json.dumps(rows))
        """, tmp_path, timeout=300)
    rows = json.loads(out.splitlines()[-1])
    apis = {r[0] for r in rows}
    assert len(apis) == 5, apis
    by_case = {(r[0].rsplit(".", 1)[-1], r[1], r[2]): r for r in rows}
    refused = {k: r for k, r in by_case.items() if r[3] != "pass"}
    expected = {
        ("gradcheck", "fast_mul", "float64"): ("unsupported", "dtype_limit"),
        ("gradcheck", "fast_exp", "float64"): ("unsupported", "dtype_limit"),
        ("gradgradcheck", "fast_mul", "float64"): ("unsupported", "dtype_limit"),
        # the forward-AD checks normalise a random float64 vector on the device too
        # (_test_undefined_forward_mode -> vec.norm()), even in slow mode
        ("gradcheck", "check_forward_ad", "float64"): ("unsupported", "dtype_limit"),
        ("gradgradcheck", "check_fwd_over_rev", "float64"): ("unsupported", "dtype_limit"),
        ("emit_itt", "enabled", "float32"): ("unsupported", "build_config"),
        ("emit_itt", "record_shapes", "float32"): ("unsupported", "build_config"),
    }
    assert {k: (r[3], r[4]) for k, r in refused.items()} == expected, refused
    assert "not implemented for 'Double'" in by_case[("gradcheck", "fast_mul", "float64")][5]
    assert "compiled without ITT" in by_case[("emit_itt", "enabled", "float32")][5]
    ops = by_case[("gradcheck", "slow_mul", "float64")][6]
    assert any("mul" in op for op in ops), ops  # the footprint recorder sees device ops
