"""Markdown (and terminal tables) for the evidence sections: upstream test census, docs."""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, Mapping, Optional

import yaml

from ..evidence.census_index import INDEX_NOTE
from ..results.models import DocsEvidence, Evidence, Recommendation, TestsEvidence
from .format import HERE


@lru_cache(maxsize=None)
def _chip_terms_en() -> Dict[str, str]:
    """The vendor docs' zh chip terms -> the product names English text gives (chips.yaml)."""
    data = yaml.safe_load((HERE / "chips.yaml").read_text(encoding="utf-8"))
    return {c["term"]: c.get("term_en") or c["term"] for c in data["chips"]}


def chip_marks(chips: Mapping[str, bool], lang: str) -> str:
    """A vendor entry's chip marks, each chip named as the text's language names it (the
    environment line's name): never the zh product name inside English text."""
    names = _chip_terms_en() if lang == "en" else {}
    return ("、" if lang == "zh" else ", ").join(f"{names.get(c, c)} {'✔' if ok else '✘'}" for c, ok in chips.items())


def class_runs_label(c, tests: TestsEvidence, lang: str) -> str:
    """How a census class reaches the device: device-generic, a class whose tests run on the
    backend's device (Ascend's own test/npu tests), or neither."""
    if c.device_generic:
        return _r("generic_yes", lang)
    runs = [t.runs_on_backend for t in tests.tests if t.file == c.file and t.cls == c.cls and t.kind == "test"]
    k = sum(1 for r in runs if r is True)
    if runs and k == len(runs):
        return _r("generic_runs", lang)
    if k:  # some of the class's tests reach the device (they name it), the rest do not
        return _r("generic_some", lang, k=k, n=len(runs))
    return _r("generic_no" if runs and all(r is False for r in runs) else "generic_plain", lang)

T = {
    "head1": {"en": "| API | Upstream tests | Main location (file → class) | Conclusion |",
              "zh": "| API | 上游测试情况 | 主要测试位置 | 结论 |"},
    "head2": {"en": "| API | Has upstream tests | Involves device tensors | Backend should add tests | Priority |",
              "zh": "| API | 上游已有测试 | 是否涉及设备 Tensor | 是否建议补测 | 优先级 |"},
    "sites": {"en": "{d} direct and {i} indirect call sites in {t} tests ({f} files)",
              "zh": "直接调用 {d} 处、间接调用 {i} 处，分布于 {t} 个用例（{f} 个文件）"},
    "via": {"en": "Indirect sites go through: {w}.", "zh": "间接调用经由：{w}。"},
    "tree": {"en": "Test tree: `{t}`.", "zh": "测试目录：`{t}`。"},
    "classes": {"en": "| File | Class | Tests | Direct | Indirect | Device-generic | Runs on the device | Skips |",
                "zh": "| 文件 | 测试类 | 用例数 | 直接 | 间接 | 设备通用 | 在设备上运行 | 跳过条件 |"},
    "none": {"en": "No test in the tree reaches this API.", "zh": "测试目录中没有用例覆盖该 API。"},
    "official": {"en": "Official PyTorch docs", "zh": "PyTorch 官方文档"},
    "vendor": {"en": "Vendor support docs", "zh": "厂商支持文档"},
    "own_page": {"en": "has its own page", "zh": "有独立条目"},
    "anchor": {"en": "documented as an anchor on a page", "zh": "在页面中有锚点条目"},
    "absent": {"en": "absent", "zh": "缺失"},
    "unknown": {"en": "not checked against a docs tree", "zh": "未对照文档源码检查"},
    "present": {"en": "entry present as `{n}`", "zh": "已有条目 `{n}`"},
    "missing": {"en": "no entry: a docs supplement is needed", "zh": "当前资料缺失，需要进行资料补充"},
    "limits": {"en": "limits", "zh": "限制与说明"},
    "not_run": {"en": "not run — enable it with `{o}`", "zh": "未执行 —— 使用 `{o}` 开启"},
    "yes": {"en": "yes", "zh": "是"},
    "no": {"en": "no", "zh": "否"},
    "unknown_short": {"en": "unknown", "zh": "未知"},
    "conditional": {"en": "conditional", "zh": "视条件"},
    "notes": {"en": "Not counted: {n}", "zh": "未统计：{n}"},
}
INVOLVEMENT = {"none": {"en": "no", "zh": "不涉及"}, "indirect": {"en": "indirectly", "zh": "间接涉及"},
               "direct": {"en": "directly", "zh": "直接涉及"}}
