"""The problem finders: one per concern, each reading the parsed ``Document``.

``triage`` calls them in this file's order, which is the order problems are listed in.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...results.models import Text
from .document import (
    CATEGORY_RE,
    IMAGE_RE,
    LOG_RE,
    MARKED_RE,
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
        text = "\n".join(doc.lines)
        if re.search(r"【\s*(?:待补充|to fill)[^】]*(分类|category)", text, re.I):
            return [], [Text(en="the category is a marked placeholder: undetermined until the device judges a scenario",
                             zh="分类为标注的占位项：设备上完成场景判定前待定")]
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


# ----------------------------------------------------------------------------- read as a reviewer
# (issue 23: what the template checks above cannot see — the sentences themselves)

_SENTENCE = re.compile(r"[^。；;\n]+")
_PLURAL = re.compile(r"这两个|两个|三个|这些|均|都|以上|上述|\bboth\b|\ball\b|\bthese\b", re.I)
# random draws (an OpInfo "sample" is an input, not a draw)
_SAMPLING = re.compile(r"采样|抽样|随机|\brsample\b|\.sample\b|\bdraws?\b|\bsampled\b|\brandom draws?\b", re.I)
_EQUAL_CPU = re.compile(r"与\s*CPU\s*(结果|输出)?\s*一致|结果一致|match(es)? the CPU|equal to the CPU", re.I)
# what a sampled row may promise equal to the CPU: its shape, dtype, device, support, distribution
_QUALIFIED = re.compile(r"分布|统计|形状|dtype|设备|支撑|distribution|shape|support|device|\bks\b|kolmogorov", re.I)
_CUT = re.compile(r"(?<!`)`[^`\s\n]{1,40}…")


def _api_patterns(apis: Sequence[str]) -> Dict[str, "re.Pattern[str]"]:
    """Each API's name as the text may write it: whole, or its last one or two parts
    (``forward_ad.unpack_dual``, ``unpack_dual``) where no other API shares them."""
    out = {}
    for api in apis:
        parts = api.split(".")
        forms = [api] + [".".join(parts[-k:]) for k in (2, 1) if len(parts) > k]
        forms = [f for f in forms if f == api or not any(o != api and o.endswith("." + f) or o == f for o in apis)]
        forms = [f for f in forms if f == api or len(f) >= 6]
        alt = "|".join(re.escape(f) for f in sorted(set(forms), key=len, reverse=True))
        out[api] = re.compile(rf"(?<![\w.])(?:{alt})(?![\w])")
    return out


def claims_by_api(doc: Document, rules: Dict[str, Any]) -> Dict[str, Dict[str, List[str]]]:
    """What the text says of each API, sentence by sentence: its nature (native / python),
    its test adaptation (needed / none) and its category. A sentence belongs to the APIs it
    names; one naming none belongs to the API of its block or ``###`` section, and a plural
    one ("这两个API", "三个 API 均") outside those to every API."""
    pats = _api_patterns(doc.apis)
    nature = {k: re.compile(v, re.I) for k, v in rules.get("nature_claims", {}).items()}
    tests = {k: re.compile(v, re.I) for k, v in rules.get("test_claims", {}).items()}
    out: Dict[str, Dict[str, List[str]]] = {a: {} for a in doc.apis}
    context: List[str] = []
    blocks = {i: apis for i, _, _, apis in doc.blocks}
    fence = False
    for i, line in enumerate(doc.lines):
        if line.strip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if i in blocks:
            context = list(blocks[i])
        elif line.lstrip().startswith("#") or i in doc.boundaries:
            named = [a for a, p in pats.items() if p.search(line)]
            context = named
            if named:
                continue
        in_line = [a for a, p in pats.items() if p.search(line)]
        for sentence in _SENTENCE.findall(line):
            named = [a for a, p in pats.items() if p.search(sentence)]
            owners = named or in_line or context or (list(doc.apis) if _PLURAL.search(sentence) else [])
            found = [k for k, p in nature.items() if p.search(sentence)]
            found += [f"test:{k}" for k, p in tests.items() if p.search(sentence)]
            found += [f"cat:{a}.{b}{c}" for a, b, c in CATEGORY_RE.findall(MARKED_RE.sub("", sentence))]
            for api in owners:
                for key in found:
                    out[api].setdefault(key, []).append(clean(sentence, 80))
    return out


def check_contradictions(doc: Document, rules: Dict[str, Any],
                         claims: Dict[str, Dict[str, List[str]]]) -> List[Problem]:
    """Sentences about one API that cannot both be true: "涉及算子实现" and "纯 Python 接口";
    "需要补充用例" and "无需新增用例"; a 1.2 category with "需要补充用例", a 1.1 one with
    "无需新增用例"."""
    problems: List[Problem] = []
    for api, said in claims.items():
        pairs = [tuple(p) for p in rules.get("contradict", [])]
        pairs += [("test:needed", "test:none", "是否需要新增用例", "whether test cases are needed")]
        for a, b, zh, en in pairs:
            if said.get(a) and said.get(b):
                problems.append(Problem(
                    "contradiction", f"{api}：关于{zh}的说法自相矛盾：「{said[a][0]}」与「{said[b][0]}」",
                    f"{api}: the text contradicts itself on {en}: '{said[a][0]}' vs '{said[b][0]}'"))
        cats = {k[4:] for k in said if k.startswith("cat:")}
        if any(c.startswith("1.2") for c in cats) and said.get("test:needed") and not said.get("test:none"):
            problems.append(Problem(
                "contradiction", f"{api}：分类 1.2（无需新增用例）与「{said['test:needed'][0]}」矛盾",
                f"{api}: category 1.2 (no new test cases) contradicts '{said['test:needed'][0]}'"))
        if any(c.startswith("1.1") for c in cats) and said.get("test:none") and not said.get("test:needed"):
            problems.append(Problem(
                "contradiction", f"{api}：分类 1.1（需要补充用例）与「{said['test:none'][0]}」矛盾",
                f"{api}: category 1.1 (test cases needed) contradicts '{said['test:none'][0]}'"))
    return problems


def check_kinds(claims: Dict[str, Dict[str, List[str]]], facts: Dict[str, Facts]) -> List[Problem]:
    """Sentences false for the API's kind: a context manager (a class wrapping code) said to
    run a user function's operators."""
    problems: List[Problem] = []
    for api, said in claims.items():
        f = facts.get(api)
        if f is None or not said.get("takes_function"):
            continue
        if f.harness and f.implementation == "python_class":
            problems.append(Problem(
                "sentence", f"{api}：上下文管理器不接收用户函数，却写「{said['takes_function'][0]}」",
                f"{api}: a context manager takes no function, yet the text says '{said['takes_function'][0]}'"))
    return problems


