"""First review of a contributor's issue or PR text (``torchparity review``).

Reads the text against the community template (deliver/review_rules.yaml): which layout
it follows (seed 001's long form or seed 000's short form), whether its sections, tables,
environment block and per-version x per-chip results are there and complete, whether a
run screenshot or log is, and whether the category it claims agrees with torchparity's own
analysis of each API (given by the caller: this module only reads text and renders).

The verdict imitates the reviewer's comment in seed 001 ("社区任务交付件初审结论"):
现状分析 / 适配方案 / NPU 功能验证 / 最终结论, in Chinese and English, followed by every
problem found. Text quoted from the document is stripped of control characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import yaml

from ..results.models import Text

HERE = Path(__file__).resolve().parent
RULES_FILE = HERE / "review_rules.yaml"

CATEGORY_RE = re.compile(r"(?<![\d.])([12])\s*\.\s*([12])\s*([①②③④⑤⑥])")
API_RE = re.compile(r"\btorch(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_NUMBERING = re.compile(r"^(?:#+\s*)?(?:\*\*)?\s*(?:[•\-*]\s*)?"
                        r"(?:(?:\d+|[一二三四五六七八九十]+)\s*[、.．)）]\s*|[(（]\d+[)）]\s*)?")
_BLOCK = re.compile(r"^\s*(?:#+\s*)?([一二三四五六七八九十]+)\s*、\s*(.+)$")
_VERSION = re.compile(r"(?:\bv\s*\.?\s*|\btorch\s*)(\d+\.\d+(?:\.\d+)?)", re.I)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]+\)|<img\b|\S+\.(?:png|jpe?g|gif|svg)\b", re.I)
_LOG = re.compile(r"\bRan \d+ tests?\b|\b\d+ passed\b|\bPASSED\b|^OK$|^\s*\.+\s*$", re.M)
# a code line followed by the result it printed: "gradcheck(f, x)  # True"
_PRINTED = re.compile(r"^[^#\n]*[()=][^#\n]*\s#\s*(True|False|tensor|-?\d|[A-Za-z_]+Error|no-op)", re.M)
_HARDCODED = re.compile(r"device\s*=\s*[\"'](?:npu|cuda)[\"':0-9]*|\.(?:npu|cuda)\(\)|"
                        r"\.to\(\s*[\"'](?:npu|cuda)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: str, limit: int = 160) -> str:
    """Document text made safe to print: no control or bidi characters, one line, short."""
    text = _CONTROL.sub(" ", text or "")
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@lru_cache(maxsize=None)
def load_rules(path: Optional[str] = None) -> Dict[str, Any]:
    return yaml.safe_load(Path(path or RULES_FILE).read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- parsing


@dataclass
class Table:
    start: int  # line index of the header
    end: int  # one past the last row
    header: List[str]
    rows: List[List[str]]


@dataclass
class Document:
    lines: List[str]
    form: str
    headings: Dict[str, List[int]]  # section key -> heading line indexes (either form)
    boundaries: List[int]  # every known heading line, sorted
    tables: List[Table]
    blocks: List[Tuple[int, int, str, List[str]]]  # short form: (start, end, numeral, apis)
    apis: List[str]
    claims: List[str]

    def span(self, key: str) -> Optional[Tuple[int, int]]:
        idx = self.headings.get(key)
        if not idx:
            return None
        start = idx[0]
        later = [b for b in self.boundaries if b > start]
        return start, (later[0] if later else len(self.lines))

    def text_of(self, span: Optional[Tuple[int, int]]) -> str:
        return "" if span is None else "\n".join(self.lines[span[0]:span[1]])


def _norm_heading(line: str) -> Optional[str]:
    """The heading text of a line that looks like a heading, else None."""
    raw = line.strip()
    if not raw or "\t" in line or raw.startswith("|") or raw.startswith("```"):
        return None
    text = _NUMBERING.sub("", raw).strip().strip("*").strip()
    m = re.search(r"[：:]", text)
    if m:
        if text[m.end():].strip():
            return None  # "key: value", not a heading
        text = text[: m.start()].strip()
    if not text or len(text) > 40:
        return None
    return text


def _cells(line: str) -> Optional[List[str]]:
    if "\t" in line:
        return [c.strip() for c in line.rstrip("\n").split("\t")]
    raw = line.strip()
    if raw.startswith("|") and raw.count("|") >= 2:
        inner = raw[1:-1] if raw.endswith("|") else raw[1:]
        return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]
    return None


def _tables(lines: List[str]) -> List[Table]:
    out: List[Table] = []
    i = 0
    while i < len(lines):
        cells = _cells(lines[i])
        if cells is None or len(cells) < 2:
            i += 1
            continue
        j = i
        rows: List[List[str]] = []
        while j < len(lines):
            row = _cells(lines[j])
            if row is None:
                break
            if not all(re.fullmatch(r":?-{2,}:?", c) for c in row if c) or not any(row):
                rows.append(row)
            j += 1
        if len(rows) >= 2:
            out.append(Table(i, j, rows[0], rows[1:]))
        i = j if j > i else i + 1
    return out


def _dedupe(names: Sequence[str]) -> List[str]:
    return list(dict.fromkeys(n.rstrip(".") for n in names))


def target_apis(lines: List[str], blocks) -> List[str]:
    """The APIs the document is about: named in headings, task references, 涉及 API lines,
    or alone on a line — not every torch.* name a code sample mentions."""
    found: List[str] = []
    for _, _, _, apis in blocks:
        found += apis
    for line in lines:
        raw = line.strip().strip("`*#").strip()
        names = API_RE.findall(raw)
        if not names:
            continue
        rest = API_RE.sub("", raw)
        alone = re.fullmatch(r"[\s/、,，`*&和及与]*", rest) is not None
        task = re.search(r"任务\s*\d+\s*[：:]|task\s*\d+\s*:", raw, re.I)
        involved = re.match(r"(涉及\s*API|APIs?\s*(?:involved|covered))\s*[：:]", raw, re.I)
        if alone or task or involved:
            found += names
    return _dedupe(found)


def parse(text: str, rules: Optional[Dict[str, Any]] = None) -> Document:
    rules = rules or load_rules()
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    headings: Dict[str, List[int]] = {}
    hits = {name: set() for name in rules["forms"]}
    for i, line in enumerate(lines):
        head = _norm_heading(line)
        if head is None:
            continue
        for form, spec in rules["forms"].items():
            for sec in spec["sections"]:
                if re.search(sec["pattern"], head, re.I):
                    headings.setdefault(sec["key"], []).append(i)
                    hits[form].add(sec["key"])
    form = max(rules["forms"], key=lambda f: (len(hits[f]), f == "long"))
    blocks = []
    starts = []
    for i, line in enumerate(lines):
        m = _BLOCK.match(line)
        if m and API_RE.search(m.group(2)) and "\t" not in line:
            starts.append((i, m.group(1), _dedupe(API_RE.findall(m.group(2)))))
    for n, (i, numeral, apis) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        blocks.append((i, end, numeral, apis))
    boundaries = sorted({i for idx in headings.values() for i in idx} | {b[0] for b in blocks})
    claims = _dedupe(f"{a}.{b}{c}" for a, b, c in CATEGORY_RE.findall(text))
    return Document(lines=lines, form=form, headings=headings, boundaries=boundaries,
                    tables=_tables(lines), blocks=blocks, apis=target_apis(lines, blocks),
                    claims=claims)


# ----------------------------------------------------------------------------- facts in


@dataclass
class Facts:
    """torchparity's own reading of one API (from api/ analysis and the category rules)."""

    api: str
    resolved: bool = True
    category: Optional[str] = None  # None: our analysis cannot decide
    rule: Optional[str] = None
    involvement: Optional[str] = None  # none | indirect | direct
    implementation: Optional[str] = None
    harness: bool = False
    summary: Optional[str] = None  # first docstring paragraph (English)
    note: Optional[str] = None

    def why(self, lang: str) -> str:
        if self.category is None:
            return self.note or ("undecided" if lang == "en" else "无法判定")
        if lang == "en":
            bits = [f"implementation {self.implementation}", f"device involvement {self.involvement or 'unknown'}"]
            if self.harness:
                bits.append("wraps user code (harness)")
            return f"{self.category} by rule '{self.rule}' ({', '.join(bits)})"
        inv = {"direct": "直接涉及设备算子", "indirect": "间接涉及设备算子", "none": "不涉及设备算子"}
        bits = [f"实现方式 {self.implementation}", inv.get(self.involvement or "", "设备算子情况未知")]
        if self.harness:
            bits.append("包裹用户代码（harness）")
        return f"{self.category}（规则「{self.rule}」：{'，'.join(bits)}）"


