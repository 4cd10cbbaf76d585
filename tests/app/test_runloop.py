"""The one run loop of check, sweep and the vendor list, and no command naming a source."""

import ast
from pathlib import Path

import pytest

from torchparity.app import runloop
from torchparity.devices import get_adapter
from torchparity.run.pool import CaseEvent
from torchparity.scenarios import sources
from torchparity.scenarios.sources import SOURCES

APP = Path(runloop.__file__).resolve().parent


class FakePool:
    def __init__(self, init, stop_after=None):
        self.init, self.stop_after, self.warmups = init, stop_after, [0.25]

    def run(self, cases, timeouts, on_event):
        for i, _ in enumerate(cases):
            if self.stop_after is not None and i == self.stop_after:
                raise KeyboardInterrupt()
            on_event(CaseEvent(i, "crash" if i == 1 else "result", detail="died",
                               payload={"status": "pass", "detail": f"case {i}"}, seconds=0.1))


def _run(monkeypatch, cases, stop_after=None, jobs=2):
    made = {}

    def make(executor, init, jobs=None, **kw):
        made.update(init=init, jobs=jobs)
        return FakePool(init, stop_after)

    monkeypatch.setattr(runloop, "make_executor", make)
    got = []
    ran = runloop.run_cases(get_adapter("cpu"), cases, [1.0] * len(cases),
                            lambda i, a, s: got.append((i, a.status, a.detail)), jobs=jobs)
    return ran, got, made


def test_every_event_reaches_the_command_as_an_answer(monkeypatch):
    ran, got, made = _run(monkeypatch, [{"kind": "source"}, {"kind": "source"}, {"kind": "source"}])
    assert got == [(0, "pass", "case 0"), (1, "crash", "died"), (2, "pass", "case 2")]
    assert not ran.interrupted and ran.warmups == [0.25]
    assert made["jobs"] == 2 and made["init"]["device"] == "cpu"
    assert made["init"]["options"]["threads"] >= 1 and "warm" not in made["init"]


def test_the_sources_warm_up_and_the_jobs_cap_are_the_same_for_every_command(monkeypatch):
    ran, _, made = _run(monkeypatch, [{"kind": "opinfo"}], jobs=4)
    assert made["jobs"] == 1  # never more workers than cases
    assert made["init"]["warm"] == sources.warm_for([{"kind": "opinfo"}]) != []


def test_an_interruption_keeps_what_ran_and_is_handed_back(monkeypatch):
    ran, got, _ = _run(monkeypatch, [{"kind": "source"}] * 3, stop_after=1)
    assert [i for i, *_ in got] == [0] and isinstance(ran.stopped, KeyboardInterrupt)


def _app_modules():
    return sorted(APP.glob("*.py"))


@pytest.mark.parametrize("path", _app_modules(), ids=lambda p: p.name)
def test_no_command_names_a_source(path):
    """app/ asks what the Source interface declares: it imports no source module and
    compares with no source's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            mod = node.module
            assert not any(mod.endswith(f"scenarios.sources.{s}") for s in SOURCES), (path.name, mod)
            if mod.endswith("scenarios.sources"):
                assert not set(a.name for a in node.names) & set(SOURCES), (path.name, node.lineno)
        if isinstance(node, ast.Compare):  # sc.source == "opinfo", src.name in (...)
            parts = [node.left, *node.comparators]
            if any(isinstance(p, ast.Attribute) and p.attr in ("source", "name") for p in parts):
                named = {c.value for p in parts for c in ast.walk(p)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str)}
                assert not named & set(SOURCES), (path.name, node.lineno, named & set(SOURCES))
