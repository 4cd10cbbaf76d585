"""The verdict: its four parts built from what the checks found, and its text and JSON forms."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ...results.models import Text
from .document import API_RE, HARDCODED_RE, Document, clean, find_table, load_rules, norm_heading
from .facts import Facts

Line = Tuple[str, Text]  # (label key, text)


@dataclass
class Problem:
    part: str  # section | block | table | cell | coverage | environment | category | api | log
    zh: str
    en: str


@dataclass
class Findings:
    """What the checks found: the problems, and the values the verdict quotes."""

    versions: List[str]  # the torch versions and chip groups the results must cover
    chips: List[str]
    problems: List[Problem] = field(default_factory=list)
    warnings: List[Text] = field(default_factory=list)
    results_span: Optional[Tuple[int, int]] = None
    covered: Dict[str, List[str]] = field(default_factory=dict)  # chip group -> versions
    # placeholders left to the contributor (results only hardware can give, issue links, ...)
    pending: List[Problem] = field(default_factory=list)
    env_values: Dict[str, str] = field(default_factory=dict)
    evidence: List[Text] = field(default_factory=list)
    # what the text says of each API (checks.claims_by_api): nature, tests, category
    claims: Dict[str, Dict[str, List[str]]] = field(default_factory=dict)


@dataclass
class Review:
    accepted: bool
    form: str
    apis: List[str]
    claims: List[str]
    problems: List[Problem]
    lines: Dict[str, List[Tuple[str, Text]]] = field(default_factory=dict)  # part -> (label key, text)
    warnings: List[Text] = field(default_factory=list)
    pending: List[Problem] = field(default_factory=list)  # placeholders: what is left to fill


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
    "pending": Text(en="Left to fill (marked placeholders: what this text cannot know)",
                    zh="待补充（文中标注的占位项：文本本身无法给出的内容）"),
    "form": Text(en="Layout", zh="版式"),
}


# ----------------------------------------------------------------------------- quoting the text


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
                if nxt and norm_heading(nxt) is None:
                    return _first_sentence(nxt)
    return None


def _docs_statement(doc: Document, api: str) -> Optional[Text]:
    span = doc.span("docs")
    if span is None:
        return None
    text = doc.text_of(span)
    short = api.rsplit(".", 1)[-1]
    idx = [m.start() for m in re.finditer(re.escape(short), text)]
    if not idx:
        return None
    following = text[idx[0]: idx[0] + 800]
    # the next API's part ends this one's (its own name again, in a link, does not)
    nxt = [m.start() for m in API_RE.finditer(following)
           if m.start() > len(short) + 40 and m.group(0).rsplit(".", 1)[-1] != short]
    chunk = following[: nxt[0]] if nxt else following
    if re.search(r"缺失|需要.{0,6}补充|missing|not (yet )?documented", chunk, re.I):
        return Text(en="docs entry missing: a supplement is needed", zh="资料缺失，需补充")
    if re.search(r"已经?覆盖|已有|已补充|present|covered", chunk, re.I):
        return Text(en="docs entry present", zh="资料已覆盖")
    return None


# ----------------------------------------------------------------------------- the four parts


def _mark(doc: Document, found: Findings) -> str:
    """✔ when a category is claimed and no check found fault with it."""
    cat_ok = doc.claims and not any(p.part == "category" for p in found.problems)
    return "✔" if cat_ok else "✘"


def part1(doc: Document, facts: Dict[str, Facts], rules: Dict[str, Any], mark: str) -> List[Line]:
    """现状分析: the APIs, what each does, the upstream tests, the category."""
    lines: List[Line] = []
    func_spans = [s for s in (doc.span("analysis"), doc.span("function")) if s]
    func_spans += [(b[0], b[1]) for b in doc.blocks]
    core_zh, core_en = [], []
    for api in doc.apis:
        mine = _api_summary(doc, api, func_spans)
        core_zh.append(f"{api}：{mine or '正文未说明'}")
        f = facts.get(api)
        core_en.append(f"{api}: {clean(f.summary, 120) if f and f.summary else '(no docstring)'}")
    lines.append(("apis", Text(en=", ".join(doc.apis) or "—", zh="、".join(doc.apis) or "—")))
    lines.append(("core", Text(en="; ".join(core_en) or "—", zh="；".join(core_zh) or "—")))
    upstream = find_table(doc, rules["tables"][0]) if doc.form == "long" else None
    if upstream is not None:
        concl = [f"{clean(r[0], 60)} → {clean(r[-1], 40)}" for r in upstream.rows if r]
        lines.append(("cases", Text(en="upstream table: " + "; ".join(concl),
                                    zh="上游用例：" + "；".join(concl))))
    elif doc.form == "short":
        lines.append(("cases", Text(en="short form: no upstream test table (not required for 1.2①)",
                                    zh="简要格式：未做上游用例表（1.2① 不要求）")))
    ours = "; ".join(f"{a}: {facts[a].why('en')}" for a in doc.apis if a in facts and facts[a].resolved)
    ours_zh = "；".join(f"{a}：{facts[a].why('zh')}" for a in doc.apis if a in facts and facts[a].resolved)
    lines.append(("spec", Text(
        en=f"claimed {'/'.join(doc.claims) or 'nothing'} {mark}; torchparity: {ours or '—'}",
        zh=f"声明 {'/'.join(doc.claims) or '无'} {mark}；torchparity 分析：{ours_zh or '—'}")))
    return lines


def _long_form_adaptation(doc: Document) -> List[str]:
    """Long form: the text's "API 适配：…" line in its conclusion, or the bullets under it."""
    span = doc.span("conclusion")
    if span is None:
        return []
    lines = doc.lines[span[0]:]
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:[-*•]\s*)?(?:\*\*)?API\s*(?:适配|adaptation)(?:\*\*)?\s*[：:]\s*(.*)$", line, re.I)
        if not m:
            continue
        if m.group(1).strip():
            return [_first_sentence(m.group(1))]
        indent = len(line) - len(line.lstrip())
        out = []
        for nxt in lines[i + 1:]:
            if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent:
                break
            out.append(_first_sentence(nxt.strip().lstrip("-*• ")))
        return out
    return []