# ----------------------------------------------------------------------------- verdict


@dataclass
class Problem:
    part: str  # section | block | table | cell | coverage | environment | category | api | log
    zh: str
    en: str


@dataclass
class Review:
    accepted: bool
    form: str
    apis: List[str]
    claims: List[str]
    problems: List[Problem]
    lines: Dict[str, List[Tuple[str, Text]]] = field(default_factory=dict)  # part -> (label key, text)
    warnings: List[Text] = field(default_factory=list)


LABELS = {
    "title": Text(en="First review of the community task deliverable", zh="社区任务交付件初审结论"),
    "p1": Text(en="1. Status analysis", zh="1. 现状分析"),
    "p2": Text(en="2. Adaptation plan", zh="2. 适配方案"),
    "p3": Text(en="3. NPU functional verification", zh="3. NPU 功能验证"),
    "p4": Text(en="4. Final conclusion", zh="4. 最终结论"),
    "apis": Text(en="APIs", zh="涉及 API"),
    "core": Text(en="Core function", zh="核心功能"),
    "cases": Text(en="Test completeness", zh="用例完整性"),
    "spec": Text(en="Task category", zh="任务规范"),
    "api_adapt": Text(en="API adaptation", zh="API适配"),
    "test_adapt": Text(en="Test adaptation", zh="用例适配"),
    "docs": Text(en="Docs check", zh="资料检查"),
    "strategy": Text(en="Strategy", zh="验证策略"),
    "env": Text(en="Environment and versions", zh="验证环境及版本"),
    "result": Text(en="Result", zh="验证结果"),
    "log": Text(en="Run log", zh="运行日志"),
    "final_cat": Text(en="Category", zh="分类结论"),
    "final_api": Text(en="API adaptation", zh="API适配结论"),
    "final_test": Text(en="Test adaptation", zh="用例适配结论"),
    "final": Text(en="Delivery", zh="交付结论"),
    "problems": Text(en="Problems to fix before acceptance", zh="需补充/修改的问题"),
    "warnings": Text(en="Notes", zh="提示"),
    "form": Text(en="Layout", zh="版式"),
}


