"""The problem finders: one per concern, each reading the parsed ``Document``.

``triage`` calls them in this file's order, which is the order problems are listed in.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...results.models import Text
from .document import (
    IMAGE_RE,
    LOG_RE,
    PLACEHOLDER_RE,
    PRINTED_RE,
    VERSION_RE,
    Document,
    Table,
    clean,
    find_table,
    norm_heading,
)
from .facts import Facts
from .verdict import Problem


def check_sections(doc: Document, rules: Dict[str, Any]) -> List[Problem]:
    """Every section the document's form requires."""
    return [Problem("section", f"缺少章节「{sec['zh']}」", f"missing section: {sec['en']}")
            for sec in rules["forms"][doc.form]["sections"] if sec["key"] not in doc.headings]


def check_blocks(doc: Document, rules: Dict[str, Any]) -> List[Problem]:
    """Short form: at least one per-API block, each with its required sections."""
    if doc.form != "short":
        return []
    problems: List[Problem] = []
    form = rules["forms"][doc.form]
    sections = {s["key"]: s for f in rules["forms"].values() for s in f["sections"]}
    if not doc.blocks:
        problems.append(Problem("block", "缺少按 API 划分的小节（如「一、torch.xxx」）",
                                "no per-API block (e.g. '一、torch.xxx')"))
    for start, end, numeral, apis in doc.blocks:
        have = {k for k, idx in doc.headings.items() if any(start <= i < end for i in idx)}
        for key in form.get("per_api", []):
            if key not in have:
                sec = sections[key]
                names = " / ".join(apis)
                problems.append(Problem("block", f"{numeral}、{names}：缺少「{sec['zh']}」",
                                        f"block {numeral} ({names}): missing {sec['en']}"))
    return problems


def check_apis(doc: Document, facts: Dict[str, Facts]) -> List[Problem]:
    """Some target API is named, and every one resolves in this torch."""
    problems: List[Problem] = []
    if not doc.apis:
        problems.append(Problem("api", "未能识别涉及的 API（应在标题、小节标题或单独一行写出完整 API 名）",
                                "no target API found (name it in a heading or on its own line)"))
    for api in doc.apis:
        f = facts.get(api)
        if f is not None and not f.resolved:
            problems.append(Problem("api", f"{api}：在当前 torch 中不存在，请核对 API 名",
                                    f"{api}: not found in this torch; check the name"))
    return problems


def check_categories(doc: Document, facts: Dict[str, Facts]) -> Tuple[List[Problem], List[Text]]:
    """A category is claimed and agrees with torchparity's analysis of each API; warnings
    name the APIs whose category our analysis cannot confirm."""
    if not doc.claims:
        return [Problem("category", "未声明任务分类（如 1.1① / 1.2①）",
                        "no task category claimed (e.g. 1.1① / 1.2①)")], []
    problems: List[Problem] = []
    warnings: List[Text] = []
    for api in doc.apis:
        f = facts.get(api)
        if f is None or not f.resolved:
            continue
        if f.category is None:
            warnings.append(Text(en=f"{api}: our analysis cannot confirm the category ({f.why('en')})",
                                 zh=f"{api}：torchparity 无法确认其分类（{f.why('zh')}）"))
            continue
        if f.category not in doc.claims:
            problems.append(Problem(
                "category",
                f"{api}：声明分类 {'/'.join(doc.claims)} 与 torchparity 分析不一致：{f.why('zh')}",
                f"{api}: claimed category {'/'.join(doc.claims)} disagrees with torchparity's "
                f"analysis: {f.why('en')}"))
    ours = {facts[a].category for a in doc.apis if a in facts and facts[a].category}
    for claim in doc.claims:
        if ours and claim not in ours:
            problems.append(Problem("category", f"声明的分类 {claim} 不适用于任何涉及的 API",
                                    f"claimed category {claim} fits none of the APIs"))
    return problems, warnings


def _table_problems(doc: Document, spec: Dict[str, Any], table: Table,
                    pending: Optional[List[Problem]] = None) -> List[Problem]:
    """Empty cells are problems; a marked placeholder (【待补充】) is a part left to fill."""
    problems: List[Problem] = []
    left: List[str] = []
    if not table.rows:
        problems.append(Problem("table", f"{spec['zh']}：没有数据行", f"{spec['en']}: no rows"))
    for n, row in enumerate(table.rows, 1):
        label = clean(row[0], 40) if row and row[0] else f"#{n}"
        for c, title in enumerate(table.header):
            value = row[c] if c < len(row) else ""
            if pending is not None and PLACEHOLDER_RE.search(value):
                left.append(clean(title, 30))
            elif not value.strip():
                problems.append(Problem(
                    "cell", f"{spec['zh']} 第 {n} 行（{label}）「{clean(title, 30)}」列为空",
                    f"{spec['en']}: row {n} ({label}), column '{clean(title, 30)}' is empty"))
    if left and pending is not None:
        columns = list(dict.fromkeys(left))
        pending.append(Problem(
            "cell", f"{spec['zh']}：{len(left)} 个单元格待补充（列：{'、'.join(columns)}）",
            f"{spec['en']}: {len(left)} cells left to fill (columns: {', '.join(columns)})"))
    if spec.get("per_api"):
        firsts = " ".join(r[0] for r in table.rows if r)
        for api in doc.apis:
            if api.rsplit(".", 1)[-1] not in firsts:
                problems.append(Problem("table", f"{spec['zh']}：缺少 {api} 的行",
                                        f"{spec['en']}: no row for {api}"))
    return problems