def _api_adaptation(doc: Document, found: Findings) -> Text:
    """What the text says of adapting the APIs (or what its results imply)."""
    adapt_texts = []
    for start, end, _, apis in doc.blocks:
        span = next(((i, end) for i in doc.headings.get("adaptation", []) if start <= i < end), None)
        if span:
            body = next((ln for ln in doc.lines[span[0] + 1: span[1]] if ln.strip()), "")
            adapt_texts.append(f"{' / '.join(apis)}：{_first_sentence(body)}")
    if not adapt_texts and doc.form == "long":
        adapt_texts = _long_form_adaptation(doc)
    if adapt_texts:
        return Text(en="as stated: " + " | ".join(adapt_texts), zh="；".join(adapt_texts))
    body = doc.text_of(found.results_span) + doc.text_of(doc.span("functional"))
    if re.search(r"失败|不支持|报错|\bfail|\berror", body, re.I):
        return Text(en="the results record failures: the cause must be stated",
                    zh="测试结果记录了失败/不支持，需说明原因与适配方案")
    return Text(en="no adaptation needed, the API is supported", zh="无需适配，API已支持。")


def _needs_cases(api: str, doc: Document, found: "Findings", facts: Dict[str, Facts]) -> bool:
    """Whether the text (else our analysis) files ``api`` as needing device test cases."""
    said = found.claims.get(api, {})
    if said.get("test:needed") or said.get("test:none"):
        return bool(said.get("test:needed")) and not said.get("test:none")
    cats = {k[4:] for k in said if k.startswith("cat:")}
    if cats:
        return any(c.startswith("1.1") for c in cats)
    f = facts.get(api)
    if f is not None and f.category:
        return f.category.startswith("1.1")
    return any(c.startswith("1.1") for c in doc.claims)


