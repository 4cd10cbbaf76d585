"""benchmarks/own_footprint.py's count of the APIs a case observes (issue 48)."""

from __future__ import annotations

from support import benchmark


def _bench():
    return benchmark("own_footprint")


def test_a_case_observed_with_the_frames_footprint_counts_as_observing():
    """A case whose footprint stays the frames' (the run without the API ended early, the
    device refused the setup) but whose judged outcome changes without the API observes
    it: the API is not "left without an observing case"; one undecided is."""
    row = {"id": "c", "dtype": "float32", "status": "pass", "source": "nnutil"}
    report = {"apis": [
        {"name": "a", "scenarios": [dict(row, own={"method": "frames", "observes": True, "reason": "r"})]},
        {"name": "b", "scenarios": [dict(row, own={"method": "frames", "observes": None, "reason": "r"})]},
    ]}
    got = _bench().summarise(report)
    assert got["observed"] == {"a"}, got["observed"]
    assert got["by_source"]["nnutil"]["frames"] == 2
    assert got["by_source"]["nnutil"]["frames, observes"] == 1


def test_an_api_that_does_nothing_in_torch_is_counted_apart_never_as_observed():
    """A case of an API whose code is empty (``own.empty``) cannot observe it: the API stays
    among those without an observing case, counted apart, and the row is no hollow case."""
    row = {"id": "c", "dtype": "float32", "status": "pass", "source": "distpar"}
    report = {"apis": [
        {"name": "empty", "scenarios": [dict(row, own={"method": "takeaway", "observes": None,
                                                        "empty": True, "reason": "r"})]},
        {"name": "seen", "scenarios": [dict(row, own={"method": "takeaway", "observes": True, "reason": "r"})]},
    ]}
    got = _bench().summarise(report)
    assert got["observed"] == {"seen"} and got["empty"] == {"empty"}
    assert got["by_source"]["distpar"]["empty in torch"] == 1 and not got["hollow"]
    assert got["by_source"]["distpar"]["undecided"] == 0