def check_tables(doc: Document, rules: Dict[str, Any],
                 pending: Optional[List[Problem]] = None) -> List[Problem]:
    """Long form: every table the rules name, with no empty cell and (where asked) a row per
    API; cells holding a marked placeholder go to ``pending``."""
    if doc.form != "long":
        return []
    problems: List[Problem] = []
    for spec in rules["tables"]:
        table = find_table(doc, spec)
        if table is None:
            problems.append(Problem("table", f"缺少表格：{spec['zh']}", f"missing table: {spec['en']}"))
            continue
        problems += _table_problems(doc, spec, table, pending)
    return problems


def read_coverage(doc: Document, rules: Dict[str, Any],
                  pending: Optional[Dict[str, List[str]]] = None
                  ) -> Tuple[Optional[Tuple[int, int]], Dict[str, List[str]]]:
    """The results span and {chip group: [versions]} it lists (seed-001 layout). A line
    holding a marked placeholder lists no result: its versions go to ``pending``."""
    pat = rules["coverage"]["results_heading"]
    start = next((i for i, ln in enumerate(doc.lines)
                  if (h := norm_heading(ln)) is not None and re.search(pat, h, re.I)), None)
    if start is None:
        return None, {}
    later = [b for b in doc.boundaries if b > start]
    end = later[0] if later else len(doc.lines)
    for i in range(start + 1, end):
        if doc.lines[i].strip().startswith("【"):
            end = i
            break
    found: Dict[str, List[str]] = {}
    current: List[str] = []
    for i in range(start + 1, end):
        line = doc.lines[i]
        versions = [v if v.count(".") == 2 else v + ".0" for v in VERSION_RE.findall(line)]
        groups = [g for g, pats in rules["chip_aliases"].items()
                  if any(re.search(p, VERSION_RE.sub(" ", line), re.I) for p in pats)]
        if groups:
            current = groups
        into = found
        if PLACEHOLDER_RE.search(line):
            into = pending if pending is not None else {}
        for g in current:
            for v in versions:
                if v not in into.setdefault(g, []):
                    into[g].append(v)
    return (start, end), found


def check_coverage(doc: Document, results_span: Optional[Tuple[int, int]], covered: Dict[str, List[str]],
                   versions: Sequence[str], chips: Sequence[str],
                   placeholders: Optional[Dict[str, List[str]]] = None,
                   pending: Optional[List[Problem]] = None) -> List[Problem]:
    """Long form: results for every required torch version on every required chip; a
    version the text marks as a placeholder is left to fill (hardware only), not missing."""
    if doc.form != "long":
        return []
    if results_span is None:
        return [Problem("coverage", "缺少「测试结果」（各 torch 版本与芯片的结果）",
                        "missing test results per torch version and chip")]
    problems: List[Problem] = []
    for chip in chips:
        missing = [v for v in versions if v not in covered.get(chip, [])]
        marked = [v for v in missing if v in (placeholders or {}).get(chip, [])]
        if marked and pending is not None:
            pending.append(Problem(
                "coverage", f"测试结果：{chip} 芯片 {'、'.join('v' + v for v in marked)} 待在硬件上补充",
                f"test results: chip {chip} on {', '.join('v' + v for v in marked)} left to fill on hardware"))
            missing = [v for v in missing if v not in marked]
        if missing:
            problems.append(Problem(
                "coverage", f"测试结果缺少 {chip} 芯片的版本：{'、'.join('v' + v for v in missing)}",
                f"test results miss chip {chip} on: {', '.join('v' + v for v in missing)}"))
    return problems


def check_environment(doc: Document, rules: Dict[str, Any]) -> Tuple[List[Problem], Dict[str, str]]:
    """The environment block's fields (when there is one), and those it misses."""
    env_values: Dict[str, str] = {}
    env_span = doc.span("env")
    if env_span is None:
        return [], env_values
    for i in range(env_span[0] + 1, env_span[1]):
        line = doc.lines[i]
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.strip().startswith("|") else []
        if len(cells) >= 2 and cells[0] and cells[1] and not re.fullmatch(r":?-+:?", cells[1]):
            key, value = cells[0], cells[1]  # a "| key | value |" row
        elif m := re.match(r"\s*(?:[-*•]\s*)?(.+?)\s*[：:]\s*(\S.*)$", line):
            key, value = m.group(1), m.group(2)
        else:
            continue
        for field_ in rules["environment"]:
            if field_["key"] not in env_values and re.search(field_["pattern"], key + " " + (
                    value if field_["key"] == "versions" else ""), re.I):
                env_values[field_["key"]] = clean(value, 80)
    problems = [Problem("environment", f"环境信息缺少：{field_['zh']}",
                        f"environment block misses: {field_['en']}")
                for field_ in rules["environment"] if field_["key"] not in env_values]
    return problems, env_values


def check_evidence(text: str, covered: Dict[str, List[str]]) -> Tuple[List[Problem], List[Text]]:
    """A run screenshot or log: what evidence the text gives, a problem when none."""
    evidence: List[Text] = []
    if IMAGE_RE.search(text):
        evidence.append(Text(en="screenshot / image attached", zh="附有截图/图片"))
    if LOG_RE.search(text):
        evidence.append(Text(en="test log output", zh="附有测试日志输出"))
    if PRINTED_RE.search(text):
        evidence.append(Text(en="verification commands with their printed results",
                             zh="验证命令附带输出结果"))
    if covered:
        listed = "; ".join(f"{g}: {', '.join('v' + v for v in vs)}" for g, vs in covered.items())
        evidence.append(Text(en=f"results listed per chip and version ({listed}); the screenshots "
                                "themselves are not part of this text",
                             zh=f"测试结果按芯片/版本列出（{listed}），截图本身不在文本中"))
    if not evidence:
        return [Problem("log", "缺少运行截图或运行日志", "no run screenshot or log")], evidence
    return [], evidence
