"""What `explain-skips` writes: the vendor's own formats, upstream's test config, a YAML, a table.

- ``pytorch-disabled-tests.json``: the input list, every entry kept, an empty reason filled
  with ``CATEGORY: evidence`` and an empty SoC list with the device's SoC (A2 for
  ``emu:ascend-a2``); a reason the vendor wrote stays as written.
- ``disabled_tests_type.json``: ``{"test (module.Class)": {"DTYPE": "..."}}`` like the vendor's
  file, for the entries of the vendor's seven categories (STALE and UNDETERMINED are not
  types of a failure; they are in ``explained.json`` and the summary).
- ``explained.json``: every entry with its parse, category, reason and evidence.
- ``npu_test_configs.py``: a module that calls
  ``PrivateUse1TestBase.set_test_configs(op_overrides=..., test_exclusions=...)`` (torch's
  ``common_device_type``): a skip per (op, test, dtypes) for the @ops entries that stay
  disabled, a ``toleranceOverride`` per (op, dtype) for VALUE entries from the measured
  error, and the generic tests that stay disabled as ``test_exclusions`` (those exclude the
  test in every dtype: upstream's exclusions are per test, not per variant).
- ``explain-skips.yaml``: ops × dtypes × tolerance × mode (skip / xfail_strict /
  mandatory_success), and the other tests by class.
- ``summary.md`` / ``summary.html``: counts per class × category.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import yaml

from ..results.store import write_text_atomic

CATEGORY_ORDER = ("DTYPE", "VALUE", "MEMORY", "NOT_SUPPORT", "HCCL", "ERROR_MSG_UNMATCH", "OTHER",
                  "STALE", "UNDETERMINED")
VENDOR = CATEGORY_ORDER[:7]
# the mode a category asks of the test runner (torch-spyre's vocabulary)
MODES = {"STALE": "mandatory_success", "VALUE": "mandatory_success"}


def mode_of(category: str, predicted: bool) -> str:
    """skip, unless the device's answer is known: a refusal seen on hardware is an expected
    failure (``xfail_strict``), a stale entry or a tolerance must pass. A stale entry that is
    only predicted (the emulator) stays skipped: a prediction re-enables no test."""
    if category == "STALE" and predicted:
        return "skip"
    if category in MODES:
        return MODES[category]
    if category in ("DTYPE", "NOT_SUPPORT") and not predicted:
        return "xfail_strict"
    return "skip"


def write_outputs(result, raw: Dict[str, Any], out: Path) -> List[str]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "pytorch-disabled-tests.json": annotated_json(result, raw),
        "disabled_tests_type.json": type_json(result),
        "explained.json": explained_json(result),
        "npu_test_configs.py": test_configs_module(result),
        "explain-skips.yaml": tolerance_yaml(result),
        "summary.md": summary_md(result),
        "summary.html": summary_html(result),
    }
    for name, text in files.items():
        write_text_atomic(out / name, text)
    return [str(out / n) for n in files]


def _label(a) -> str:
    return f"{a.category}: {a.reason}" + (" [prediction]" if a.predicted and "predicted" not in a.reason else "")


def annotated_json(result, raw: Dict[str, Any]) -> str:
    lines = ["{"]
    items = list(raw.items())
    for i, (key, value) in enumerate(items):
        reason = value[0] if isinstance(value, list) and value and isinstance(value[0], str) else ""
        socs = value[1] if isinstance(value, list) and len(value) > 1 and isinstance(value[1], list) else [""]
        a = result.answers.get(key)
        if a is not None:
            reason = reason or _label(a)
            if not [s for s in socs if s]:
                socs = [result.soc]
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"  {json.dumps(key, ensure_ascii=False)}: "
                     f"{json.dumps([reason, socs], ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def type_json(result) -> str:
    typed = {k: {a.category: a.reason} for k, a in result.answers.items() if a.category in VENDOR}
    lines = ["{"]
    items = list(typed.items())
    for i, (k, v) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def explained_json(result) -> str:
    rows = []
    for e in result.entries:
        a = result.answers.get(e.key)
        rows.append({"key": e.key, "class": e.base_cls, "test": e.test, "device": e.device,
                     "dtype": e.dtype, "op": e.op, "test_kind": e.test_kind, "kind": e.kind,
                     "category": a.category if a else None, "reason": a.reason if a else None,
                     "predicted": a.predicted if a else None, "how": a.how if a else None,
                     "evidence": a.evidence if a else None})
    doc = {"device": result.device, "emulated": result.emulated, "soc": result.soc,
           "profile": result.profile, "source": result.source, "entries": len(result.entries),
           "counts": result.counts(), "seconds": result.seconds, "rows": rows}
    return json.dumps(doc, ensure_ascii=False, indent=1, default=str) + "\n"


# -- set_test_configs -------------------------------------------------------------------------

def _tolerance(a) -> Tuple[float, float]:
    """(atol, rtol) that let the measured device error through: twice the error, rounded up."""
    err = (a.evidence or {}).get("error") or {}
    dev = float(err.get("device") or 0.0)
    scale = float(err.get("scale") or 1.0) or 1.0
    atol = float(f"{2 * dev:.1e}") if dev else 1e-5
    rtol = float(f"{2 * dev / scale:.1e}") if dev else 1e-5
    return atol, rtol


def _config_parts(result):
    """op full_name -> {(class, test_kind, reason-kind): [dtypes]} of skips; op -> {dtype:
    (atol, rtol, class, test)} of tolerances; generic class -> {test: [variants]} of exclusions."""
    skips: Dict[str, Dict[Tuple[str, str, str], List[str]]] = {}
    tols: Dict[str, Dict[str, Tuple[float, float, str, str]]] = {}
    excl: Dict[str, Dict[str, List[str]]] = {}
    plain: Dict[str, Dict[str, str]] = {}
    for e in result.entries:
        a = result.answers.get(e.key)
        if a is None or (a.category == "STALE" and not a.predicted):  # a predicted one stays excluded
            continue
        if e.op and e.dtype and e.test_kind:
            if a.category == "VALUE":
                atol, rtol = _tolerance(a)
                tols.setdefault(e.op, {})[e.dtype] = (atol, rtol, e.base_cls, e.test_kind)
            else:
                k = (e.base_cls, e.test_kind, a.category)
                dts = skips.setdefault(e.op, {}).setdefault(k, [])
                if e.dtype not in dts:
                    dts.append(e.dtype)
        elif e.generic and e.head and not e.parse_error:
            method = (a.evidence or {}).get("method") or e.head
            excl.setdefault(e.base_cls, {}).setdefault(method, []).append(e.test)
        elif not e.parse_error:
            plain.setdefault(e.cls, {})[e.test] = a.category
    return skips, tols, excl, plain


def test_configs_module(result) -> str:
    skips, tols, excl, plain = _config_parts(result)
    how = "predicted on an emulated device" if result.emulated else "measured"
    out = [
        '"""Test configuration for the PrivateUse1 backend, generated by `torchparity explain-skips`.',
        "",
        f"From {Path(result.source).name} on {result.device} ({how}); {len(result.entries)} entries.",
        "Import it before the test files call instantiate_device_type_tests: it calls",
        "PrivateUse1TestBase.set_test_configs (a full replacement of the configuration; apply() again",
        "after a reset). STALE entries measured on the device are left out: they are expected to pass (predicted ones stay).",
        '"""',
        "",
        "import unittest",
        "",
        "import torch",
        "from torch.testing._internal.common_device_type import PrivateUse1TestBase, tol, toleranceOverride",
        "from torch.testing._internal.opinfo.core import DecorateInfo",
        "",
        "OP_OVERRIDES = {",
    ]
    for op in sorted(set(skips) | set(tols)):
        out.append(f"    {op!r}: [")
        for (cls, kind, cat), dts in sorted(skips.get(op, {}).items()):
            dt = ", ".join(f"torch.{d}" for d in sorted(dts))
            out.append(f"        DecorateInfo(unittest.skip({f'{cat} (explain-skips)'!r}), {cls!r}, {kind!r}, "
                       f"dtypes=({dt},)),")
        for dtype, (atol, rtol, cls, kind) in sorted(tols.get(op, {}).items()):
            out.append(f"        DecorateInfo(toleranceOverride({{torch.{dtype}: tol(atol={atol!r}, rtol={rtol!r})}}), "
                       f"{cls!r}, {kind!r}, dtypes=(torch.{dtype},)),")
        out.append("    ],")
    out.append("}")
    out.append("")
    out.append("# generic tests that stay disabled: upstream excludes a test in all its variants;")
    out.append("# the listed variants are in the comment")
    out.append("TEST_EXCLUSIONS = {")
    for cls in sorted(excl):
        out.append(f"    {cls!r}: [")
        for method, variants in sorted(excl[cls].items()):
            shown = ", ".join(sorted(variants)[:3]) + (", ..." if len(variants) > 3 else "")
            out.append(f"        {method!r},  # {shown}")
        out.append("    ],")
    out.append("}")
    out.append("")
    out.append("# tests of plain TestCase classes: set_test_configs cannot reach them (they are not")
    out.append("# instantiated per device); listed for the runner's own skip list")
    out.append("PLAIN_TESTS = {")
    for cls in sorted(plain):
        out.append(f"    {cls!r}: {dict(sorted(plain[cls].items()))!r},")
    out.append("}")
    out += [
        "",
        "",
        "def apply(base=PrivateUse1TestBase):",
        "    # torch names the device type 'privateuse1' until the base's setUpClass ran once, and",
        "    # gives op overrides the backend's name: resolve it first, or the first class made",
        "    # matches none of them (the backend must be registered before this import)",
        "    if base.device_type == 'privateuse1' and torch._C._get_privateuse1_backend_name() != 'privateuse1':",
        "        base.setUpClass()",
        "    base.set_test_configs(op_overrides=OP_OVERRIDES, test_exclusions=TEST_EXCLUSIONS)",
        "",
        "",
        "def reset(base=PrivateUse1TestBase):",
        "    base.set_test_configs()",
        "",
        "",
        "apply()",
        "",
    ]
    return "\n".join(out)


