"""The shipped kernel facts agree with (op, chip) facts read by hand at the cited commit
(tests/data/kernels-hand-verified.yaml): the check that runs, its line, the list it checks,
its dtypes, or that no check refuses / the API refuses the chip. 100 % agreement."""

from pathlib import Path

import pytest
import yaml

from torchparity.app.profile_build import KERNELS, KERNELS_CANN
from torchparity.evidence.kernels import load_kernel_facts

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels-hand-verified.yaml"
_DATA = yaml.safe_load(DATA.read_text(encoding="utf-8"))
VERIFIED = _DATA["facts"]
OP_HOST = _DATA["op_host"]
FILES = {"newest": KERNELS, "cann8.5.0": KERNELS_CANN["8.5.0"]}
FACTS = {name: load_kernel_facts(path) for name, path in FILES.items()}


def test_the_sample_is_large_and_covers_both_chips_and_releases():
    assert len(VERIFIED) >= 40
    assert {v["chip"] for v in VERIFIED} == {"dav_2201", "dav_3510"}
    assert {v["facts"] for v in VERIFIED} == set(FILES)
    assert {v["status"] for v in VERIFIED} == {"list", "unchecked", "refused"}


@pytest.mark.parametrize("v", VERIFIED, ids=lambda v: f"{v['op']}-{v['chip']}-{v['facts']}")
def test_extraction_agrees_with_the_reader(v):
    facts = FACTS[v["facts"]]
    assert facts.repos[v["repo"]] == v["commit"], "the facts were read at another commit"
    op = facts.ops[v["op"]]
    assert op.kernel == f"{v['repo']} {v['path']}"
    ck = op.chips[v["chip"]]
    where = f"{v['repo']} {v['path']}:{v['check_line']}"
    assert ck.source == where or ck.source.startswith(where + " "), ck.source
    if v["status"] == "list":
        assert ck.unchecked is None and ck.refused is None and ck.undecided is None
        assert f", :{v['list_line']})" in ck.source
        assert sorted(ck.dtypes) == sorted(v["dtypes"])
        # a dtype promoted before the check (bool as int8) is taken where its target is
        assert (ck.promoted or None) == v.get("promoted")
        for frm, to in (v.get("promoted") or {}).items():
            assert f" + {frm} as {to} at :{v['promoted_line']}" in ck.source
    elif v["status"] == "unchecked":
        assert ck.dtypes is None and ck.unchecked
    else:
        assert ck.dtypes == [] and ck.refused


@pytest.mark.parametrize("v", OP_HOST, ids=lambda v: f"{v['path'].rsplit('/', 1)[-1]}-{v['soc']}-{v['facts']}")
def test_per_soc_registration_agrees_with_the_reader(v):
    facts = FACTS[v["facts"]]
    assert facts.repos[v["repo"]] == v["commit"], "the facts were read at another commit"
    where = f"{v['repo']} {v['path']}"
    hosts = [h for k in facts.ops.values() for h in (k.op_host or []) if h.source.startswith(where + ":")]
    assert hosts, f"no op carries {where}"
    for h in hosts:
        assert h.source == f"{where}:{v['first_input_line']}"
        assert h.inputs == v["top_level"]
        assert v["soc"] in h.socs
        assert h.soc_inputs[v["soc"]] == v["inputs"]
        assert h.soc_sources[v["soc"]] == f"{where}:{v['add_config_line']}"