def _test_adaptation(doc: Document, text: str, found: Optional["Findings"] = None,
                     facts: Optional[Dict[str, Facts]] = None) -> Text:
    """Per API: whether device test cases are needed, and whether the given ones hard-code
    the device (three APIs that need none are never told they do)."""
    found = found or Findings(versions=[], chips=[])
    needing = [a for a in doc.apis if _needs_cases(a, doc, found, facts or {})]
    rest = [a for a in doc.apis if a not in needing]
    if not needing:
        return Text(en="no new test cases (1.2①: issue + run screenshot + support verification)",
                    zh="无需新增用例（1.2①：issue 说明 + 运行截图 + 支持情况验证）")
    hard = sorted(set(HARDCODED_RE.findall(text)))
    if hard:
        need = Text(en=f"the test code hard-codes the device ({', '.join(hard)}): decouple it "
                       "(device, dtypes, shapes as parameters; `torchparity gentest` writes such files)",
                    zh=f"用例存在硬编码（{', '.join(hard)}），需要用例解耦跟踪"
                       "（device、dtype、shape 应参数化，可用 torchparity gentest 生成）")
    elif re.search(r"^```\s*python", text, re.M | re.I):
        need = Text(en="device test cases needed; the test code shown does not hard-code the device "
                       "(device, dtypes and shapes must stay parameters)",
                    zh="需要补充设备用例；正文所附代码未发现硬编码设备（device、dtype、shape 须保持参数化）")
    else:
        need = Text(en="device test cases needed; the text shows no test code, so hard-coding "
                       "cannot be checked here: device, dtypes and shapes must be parameters",
                    zh="需要补充设备用例；正文未附用例代码，无法检查硬编码，"
                       "需确认 device、dtype、shape 均为参数（可用 torchparity gentest 生成）")
    if not rest:
        return need
    short = lambda names, sep: sep.join(a.rsplit(".", 1)[-1] for a in names)  # noqa: E731
    return Text(en=f"{short(needing, ', ')}: {need.en}; {short(rest, ', ')}: no new test cases "
                   "(issue + run screenshot + support verification)",
                zh=f"{short(needing, '、')}：{need.zh}；{short(rest, '、')}：无需新增用例"
                   "（issue 说明 + 运行截图 + 支持情况验证）")


def part2(doc: Document, api_adapt: Text, test_adapt: Text) -> List[Line]:
    """适配方案: API adaptation, test adaptation, the docs check per API."""
    lines: List[Line] = [("api_adapt", api_adapt), ("test_adapt", test_adapt)]
    docs_zh, docs_en = [], []
    for api in doc.apis:
        st = _docs_statement(doc, api)
        if st:
            docs_zh.append(f"{api.rsplit('.', 1)[-1]}：{st.zh}")
            docs_en.append(f"{api.rsplit('.', 1)[-1]}: {st.en}")
    if docs_zh:
        lines.append(("docs", Text(en="; ".join(docs_en), zh="；".join(docs_zh))))
    elif doc.form == "short":
        lines.append(("docs", Text(en="not part of the short form", zh="简要格式未要求")))
    else:
        lines.append(("docs", Text(en="no per-API statement found", zh="未找到逐 API 的资料结论")))
    return lines


def _result(doc: Document, found: Findings) -> Text:
    cov_problems = [p for p in found.problems if p.part in ("coverage", "environment", "block")]
    if cov_problems:
        return Text(en="; ".join(p.en for p in cov_problems), zh="；".join(p.zh for p in cov_problems))
    if doc.form == "short":
        return Text(en="environment block complete; support verification given per API",
                    zh="环境信息完整，各 API 均给出支持情况验证")
    chips, versions = found.chips, found.versions
    left = [p for p in found.pending if p.part == "coverage"]
    if left:
        have = "; ".join(f"{g}: {', '.join('v' + v for v in vs)}" for g, vs in found.covered.items()) or "—"
        return Text(en=f"results recorded for {have}; " + "; ".join(p.en for p in left),
                    zh=f"已记录结果：{have}；" + "；".join(p.zh for p in left))
    return Text(en="results recorded for every required torch version and chip ("
                   + ", ".join(chips) + " x " + ", ".join("v" + v for v in versions) + ")",
                zh="要求的版本与芯片均已记录结果（" + "、".join(chips) + " × "
                   + "、".join("v" + v for v in versions) + "）")