def _first_sentence(text: str) -> str:
    """The first sentence, without its final full stop (callers join several)."""
    text = clean(text, 400)
    m = re.search(r"^(.+?[。！？]|.+?\.(?=\s|$))", text)
    return clean(m.group(1) if m else text, 120).rstrip("。.")


def _api_summary(doc: Document, api: str, spans: List[Tuple[int, int]]) -> Optional[str]:
    """The document's own one-line description of ``api`` (from its function section)."""
    short = api.split(".", 2)[-1]
    names = [n for n in (api, short) if n]
    for start, end in spans:  # "name：description" first
        for i in range(start, end):
            for n in names:
                m = re.search(re.escape(n) + r"`?\s*[：:]\s*(\S.*)$", doc.lines[i])
                if m:
                    return _first_sentence(m.group(1))
    for start, end in spans:  # else the paragraph after a line naming only the API
        for i in range(start, end):
            raw = doc.lines[i].strip().strip("`*#").strip()
            if raw not in names:
                continue
            for j in range(i + 1, min(end, i + 6)):
                nxt = doc.lines[j].strip()
                if nxt and _norm_heading(nxt) is None:
                    return _first_sentence(nxt)
    return None


def _find_table(doc: Document, spec: Dict[str, Any]) -> Optional[Table]:
    span = doc.span(spec["section"])
    for t in doc.tables:
        if span is not None and not (span[0] <= t.start < span[1]):
            continue
        if all(any(re.search(p, h, re.I) for h in t.header) for p in spec["header"]):
            return t
    if span is not None:  # the table may sit just outside a mis-numbered section
        for t in doc.tables:
            if all(any(re.search(p, h, re.I) for h in t.header) for p in spec["header"]):
                return t
    return None