PRIORITY = {"high": {"en": "high", "zh": "高"}, "medium": {"en": "medium", "zh": "中"},
            "low": {"en": "low", "zh": "低"}}
MAX_CLASSES = 8


def _t(key: str, lang: str, **kw) -> str:
    return T[key][lang].format(**kw)


def _yn(value: Optional[bool], lang: str) -> str:
    if value is None:
        return _t("unknown_short", lang)
    return _t("yes" if value else "no", lang)


def _main_location(tests: TestsEvidence) -> str:
    parts = [f"`{c.file}` → `{c.cls}` ({c.direct + c.indirect})" for c in tests.classes[:3]]
    return "; ".join(parts) or "-"


def render_tests(api: str, tests: TestsEvidence, rec: Optional[Recommendation], lang: str) -> str:
    n_tests = len([t for t in tests.tests if t.kind == "test"])
    lines = []
    if tests.tree:
        lines += [_t("tree", lang, t=tests.tree), ""]
    conclusion = rec.reason.model_dump()[lang] if rec else "-"
    lines += [_t("head1", lang), "| --- | --- | --- | --- |",
              f"| `{api}` | {_t('sites', lang, d=tests.direct_sites, i=tests.indirect_sites, t=n_tests, f=tests.files)}"
              f" | {_main_location(tests)} | {conclusion} |", ""]
    if rec is not None:
        inv = INVOLVEMENT.get(rec.device_involvement or "", {}).get(lang, _t("unknown_short", lang))
        prio = PRIORITY.get(rec.priority or "", {}).get(lang, "-")
        lines += [_t("head2", lang), "| --- | --- | --- | --- | --- |",
                  f"| `{api}` | {_yn(rec.has_upstream_tests, lang)} | {inv} | {_yn(rec.add_tests, lang)} | {prio} |", ""]
    if tests.via:
        lines += [_t("via", lang, w=", ".join(f"`{v}`" for v in tests.via)), ""]
    if not tests.classes and not tests.tests:
        lines.append(_t("none", lang))
        return "\n".join(lines)
    lines += [_t("classes", lang), "| --- | --- | ---: | ---: | ---: | --- | --- | --- |"]
    for c in tests.classes[:MAX_CLASSES]:
        generic = _yn(c.device_generic, lang)
        if c.device_generic and (c.only_for or c.except_for):
            limits = []
            if c.only_for:
                limits.append(f"only_for={','.join(c.only_for)}")
            if c.except_for:
                limits.append(f"except_for={','.join(c.except_for)}")
            generic += f" ({'; '.join(limits)})"
        skips = sorted({t.skip_reason for t in tests.tests
                        if t.cls == c.cls and t.file == c.file and t.skip_reason})
        if c.skip_reason:
            skips.insert(0, c.skip_reason)
        lines.append(f"| `{c.file}` | `{c.cls}` | {c.tests} | {c.direct} | {c.indirect} | {generic} | "
                     f"{_yn(c.backend_included, lang) if c.device_generic else '-'} | {'; '.join(skips).replace('|', '/') or '-'} |")
    if tests.notes:
        lines += ["", _t("notes", lang, n=" ".join(tests.notes))]
    return "\n".join(lines)


def render_docs(docs: DocsEvidence, not_run: Mapping[str, str], lang: str) -> str:
    lines = []
    if docs.official is not None:
        o = docs.official
        url = f" — {o.url}" if o.url else ""
        note = f" ({o.note})" if o.note else ""
        extra = f"; {_t('not_run', lang, o=not_run['docs.official'])}" if "docs.official" in not_run else ""
        lines.append(f"- {_t('official', lang)}: {_t(o.status, lang)}{url}{note}{extra}")
    if docs.vendor is not None:
        v = docs.vendor
        if v.present:
            chips = chip_marks(v.chips, lang)
            limits = f"; {_t('limits', lang)}: {v.limits}" if v.limits else ""
            lines.append(f"- {_t('vendor', lang)}: {_t('present', lang, n=v.name)} — {chips}{limits}")
        else:
            lines.append(f"- {_t('vendor', lang)}: {_t('missing', lang)}")
    elif "docs.vendor" in not_run:
        lines.append(f"- {_t('vendor', lang)}: {_t('not_run', lang, o=not_run['docs.vendor'])}")
    return "\n".join(lines)


