"""Issue 45, second round, item 5: a world result in the wrong rank order names the ranks
(before: ``state`` on an object collective's strings, a bare value ``mismatch`` on tensors)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from torchparity.judge.judgement import Judgement
from torchparity.judge.ranks import name_ranks, rank_order
from torchparity.results.models import Cause, Status


def _objs(order):
    return repr([{"rank": r, "values": [float(r), 1.5]} for r in order])


def test_a_gathered_object_list_in_the_wrong_order_names_the_ranks():
    cpu = [_objs([0, 1]), _objs([0, 1])]
    dev = [_objs([1, 0]), _objs([0, 1])]
    said = rank_order(cpu, dev)
    assert said and "rank 0's result: place 0 holds rank 1's part, place 1 holds rank 0's part" in said
    j = name_ranks(Judgement(Status.FAIL, Cause.STATE, "'[{...' differs"), cpu, dev)
    assert j.cause == Cause.MISMATCH and j.detail.startswith("wrong rank order: rank 0's result")


def test_tensors_gathered_or_scattered_to_the_wrong_rank():
    a, b = torch.arange(4.0), torch.arange(4.0) + 10
    # all_gather_into_tensor concatenated in another order on rank 1
    said = rank_order([torch.cat([a, b]), torch.cat([a, b])], [torch.cat([a, b]), torch.cat([b, a])])
    assert said.startswith("rank 1's result: place 0 holds rank 1's part")
    # a scatter that sent each rank the other's chunk
    assert rank_order([a, b], [b, a]) == ("rank 0 got what rank 1 gets on the CPU; "
                                          "rank 1 got what rank 0 gets on the CPU")


def test_other_differences_are_left_as_they_are():
    a = torch.arange(4.0)
    assert rank_order([a, a + 1], [a, a + 2]) is None  # a wrong value, not a wrong place
    assert rank_order([a, a], [a, a]) is None
    j = Judgement(Status.FAIL, Cause.MISMATCH, "values differ")
    assert name_ranks(j, [a, a + 1], [a, a + 3]) is j


REVERSE = '''
FAULTS = {"allgather-reversed": "all_gather hands the ranks' tensors back in reverse rank order"}
def wrap(fault, op, call, fire=None):
    return None
def collective(fault, name, outputs, inputs, rank, size):
    if fault == "allgather-reversed" and name == "allgather":
        for group in outputs:
            if isinstance(group, (list, tuple)) and len(group) > 1:
                saved = [t.clone() for t in group]
                for t, s in zip(group, reversed(saved)):
                    t.copy_(s)
'''


@pytest.mark.slow  # a 2-rank world on the emulated device, ~1 min
def test_a_world_all_gather_object_in_reverse_order_names_the_ranks(tmp_path):
    from torchparity.devices.emulator import faults

    mod = tmp_path / "reverse.py"
    mod.write_text(REVERSE)
    out = tmp_path / "o"
    env = dict(os.environ, **{faults.MODULE_ENV: str(mod), faults.ENV: "allgather-reversed"})
    r = subprocess.run([sys.executable, "-c", "from torchparity.cli import main; main()", "check",
                        "torch.distributed.all_gather_object", "--device", "emu:allow-all", "--dtypes",
                        "float32", "--out", str(out), "--no-html", "--gentest", "none"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    rows = [s for a in json.loads((out / "report.json").read_text())["apis"] for s in a["scenarios"]
            if s["status"] == "fail"]
    assert rows, r.stdout[-2000:]
    assert all(s["cause"] == "mismatch" and "wrong rank order" in s["detail"] for s in rows), \
        [(s["cause"], s["detail"][:200]) for s in rows]