def _coverage(doc: Document, rules: Dict[str, Any]) -> Tuple[Optional[Tuple[int, int]], Dict[str, List[str]]]:
    """The results span and {chip group: [versions]} it lists (seed-001 layout)."""
    pat = rules["coverage"]["results_heading"]
    start = next((i for i, ln in enumerate(doc.lines)
                  if (h := _norm_heading(ln)) is not None and re.search(pat, h, re.I)), None)
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
        versions = [v if v.count(".") == 2 else v + ".0" for v in _VERSION.findall(line)]
        groups = [g for g, pats in rules["chip_aliases"].items()
                  if any(re.search(p, _VERSION.sub(" ", line), re.I) for p in pats)]
        if groups:
            current = groups
        for g in current:
            for v in versions:
                if v not in found.setdefault(g, []):
                    found[g].append(v)
    return (start, end), found


def _docs_statement(doc: Document, api: str) -> Optional[Text]:
    span = doc.span("docs")
    if span is None:
        return None
    text = doc.text_of(span)
    short = api.rsplit(".", 1)[-1]
    idx = [m.start() for m in re.finditer(re.escape(short), text)]
    if not idx:
        return None
    following = text[idx[0]: idx[0] + 400]
    nxt = [m.start() for m in API_RE.finditer(following) if m.start() > len(short) + 40]
    chunk = following[: nxt[0]] if nxt else following
    if re.search(r"缺失|需要.{0,6}补充|missing|not (yet )?documented", chunk, re.I):
        return Text(en="docs entry missing: a supplement is needed", zh="资料缺失，需补充")
    if re.search(r"已经?覆盖|已有|已补充|present|covered", chunk, re.I):
        return Text(en="docs entry present", zh="资料已覆盖")
    return None


