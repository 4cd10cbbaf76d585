"""The hand-read sample of issue 48 (item 7) is data: well-formed, and drawn, not chosen.

``tests/data/hand-read-48.yaml`` holds a reviewer's reading of 40 vendor-listed APIs, before
and after taking the API away, and now (re-read after the follow-ups); its API list must be
exactly what ``benchmarks/hand_sample.py --seed 48 --n 40`` draws, so the sample cannot be picked by hand.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml
from support import benchmark

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "hand-read-48.yaml"
CLASSES = ("strong", "weak", "hollow", "wrong", "undetermined")
RUNS = ("before", "after", "now")
# readings after "now": each of a commit of its own, every API read (or carried, and said so)
LATER = ("reread", "final")


def _reading():
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def _hand_sample():
    return benchmark("hand_sample")


def test_reading_is_well_formed():
    doc = _reading()
    assert doc["seed"] == 48 and doc["n"] == 40 and doc["torch_version"] == "2.13.0"
    assert doc["draw"] == "python benchmarks/hand_sample.py --seed 48 --n 40"
    assert set(doc["classes"]) == set(CLASSES)
    runs = RUNS + tuple(r for r in LATER if r in doc["runs"])
    for run in runs:
        assert re.fullmatch(r"[0-9a-f]{40}", doc["runs"][run]["commit"]), run
    apis = doc["apis"]
    assert len(apis) == doc["n"] and len({a["name"] for a in apis}) == doc["n"]
    for a in apis:
        for run in runs:
            assert a[run]["class"] in CLASSES, (a["name"], run)
            assert len(a[run]["reason"].strip()) > 20, (a["name"], run)
        # every API left wrong or hollow after the change names what would fix it
        if a["after"]["class"] in ("wrong", "hollow"):
            assert a.get("fix", "").strip(), a["name"]
        # the third and later readings are of the commit the run names, and one still short of strong
        # (wrong, hollow or weak) names its fix: the file and the rule
        for run in runs[2:]:
            assert a[run]["commit"] == doc["runs"][run]["commit"], (a["name"], run)
            if a[run]["class"] in ("wrong", "hollow", "weak"):
                assert len(a[run].get("fix", "").strip()) > 20, (a["name"], run)
                assert re.search(r"[\w/]+\.py", a[run]["fix"]), (a["name"], run)  # names a file
    for run in runs:  # the shares are the counts of the classes read
        counted = Counter(a[run]["class"] for a in apis)
        assert doc["shares"][run] == {c: counted.get(c, 0) for c in CLASSES}, run


def test_sample_is_the_seeded_draw():
    doc = _reading()
    drawn = _hand_sample().draw(doc["seed"], doc["n"], torch_version=doc["torch_version"])
    assert [a["name"] for a in doc["apis"]] == drawn
    # uniform and seeded: another seed draws another sample from the same list
    assert _hand_sample().draw(doc["seed"] + 1, doc["n"], torch_version=doc["torch_version"]) != drawn

