"""Reading the text: cleaning, the patterns, the rules file, and the parsed ``Document``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import yaml

HERE = Path(__file__).resolve().parent
RULES_FILE = HERE / "review_rules.yaml"

CATEGORY_RE = re.compile(r"(?<![\d.])([12])\s*\.\s*([12])\s*([①②③④⑤⑥])")
# a dotted torch name; not a piece of a URL or path (".../generated/torch.autograd.x.html")
API_RE = re.compile(r"(?<![/\w.])torch(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?![\w/])(?!\.html)")
_NUMBERING = re.compile(r"^(?:#+\s*)?(?:\*\*)?\s*(?:[•\-*]\s*)?"
                        r"(?:(?:\d+|[一二三四五六七八九十]+)\s*[、.．)）]\s*|[(（]\d+[)）]\s*)?")
_BLOCK = re.compile(r"^\s*(?:#+\s*)?([一二三四五六七八九十]+)\s*、\s*(.+)$")
VERSION_RE = re.compile(r"(?:\bv\s*\.?\s*|\btorch\s*)(\d+\.\d+(?:\.\d+)?)", re.I)
# Patterns on contributors' text stay linear in its length (a 400 KB token must not take
# minutes): a match may start only where a scan ends (a token start, a line start) or
# the scan stops at the next character that could start another match.
IMAGE_RE = re.compile(r"!\[[^\]\[\n]*\]\([^()\n]+\)|<img\b|(?<!\S)\S+\.(?:png|jpe?g|gif|svg)\b", re.I)
LOG_RE = re.compile(r"\bRan \d+ tests?\b|\b\d+ passed\b|\bPASSED\b|^OK$|^[ \t]*\.+[ \t]*$", re.M)
# a code line followed by the result it printed: "gradcheck(f, x)  # True"
# (the lookahead finds the "(", ")" or "=" once; the line is then scanned once to its "#")
PRINTED_RE = re.compile(r"^(?=[^#\n]*[()=])[^#\n]*\s#[ \t]*(True|False|tensor|-?\d|[A-Za-z_]+Error|no-op)",
                        re.M)
HARDCODED_RE = re.compile(r"device\s*=\s*[\"'](?:npu|cuda)[\"':0-9]*|\.(?:npu|cuda)\(\)|"
                          r"\.to\(\s*[\"'](?:npu|cuda)")
# a part the contributor fills (a template placeholder): 【待补充：…】, 【to fill: …】
PLACEHOLDER_RE = re.compile(r"【\s*(?:待补充|待填写|to fill)", re.I)
MARKED_RE = re.compile(r"【\s*(?:待补充|待填写|to fill)[^】]*】", re.I)  # a whole placeholder
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: str, limit: int = 160) -> str:
    """Document text made safe to print: no control or bidi characters, one line, short."""
    text = _CONTROL.sub(" ", text or "")
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    # never mid-token: back to the last space or CJK punctuation, and no code span left open
    m = re.search(r"^(.*[\s，。；、：）)])", cut)
    if m and len(m.group(1)) >= limit // 2:
        cut = m.group(1).rstrip()
    if cut.count("`") % 2:
        cut = cut[: cut.rindex("`")].rstrip()
    return cut + "…"


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


def norm_heading(line: str) -> Optional[str]:
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


def _headings(lines: List[str], rules: Dict[str, Any]) -> Tuple[Dict[str, List[int]], str]:
    """Section key -> heading line indexes, and the form whose sections match best."""
    headings: Dict[str, List[int]] = {}
    hits = {name: set() for name in rules["forms"]}
    for i, line in enumerate(lines):
        head = norm_heading(line)
        if head is None:
            continue
        for form, spec in rules["forms"].items():
            for sec in spec["sections"]:
                if re.search(sec["pattern"], head, re.I):
                    headings.setdefault(sec["key"], []).append(i)
                    hits[form].add(sec["key"])
    form = max(rules["forms"], key=lambda f: (len(hits[f]), f == "long"))
    return headings, form


def _blocks(lines: List[str]) -> List[Tuple[int, int, str, List[str]]]:
    """The short form's per-API blocks ("一、torch.xxx"): (start, end, numeral, apis)."""
    blocks = []
    starts = []
    for i, line in enumerate(lines):
        m = _BLOCK.match(line)
        if m and API_RE.search(m.group(2)) and "\t" not in line:
            starts.append((i, m.group(1), _dedupe(API_RE.findall(m.group(2)))))
    for n, (i, numeral, apis) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        blocks.append((i, end, numeral, apis))
    return blocks


def parse(text: str, rules: Optional[Dict[str, Any]] = None) -> Document:
    rules = rules or load_rules()
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    headings, form = _headings(lines, rules)
    blocks = _blocks(lines)
    boundaries = sorted({i for idx in headings.values() for i in idx} | {b[0] for b in blocks})
    claims = _dedupe(f"{a}.{b}{c}" for a, b, c in CATEGORY_RE.findall(MARKED_RE.sub("", text)))
    return Document(lines=lines, form=form, headings=headings, boundaries=boundaries,
                    tables=_tables(lines), blocks=blocks, apis=target_apis(lines, blocks),
                    claims=claims)


def find_table(doc: Document, spec: Dict[str, Any]) -> Optional[Table]:
    """The table ``spec`` (from the rules) describes: in its section, else anywhere."""
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