def triage(text: str, facts: Dict[str, Facts], *, versions: Optional[Sequence[str]] = None,
           chips: Optional[Sequence[str]] = None, rules: Optional[Dict[str, Any]] = None,
           doc: Optional[Document] = None) -> Review:
    """Review ``text``; ``facts`` is torchparity's analysis of each API the text names."""
    rules = rules or load_rules()
    doc = doc or parse(text, rules)
    problems: List[Problem] = []
    warnings: List[Text] = []
    form = rules["forms"][doc.form]
    sections = {s["key"]: s for f in rules["forms"].values() for s in f["sections"]}

    # -- sections ---------------------------------------------------------------------
    for sec in form["sections"]:
        if sec["key"] not in doc.headings:
            problems.append(Problem("section", f"缺少章节「{sec['zh']}」", f"missing section: {sec['en']}"))
    if doc.form == "short":
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

    # -- APIs and categories ----------------------------------------------------------
    if not doc.apis:
        problems.append(Problem("api", "未能识别涉及的 API（应在标题、小节标题或单独一行写出完整 API 名）",
                                "no target API found (name it in a heading or on its own line)"))
    for api in doc.apis:
        f = facts.get(api)
        if f is not None and not f.resolved:
            problems.append(Problem("api", f"{api}：在当前 torch 中不存在，请核对 API 名",
                                    f"{api}: not found in this torch; check the name"))
    if not doc.claims:
        problems.append(Problem("category", "未声明任务分类（如 1.1① / 1.2①）",
                                "no task category claimed (e.g. 1.1① / 1.2①)"))
    else:
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

    # -- tables (long form) -------------------------------------------------------------
    if doc.form == "long":
        for spec in rules["tables"]:
            table = _find_table(doc, spec)
            if table is None:
                problems.append(Problem("table", f"缺少表格：{spec['zh']}", f"missing table: {spec['en']}"))
                continue
            if not table.rows:
                problems.append(Problem("table", f"{spec['zh']}：没有数据行", f"{spec['en']}: no rows"))
            for n, row in enumerate(table.rows, 1):
                label = clean(row[0], 40) if row and row[0] else f"#{n}"
                for c, title in enumerate(table.header):
                    value = row[c] if c < len(row) else ""
                    if not value.strip():
                        problems.append(Problem(
                            "cell", f"{spec['zh']} 第 {n} 行（{label}）「{clean(title, 30)}」列为空",
                            f"{spec['en']}: row {n} ({label}), column '{clean(title, 30)}' is empty"))
            if spec.get("per_api"):
                firsts = " ".join(r[0] for r in table.rows if r)
                for api in doc.apis:
                    if api.rsplit(".", 1)[-1] not in firsts:
                        problems.append(Problem("table", f"{spec['zh']}：缺少 {api} 的行",
                                                f"{spec['en']}: no row for {api}"))

    # -- versions x chips, environment ---------------------------------------------------
    want_versions = list(versions or rules["coverage"]["versions"])
    want_chips = list(chips or rules["coverage"]["chips"])
    results_span, covered = _coverage(doc, rules)
    if doc.form == "long":
        if results_span is None:
            problems.append(Problem("coverage", "缺少「测试结果」（各 torch 版本与芯片的结果）",
                                    "missing test results per torch version and chip"))
        else:
            for chip in want_chips:
                missing = [v for v in want_versions if v not in covered.get(chip, [])]
                if missing:
                    problems.append(Problem(
                        "coverage", f"测试结果缺少 {chip} 芯片的版本：{'、'.join('v' + v for v in missing)}",
                        f"test results miss chip {chip} on: {', '.join('v' + v for v in missing)}"))
    env_values: Dict[str, str] = {}
    env_span = doc.span("env")
    if env_span is not None:
        for i in range(env_span[0] + 1, env_span[1]):
            line = doc.lines[i]
            m = re.match(r"\s*(.+?)\s*[：:]\s*(\S.*)$", line)
            if not m:
                continue
            for field_ in rules["environment"]:
                if field_["key"] not in env_values and re.search(field_["pattern"], m.group(1) + " " + (
                        m.group(2) if field_["key"] == "versions" else ""), re.I):
                    env_values[field_["key"]] = clean(m.group(2), 80)
        for field_ in rules["environment"]:
            if field_["key"] not in env_values:
                problems.append(Problem("environment", f"环境信息缺少：{field_['zh']}",
                                        f"environment block misses: {field_['en']}"))

    # -- screenshot or log -----------------------------------------------------------------
    evidence: List[Text] = []
    if _IMAGE.search(text):
        evidence.append(Text(en="screenshot / image attached", zh="附有截图/图片"))
    if _LOG.search(text):
        evidence.append(Text(en="test log output", zh="附有测试日志输出"))
    if _PRINTED.search(text):
        evidence.append(Text(en="verification commands with their printed results",
                             zh="验证命令附带输出结果"))
    if covered:
        listed = "; ".join(f"{g}: {', '.join('v' + v for v in vs)}" for g, vs in covered.items())
        evidence.append(Text(en=f"results listed per chip and version ({listed}); the screenshots "
                                "themselves are not part of this text",
                             zh=f"测试结果按芯片/版本列出（{listed}），截图本身不在文本中"))
    if not evidence:
        problems.append(Problem("log", "缺少运行截图或运行日志", "no run screenshot or log"))

    # -- the verdict's lines -------------------------------------------------------------------
    is_11 = any(c.startswith("1.1") for c in doc.claims)
    lines: Dict[str, List[Tuple[str, Text]]] = {"p1": [], "p2": [], "p3": [], "p4": []}
    func_spans = [s for s in (doc.span("analysis"), doc.span("function")) if s]
    func_spans += [(b[0], b[1]) for b in doc.blocks]
    core_zh, core_en = [], []
    for api in doc.apis:
        mine = _api_summary(doc, api, func_spans)
        core_zh.append(f"{api}：{mine or '正文未说明'}")
        f = facts.get(api)
        core_en.append(f"{api}: {clean(f.summary, 120) if f and f.summary else '(no docstring)'}")
    lines["p1"].append(("apis", Text(en=", ".join(doc.apis) or "—", zh="、".join(doc.apis) or "—")))
    lines["p1"].append(("core", Text(en="; ".join(core_en) or "—", zh="；".join(core_zh) or "—")))
    upstream = _find_table(doc, rules["tables"][0]) if doc.form == "long" else None
    if upstream is not None:
        concl = [f"{clean(r[0], 60)} → {clean(r[-1], 40)}" for r in upstream.rows if r]
        lines["p1"].append(("cases", Text(en="upstream table: " + "; ".join(concl),
                                          zh="上游用例：" + "；".join(concl))))
    elif doc.form == "short":
        lines["p1"].append(("cases", Text(en="short form: no upstream test table (not required for 1.2①)",
                                          zh="简要格式：未做上游用例表（1.2① 不要求）")))
    ours = "; ".join(f"{a}: {facts[a].why('en')}" for a in doc.apis if a in facts and facts[a].resolved)
    ours_zh = "；".join(f"{a}：{facts[a].why('zh')}" for a in doc.apis if a in facts and facts[a].resolved)
    cat_ok = doc.claims and not any(p.part == "category" for p in problems)
    mark = "✔" if cat_ok else "✘"
    lines["p1"].append(("spec", Text(
        en=f"claimed {'/'.join(doc.claims) or 'nothing'} {mark}; torchparity: {ours or '—'}",
        zh=f"声明 {'/'.join(doc.claims) or '无'} {mark}；torchparity 分析：{ours_zh or '—'}")))

    adapt_texts = []
    for start, end, _, apis in doc.blocks:
        span = next(((i, end) for i in doc.headings.get("adaptation", []) if start <= i < end), None)
        if span:
            body = next((ln for ln in doc.lines[span[0] + 1: span[1]] if ln.strip()), "")
            adapt_texts.append(f"{' / '.join(apis)}：{_first_sentence(body)}")
    if adapt_texts:
        api_adapt = Text(en="as stated: " + " | ".join(adapt_texts), zh="；".join(adapt_texts))
    else:
        body = doc.text_of(results_span) + doc.text_of(doc.span("functional"))
        if re.search(r"失败|不支持|报错|\bfail|\berror", body, re.I):
            api_adapt = Text(en="the results record failures: the cause must be stated",
                             zh="测试结果记录了失败/不支持，需说明原因与适配方案")
        else:
            api_adapt = Text(en="no adaptation needed, the API is supported", zh="无需适配，API已支持。")
    lines["p2"].append(("api_adapt", api_adapt))
    hard = sorted(set(_HARDCODED.findall(text)))
    if is_11:
        if hard:
            test_adapt = Text(en=f"the test code hard-codes the device ({', '.join(hard)}): decouple it "
                                 "(device, dtypes, shapes as parameters; `torchparity gentest` writes such files)",
                              zh=f"用例存在硬编码（{', '.join(hard)}），需要用例解耦跟踪"
                                 "（device、dtype、shape 应参数化，可用 torchparity gentest 生成）")
        else:
            test_adapt = Text(en="device test cases needed; the text shows no test code, so hard-coding "
                                 "cannot be checked here: device, dtypes and shapes must be parameters",
                              zh="需要补充设备用例；正文未附用例代码，无法检查硬编码，"
                                 "需确认 device、dtype、shape 均为参数（可用 torchparity gentest 生成）")
    else:
        test_adapt = Text(en="no new test cases (1.2①: issue + run screenshot + support verification)",
                          zh="无需新增用例（1.2①：issue 说明 + 运行截图 + 支持情况验证）")
    lines["p2"].append(("test_adapt", test_adapt))
    docs_zh, docs_en = [], []
    for api in doc.apis:
        st = _docs_statement(doc, api)
        if st:
            docs_zh.append(f"{api.rsplit('.', 1)[-1]}：{st.zh}")
            docs_en.append(f"{api.rsplit('.', 1)[-1]}: {st.en}")
    if docs_zh:
        lines["p2"].append(("docs", Text(en="; ".join(docs_en), zh="；".join(docs_zh))))
    elif doc.form == "short":
        lines["p2"].append(("docs", Text(en="not part of the short form", zh="简要格式未要求")))
    else:
        lines["p2"].append(("docs", Text(en="no per-API statement found", zh="未找到逐 API 的资料结论")))

    items = _find_table(doc, rules["tables"][2]) if doc.form == "long" else None
    if items is not None:
        lines["p3"].append(("strategy", Text(
            en=f"{len(items.rows)} test items: " + ", ".join(clean(r[0], 30) for r in items.rows if r),
            zh=f"{len(items.rows)} 个测试项：" + "、".join(clean(r[0], 30) for r in items.rows if r))))
    elif doc.form == "short":
        lines["p3"].append(("strategy", Text(en="support verification with verification commands per API",
                                             zh="逐 API 的支持情况验证与验证命令")))
    if covered:
        env_text = "; ".join(f"{g}: {', '.join('v' + v for v in vs)}" for g, vs in covered.items())
        lines["p3"].append(("env", Text(en=env_text, zh=env_text)))
    if env_values:
        lines["p3"].append(("env", Text(en="; ".join(f"{k}: {v}" for k, v in env_values.items()),
                                        zh="；".join(env_values.values()))))
    cov_problems = [p for p in problems if p.part in ("coverage", "environment", "block")]
    if cov_problems:
        result = Text(en="; ".join(p.en for p in cov_problems), zh="；".join(p.zh for p in cov_problems))
    elif doc.form == "short":
        result = Text(en="environment block complete; support verification given per API",
                      zh="环境信息完整，各 API 均给出支持情况验证")
    else:
        result = Text(en="results recorded for every required torch version and chip ("
                         + ", ".join(want_chips) + " x " + ", ".join("v" + v for v in want_versions) + ")",
                      zh="要求的版本与芯片均已记录结果（" + "、".join(want_chips) + " × "
                         + "、".join("v" + v for v in want_versions) + "）")
    lines["p3"].append(("result", result))
    lines["p3"].append(("log", Text(en="; ".join(e.en for e in evidence) or "missing",
                                    zh="；".join(e.zh for e in evidence) or "缺失")))

    accepted = not problems
    lines["p4"].append(("final_cat", Text(en=f"{'/'.join(doc.claims) or '—'} {mark}",
                                          zh=f"{'/'.join(doc.claims) or '—'} {mark}")))
    lines["p4"].append(("final_api", api_adapt))
    lines["p4"].append(("final_test", test_adapt))
    if accepted:
        final = Text(en="the issue covers API function, test status, device verification and docs.",
                     zh="本 Issue 已完成 API 功能、用例情况、NPU 验证和资料检查说明。")
    else:
        final = Text(en=f"{len(problems)} problem(s) to fix, then review again (listed below).",
                     zh=f"需补充/修改 {len(problems)} 项后复审（见下方问题清单）。")
    lines["p4"].append(("final", final))
    return Review(accepted=accepted, form=doc.form, apis=doc.apis, claims=doc.claims,
                  problems=problems, lines=lines, warnings=warnings)