def docs_conclusion(docs: DocsEvidence, lang: str) -> str:
    parts = []
    if docs.official is not None:
        parts.append(f"{_t('official', lang)}: {_t(docs.official.status, lang)}")
    if docs.vendor is not None:
        parts.append(f"{_t('vendor', lang)}: " + (
            _t("present", lang, n=docs.vendor.name) if docs.vendor.present else _t("missing", lang)))
    return "; ".join(parts)


def print_evidence(found: Mapping[str, Evidence], console) -> None:
    """The evidence command's terminal output: the same Markdown, rendered by rich."""
    from rich.markdown import Markdown

    for api, ev in found.items():
        text = [f"## {api}"]
        if ev.tests is not None:
            text.append(render_tests(api, ev.tests, ev.recommendation, "en"))
        elif "tests" in ev.not_run:
            text.append(f"Upstream tests: {_t('not_run', 'en', o=ev.not_run['tests'])}")
        if ev.docs is not None:
            text.append(render_docs(ev.docs, ev.not_run, "en"))
        console.print(Markdown("\n\n".join(text)))


# ----------------------------------------------------------------------------- the report's views
# (report.md.j2 through report_view.ReportView: one table per kind for all APIs, as in seed 001)

R = {
    "official_unknown": {"en": "not checked against a docs tree (no `--docs DIR`); page by the naming rule: {url}",
                         "zh": "未对照文档源码检查（未给出 `--docs DIR`）；按命名规则推断的页面：{url}"},
    "vendor_not_run": {"en": "not checked (enable it with `--vendor-docs DIR`)",
                       "zh": "未检查（使用 `--vendor-docs DIR` 开启）"},
    "official_short": {"en": "official docs: {s}", "zh": "官方文档：{s}"},
    "vendor_short": {"en": "vendor docs: {s}", "zh": "厂商支持文档：{s}"},
    "class_line": {"en": "`{api}`: {classes}", "zh": "`{api}`：{classes}"},
    "class_item": {"en": "`{file}` → `{cls}` ({n} sites, {generic})", "zh": "`{file}` → `{cls}`（{n} 处，{generic}）"},
    "generic_yes": {"en": "device-generic", "zh": "设备通用"},
    "generic_no": {"en": "not device-generic, not run on the device", "zh": "非设备通用，不在设备上运行"},
    "generic_some": {"en": "not device-generic; tests on the device: {k} of {n}",
                     "zh": "非设备通用，{n} 个用例中 {k} 个在设备上运行"},
    "generic_plain": {"en": "not device-generic", "zh": "非设备通用"},
    "generic_runs": {"en": "not device-generic, runs on the device", "zh": "非设备通用，在设备上运行"},
    "official_vendor_page": {"en": "not checked against a docs tree (no `--docs DIR`); the page the vendor entry links to: {url}",
                             "zh": "未对照文档源码检查（未给出 `--docs DIR`）；厂商资料所链接的页面：{url}"},
    "indexed": {"en": "Test tree: `{t}` — the census index shipped with torchparity (`--tests DIR` recomputes it).",
                "zh": "测试目录：`{t}`（随 torchparity 发布的上游用例统计索引；使用 `--tests DIR` 可重新统计）。"},
}


def _r(key: str, lang: str, **kw) -> str:
    return R[key][lang].format(**kw)