# -- YAML: ops × dtypes × tolerance × mode ------------------------------------------------------

def tolerance_yaml(result) -> str:
    ops: Dict[str, Dict[str, List[Dict[str, Any]]]] = {}
    tests: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for e in result.entries:
        a = result.answers.get(e.key)
        if a is None:
            continue
        row: Dict[str, Any] = {"mode": mode_of(a.category, a.predicted), "category": a.category,
                               "reason": a.reason}
        if a.predicted:
            row["predicted"] = True
        if a.category == "VALUE":
            atol, rtol = _tolerance(a)
            row["tolerance"] = {"atol": atol, "rtol": rtol}
        if e.op and e.dtype and e.test_kind:
            ops.setdefault(e.op, {}).setdefault(e.dtype, []).append(
                {"class": e.base_cls, "test": e.test_kind, **row})
        else:
            tests.setdefault(e.cls or "(unparsed)", {})[e.test or e.key] = row
    doc = {"generated": {"by": "torchparity explain-skips", "device": result.device,
                         "emulated": result.emulated, "soc": result.soc, "source": Path(result.source).name,
                         "entries": len(result.entries)},
           "modes": ["skip", "xfail", "xfail_strict", "mandatory_success"],
           "ops": ops, "tests": tests}
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=120)


# -- the summary table ----------------------------------------------------------------------