def check_commands(doc: Document) -> List[Problem]:
    """Snippets end with the comments the text promises; a run on hardware sources the
    CANN environment (seed 001's 测试方法); a long-form report has an issue title."""
    problems: List[Problem] = []
    text = "\n".join(doc.lines)
    promise_re = re.compile(r"print\(\) 后的注释|comment after print\(\)")
    # each promise holds for the code blocks up to the next block of commands or heading
    chunks = re.split(r"\n(?=验证命令|Verification commands|#{2,6} )", text)
    for chunk in chunks:
        if not promise_re.search(chunk.split("\n", 1)[0]):
            continue
        for block in re.findall(r"```python\n(.*?)```", chunk, re.S):
            last = [ln for ln in block.rstrip().split("\n") if ln.strip()][-1:]
            if not last or not (last[0].startswith("print(") and "  # " in last[0]):
                problems.append(Problem(
                    "snippet", f"验证命令承诺 print() 后附运行结果，但该段没有：「{clean(last[0] if last else '', 60)}」",
                    f"the text promises each print() carries its result, this one does not: "
                    f"'{clean(last[0] if last else '', 60)}'"))
    if "TORCH_DEVICE_BACKEND_AUTOLOAD" in text and "set_env.sh" not in text:
        problems.append(Problem("environment", "测试方法缺少环境设置行（source …/set_env.sh）",
                                "the test method misses the environment line (source …/set_env.sh)"))
    if doc.form == "long" and not re.search(r"社区任务|community task", text, re.I):
        problems.append(Problem("title", "缺少社区任务标题（如「8月社区任务第三期-Ascend for PyTorch API 一致性开发（19、22）」）或其占位",
                                "no community task title (or its placeholder)"))
    return problems


