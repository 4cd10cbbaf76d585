"""Reading the text against its evidence (issue 46 item 6): the bundle's report.json.

The template checks (checks.py) ask whether a part is there; these ask whether what it says
is true of the run it describes: each claim of the text against the field of report.json
that would support it. One function per kind of claim; each names every sentence it finds
false. Without a bundle, ``unchecked`` says which of them could not be made.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...results.models import Report, Text
from .document import Document, clean
from .verdict import Problem

# the kinds of claim read against the bundle (their names, for "not checked")
KINDS = [
    Text(zh="「实测」与结果来源（硬件/模拟设备）", en="'measured' against the results' provenance (hardware / emulated)"),
    Text(zh="环境信息与报告包的环境记录", en="the environment block against the bundle's environment record"),
    Text(zh="运行方式（单进程/分布式环境）", en="where the cases ran (in-process / a world of ranks)"),
    Text(zh="「API 已支持」与设备/CPU 的结果", en="'the API is supported' against the device and CPU outcomes"),
    Text(zh="资料检查结论与数据类型事实", en="the docs check against the dtypes that ran"),
    Text(zh="能力限制与事实", en="limits against the facts"),
    Text(zh="分类、设备涉及与 API 自身的算子足迹", en="category and device involvement against the API's own footprint"),
    Text(zh="上游用例结论与用例统计", en="the upstream conclusion against the test census"),
]

_FENCE = re.compile(r"```.*?```", re.S)
# "实测" said of a prediction; the banner's "不是硬件实测结果" / "非硬件实测" negate it
_MEASURED_ZH = re.compile(r"(?<!硬件)(?<!不是硬件)实测")
_MEASURED_EN = re.compile(r"\b(?:measured|measurement)\b", re.I)
_NOT_MEASURED_EN = re.compile(r"not (?:a )?hardware (?:result|measurement)", re.I)
_WORLD = re.compile(r"个进程组成的分布式环境|world of \d+ (?:processes|ranks)", re.I)
_WORLD_SOME = re.compile(r"其中 .{0,200}在 \d+ 个进程组成的分布式环境|of its cases .{0,200}run in a world", re.I)
_SUPPORTED = re.compile(r"API\s*已支持|the API is supported", re.I)
_AGREE = re.compile(r"资料与(?:实测|模拟设备预测)一致|docs and (?:the measurement|the emulated device's prediction) agree",
                    re.I)
_REFUSE = re.compile(r"不支持|无法运行|能力限制|refuse|cannot run|unsupported|capability limit", re.I)
_DTYPES = ("float64", "float32", "float16", "bfloat16", "complex64", "complex128", "int64", "int32", "int16",
           "int8", "uint8", "bool")
_DTYPE_RE = re.compile(r"(?<![\w])(" + "|".join(_DTYPES) + r")(?![\w])")
_NO_DEVICE_TESTS = re.compile(r"没有在设备上运行的用例|no test runs on the device", re.I)
_NO_OPS = re.compile(r"不涉及 —— |其场景中没有设备算子执行|自身不下发设备算子|issues no device operator itself|"
                     r"no device operator ran", re.I)


def unchecked() -> Text:
    """What review could not check without a bundle."""
    return Text(zh="未给出报告包（`--report DIR` 或 issue 旁的 report.json），以下核对未进行："
                   + "；".join(k.zh for k in KINDS),
                en="no bundle given (`--report DIR`, or a report.json beside the issue): not checked: "
                   + "; ".join(k.en for k in KINDS))


def _prose(doc: Document) -> List[str]:
    """The text's lines outside code blocks."""
    out, fence = [], False
    for line in doc.lines:
        if line.strip().startswith("```"):
            fence = not fence
            continue
        out.append("" if fence else line)
    return out


def _owners(line: str, apis: Dict[str, Dict[str, Any]], context: List[str]) -> List[str]:
    """The APIs a line speaks of: those it names (whole or by their last part), else the
    section's."""
    named = [n for n in apis if n in line]
    if not named:
        named = [n for n in apis if re.search(r"(?<![\w.])`?" + re.escape(n.rsplit(".", 1)[-1]) + r"`?(?![\w])",
                                                line)]
    return named or context