def upstream_tables(apis, lang: str, placeholder: str) -> str:
    """Seed 001's two upstream tables, one row per API; cells the census could not fill
    (no test folder) hold ``placeholder``; the main test classes of each API follow."""
    from .vocab import term

    sep = "；" if lang == "zh" else "; "
    rows1, rows2, classes, trees = [], [], [], []
    for api in apis:
        name = api["name"]
        ev = api.get("evidence") or {}
        tests = TestsEvidence.model_validate(ev["tests"]) if ev.get("tests") else None
        rec = Recommendation.model_validate(ev["recommendation"]) if ev.get("recommendation") else None
        inv = api["analysis"].get("device_involvement") or (rec.device_involvement if rec else None)
        inv_text = term("involvement", inv, lang) if inv else _t("unknown_short", lang)
        add = (api["verdict"].get("category") or "").startswith("1.1")
        if tests is None:
            rows1.append(f"| `{name}` | {placeholder} | {placeholder} | {placeholder} |")
            rows2.append(f"| `{name}` | {placeholder} | {inv_text} | {_yn(add, lang)} | {placeholder} |")
            continue
        n_tests = len([t for t in tests.tests if t.kind == "test"])
        sites = _t("sites", lang, d=tests.direct_sites, i=tests.indirect_sites, t=n_tests, f=tests.files)
        conclusion = rec.reason.model_dump()[lang] if rec else "-"
        rows1.append(f"| `{name}` | {sites} | {_main_location(tests)} | {conclusion} |")
        if rec is not None:
            prio = term("priority", rec.priority, lang) if rec.priority else "-"
            rows2.append(f"| `{name}` | {_yn(rec.has_upstream_tests, lang)} | {inv_text} | "
                         f"{_yn(rec.add_tests, lang)} | {prio} |")
        else:
            rows2.append(f"| `{name}` | {_yn(bool(tests.tests), lang)} | {inv_text} | {_yn(add, lang)} | - |")
        items = [_r("class_item", lang, file=c.file, cls=c.cls, n=c.direct + c.indirect,
                    generic=class_runs_label(c, tests, lang))
                 for c in tests.classes[:3]]
        if items:
            classes.append("- " + _r("class_line", lang, api=name, classes=sep.join(items)))
        if tests.tree:
            trees.append(_r("indexed", lang, t=tests.tree) if INDEX_NOTE in tests.notes
                         else _t("tree", lang, t=tests.tree))
    out = [_t("head1", lang), "| --- | --- | --- | --- |", *rows1, "",
           _t("head2", lang), "| --- | --- | --- | --- | --- |", *rows2]
    if classes:
        out += ["", *dict.fromkeys(trees), "", *classes]
    return "\n".join(out)


def docs_lines(docs, not_run, lang: str):
    """Section 3 of one API: the official docs, then the vendor support docs."""
    lines = []
    docs = DocsEvidence.model_validate(docs) if docs else DocsEvidence()
    v = docs.vendor
    if docs.official is not None:
        o = docs.official
        if o.status == "unknown":
            # the vendor entry's link is the page the docs know; a name-rule guess beside it
            # (gradcheck -> .../torch.autograd.gradcheck.html) may name a page that does not exist
            if v is not None and v.url:
                text = _r("official_vendor_page", lang, url=v.url)
            else:
                text = _r("official_unknown", lang, url=o.url or "-")
        else:
            text = _t(o.status, lang) + (f" — {o.url}" if o.url else "")
        lines.append(f"{_t('official', lang)}{'：' if lang == 'zh' else ': '}{text}")
    colon = "：" if lang == "zh" else ": "
    if v is not None:
        if v.present:
            chips = chip_marks(v.chips, lang)
            limits = f"{'；' if lang == 'zh' else '; '}{_t('limits', lang)}{colon}{v.limits}" if v.limits else ""
            lines.append(f"{_t('vendor', lang)}{colon}{_t('present', lang, n=v.name)}"
                         f"{'（' if lang == 'zh' else ' ('}{chips}{'）' if lang == 'zh' else ')'}{limits}")
        else:
            lines.append(f"{_t('vendor', lang)}{colon}{_t('missing', lang)}")
    elif "docs.vendor" in (not_run or {}):
        lines.append(f"{_t('vendor', lang)}{colon}{_r('vendor_not_run', lang)}")
    return lines


def docs_summary(docs, lang: str) -> str:
    if not docs:
        return ""
    docs = DocsEvidence.model_validate(docs)
    parts = []
    if docs.official is not None:
        parts.append(_r("official_short", lang, s=_t(docs.official.status, lang)))
    if docs.vendor is not None:
        parts.append(_r("vendor_short", lang, s=_t("present", lang, n=docs.vendor.name)
                        if docs.vendor.present else _t("missing", lang)))
    return ("；" if lang == "zh" else "; ").join(parts)