def table(result) -> Tuple[List[str], List[Tuple[str, Dict[str, int], int]]]:
    by: Dict[str, Dict[str, int]] = {}
    for e in result.entries:
        a = result.answers.get(e.key)
        if a is None:
            continue
        cls = e.base_cls or "(unparsed)"
        by.setdefault(cls, {c: 0 for c in CATEGORY_ORDER})[a.category] += 1
    rows = sorted(((c, n, sum(n.values())) for c, n in by.items()), key=lambda r: (-r[2], r[0]))
    cols = [c for c in CATEGORY_ORDER if any(n[c] for _, n, _ in rows)] or list(CATEGORY_ORDER)
    return cols, rows


def _note(result) -> str:
    if result.emulated:
        return (f"Device {result.device}: every category is a prediction of the capability profile "
                f"({result.profile}) and of the emulated device: STALE where the test (or its op × dtype "
                "samples, as close to float64 as the CPU) passes there, VALUE where the device is clearly "
                "farther from float64 than the CPU; UNDETERMINED includes the entries no capability rule "
                "explains and nothing measured (not a capability limit — numerics or a bug, decide on hardware).")
    return f"Device {result.device}: measured."


def summary_md(result) -> str:
    cols, rows = table(result)
    counts = result.counts()
    out = [f"# Disabled tests explained: {Path(result.source).name}", "", _note(result), "",
           f"{len(result.entries)} entries, {result.seconds:g} s. Totals: "
           + ", ".join(f"{c} {counts[c]}" for c in CATEGORY_ORDER if counts[c]) + ".", "",
           "| class | " + " | ".join(cols) + " | total |",
           "|---|" + "---:|" * (len(cols) + 1)]
    for cls, n, total in rows:
        out.append(f"| {cls} | " + " | ".join(str(n[c]) for c in cols) + f" | {total} |")
    out.append("| **total** | " + " | ".join(str(counts[c]) for c in cols) + f" | {sum(counts.values())} |")
    return "\n".join(out) + "\n"


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Disabled tests explained: {{ name }}</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .6em}td.n{text-align:right}</style></head>
<body><h1>Disabled tests explained: {{ name }}</h1><p>{{ note }}</p>
<p>{{ entries }} entries.</p>
<table><thead><tr><th>class</th>{% for c in cols %}<th>{{ c }}</th>{% endfor %}<th>total</th></tr></thead>
<tbody>{% for cls, n, total in rows %}<tr><td>{{ cls }}</td>{% for c in cols %}<td class="n">{{ n[c] }}</td>{% endfor %}<td class="n">{{ total }}</td></tr>
{% endfor %}<tr><th>total</th>{% for c in cols %}<td class="n">{{ counts[c] }}</td>{% endfor %}<td class="n">{{ entries_answered }}</td></tr></tbody></table>
</body></html>
"""


def summary_html(result) -> str:
    from jinja2 import Environment

    cols, rows = table(result)
    counts = result.counts()
    env = Environment(autoescape=True)
    return env.from_string(_HTML).render(name=Path(result.source).name, note=_note(result), cols=cols,
                                         rows=rows, counts=counts, entries=len(result.entries),
                                         entries_answered=sum(counts.values()))
