"""What report.md.j2 reads besides the report itself: one language's view of it (``N``).

Methods take the API as the template has it (a dict of the dumped report); everything is
composed by deliver/narrative.py in that language, enum values through vocab.yaml.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..results.models import Report
from . import narrative as nv
from .vocab import term


class ReportView:
    def __init__(self, report: Report, lang: str, labels: Dict[str, str], files: Dict[str, Any],
                 task: Optional[str] = None):
        self.report = report
        self.task = task
        self.lang = lang
        self.L = labels
        self.files = files or {}
        self.emulated = nv.t("emulated", lang)
        self.where = nv.device_where(report, lang)
        data = report.model_dump(mode="json", by_alias=True)
        self.apis = data["apis"]

    # ------------------------------------------------------------------ small words
    def code(self, text: Any) -> str:
        return nv.code(text)

    def term(self, group: str, value: Any) -> str:
        return term(group, value, self.lang)

    def source_said(self, said: str) -> str:
        return nv.source_said(said, self.lang)

    def ph(self, what: str) -> str:
        return nv.placeholder(what, self.lang)

    def status_word(self, status: str) -> str:
        return nv.status_word(status, self.report.device.emulated, self.lang)

    def passed(self, api: Dict[str, Any]) -> str:
        """"7/9": passes of the counted scenarios; after an interrupt, with the cases of
        this API that never ran ("7/9（未执行 2 项：a[float32]、b[float32]）")."""
        counted = [s for s in api["scenarios"] if s["status"] != "skip"]
        text = f"{sum(s['status'] == 'pass' for s in counted)}/{len(counted)}"
        unrun = (self.report.options.get("unrun") or {}).get(api["name"])
        if unrun:
            ids = ("、" if self.lang == "zh" else ", ").join(unrun)
            text += (f"（未执行 {len(unrun)} 项：{ids}）" if self.lang == "zh"
                     else f" ({len(unrun)} not run: {ids})")
        return text

    @property
    def task_numbers(self) -> str:
        """The task number of the title: the ``--task`` name, else a placeholder."""
        return self.task or self.ph(self.L["ph_task_no"])

    @property
    def related(self) -> List[str]:
        """关联任务 Issue: one line per task (seed 000: "链接（任务32：torch.autograd.gradcheck）")."""
        sep, c = nv.t("sep", self.lang), ("：" if self.lang == "zh" else ": ")
        lp, rp = ("（", "）") if self.lang == "zh" else (" (", ")")
        link = self.ph(self.L["ph_issue"])
        if self.task:
            names = sep.join(a["name"] for a in self.apis)
            return [f"{link}{lp}{self.L['task']}{self.task}{c}{names}{rp}"]
        number = self.ph(self.L["ph_task_no"])
        return [f"{link}{lp}{self.L['task']}{number}{c}{a['name']}{rp}" for a in self.apis]

    @property
    def env(self):
        """The environment record of the report's device (deliver/env_record.py)."""
        from .env_record import record

        return record(self.report.environment, self.report.device, self.lang)

    @property
    def hardware(self) -> str:
        """The report's device, then each other device of the run (``Report.runs``)."""
        from .env_record import record

        sep = "；" if self.lang == "zh" else "; "
        return sep.join(record(env, dev, self.lang).hardware for env, dev in
                        [(self.report.environment, self.report.device)]
                        + [(r.environment, r.device) for r in self.report.runs])

    @property
    def env_line(self) -> str:
        """验证环境及版本: the same record as the environment block, on one line."""
        rec = self.env
        sep = "；" if self.lang == "zh" else "; "
        return sep.join([rec.hardware, rec.versions, f"CANN {rec.cann}"])

    # ------------------------------------------------------------------ usage, section 1
    @property
    def categories(self) -> List[Any]:
        """(category, {apis, reason}) in order of first appearance."""
        out: Dict[Any, Dict[str, Any]] = {}
        for api in self.apis:
            v = api["verdict"]
            cat = v.get("category") or term("verdict_status", "unknown", self.lang)
            if cat == "undetermined":  # a word, not a community category code: in the report's language
                cat = term("category", cat, self.lang)
            reason = nv.category_reason(api, self.lang) + nv.t("stop", self.lang)
            out.setdefault((cat, reason), {"apis": [], "reason": reason})["apis"].append(f"`{api['name']}`")
        return [(cat, group) for (cat, _), group in out.items()]

    def summary(self, api: Dict[str, Any]) -> str:
        return nv.api_summary(api, self.lang)

    def docline(self, api: Dict[str, Any]) -> Optional[str]:
        """The docstring's first sentence, in the English report only: the zh text describes
        the API in Chinese (N.summary, composed from the analysis), never in English prose."""
        return nv.docstring_line(api) if self.lang == "en" else None

    def involvement(self, api: Dict[str, Any]) -> str:
        return nv.involvement_text(api["analysis"], self.lang)

    def footprint(self, api: Dict[str, Any]) -> List[str]:
        return nv.footprint_summary(api["analysis"].get("footprint") or [], self.lang)

    @property
    def s1_conclusions(self) -> List[str]:
        sep = nv.t("sep", self.lang)
        cases = [f"`{a['name']}`" for a in self.apis if (a["verdict"].get("category") or "").startswith("1.1")]
        rest = [f"`{a['name']}`" for a in self.apis if (a["verdict"].get("category") or "").startswith("1.2")]
        unknown = [f"`{a['name']}`" for a in self.apis if not (a["verdict"].get("category") or "").startswith("1.")]
        out = []
        if unknown:
            out.append(self.L["s1_conclusion_undetermined"].replace("{apis}", sep.join(unknown)))
        if cases:
            out.append(self.L["s1_conclusion_cases"].replace("{apis}", sep.join(cases)))
        if rest:
            out.append(self.L["s1_conclusion_none"].replace("{apis}", sep.join(rest)))
        return out

    # ------------------------------------------------------------------ section 2
    @property
    def has_tests(self) -> bool:
        return any((a.get("evidence") or {}).get("tests") for a in self.apis)

    @property
    def upstream_tables(self) -> str:
        from .evidence_md import upstream_tables

        return upstream_tables(self.apis, self.lang, self.ph(self.L["ph_upstream"]))

    # ------------------------------------------------------------------ section 3
    def docs(self, api: Dict[str, Any]) -> List[str]:
        from .evidence_md import docs_lines

        ev = api.get("evidence") or {}
        lines = docs_lines(ev.get("docs"), ev.get("not_run") or {}, self.lang)
        diffs = nv.docs_differences(api, self.report, self.lang)
        if diffs:
            lines += diffs
        elif agree := nv.docs_agreement(api, self.report, self.lang):
            lines.append(agree)
        return lines

    def docs_short(self, api: Dict[str, Any]) -> str:
        from .evidence_md import docs_summary

        ev = api.get("evidence") or {}
        text = docs_summary(ev.get("docs"), self.lang) or self.L["docs_unknown"]
        diffs = nv.docs_differences(api, self.report, self.lang)
        return text + ("".join(nv.t("semi", self.lang) + d for d in diffs))

    # ------------------------------------------------------------------ section 4
    def detail(self, s: Dict[str, Any]) -> str:
        return nv.detail_text(s, self.lang)

    def support(self, api: Dict[str, Any]) -> List[str]:
        return nv.support_lines(api, self.lang)

    def snippets(self, api: Dict[str, Any]) -> List[str]:
        return [text for s in nv.pick_snippets(api) if (text := nv.snippet_with_output(s, self.lang))]

    def all_commented(self, api: Dict[str, Any]) -> bool:
        """Every snippet shown ends with the comment the label promises."""
        picked = nv.pick_snippets(api)
        return bool(picked) and all(nv.snippet_and_comment(s, self.lang)[1] for s in picked)

    def covers(self, s: Dict[str, Any], api: Dict[str, Any]) -> str:
        return nv.covers_text(s, api, self.lang)

    def expected(self, s: Dict[str, Any]) -> str:
        return nv.expected_text(s, self.lang)

    def result(self, s: Dict[str, Any]) -> str:
        return nv.result_cell(s, self.lang)

    def dtype(self, s: Dict[str, Any]) -> str:
        """The dtype cell: the row's dtype, or "any" for a case that takes no dtype."""
        return nv.dtype_cell(s, self.lang)

    def dtype_word(self, s: Dict[str, Any]) -> str:
        return nv.dtype_word(s, self.lang) or "—"

    def category_reason(self, api: Dict[str, Any]) -> str:
        return nv.category_reason(api, self.lang)

    @property
    def stop(self) -> str:
        return nv.t("stop", self.lang)

    @property
    def test_files(self) -> List[str]:
        tests = self.files.get("tests") or {}
        # the judged files run anywhere (any TORCHPARITY_DEVICE); the npu style's need torch_npu
        for style in ("npu-judged", "npu"):
            if tests.get(style):
                return list(tests[style])
        return [f for paths in tests.values() for f in paths]

    @property
    def commands(self) -> List[str]:
        """The test files 测试方法 runs: the generated ones, else the names gentest gives them."""
        if self.test_files:
            return self.test_files
        from .gentest import file_name

        out = []
        for a in self.apis:
            try:
                out.append(f"tests/npu-judged/{file_name(a['name'])}")
            except Exception:
                continue
        return out

    @property
    def results(self) -> List[Dict[str, Any]]:
        """Seed 001's 测试结果: per chip group, one row for each device this run checked (the
        report's own, then each of ``Report.runs``) and a placeholder for every required
        torch version no row is (what only hardware can give)."""
        from .matrix import chips, chips_for, short_torch
        from .review import load_rules

        versions = load_rules()["coverage"]["versions"]
        sep = nv.t("sep", self.lang)
        own = [(a["name"], self.passed(a), a["verdict"]["status"]) for a in self.apis]
        devices = [(self.report.environment, self.report.device, own)]
        devices += [(r.environment, r.device, [(a.name, f"{a.passed}/{a.total}", a.status) for a in r.apis])
                    for r in self.report.runs]
        rows = []  # (chip groups, where, torch version, row)
        for env, dev, apis in devices:
            run = sep.join(f"`{nv.short_name(name)}` {passed} {nv.status_word(status, dev.emulated, self.lang)}"
                           for name, passed, status in apis)
            where, torch_v = nv.where_of(env, dev, self.lang), short_torch(env.torch)
            if self.lang == "zh":
                row = f"v{torch_v}（{self.L['this_run']}，torch {env.torch}，{where}）：{run}"
            else:
                row = f"v{torch_v} ({self.L['this_run']}, torch {env.torch}, {where}): {run}"
            rows.append(({c.group for c in chips_for(env, dev)}, where, torch_v, row))
        done = {(g, v) for groups, _, v, _ in rows for g in groups}
        out = [{"name": where, "rows": [row]} for groups, where, _, row in rows if not groups]
        for group in dict.fromkeys(c.group for c in chips()):
            mine = [row for groups, _, _, row in rows if group in groups]
            for v in versions:
                if (group, v) in done:
                    continue
                what = self.L["ph_result"].replace("{group}", group).replace("{version}", v)
                mine.append(f"v{v}{'：' if self.lang == 'zh' else ': '}{self.ph(what)}")
            out.append({"name": group, "rows": mine})
        return out

    # ------------------------------------------------------------------ section 5
    def status(self, api: Dict[str, Any]) -> str:
        return nv.status_analysis(api, self.report, self.lang)

    def adapt(self, api: Dict[str, Any]) -> str:
        return nv.adaptation(api, self.lang)
