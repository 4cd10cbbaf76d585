"""Layout and aliasing (issue 20 item 4): where an API's contract fixes layout, strides,
storage offset and storage sharing are compared — a device that makes every output
contiguous no longer passes ``Tensor.stride`` / ``Tensor.is_contiguous``."""

from __future__ import annotations

import torch

from torchparity.judge.compare import compare_outputs
from torchparity.results.models import Status
from torchparity.run.execute import execute
from torchparity.scenarios import opinfo as oi
from torchparity.scenarios.sources import member


def _contiguous_device(monkeypatch):
    """A device whose copy kernel makes every result contiguous (strides lost)."""
    orig = torch.Tensor.to

    def to(self, *args, **kwargs):
        out = orig(self, *args, **kwargs)
        return out.contiguous() if out.device.type != "cpu" else out
    monkeypatch.setattr(torch.Tensor, "to", to)


def test_stride_and_is_contiguous_catch_a_device_that_loses_strides(emu, monkeypatch):
    rows = {}
    for api in ("torch.Tensor.stride", "torch.Tensor.is_contiguous"):
        (sc,) = [s for s in member.scenarios(api, None) if "float32" in s.dtypes]
        ok, _ = execute(sc, "float32", emu)
        assert ok.status == "pass", (api, ok.detail)
        rows[api] = sc
    _contiguous_device(monkeypatch)
    for api, sc in rows.items():
        bad, _ = execute(sc, "float32", emu)
        assert bad.status == "fail", (api, bad.detail)


def test_layout_compare_sees_strides_offsets_and_aliasing():
    base = torch.randn(4, 3)
    view = base.t()
    assert compare_outputs(view, view.clone(), "cpu").status == Status.PASS  # values only
    j = compare_outputs(view, view.contiguous(), "cpu", layout=True)
    assert j.status == Status.FAIL and j.metric.name == "output_strides", j
    j = compare_outputs(base[1:], base.clone()[1:].clone(), "cpu", layout=True)
    assert j.status == Status.FAIL and j.metric.name == "output_storage_offset", j
    # an in-place result is its input: a device returning a copy loses the aliasing
    x = torch.ones(3)
    j = compare_outputs([x, x.add_(1)], [x, x.clone()], "cpu", layout=True)
    assert j.status == Status.FAIL and j.metric.name == "output_aliasing", j
    assert compare_outputs([x, x], [x, x], "cpu", layout=True).status == Status.PASS


def test_opinfo_layout_fixing_ops():
    from torch.testing._internal.common_methods_invocations import op_db

    by = {o.name: o for o in op_db}
    assert oi.layout_fixed(by["zeros_like"]) and oi.layout_fixed(by["transpose"])
    assert oi.layout_fixed(by["contiguous"]) and oi.layout_fixed(by["add"], "inplace")
    assert not oi.layout_fixed(by["add"])
