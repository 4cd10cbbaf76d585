"""`torchparity review FILE.md`: first review of a contributor's issue or PR text.

The text is read by deliver.review; the category it claims is compared with torchparity's
own analysis of each API it names: resolution and classification (api/), the operator
footprint of the registered scenarios run on the CPU (or taken from given report
bundles), and the same category rules `check` applies (judge/).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..api.classify import analyse, is_context_manager
from ..api.resolve import maybe_resolve
from ..deliver.review import Facts, Review, find_bundle, load_rules, parse, triage
from ..errors import InputError
from ..judge.verdict import categorise
from ..judge.verdict import load_rules as load_category_rules
from ..results.models import ApiReport, Report
from ..results.store import load_report


def read_text(path: str) -> str:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise InputError(f"{path}: not UTF-8 or GB18030 text")


def _from_report(api: ApiReport, name: str) -> Facts:
    a = api.analysis
    decided = api.scenarios and api.verdict.category not in (None, "undetermined")
    return Facts(api=name, category=api.verdict.category if decided else None,
                 rule=api.verdict.category_rule, involvement=a.device_involvement,
                 implementation=a.implementation, summary=a.summary,
                 harness=api.verdict.category_rule == "harness around user code",
                 note=None if decided else ("no scenarios registered: device involvement unknown"
                                            if not api.scenarios else "undetermined: no scenario was judged on the device"))


def our_facts(apis: Sequence[str], reports: Sequence[Report] = (), *, run: bool = True,
              category_rules: Optional[str] = None, timeout: float = 120.0) -> Dict[str, Facts]:
    """torchparity's analysis of each API: from ``reports`` when they hold it, else by
    running its registered scenarios on the CPU (``check``), else static analysis only."""
    rules = load_category_rules(category_rules)
    facts: Dict[str, Facts] = {}
    pending: List[str] = []
    for name in apis:
        resolved = maybe_resolve(name)
        if resolved is None:
            facts[name] = Facts(api=name, resolved=False, note="does not resolve")
            continue
        hit = next((a for r in reports for a in r.apis
                    if a.name == name or a.qualified_name == resolved.qualified_name), None)
        if hit is not None:
            facts[name] = _from_report(hit, name)
        else:
            pending.append(name)
    if pending and run:
        from .check import check

        report = check(pending, "cpu", timeout=timeout, category_rules=category_rules)
        for api in report.apis:
            facts[api.name] = _from_report(api, api.name)
    for name in pending:
        if name in facts:
            continue
        resolved = maybe_resolve(name)
        analysis = analyse(resolved)
        # not run: whether it calls back a callable is unknown (never from a parameter's
        # name); a context manager wraps the code of its body whatever it is given
        harness = is_context_manager(resolved.obj)
        rule = None
        if harness:  # a harness is categorised without knowing the footprint
            rule = categorise({"involvement": None, "implementation": analysis.implementation,
                               "harness": True}, rules)
        facts[name] = Facts(api=name, category=rule.id if rule else None, rule=rule.name if rule else None,
                            implementation=analysis.implementation, harness=harness,
                            summary=analysis.summary,
                            note=None if rule else "not run: device involvement unknown")
    return facts


def review(path: str, *, reports: Sequence[str] = (), versions: Optional[Sequence[str]] = None,
           chips: Optional[Sequence[str]] = None, run: bool = True,
           category_rules: Optional[str] = None) -> Review:
    text = read_text(path)
    rules = load_rules()
    doc = parse(text, rules)
    if not reports and (beside := find_bundle(path)):
        reports = [beside]  # an issue in a bundle's issues/ (or a report beside its report.json)
    loaded = [load_report(Path(r)) for r in reports]
    facts = our_facts(doc.apis, loaded, run=run, category_rules=category_rules)
    bundle = next((r for r in loaded if any(a.name in doc.apis or a.qualified_name in doc.apis for a in r.apis)),
                  None)
    return triage(text, facts, versions=versions, chips=chips, rules=rules, doc=doc, bundle=bundle)
