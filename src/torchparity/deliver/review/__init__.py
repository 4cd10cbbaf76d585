"""First review of a contributor's issue or PR text (``torchparity review``).

Reads the text against the community template (deliver/review/review_rules.yaml): which
layout it follows (seed 001's long form or seed 000's short form), whether its sections,
tables, environment block and per-version x per-chip results are there and complete, whether
a run screenshot or log is, and whether the category it claims agrees with torchparity's own
analysis of each API (given by the caller: this package only reads text and renders).

Marked placeholders (【待补充：…】 / 【to fill: …】, as torchparity's own report writes for
what it cannot know: issue links, upstream tests without a test tree, results of torch
versions and chips it did not run) are not problems: they are listed apart as left to fill.

The verdict imitates the reviewer's comment in seed 001 ("社区任务交付件初审结论"):
现状分析 / 适配方案 / NPU 功能验证 / 最终结论, in Chinese and English, followed by every
problem found. Text quoted from the document is stripped of control characters.

document.py parses the text, checks.py finds its problems (one function per concern),
verdict.py builds the four parts of the verdict and renders it; ``triage`` runs them.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from ...results.models import Report
from .checks import (
    check_apis,
    check_blocks,
    check_categories,
    check_commands,
    check_contradictions,
    check_coverage,
    check_environment,
    check_evidence,
    check_expected,
    check_kinds,
    check_sections,
    check_sentences,
    check_tables,
    claims_by_api,
    list_placeholders,
    read_coverage,
)
from .document import API_RE, CATEGORY_RE, RULES_FILE, Document, Table, clean, load_rules, parse
from .facts import Facts
from .truth import check_snippets, check_truth, find_bundle, unchecked
from .verdict import LABELS, Findings, Problem, Review, as_dict, render, verdict

__all__ = [
    "API_RE", "CATEGORY_RE", "LABELS", "RULES_FILE", "Document", "Facts", "Findings", "Problem",
    "Review", "Table", "as_dict", "clean", "find_bundle", "load_rules", "parse", "render", "triage",
]


def triage(text: str, facts: Dict[str, Facts], *, versions: Optional[Sequence[str]] = None,
           chips: Optional[Sequence[str]] = None, rules: Optional[Dict[str, Any]] = None,
           doc: Optional[Document] = None, bundle: Optional[Report] = None) -> Review:
    """Review ``text``; ``facts`` is torchparity's analysis of each API the text names;
    ``bundle`` the report the text is checked against, claim by claim (truth.py): without
    one, a note says which checks could not be made."""
    rules = rules or load_rules()
    doc = doc or parse(text, rules)
    found = Findings(versions=list(versions or rules["coverage"]["versions"]),
                     chips=list(chips or rules["coverage"]["chips"]))
    found.problems += check_sections(doc, rules)
    found.problems += check_blocks(doc, rules)
    found.problems += check_apis(doc, facts)
    problems, found.warnings = check_categories(doc, facts)
    found.problems += problems
    found.problems += check_tables(doc, rules, found.pending)
    placeholders: Dict[str, list] = {}
    found.results_span, found.covered = read_coverage(doc, rules, placeholders)
    found.problems += check_coverage(doc, found.results_span, found.covered, found.versions,
                                     found.chips, placeholders, found.pending)
    problems, found.env_values = check_environment(doc, rules)
    found.problems += problems
    problems, found.evidence = check_evidence(text, found.covered)
    found.problems += problems
    found.claims = claims_by_api(doc, rules)
    found.problems += check_contradictions(doc, rules, found.claims)
    found.problems += check_kinds(found.claims, facts)
    found.problems += check_sentences(doc, rules)
    found.problems += check_commands(doc)
    found.problems += check_expected(doc, rules)
    found.problems += check_snippets(doc, doc.apis)
    if bundle is not None:
        problems, notes = check_truth(doc, bundle)
        found.problems += problems
        found.warnings += notes
    else:
        found.warnings.append(unchecked())
    list_placeholders(doc, found.pending)
    return verdict(doc, text, facts, rules, found)