def _by_line(doc: Document, apis: Dict[str, Dict[str, Any]]):
    """(line, the APIs it speaks of) for every prose line, an API section's heading
    setting the context of the lines below it."""
    context: List[str] = []
    for line in _prose(doc):
        if line.lstrip().startswith("#"):
            named = [n for n in apis if n in line]
            context = named
            if named:
                continue
        yield line, _owners(line, apis, context)


RUN_KINDS = KINDS[:6]  # what only the run the text reports can settle


def same_run(doc: Document, report: Report) -> bool:
    """Whether the text reports the bundle's run: an emulated bundle and a text that says
    its device is emulated, or a hardware bundle whose chip the text's hardware line names.
    A contributor's hardware text reviewed with a CPU bundle (our analysis only) is not."""
    from ..env_record import record

    text = "\n".join(_prose(doc))
    if report.device.emulated:
        return bool(re.search(r"模拟设备|emulated", text, re.I))
    recs = [record(report.environment, report.device, lang) for lang in ("zh", "en")]
    names = {n for r in recs for n in r.products + ([r.soc] if r.soc else [])}
    span = doc.span("env")
    hw = ""
    if span is not None:
        hw = next((ln for ln in doc.lines[span[0] + 1: span[1]] if re.search(r"硬件|hardware", ln, re.I)), "")
    return bool(names) and any(n in hw for n in names)


def check_truth(doc: Document, report: Report) -> Tuple[List[Problem], List[Text]]:
    """Every claim of the text against the bundle ``report`` (one Problem per false one),
    and notes on what could not be checked: a bundle of another run (a CPU check beside a
    hardware text) settles the API's own facts (footprint, census), not the run's."""
    from ..narrative import both_raised, docs_agreement, docs_differences, world_rows, world_size

    data = report.model_dump(mode="json", by_alias=True)
    # the text's own APIs (a bundle may hold many more: an issue speaks of its task's)
    apis = {}
    for a in data["apis"]:  # the text may name an API by its qualified name
        for n in (a["name"], a["analysis"].get("qualified_name")):
            if n and n in doc.apis and n not in apis:
                apis[n] = a
    problems: List[Problem] = []
    notes: List[Text] = []
    ours = same_run(doc, report)
    if ours:
        problems += _provenance(doc, report)
        problems += _environment(doc, report)
    else:
        notes.append(Text(zh="报告包来自另一次运行（设备或环境与正文不同），只核对 API 自身的事实（算子足迹、上游用例统计）；"
                             "未核对：" + "；".join(k.zh for k in RUN_KINDS),
                          en="the bundle is of another run (its device or environment is not the text's): only the "
                             "API's own facts were checked (footprint, census); not checked: "
                             + "; ".join(k.en for k in RUN_KINDS)))
    seen = set()
    for line, owners in _by_line(doc, apis):
        for name in owners:
            api = apis[name]
            key = (api["name"], line)
            if key in seen:
                continue
            seen.add(key)
            problems += _sentence(line, api, report, ours, both_raised=both_raised, world_rows=world_rows,
                                  world_size=world_size,
                                  docs_agreement=docs_agreement, docs_differences=docs_differences)
    return problems, notes


def _provenance(doc: Document, report: Report) -> List[Problem]:
    if not report.device.emulated:
        return []
    out: List[Problem] = []
    for line in _prose(doc):
        if _MEASURED_ZH.search(line):
            out.append(Problem("truth", f"模拟设备的结果是预测，却写作「实测」：「{clean(line, 80)}」",
                               f"an emulated result is a prediction, yet the text says 实测: '{clean(line, 80)}'"))
        elif _MEASURED_EN.search(line) and not _NOT_MEASURED_EN.search(line):
            out.append(Problem("truth", f"模拟设备的结果是预测，却写作 measured：「{clean(line, 80)}」",
                               f"an emulated result is a prediction, yet the text says measured: '{clean(line, 80)}'"))
        if re.search(r"资料需更新|docs need updating", line):
            out.append(Problem("truth", f"模拟设备的预测不能要求厂商更新资料（应为「待硬件确认」）：「{clean(line, 80)}」",
                               f"an emulated prediction cannot ask the vendor to update its docs (say: to be confirmed "
                               f"on hardware): '{clean(line, 80)}'"))
    return out