def render(review: Review, lang: str) -> str:
    """The verdict as plain text, like the reviewer's comment in seed 001."""
    rules = load_rules()
    sep = "：" if lang == "zh" else ": "
    out = [f"{getattr(LABELS['title'], lang)}{sep}{'✔' if review.accepted else '✘'}", ""]
    form = rules["forms"][review.form]
    out += [f"{getattr(LABELS['form'], lang)}{sep}{form[lang]}", ""]
    for part in ("p1", "p2", "p3", "p4"):
        out.append(getattr(LABELS[part], lang))
        out.append("")
        for key, text in review.lines.get(part, []):
            out.append(f"{getattr(LABELS[key], lang)}{sep}{clean(getattr(text, lang), 2000)}")
        out.append("")
    if review.problems:
        out.append(f"{getattr(LABELS['problems'], lang)} ({len(review.problems)}){sep.strip()}")
        out += [f"  {n}. [{p.part}] {clean(getattr(p, lang), 400)}" for n, p in enumerate(review.problems, 1)]
        out.append("")
    if review.warnings:
        out.append(f"{getattr(LABELS['warnings'], lang)}{sep.strip()}")
        out += [f"  - {clean(getattr(w, lang), 400)}" for w in review.warnings]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def as_dict(review: Review) -> Dict[str, Any]:
    """A JSON-able form of the verdict (for CI and scripts)."""
    return {
        "accepted": review.accepted,
        "form": review.form,
        "apis": review.apis,
        "claims": review.claims,
        "problems": [{"part": p.part, "zh": p.zh, "en": p.en} for p in review.problems],
        "warnings": [{"zh": w.zh, "en": w.en} for w in review.warnings],
        "verdict": {part: [{"item": key, "zh": t.zh, "en": t.en} for key, t in items]
                    for part, items in review.lines.items()},
    }
