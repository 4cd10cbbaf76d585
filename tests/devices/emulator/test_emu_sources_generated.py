"""The generated scenario sources (module, optim, distribution, member) on an emulated
'npu' that refuses float64 addmm and log: real APIs, judged against the CPU."""

from __future__ import annotations

import json

from .helpers import run_python

PROFILE = """\
name: fp64-addmm-log-limited
device_type: npu
ops:
  aten.addmm: {dtypes: [float16, bfloat16, float32]}
  aten.log: {dtypes: [float16, bfloat16, float32]}
"""

CASES = [
    ("module", "torch.nn.Linear"),
    ("optim", "torch.optim.Adam"),
    ("optim", "torch.optim.lr_scheduler.StepLR.get_last_lr"),
    ("distribution", "torch.distributions.Normal.log_prob"),
    ("distribution", "torch.distributions.normal.Normal.rsample"),
    ("member", "torch.Tensor.element_size"),
    ("member", "torch.Tensor.storage_offset"),
    ("member", "torch.Tensor.get_device"),
    ("member", "torch.nn.Module.register_forward_hook"),
]


def test_generated_sources_on_the_emulated_device(tmp_path):
    (tmp_path / "limited.yaml").write_text(PROFILE, encoding="utf-8")
    out = run_python(f"""
        import json
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.scenarios.sources import source

        adapter = get_adapter("emu:{tmp_path / 'limited.yaml'}")
        assert adapter.unavailable_reason() is None
        adapter.setup()
        rows = []
        for src, api in {CASES!r}:
            for sc in source(src).scenarios(api, None):
                assert sc.source == src
                for dtype in sc.dtypes:
                    result, _ = execute(sc, dtype, adapter)
                    rows.append([api, sc.id, dtype, str(result.status),
                                 None if result.cause is None else str(result.cause),
                                 result.detail, result.emulated])
        print(json.dumps(rows))
        """, tmp_path, timeout=300)
    rows = json.loads(out.splitlines()[-1])
    assert {r[0] for r in rows} == {api for _, api in CASES}
    assert all(r[6] is True for r in rows)  # labelled emulated
    by = {(r[0], r[1], r[2]): r for r in rows}
    not_pass = {k: (r[3], r[4]) for k, r in by.items() if r[3] != "pass"}
    # the profile's refusals, and nothing else: Linear with a bias runs addmm, and
    # Normal.log_prob takes the log of the scale
    assert not_pass == {
        ("torch.nn.Linear", "input0.train", "float64"): ("unsupported", "dtype_limit"),
        ("torch.distributions.Normal.log_prob", "log_prob", "float64"): ("unsupported", "dtype_limit"),
    }, not_pass
    assert "not implemented for 'Double'" in by[("torch.nn.Linear", "input0.train", "float64")][5]
    # the float32 cases were compared, not just run
    assert "matches the CPU" in by[("torch.distributions.Normal.log_prob", "log_prob", "float32")][5]
    assert ("torch.optim.Adam", "config[default]", "float32") in by
