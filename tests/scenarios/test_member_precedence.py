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


def test_a_documented_refusal_is_declared_not_compared_as_a_string(emu):
    """Issue 48 item 4: Module.get_extra_state / set_extra_state refuse on every device (a
    module with no extra state); their cases turned the refusal into a string that matched.
    Now they declare the documented refusal (registry.Raises): a pass says the device
    refuses as documented, and a device that returned would fail."""
    from torchparity.run.execute import execute

    for api in ("torch.nn.Module.get_extra_state", "torch.nn.Module.set_extra_state"):
        from torchparity.scenarios import sources

        (sc,) = sources.source("member").scenarios(api, None)
        assert sc.raises is not None and sc.raises.type == "RuntimeError", api
        result, _ = execute(sc, "float32", emu)
        assert result.status == "pass" and result.detail.startswith("raised as expected"), result.detail