def _environment(doc: Document, report: Report) -> List[Problem]:
    """The environment block names the bundle's device, CANN release and torch version,
    and says the device is emulated where it is."""
    from ..env_record import record

    span = doc.span("env")
    if span is None:
        return []
    text = "\n".join(doc.lines[span[0] + 1: span[1]])
    hw = next((ln for ln in text.splitlines() if re.search(r"硬件|hardware", ln, re.I)), "")
    cann = next((ln for ln in text.splitlines() if "CANN" in ln), "")
    out: List[Problem] = []
    recs = [record(report.environment, report.device, lang) for lang in ("zh", "en")]
    names = {n for r in recs for n in r.products + ([r.soc] if r.soc else [])}
    if hw and names and not any(n in hw for n in names):
        out.append(Problem("truth", f"环境信息的硬件与报告包不符（报告包：{recs[0].name}）：「{clean(hw, 80)}」",
                           f"the environment's hardware is not the bundle's ({recs[1].name}): '{clean(hw, 80)}'"))
    if hw and report.device.emulated and not re.search(r"模拟|emulat", hw, re.I):
        out.append(Problem("truth", f"环境信息未说明设备为模拟设备：「{clean(hw, 80)}」",
                           f"the environment does not say the device is emulated: '{clean(hw, 80)}'"))
    version = recs[0].cann_version
    if cann and version and version not in cann:
        out.append(Problem("truth", f"CANN 版本与报告包不符（报告包：{version}）：「{clean(cann, 80)}」",
                           f"the CANN version is not the bundle's ({version}): '{clean(cann, 80)}'"))
    torch = report.environment.torch
    vline = next((ln for ln in text.splitlines() if re.search(r"torch\s+\d", ln)), "")
    if vline and torch not in vline:
        out.append(Problem("truth", f"torch 版本与报告包不符（报告包：{torch}）：「{clean(vline, 80)}」",
                           f"the torch version is not the bundle's ({torch}): '{clean(vline, 80)}'"))
    return out


def _passing_dtypes(api: Dict[str, Any]) -> set:
    return {s.get("dtype") for s in api["scenarios"] if s["status"] == "pass"}


def _limited_dtypes(api: Dict[str, Any]) -> set:
    return {s.get("dtype") for s in api["scenarios"] if s["status"] == "unsupported"}


def _sentence(line: str, api: Dict[str, Any], report: Report, ours: bool, **fn: Any) -> List[Problem]:
    """The claims of one line about one API (the run's claims only where ``ours``)."""
    out: List[Problem] = []
    name = api["name"]
    q = clean(line, 80)

    def bad(zh: str, en: str) -> None:
        out.append(Problem("truth", f"{name}：{zh}：「{q}」", f"{name}: {en}: '{q}'"))

    out += _api_facts(line, api, bad)
    if not ours:
        return out

    if _WORLD.search(line) and not any(fn["world_size"](s) for s in api["scenarios"]):
        # a row that ran in a world says so whatever its status (a hollow row ran there too)
        bad("没有场景在分布式环境中运行，却写在多进程分布式环境中运行",
            "no case ran in a world of ranks, yet the text says it runs in one")
    elif _WORLD.search(line) and not _WORLD_SOME.search(line):
        counted = [s for s in api["scenarios"] if s["status"] != "skip"]
        if len(fn["world_rows"](api)) < len(counted):
            bad("只有部分场景在分布式环境中运行，却写作全部", "only some cases ran in a world, yet the text says all did")
    if _SUPPORTED.search(line):
        ok = [s for s in api["scenarios"] if s["status"] == "pass"]
        if ok and all(fn["both_raised"](s) for s in ok):
            bad("设备与 CPU 均抛出异常，却写「API 已支持」",
                "the device and the CPU both raised, yet the text says the API is supported")
        elif not ok:
            bad("没有通过的场景，却写「API 已支持」", "no case passed, yet the text says the API is supported")
    if _AGREE.search(line) and fn["docs_agreement"](api, report, "zh") is None:
        diffs = fn["docs_differences"](api, report, "zh")
        why = clean(diffs[0], 60) if diffs else "资料未列出的数据类型另有结果"
        bad(f"资料与运行结果并不一致（{why}），却写一致", "the docs and the results do not agree, yet the text says they do")
    passing, refused = _passing_dtypes(api), _limited_dtypes(api)
    # a clause that calls dtypes refused (quoted messages aside: they name dtypes of their own)
    # (a table row is the record itself: its 预期结果 may say "不支持嵌套" of the API's semantics)
    # (a comma ends a clause too: "通过的 float32/float16 均在其中，资料未列出的 float64 不支持")
    clauses = [] if line.lstrip().startswith("|") else re.split(r"[；;。，]", re.sub(r"``.+?``|`[^`\n]+`", "", line))
    for clause in clauses:
        if not _REFUSE.search(clause) or re.search(r"亦通过|可直接运行|\bpass|run as they are", clause):
            continue
        for dtype in dict.fromkeys(_DTYPE_RE.findall(clause)):
            if dtype in passing and dtype not in refused:
                bad(f"{dtype} 在设备上通过，却写作不支持/受限", f"{dtype} passed on the device, yet it is called refused")
    if _REFUSE.search(line):
        if re.search(r"硬件能力限制|hardware capability limit", line) and not any(
                s.get("cause") == "dtype_limit" for s in api["scenarios"]):
            bad("没有场景因硬件能力限制未通过，却写硬件能力限制",
                "no case was refused for a hardware capability limit, yet the text says one")
    return out


