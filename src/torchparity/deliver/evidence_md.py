"""Markdown for the evidence sections (upstream test census, docs checks)."""

from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Tuple

from ..results.models import DocsEvidence, TestsEvidence

T = {
    "sites": {"en": "Call sites: {d} direct, {i} indirect{via}.",
              "zh": "调用点：直接 {d} 处，间接 {i} 处{via}。"},
    "via": {"en": " (through {w})", "zh": "（经由 {w}）"},
    "tree": {"en": "Test tree: `{t}`.", "zh": "测试目录：`{t}`。"},
    "head": {"en": "| File | Class | Tests | Direct | Indirect | Device-generic | Skips on the device |",
             "zh": "| 文件 | 测试类 | 用例数 | 直接 | 间接 | 设备通用 | 设备上跳过 |"},
    "none": {"en": "No test in the tree reaches this API.", "zh": "测试目录中没有用例覆盖该 API。"},
    "official": {"en": "Official PyTorch docs", "zh": "PyTorch 官方文档"},
    "vendor": {"en": "Vendor support docs", "zh": "厂商支持文档"},
    "own_page": {"en": "has its own page", "zh": "有独立条目"},
    "anchor": {"en": "documented as an anchor on a page", "zh": "在页面中有锚点条目"},
    "absent": {"en": "absent", "zh": "缺失"},
    "unknown": {"en": "not checked", "zh": "未检查"},
    "present": {"en": "entry present as `{n}`", "zh": "已有条目 `{n}`"},
    "missing": {"en": "no entry: a docs supplement is needed", "zh": "当前资料缺失，需要进行资料补充"},
    "limits": {"en": "limits", "zh": "限制与说明"},
    "yes": {"en": "yes", "zh": "是"},
    "no": {"en": "no", "zh": "否"},
}


def _t(key: str, lang: str, **kw) -> str:
    return T[key][lang].format(**kw)


def render_tests(tests: TestsEvidence, lang: str) -> str:
    via = _t("via", lang, w=", ".join(f"`{v}`" for v in tests.via)) if tests.via else ""
    lines = []
    if tests.tree:
        lines.append(_t("tree", lang, t=tests.tree))
    lines.append(_t("sites", lang, d=tests.direct_sites, i=tests.indirect_sites, via=via))
    if not tests.tests:
        lines.append("")
        lines.append(_t("none", lang))
        return "\n".join(lines)
    groups: Dict[Tuple[str, str], List] = defaultdict(list)
    for site in tests.tests:
        groups[(site.file, site.cls or "")].append(site)
    lines += ["", _t("head", lang), "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    for (file, cls), sites in sorted(groups.items(), key=lambda kv: -sum(s.direct + s.indirect for s in kv[1])):
        skips = sorted({s.skip_reason for s in sites if s.skip_reason})
        generic = _t("yes" if any(s.device_generic for s in sites) else "no", lang)
        lines.append(f"| `{file}` | `{cls or '-'}` | {len(sites)} | {sum(s.direct for s in sites)} | "
                     f"{sum(s.indirect for s in sites)} | {generic} | {'; '.join(skips) or '-'} |")
    return "\n".join(lines)


def render_docs(docs: DocsEvidence, lang: str) -> str:
    lines = []
    if docs.official is not None:
        o = docs.official
        url = f" — {o.url}" if o.url else ""
        note = f" ({o.note})" if o.note else ""
        lines.append(f"- {_t('official', lang)}: {_t(o.status, lang)}{url}{note}")
    if docs.vendor is not None:
        v = docs.vendor
        if v.present:
            chips = ", ".join(f"{c} {'✔' if ok else '✘'}" for c, ok in v.chips.items())
            limits = f"; {_t('limits', lang)}: {v.limits}" if v.limits else ""
            lines.append(f"- {_t('vendor', lang)}: {_t('present', lang, n=v.name)} — {chips}{limits}")
        else:
            lines.append(f"- {_t('vendor', lang)}: {_t('missing', lang)}")
    return "\n".join(lines)


def docs_conclusion(docs: DocsEvidence, lang: str) -> str:
    parts = []
    if docs.official is not None:
        parts.append(f"{_t('official', lang)}: {_t(docs.official.status, lang)}")
    if docs.vendor is not None:
        parts.append(f"{_t('vendor', lang)}: " + (
            _t("present", lang, n=docs.vendor.name) if docs.vendor.present else _t("missing", lang)))
    return "; ".join(parts)
