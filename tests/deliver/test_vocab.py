"""Every enum value a report can show has a zh and an en word in deliver/vocab.yaml."""

import inspect

import pytest

from torchparity.deliver.vocab import term, vocabulary
from torchparity.results.models import Cause, Status

VERDICT_STATUSES = ("supported", "partial", "unsupported", "broken", "unknown", "device-independent")
EVIDENCE = ("device-compute", "device-state", "host-only", "none")
IMPLEMENTATIONS = ("python_function", "python_class", "cpp_builtin", "aten_operator", "module")
KINDS = ("function", "class", "method", "module", "builtin", "op")
INVOLVEMENT = ("none", "indirect", "direct")
SOURCES = ("api", "callable", "scenario")
DOCS = ("own_page", "anchor", "absent", "unknown")
PRIORITIES = ("high", "medium", "low")


@pytest.mark.parametrize("group, values", [
    ("scenario_status", [s.value for s in Status]),
    ("cause", [c.value for c in Cause]),
    ("verdict_status", VERDICT_STATUSES),
    ("implementation", IMPLEMENTATIONS),
    ("kind", KINDS),
    ("involvement", INVOLVEMENT),
    ("footprint_source", SOURCES),
    ("docs_status", DOCS),
    ("priority", PRIORITIES),
    ("evidence", EVIDENCE),
])
def test_every_value_has_both_languages(group, values):
    table = vocabulary()[group]
    for value in values:
        assert set(table[value]) == {"en", "zh"}, (group, value)
        assert table[value]["zh"] != value and table[value]["zh"].strip(), (group, value)
    assert term(group, values[0], "zh") == table[values[0]]["zh"]


def test_verdict_statuses_are_those_decide_gives():
    from torchparity.judge.verdict import DEVICE_INDEPENDENT, decide

    source = inspect.getsource(decide)
    given = set(__import__("re").findall(r'status = "(\w+)"', source))
    if "status = DEVICE_INDEPENDENT" in source:
        given.add(DEVICE_INDEPENDENT)
    assert given == set(VERDICT_STATUSES)


def test_every_scenario_source_has_both_languages():
    from torchparity.scenarios.sources import all_sources

    table = vocabulary()["scenario_source"]
    for src in all_sources():
        assert set(table.get(src.name, {})) == {"en", "zh"}, src.name
        assert table[src.name]["zh"] != src.name, src.name
