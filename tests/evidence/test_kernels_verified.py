"""The shipped kernel facts agree with (op, chip) facts read by hand at the cited commit
(tests/data/kernels-hand-verified.yaml): the check that runs, its line, the list it checks,
its dtypes, or that no check refuses / the API refuses the chip. 100 % agreement."""

from pathlib import Path

import pytest
import yaml

from torchparity.app.profile_build import KERNELS, KERNELS_CANN
from torchparity.evidence.kernels import load_kernel_facts

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels-hand-verified.yaml"
VERIFIED = yaml.safe_load(DATA.read_text(encoding="utf-8"))["facts"]
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
    elif v["status"] == "unchecked":
        assert ck.dtypes is None and ck.unchecked
    else:
        assert ck.dtypes == [] and ck.refused