def _api_facts(line: str, api: Dict[str, Any], bad: Any) -> List[Problem]:
    """Claims about the API itself, true or false whatever run the text reports."""
    if _NO_OPS.search(line):
        from ..narrative import api_compute_ops

        own = api_compute_ops(api)
        if own:
            bad(f"API 自身在设备上下发了计算算子（{'、'.join(own[:4])}），却写不下发设备算子",
                f"the API itself issued device compute ops ({', '.join(own[:4])}), yet the text says it issues none")
    if _NO_DEVICE_TESTS.search(line):
        tests = (api.get("evidence") or {}).get("tests") or {}
        runs = [t for t in tests.get("tests") or [] if t.get("runs_on_backend") and t.get("kind") == "test"]
        if runs:
            bad(f"用例统计中有 {len(runs)} 个上游用例在设备上运行（如 {runs[0].get('test')}），却写没有在设备上运行的用例",
                f"the census has {len(runs)} upstream tests that run on the device (e.g. {runs[0].get('test')}), "
                "yet the text says none does")
    return []


def check_snippets(doc: Document, names: Sequence[str]) -> List[Problem]:
    """Every verification command calls an API of the text: a Python block in a section
    that names none of them verifies something else."""
    out: List[Problem] = []
    span = doc.span("docs")  # code the docs check quotes from the vendor's docs is no command
    lines = [ln for i, ln in enumerate(doc.lines) if span is None or not span[0] <= i < span[1]]
    text = "\n".join(lines)
    shorts = {n: n.rsplit(".", 1)[-1] for n in names}
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        if re.search(r"^\s*(?:from|import)\s+torchparity\b", block, re.M):
            out.append(Problem("snippet", "验证命令需要安装 torchparity 才能运行（社区评审者无法直接运行）",
                               "a verification command needs torchparity installed (a reviewer cannot run it)"))
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        # a name the block defines itself (the case's function) is not the API
        own = set(re.findall(r"^\s*def (\w+)", block, re.M))
        body = re.sub(r"\b(" + "|".join(map(re.escape, own)) + r")\b", "", block) if own else block
        if not any(re.search(r"(?<![\w])" + re.escape(s) + r"(?![\w])", body) or n in block
                   for n, s in shorts.items()):
            first = next((ln for ln in block.splitlines() if ln.strip() and not ln.startswith("import")), "")
            out.append(Problem("snippet", f"验证命令没有调用所涉及的 API（{'、'.join(shorts.values())}）：「{clean(first, 60)}」",
                               f"a verification command calls none of the APIs ({', '.join(shorts.values())}): "
                               f"'{clean(first, 60)}'"))
    return out


def find_bundle(path: Optional[str]) -> Optional[str]:
    """The report.json beside an issue: in its folder, or the folder above ``issues/``."""
    if not path:
        return None
    from pathlib import Path

    p = Path(path).resolve().parent
    for folder in (p, p.parent):
        if (folder / "report.json").is_file():
            return str(folder)
    return None
