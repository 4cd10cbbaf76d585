"""Issue 20 ("For which dtypes?"): every source whose APIs take float16 / bfloat16 asks
them (before, module, distribution, nnutil, quant and distpar were float32 and float64
only; the dtypes an Ascend user trains in were never run)."""

from __future__ import annotations

import warnings

import pytest

from torchparity.api.resolve import maybe_resolve
from torchparity.scenarios import sources

CASES = [
    ("module", "torch.nn.Sigmoid"),
    ("optim", "torch.optim.Adam"),
    ("distribution", "torch.distributions.normal.Normal.log_prob"),
    ("nnutil", "torch.nn.functional.lp_pool1d"),
    ("quant", "torch.ao.quantization.fake_quantize.FixedQParamsFakeQuantize"),
    ("distpar", "torch.nn.parallel.data_parallel"),
]


@pytest.mark.slow  # each case asks every source on the CPU: ~20 s apiece on a loaded machine
@pytest.mark.parametrize("source,api", CASES, ids=[c[0] for c in CASES])
def test_low_precision_dtypes_are_asked(source, api):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolved = maybe_resolve(api)
        assert resolved is not None, api
        offer = sources.offer(api, resolved.obj)
    dtypes = {d for sc in offer.scenarios if sc.source == source for d in sc.dtypes}
    assert {"float16", "bfloat16", "float32"} <= dtypes, (api, sorted(dtypes))
    assert all(sc.golden is not None for sc in offer.scenarios
               if sc.source == source and sc.compare == "values" and sc.raises is None)
