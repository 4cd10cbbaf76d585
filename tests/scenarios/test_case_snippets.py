"""Every Case of every converted code-block source: its snippet runs on its own.

The snippet a report shows for a :class:`~torchparity.scenarios.sources.base.Case` is the
body's source with the imports, helpers and constants of its module it reads
(``Case.snippet``). Each one is run here as a standalone script (``__main__``, no
torchparity import) on the CPU in the scenario's first dtype: it prints the answer, or
raises the exception the scenario expects on every device.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest
import torch

from torchparity.scenarios.sources import source
from torchparity.scenarios.sources.base import BlockSource, Case

# the sources whose tables are Case rows
CONVERTED = ("quant",)


def _scenarios(name):
    src = source(name)
    assert isinstance(src, BlockSource)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [sc for api in src.members() for sc in src.scenarios(api, None)]


@pytest.mark.parametrize("name", CONVERTED)
def test_every_snippet_runs_standalone(name):
    scs = _scenarios(name)
    assert len(scs) >= len(source(name).members()) * 0.9  # nearly every case gives a scenario
    failed = []
    for sc in scs:
        code = sc.snippet('"cpu"')
        assert "torchparity" not in code, sc.api
        torch.manual_seed(0)
        out = io.StringIO()
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(out):
                warnings.simplefilter("ignore")
                exec(compile(code, f"<snippet {sc.api}>", "exec"), {"__name__": "__main__"})
        except Exception as exc:  # noqa: BLE001 - the snippet's own answer, checked below
            if sc.raises is None or type(exc).__name__ != sc.raises.type:
                failed.append(f"{sc.api} [{sc.id}]: {type(exc).__name__}: {exc}"[:300])
            continue
        if sc.raises is not None:
            failed.append(f"{sc.api} [{sc.id}]: expected {sc.raises.type}, ran")
        elif not out.getvalue().strip():
            failed.append(f"{sc.api} [{sc.id}]: printed nothing")
    assert failed == []


def test_a_case_body_must_be_a_module_level_function():
    def local(device, dtype):
        return 1

    with pytest.raises(TypeError, match="module-level"):
        Case("torch.x", local)


@pytest.mark.parametrize("name", CONVERTED)
def test_aliases_are_one_case_with_the_api_as_parameter(name):
    src = source(name)
    aliased = [(api, src.case_of(api)) for api in src.members() if src.case_of(api).aliases]
    for api, case in aliased:
        sc = src.scenarios(api, None)[0]
        assert f"api={api!r}" in sc.snippet('"cpu"')
        assert src.case_of(case.api) is case  # the same row, not a copy
