"""The shipped kernel facts agree with (op, chip) facts read by hand at the cited commit
(tests/data/kernels-hand-verified.yaml): the check that runs, its line, the list it checks,
its dtypes, or that no check refuses / the API refuses the chip. 100 % agreement, except on the
cells of the seeded random sample (issue 44) that the reader found the extraction wrong on: those
carry ``extraction_wrong_at`` and are strict expected failures, so a fixed extraction flips them."""

import hashlib
from pathlib import Path

import pytest
import yaml
from support import benchmark

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
    assert {v["status"] for v in VERIFIED} == {"list", "unchecked", "refused", "no_fact"}


def _cell(v):
    marks = ()
    if v.get("extraction_wrong_at"):
        marks = pytest.mark.xfail(strict=True, reason=f"extraction at {v['extraction_wrong_at']}: {v['wrong']}")
    return pytest.param(v, marks=marks, id=f"{v['op']}-{v['chip']}-{v['facts']}")


def test_the_random_sample_is_large_and_covers_every_repository_and_chip():
    drawn = [v for v in VERIFIED if "drawn" in v]
    assert len(drawn) >= 100
    assert {v["repo"] for v in drawn} == {r for f in FACTS.values() for r in {k.kernel.split(" ")[0] for k in f.ops.values()}}
    assert {(v["facts"], v["chip"]) for v in drawn} == {(f, c) for f in FILES for c in ("dav_2201", "dav_3510")}
    # every wrong cell says why and where
    assert all(v["wrong"] for v in drawn if v.get("extraction_wrong_at"))


def test_the_random_sample_is_the_seeded_draw():
    """The sampled cells are exactly what the seed draws from the facts files they were drawn
    from (not chosen): checked while those files are unchanged."""
    spec = _DATA["drawn_from"]
    now = {n: hashlib.sha256(p.read_bytes()).hexdigest() for n, p in FILES.items()}
    if now != spec["facts_sha256"]:
        pytest.skip("the facts files changed since the draw; rerun benchmarks/kernel_hand_sample.py to redraw")
    mod = benchmark("kernel_hand_sample", "kernel_hand_sample")
    drawn = [(c["op"], c["chip"], c["facts"]) for c in mod.draw(spec["seed"], spec["n"])]
    assert drawn == [(v["op"], v["chip"], v["facts"]) for v in VERIFIED if "drawn" in v]


@pytest.mark.parametrize("v", [_cell(v) for v in VERIFIED])
def test_extraction_agrees_with_the_reader(v):
    facts = FACTS[v["facts"]]
    assert facts.repos[v["repo"]] == v["commit"], "the facts were read at another commit"
    if v["status"] == "no_fact":
        # the API's file checks no dtype (it forwards to a generated inner API): no fact for the chip
        op = facts.ops.get(v["op"])
        assert op is None or v["chip"] not in op.chips, op
        return
    op = facts.ops[v["op"]]
    assert op.kernel == f"{v['repo']} {v['path']}"
    ck = op.chips[v["chip"]]
    assert v["check_line"] is not None, "the reader found the check outside the kernel file"
    path = v.get("check_path", v["path"])
    where = f"{v['repo']} {path}:{v['check_line']}"
    # the fact as the profile applies it: an output checked against its own list, with the dtype
    # op-plugin gives it (result_type(self, other): the input's), refuses the inputs whose output
    # fails that check, and then that check is the one that decides
    source, dtypes = ck.source, ck.dtypes
    if dtypes and ck.out is not None and op.out_dtype is not None:
        kept = [d for d in dtypes if op.out_dtype.of(d) in ck.out.dtypes]
        if kept != dtypes:
            source, dtypes = ck.out.source, kept
    # the fact cites its check (path:check (LIST, :list)) or, where a selector picks the list,
    # the list itself (path:list)
    cites_list = v["status"] == "list" and source == f"{v['repo']} {path}:{v['list_line']}"
    assert cites_list or source == where or source.startswith(where + " "), source
    if v["status"] == "list":
        assert ck.unchecked is None and ck.refused is None and ck.undecided is None
        assert cites_list or f", :{v['list_line']})" in source
        assert sorted(dtypes) == sorted(v["dtypes"])
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
