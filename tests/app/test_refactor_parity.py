"""benchmarks/refactor_parity.py's comparison: a row's status, cause and evidence, and the
verdicts, count; a detail text alone does not."""

from __future__ import annotations

from support import benchmark


def _bench():
    return benchmark("refactor_parity")


def _row(api, status="pass", cause=None, evidence="device-compute", detail="ok"):
    return {"api": api, "variant": "v", "sample_set": "opinfo", "dtype": "float32",
            "status": status, "cause": cause, "evidence": evidence, "detail": detail}


def test_evidence_and_verdicts_count_a_detail_alone_does_not():
    p = _bench()
    base = {"rows": [_row("a"), _row("b", evidence="device-state"), _row("c")],
            "verdicts": {"a": "supported", "b": "supported", "c": "supported"}}
    mine = {"rows": [_row("a", detail="ok, 0.1 s"), _row("b", evidence="host-only"), _row("c")],
            "verdicts": {"a": "supported", "b": "device-independent", "c": "supported"}}
    d = p.compare(base, mine)
    assert [k[0] for k, _, _ in d["evidence_differs"]] == ["b"]
    assert d["verdicts_differ"] == {"b": ("supported", "device-independent")}
    assert [k[0] for k, _, _ in d["detail_differs"]] == ["a"]
    assert not d["status_or_cause_differ"] and not d["only_base"] and not d["only_mine"]


def test_the_sample_is_stratified_and_fixed():
    p = _bench()
    names = [f"torch.distributions.D{i}.mean" for i in range(50)] + ["torch.hub.get_dir"]
    a = p.stratified(names, 10, 0)
    assert a == p.stratified(names, 10, 0) and len(a) == 10 and "torch.hub.get_dir" in a
