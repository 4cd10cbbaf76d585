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
