"""Every Case of every converted code-block source: its snippet runs on its own.

(Named ``test_source_*``: making the scenarios probes the cases on the CPU, autograd
included, so it runs after ``test_layout``'s emulated device registers, as the other
source tests do.)

The snippet a report shows for a :class:`~torchparity.scenarios.sources.base.Case` is the
body's source with the imports, helpers and constants of its module it reads
(``Case.snippet``). Each one is run here as a standalone script (``__main__``, no
torchparity import) on the CPU in the scenario's first dtype: it prints the answer, or
raises the exception the scenario expects on every device.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import warnings

import pytest

from torchparity.scenarios.sources import source
from torchparity.scenarios.sources.base import BlockSource, Case

# the sources whose tables are Case rows
CONVERTED = ("quant", "runtime", "devmod", "tooling", "fx", "nnutil", "member")


# distsvc: Case rows too, several per API (its own table); the cases that start processes
# (2-rank worlds, launched workers) keep the reproducer snippet: a world is needed
TABLED = ("distsvc",)


def _scenarios(name):
    src = source(name)
    if name in TABLED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scs = [sc for api in src.members() for sc in src.scenarios(api, None)]
        return [sc for sc in scs if "from torchparity.scenarios.sources import find" not in sc.code]
    assert isinstance(src, BlockSource)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [sc for api in src.members() for sc in src.scenarios(api, None)]


# each snippet is run in a child interpreter that never imports torchparity (its autograd
# runs would otherwise precede an emulated device's registration in this process); the
# snippets of one source go to one child, one fresh namespace each
CHILD = r"""
import contextlib, io, json, sys, warnings
import torch
warnings.filterwarnings("ignore")
failed = []
for item in json.load(open(sys.argv[1])):
    torch.manual_seed(0)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(item["code"], "<snippet " + item["api"] + ">", "exec"), {"__name__": "__main__"})
    except Exception as exc:
        if item["raises"] != type(exc).__name__:
            failed.append(item["api"] + ": " + type(exc).__name__ + ": " + str(exc)[:200])
        continue
    if item["raises"]:
        failed.append(item["api"] + ": expected " + item["raises"] + ", ran")
    elif not out.getvalue().strip():
        failed.append(item["api"] + ": printed nothing")
assert "torchparity" not in sys.modules
print(json.dumps(failed))
"""


@pytest.mark.slow  # every case of the source, run once more on the CPU
@pytest.mark.parametrize("name", CONVERTED + TABLED)
def test_every_snippet_runs_standalone(name, tmp_path):
    scs = _scenarios(name)
    # nearly every case gives a scenario (distsvc: those run in this process, 73 of 93)
    assert len(scs) >= len(source(name).members()) * (0.9 if name not in TABLED else 0.5)
    # set_devices takes CUDA devices only in torch 2.13: on the CPU its case raises by design
    # (a refusal on both sides is "both sides refused", no answer; issue 48)
    refuses_on_cpu = {"set-devices": "ValueError"}
    items = [dict(api=f"{sc.api} [{sc.id}]", code=sc.snippet('"cpu"'),
                  raises=sc.raises.type if sc.raises else refuses_on_cpu.get(sc.id)) for sc in scs]
    assert [i["api"] for i in items if "import torchparity" in i["code"]
            or "from torchparity" in i["code"]] == []
    (tmp_path / "snippets.json").write_text(json.dumps(items))
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "snippets.json")],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_a_snippet_is_the_body_with_the_helpers_it_reads():
    (sc,) = source("quant").scenarios("torch.ao.quantization.observer.MinMaxObserver", None)
    code = sc.snippet('"cpu"')
    assert "def quantization_observer_MinMaxObserver(device, dtype):" in code
    assert "class On:" in code and "def observed(on, obs, *feed):" in code  # what it reads
    assert "class WithBranch" not in code and "def fused(" not in code  # what it does not
    assert code.rstrip().endswith('print(quantization_observer_MinMaxObserver("cpu", torch.float32))')


def test_a_distsvc_snippet_brings_the_helpers_of_other_modules_it_reads():
    """A case of ``distsvc.rdzv`` reads helpers of ``distsvc.store`` (and that one
    ``sources.world.loopback_store``): the snippet holds their definitions, not an import;
    a case that starts processes keeps the reproducer."""
    sc = next(s for s in source("distsvc").scenarios(
        "torch.distributed.elastic.rendezvous.c10d_rendezvous_backend.C10dRendezvousBackend", None)
        if s.id == "c10d-tcp")
    code = sc.snippet('"cpu"')
    assert "def c10d_case(device, dtype):" in code and "def tcp_store(**kw):" in code
    assert "def loopback_store(" in code and "class WorldError(RuntimeError):" in code
    assert "from ." not in code and "from torchparity" not in code
    assert code.rstrip().endswith('print(c10d_case("cpu", torch.float32))')
    (world,) = source("distsvc").scenarios("torch.distributed.rpc.rpc_sync", None)
    assert "find('distsvc', 'torch.distributed.rpc.rpc_sync'" in world.code


def test_a_case_body_must_be_a_module_level_function():
    def local(device, dtype):
        return 1

    with pytest.raises(TypeError, match="module-level"):
        Case("torch.x", local)


@pytest.mark.parametrize("name", CONVERTED)
def test_aliases_are_one_case_with_the_api_as_parameter(name):
    src = source(name)
    aliased = [(api, src.case_of(api)) for api in src.members() if src.case_of(api).aliases]
    assert aliased
    checked = 0
    for api, case in aliased:
        assert src.case_of(case.api) is case  # the same row, not a copy
        scs, mains = src.scenarios(api, None), src.scenarios(case.api, None)
        if not scs or not mains:  # a name whose CPU run raises has no scenario (why_not says so)
            continue
        checked += 1
        sc, main = scs[0], mains[0]
        if "api" in inspect.signature(case.body).parameters:  # told which name it runs under
            assert f"api={api!r}" in sc.snippet('"cpu"')
        else:  # the same code answers for every name
            assert sc.snippet('"cpu"') == main.snippet('"cpu"')
    assert checked >= len(aliased) * 0.9
