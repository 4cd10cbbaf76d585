"""member yields to opinfo only where OpInfo has the API's own entry (``Source.covers``):
Tensor members OpInfo reaches only by footprint keep their member rows, as before the
precedence moved into ``offer``."""

from __future__ import annotations

import warnings

import pytest

from torchparity.api.resolve import maybe_resolve
from torchparity.scenarios.sources import offer, source


@pytest.mark.parametrize("api", ["torch.Tensor.hardshrink", "torch.Tensor.slogdet",
                                 "torch.Tensor.bernoulli_"])
def test_a_member_opinfo_reaches_by_footprint_keeps_its_row(api):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = offer(api, maybe_resolve(api).obj)
    by = {sc.source for sc in found.scenarios}
    assert {"opinfo", "member"} <= by
    assert not source("opinfo").covers(api)
    assert found.tried["member"] == "1 scenario(s)"


def test_an_api_with_its_own_entry_is_opinfo_s_alone():
    api = "torch.Tensor.add"
    found = offer(api, maybe_resolve(api).obj)
    assert {sc.source for sc in found.scenarios} == {"opinfo"}
    assert source("opinfo").covers(api)