def part3(doc: Document, rules: Dict[str, Any], found: Findings) -> List[Line]:
    """NPU 功能验证: strategy, environment and versions, result, run log."""
    lines: List[Line] = []
    spec = rules["tables"][2]
    tables = [t for t in doc.tables if all(any(re.search(p, h, re.I) for h in t.header) for p in spec["header"])]
    if doc.form == "long" and tables:
        # every API's test-item table: its distinct items, and the rows (item x dtype) they ran as
        rows = [r for t in tables for r in t.rows if r]
        ids = list(dict.fromkeys(clean(r[0], 30) for r in rows))
        shown, more = ids[:12], len(ids) > 12
        lines.append(("strategy", Text(
            en=f"{len(ids)} test items in {len(tables)} table(s), {len(rows)} rows: " + ", ".join(shown)
               + (", …" if more else ""),
            zh=f"{len(tables)} 张用例表共 {len(ids)} 个测试项（{len(rows)} 行）：" + "、".join(shown)
               + (" 等" if more else ""))))
    elif doc.form == "short":
        lines.append(("strategy", Text(en="support verification with verification commands per API",
                                       zh="逐 API 的支持情况验证与验证命令")))
    if found.covered and not found.env_values:  # (with an environment block: the result line lists them)
        env_text = "; ".join(f"{g}: {', '.join('v' + v for v in vs)}" for g, vs in found.covered.items())
        lines.append(("env", Text(en=env_text, zh=env_text)))
    if found.env_values:
        lines.append(("env", Text(en="; ".join(f"{k}: {v}" for k, v in found.env_values.items()),
                                  zh="；".join(found.env_values.values()))))
    lines.append(("result", _result(doc, found)))
    lines.append(("log", Text(en="; ".join(e.en for e in found.evidence) or "missing",
                              zh="；".join(e.zh for e in found.evidence) or "缺失")))
    return lines


def part4(doc: Document, found: Findings, mark: str, api_adapt: Text, test_adapt: Text) -> List[Line]:
    """最终结论: category, API and test adaptation, delivery."""
    claims = '/'.join(doc.claims) or '—'
    lines: List[Line] = [("final_cat", Text(en=f"{claims} {mark}", zh=f"{claims} {mark}")),
                         ("final_api", api_adapt), ("final_test", test_adapt)]
    if not found.problems and found.pending:
        final = Text(en="the issue covers API function, test status, device verification and docs; "
                        f"{len(found.pending)} marked placeholder(s) are left to fill (listed below).",
                     zh="本 Issue 已完成 API 功能、用例情况、NPU 验证和资料检查说明；"
                        f"另有 {len(found.pending)} 处标注的占位项待补充（见下方清单）。")
    elif not found.problems:
        final = Text(en="the issue covers API function, test status, device verification and docs.",
                     zh="本 Issue 已完成 API 功能、用例情况、NPU 验证和资料检查说明。")
    else:
        final = Text(en=f"{len(found.problems)} problem(s) to fix, then review again (listed below).",
                     zh=f"需补充/修改 {len(found.problems)} 项后复审（见下方问题清单）。")
    lines.append(("final", final))
    return lines


def verdict(doc: Document, text: str, facts: Dict[str, Facts], rules: Dict[str, Any],
            found: Findings) -> Review:
    """The review of ``doc``: accepted when the checks found no problem."""
    mark = _mark(doc, found)
    api_adapt = _api_adaptation(doc, found)
    test_adapt = _test_adaptation(doc, text, found, facts)
    lines = {"p1": part1(doc, facts, rules, mark),
             "p2": part2(doc, api_adapt, test_adapt),
             "p3": part3(doc, rules, found),
             "p4": part4(doc, found, mark, api_adapt, test_adapt)}
    return Review(accepted=not found.problems, form=doc.form, apis=doc.apis, claims=doc.claims,
                  problems=found.problems, lines=lines, warnings=found.warnings, pending=found.pending)


# ----------------------------------------------------------------------------- output


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
    if review.pending:
        out.append(f"{getattr(LABELS['pending'], lang)} ({len(review.pending)}){sep.strip()}")
        out += [f"  - [{p.part}] {clean(getattr(p, lang), 400)}" for p in review.pending]
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
        "pending": [{"part": p.part, "zh": p.zh, "en": p.en} for p in review.pending],
        "verdict": {part: [{"item": key, "zh": t.zh, "en": t.en} for key, t in items]
                    for part, items in review.lines.items()},
    }