def check_sentences(doc: Document, rules: Dict[str, Any]) -> List[Problem]:
    """Self-reference ("定义于 `X`（`X`）"), names cut mid-token ("`le…"), timeouts called a
    difference from the CPU, the known slips, and template leftovers."""
    problems: List[Problem] = []
    text = "\n".join(doc.lines)
    for m in re.finditer(r"(`[^`\n]+`)\s*[（(]\s*(?:即\s*)?\1\s*[）)]", text):
        problems.append(Problem("sentence", f"自我指代：{clean(m.group(0), 80)}",
                                f"self-reference: {clean(m.group(0), 80)}"))
    for m in re.finditer(r"定义于\s*`([^`\n]+)`", text):
        if m.group(1) in doc.apis:
            problems.append(Problem("sentence", f"自我指代：{m.group(1)} 「定义于」其自身",
                                    f"self-reference: {m.group(1)} is 'defined in' itself"))
    for m in _CUT.finditer(text):
        problems.append(Problem("sentence", f"名称或代码被截断：「{m.group(0)}」",
                                f"a name or code is cut mid-token: '{m.group(0)}'"))
    for line in doc.lines:
        if re.search(r"超时|timed? ?out", line, re.I) and re.search(
                r"与 CPU 行为不一致|需要适配|behaves differently|adaptation needed", line, re.I) \
                and not re.search(r"结果不一致|result differs|mismatch", line, re.I):
            problems.append(Problem("sentence", f"超时不是对 API 的判定，却写作不一致/需要适配：「{clean(line, 80)}」",
                                    f"a timeout is no verdict on the API, yet it reads as a difference: '{clean(line, 80)}'"))
    for slip in rules.get("slips", []):
        if re.search(slip["pattern"], text):
            problems.append(Problem("slip", slip["zh"], slip["en"]))
    fence_free = re.sub(r"```.*?```", "", text, flags=re.S)
    for left in rules.get("leftovers", []):
        source = text if left.get("in") == "all" or "api" in left["pattern"] else fence_free
        if m := re.search(left["pattern"], source):
            problems.append(Problem("placeholder", f"{left['zh']}：「{clean(m.group(0), 40)}」",
                                    f"{left['en']}: '{clean(m.group(0), 40)}'"))
    return problems


def check_expected(doc: Document, rules: Dict[str, Any]) -> List[Problem]:
    """Rows of the test-item table whose 预期结果 promises values equal to the CPU's for
    sampled (random) results, which are compared by distribution, not value by value."""
    spec = next((s for s in rules["tables"] if s["key"] == "test_items"), None)
    problems: List[Problem] = []
    for table in doc.tables:
        if spec is None or not all(any(re.search(p, h, re.I) for h in table.header) for p in spec["header"]):
            continue
        col = next(i for i, h in enumerate(table.header) if re.search(spec["header"][2], h, re.I))
        for row in table.rows:
            expected = row[col] if col < len(row) else ""
            rest = " ".join(c for j, c in enumerate(row) if j != col)
            if _SAMPLING.search(rest) and _EQUAL_CPU.search(expected) and not _QUALIFIED.search(expected):
                problems.append(Problem(
                    "row", f"{clean(row[0], 40)}：采样结果不逐值比较（按形状/支撑集/分布），预期结果却写「{clean(expected, 40)}」",
                    f"{clean(row[0], 40)}: sampled results are not compared value by value (shape / support / "
                    f"distribution), yet the expected result says '{clean(expected, 40)}'"))
    return problems


def list_placeholders(doc: Document, pending: List[Problem]) -> None:
    """Every marked placeholder the other checks did not list (issue links, the title,
    ...), by its text and count."""
    counted: Dict[str, int] = {}
    tables = [(t.start, t.end) for t in doc.tables]
    for i, line in enumerate(doc.lines):
        if any(a <= i < b for a, b in tables):
            continue  # table cells: check_tables lists them
        for m in re.finditer(r"【\s*(?:待补充|待填写|to fill)[^】]*】", line, re.I):
            counted[m.group(0)] = counted.get(m.group(0), 0) + 1
    coverage = [p for p in pending if p.part == "coverage"]
    for text, n in counted.items():
        if coverage and re.search(r"硬件|hardware", text):
            continue  # the results per version and chip: check_coverage lists them
        pending.append(Problem("placeholder", f"{clean(text, 80)}（{n} 处）", f"{clean(text, 80)} ({n}x)"))
