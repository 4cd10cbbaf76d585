"""`torchparity explain-skips`: explain a backend's disabled-test list, entry by entry.

The input is a list in the format of Ascend/pytorch
``test/unsupported_test_cases/.pytorch-disabled-tests.json``: ``{"test_x_npu_float32
(__main__.TestFooPRIVATEUSE1)": [reason, [SoC, ...]], ...}``. Every entry is parsed into
test, class, op, dtype and device variant (:func:`parse_entry`) and gets one category:
the vendor's seven (``error_type.json``: DTYPE, VALUE, MEMORY, NOT_SUPPORT, HCCL,
ERROR_MSG_UNMATCH, OTHER) plus ``STALE`` (passes now) and ``UNDETERMINED``, with evidence.

- An **OpInfo-driven** entry (its test is an ``@ops`` test; the op is the longest OpInfo
  ``formatted_name`` its name ends with) is answered from the op's rows: the capability
  prediction of ``app.predict`` (the op's footprint looked up in the device's profile, each
  refusal with the kernel fact and its source) and a measurement of the op's error against
  a float64 golden on the device beside the CPU's own error (:func:`measure_errors`, in a
  child process with a time limit).
- **Any other** entry replays its test on the CPU and on the device in the worker pool's
  ``upstream`` case kind (``run/upstream_handler.py``), each side in a time limit.

On an emulated device every answer is a prediction and says so; an entry no capability
rule explains is UNDETERMINED, "not a capability limit — numerics or a bug, decide on
hardware". A timeout, a crash of the harness or a gap of the emulator is never a category
of the chip: those are UNDETERMINED with the reason. Answers are kept in ``OUT/explain-
skips.sqlite`` as they come, so a rerun resumes.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..dtypes import DTYPE_NAMES
from ..errors import InputError
from ..results.error_rules import refused_kernels

VENDOR_CATEGORIES = ("DTYPE", "VALUE", "MEMORY", "NOT_SUPPORT", "HCCL", "ERROR_MSG_UNMATCH", "OTHER")
CATEGORIES = VENDOR_CATEGORIES + ("STALE", "UNDETERMINED")
NOT_CAPABILITY = "not a capability limit — numerics or a bug, decide on hardware"
STORE_FILE = "explain-skips.sqlite"

_KEY = re.compile(r"^(?P<test>\S+) \((?P<where>[\w.]+)\)$")
# the class suffix instantiate_device_type_tests adds -> the device names in test names
_SUFFIXES = (("PRIVATEUSE1", ("npu", "privateuse1")), ("CPU", ("cpu",)), ("CUDA", ("cuda",)))
# without a test tree (or for a class the tree lacks): the @ops tests of the classes the
# vendor's list names, read from the files their sources name (data, shipped beside this)
OPS_TESTS_FILE = Path(__file__).with_name("explain_skips_ops_tests.yaml")
_SHIPPED: Dict[str, Dict[str, Any]] = {}


NO_CPU_FILE = Path(__file__).with_name("explain_skips_no_cpu.yaml")
_NO_CPU: Dict[str, Dict[str, Any]] = {}


def no_cpu_classes() -> Dict[str, Dict[str, Any]]:
    """class -> {"source": ...}: generic classes upstream never instantiates for the CPU."""
    if not _NO_CPU:
        import yaml

        _NO_CPU.update(yaml.safe_load(NO_CPU_FILE.read_text(encoding="utf-8")) or {})
    return _NO_CPU


def shipped_ops_tests() -> Dict[str, Dict[str, Any]]:
    """class -> {"tests": [...], "source": "repo path@commit"}."""
    if not _SHIPPED:
        import yaml

        _SHIPPED.update(yaml.safe_load(OPS_TESTS_FILE.read_text(encoding="utf-8")) or {})
    return _SHIPPED


# test kinds whose answer needs the backward pass too
_GRAD_WORDS = ("grad", "backward", "vjp", "jvp", "hessian")


@dataclass
class Entry:
    """One line of the disabled list, parsed."""

    key: str
    test: str = ""  # the test method name as listed (test_x_npu_float32)
    module: str = ""  # __main__, jit.test_tracer, ...
    cls: str = ""  # the class as listed (TestFooPRIVATEUSE1)
    base_cls: str = ""  # the class as written in the test file (TestFoo)
    device: Optional[str] = None  # the device variant in the name (npu, cpu) of a generic test
    generic: bool = False  # the class is made by instantiate_device_type_tests
    head: str = ""  # the name before the device variant (test_x, or test_kind_op)
    rest: str = ""  # the name after the device variant (float32, int64_float32, ...)
    dtype: Optional[str] = None
    op: Optional[str] = None  # OpInfo full_name ("div.floor_rounding")
    op_db: Optional[str] = None  # op_db | python_ref_db
    test_kind: Optional[str] = None  # the @ops test (test_reference_numerics_normal)
    reason: str = ""  # the vendor's reason
    socs: List[str] = field(default_factory=list)
    parse_error: Optional[str] = None

    @property
    def kind(self) -> str:
        if self.parse_error:
            return "unparsed"
        return "opinfo" if self.op else "replay"


# -- reading the list --------------------------------------------------------------------

def load_disabled(path: str) -> Dict[str, list]:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--disabled {path}: no such file")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"--disabled {path}: not a JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"--disabled {path}: expected an object of \"test (module.Class)\": "
                         "[reason, [SoC]] entries")
    return data


def _vendor_value(value: Any) -> Tuple[str, List[str]]:
    if isinstance(value, list) and value:
        reason = value[0] if isinstance(value[0], str) else ""
        socs = [s for s in (value[1] if len(value) > 1 and isinstance(value[1], list) else [])
                if isinstance(s, str) and s]
        return reason, socs
    return "", []


def parse_entry(key: str, value: Any = None, names: Optional["OpNames"] = None,
                tree: Optional["TreeIndex"] = None) -> Entry:
    """One entry: its parts, and the op, dtype and test kind when it is an @ops test."""
    reason, socs = _vendor_value(value)
    e = Entry(key=key, reason=reason, socs=socs)
    m = _KEY.match(key)
    if not m:
        e.parse_error = "not of the form 'test_name (module.Class)'"
        return e
    e.test = m.group("test")
    e.module, _, e.cls = m.group("where").rpartition(".")
    e.base_cls, e.head = e.cls, e.test
    for suffix, devices in _SUFFIXES:
        if e.cls.endswith(suffix) and len(e.cls) > len(suffix):
            split = _device_split(e.test, devices)
            if split is not None:
                e.base_cls = e.cls[: -len(suffix)]
                e.generic = True
                e.device, e.head, e.rest = split
            break
    if e.generic:
        e.dtype = next((t for t in e.rest.split("_") if t in DTYPE_NAMES), None)
    if names is not None and e.generic:
        _map_op(e, names, tree)
    return e


def _device_split(test: str, devices: Sequence[str]) -> Optional[Tuple[str, str, str]]:
    """(device, head, rest) at the last ``_<device>`` token of ``test``."""
    best = None
    for d in devices:
        for m in re.finditer(rf"_{d}(?=_|$)", test):
            if best is None or m.start() > best[1]:
                best = (d, m.start(), m.end())
    if best is None:
        return None
    d, start, end = best
    return d, test[:start], test[end + 1:]


def _map_op(e: Entry, names: "OpNames", tree: Optional["TreeIndex"]) -> None:
    ops_tests = tree.ops_tests(e.base_cls, e.module) if tree is not None else None
    if not ops_tests:  # not in the tree, or a class of that name without @ops tests (test_jit's
        # TestJit is not test_ops_jit's): the shipped facts
        ops_tests = (shipped_ops_tests().get(e.base_cls) or {}).get("tests")
    if not ops_tests:
        return
    parts = e.head.split("_")
    # the longest op name the head ends with whose prefix is a test name
    for i in range(2, len(parts)):
        kind, formatted = "_".join(parts[:i]), "_".join(parts[i:])
        found = names.by_formatted.get(formatted)
        if found is None or kind not in ops_tests:
            continue
        e.test_kind = kind
        e.op, e.op_db = found
        return


class OpNames:
    """OpInfo ``formatted_name`` (what @ops puts in test names) -> (full_name, database)."""

    def __init__(self, by_formatted: Dict[str, Tuple[str, str]]):
        self.by_formatted = by_formatted

    @classmethod
    def load(cls) -> "OpNames":
        from torch.testing._internal.common_methods_invocations import op_db, python_ref_db

        out: Dict[str, Tuple[str, str]] = {}
        for db, ops in (("op_db", op_db), ("python_ref_db", python_ref_db)):
            for op in ops:
                out.setdefault(op.formatted_name, (op.full_name, db))
        return cls(out)


# -- the test tree -------------------------------------------------------------------------

class TreeIndex:
    """Classes of a test tree (PyTorch's test/ or a port): file, methods, @ops methods,
    whether instantiate_device_type_tests makes device classes of it. Read with ``ast``."""

    def __init__(self, root: str, classes: Dict[str, List[Dict[str, Any]]]):
        self.root = root
        self.classes = classes

    @classmethod
    def build(cls, root: str) -> "TreeIndex":
        base = Path(root)
        if not base.is_dir():
            raise InputError(f"--tests {root}: no such folder")
        classes: Dict[str, List[Dict[str, Any]]] = {}
        for path in sorted(base.rglob("test*.py")):
            try:
                with warnings.catch_warnings():  # the tree's own invalid escapes are not ours
                    warnings.simplefilter("ignore")
                    tree = ast.parse(path.read_bytes(), filename=str(path))
            except (OSError, SyntaxError, ValueError):
                continue
            instantiated = {_first_name_arg(n) for n in ast.walk(tree)
                            if isinstance(n, ast.Call) and _call_name(n) == "instantiate_device_type_tests"}
            for node in tree.body:
                if not isinstance(node, ast.ClassDef):
                    continue
                methods, ops = [], []
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                        methods.append(item.name)
                        if any(_call_name(d) == "ops" for d in item.decorator_list if isinstance(d, ast.Call)):
                            ops.append(item.name)
                classes.setdefault(node.name, []).append({
                    "file": path.relative_to(base).as_posix(), "methods": methods, "ops": ops,
                    "generic": node.name in instantiated})
        return cls(str(base.resolve()), classes)

    @classmethod
    def cached(cls, root: str, cache: Path) -> "TreeIndex":
        """:meth:`build`, kept in ``cache`` (JSON) for the same folder."""
        want = str(Path(root).resolve())
        try:
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data.get("root") == want:
                return cls(want, data["classes"])
        except (OSError, ValueError, KeyError):
            pass
        index = cls.build(root)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"root": index.root, "classes": index.classes}), encoding="utf-8")
        return index

    def find(self, cls: str, module: str = "", generic: Optional[bool] = None) -> Optional[Dict[str, Any]]:
        """The file of ``cls``: the one ``module`` names; else, of the classes of that name,
        one with test methods (``TestModule`` is also an ``nn.Module`` in other files), a
        device-generic one first when the listed entry is generic."""
        found = self.classes.get(cls) or []
        if not found:
            return None
        if module and module != "__main__":
            want = module.replace(".", "/") + ".py"
            for f in found:
                if f["file"] == want or f["file"].endswith("/" + want):
                    return f
        ranked = sorted(found, key=lambda f: (not f["methods"], generic is not None and f["generic"] != generic,
                                              f["file"].count("/")))
        return ranked[0]

    def ops_tests(self, cls: str, module: str = "") -> Optional[List[str]]:
        found = self.find(cls, module, True)
        return None if found is None else found["ops"]

    def method_of(self, cls: str, module: str, head: str, generic: Optional[bool] = None) -> Optional[str]:
        """The test method a listed name comes from: the longest method that is ``head`` or
        a prefix of it followed by ``_`` (parametrized copies)."""
        found = self.find(cls, module, generic)
        if found is None:
            return None
        best = None
        for m in found["methods"]:
            if (head == m or head.startswith(m + "_")) and (best is None or len(m) > len(best)):
                best = m
        return best


def _call_name(node: ast.AST) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _first_name_arg(node: ast.Call) -> str:
    return node.args[0].id if node.args and isinstance(node.args[0], ast.Name) else ""


# -- answers ------------------------------------------------------------------------------

@dataclass
class Answer:
    key: str
    category: str
    reason: str
    evidence: Dict[str, Any] = field(default_factory=dict)
    predicted: bool = False  # on an emulated device: a prediction
    how: str = ""  # opinfo-rows | replay | parse

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


class Store:
    """Answers and op rows, kept as they come (resumable): ``OUT/explain-skips.sqlite``."""

    def __init__(self, out: Path):
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / STORE_FILE
        self.db = sqlite3.connect(str(self.path), check_same_thread=False)  # replay rows come from threads (one at a time)
        self.db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, device TEXT, data TEXT)")
        self.db.execute("CREATE TABLE IF NOT EXISTS op_rows (key TEXT PRIMARY KEY, data TEXT)")
        # a replay's device row that waits for its CPU round (kept so that a rerun after an
        # interruption runs only the CPU round of it, not the device round again)
        self.db.execute("CREATE TABLE IF NOT EXISTS device_rows (key TEXT, device TEXT, data TEXT, "
                        "PRIMARY KEY (key, device))")
        self.db.commit()
        self._committed = time.monotonic()

    COMMIT_EVERY_S = 1.0  # a crash loses at most this much of the answers (a rerun redoes them)

    def answers(self, device: str) -> Dict[str, Answer]:
        rows = self.db.execute("SELECT key, data FROM answers WHERE device = ?", (device,)).fetchall()
        return {k: Answer(**json.loads(d)) for k, d in rows}

    def put_answer(self, device: str, a: Answer) -> None:
        self.db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)",
                        (a.key, device, json.dumps(a.as_dict(), default=str)))
        self._soon()

    def device_rows(self, device: str) -> Dict[str, Dict[str, Any]]:
        """The device rows of replays whose CPU round had not run (entry key -> row)."""
        rows = self.db.execute("SELECT key, data FROM device_rows WHERE device = ?", (device,)).fetchall()
        return {k: json.loads(d) for k, d in rows}

    def put_device_row(self, device: str, key: str, row: Dict[str, Any]) -> None:
        self.db.execute("INSERT OR REPLACE INTO device_rows VALUES (?, ?, ?)",
                        (key, device, json.dumps(row, default=str)))
        self._soon()

    def op_row(self, key: str) -> Optional[Dict[str, Any]]:
        row = self.db.execute("SELECT data FROM op_rows WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_op_row(self, key: str, data: Dict[str, Any]) -> None:
        self.db.execute("INSERT OR REPLACE INTO op_rows VALUES (?, ?)", (key, json.dumps(data, default=str)))
        self._soon()

    def _soon(self) -> None:
        """Commit at most once a second instead of once a row (a commit syncs the file:
        32,068 of them were minutes of the run)."""
        if time.monotonic() - self._committed >= self.COMMIT_EVERY_S:
            self.commit()

    def commit(self) -> None:
        self.db.commit()
        self._committed = time.monotonic()

    def close(self) -> None:
        self.commit()
        self.db.close()


def _with_grads(e: Entry) -> bool:
    text = f"{e.base_cls} {e.test_kind or ''}".lower()
    return any(w in text for w in _GRAD_WORDS)


def _op_row_key(device: str, e: Entry) -> str:
    return f"{device}|{e.op_db}|{e.op}|{e.dtype}|{'grad' if _with_grads(e) else 'fwd'}"


_API_BY_KEY: Dict[str, str] = {}


def _api_for(full_name: str, db: str) -> Optional[Tuple[str, str]]:
    """(API name predict takes, op_db key) of an OpInfo: a python_ref_db entry is answered
    from the op_db entry of the same name (the ref's base op)."""
    from ..scenarios import opinfo as oi

    if not _API_BY_KEY:
        _API_BY_KEY.update({e.key: e.api for e in oi.entries()})
    key = full_name[len("_refs."):] if full_name.startswith("_refs.") else full_name
    api = _API_BY_KEY.get(key)
    return (api, key) if api else None


def op_facts(profile, e: Entry, max_samples: int) -> Dict[str, Any]:
    """The capability prediction of the entry's op and dtype, with each refusal's kernel
    fact and source (``app.predict`` on the CPU footprint)."""
    return op_facts_many(profile, [e], max_samples)[0]


def op_facts_many(profile, entries: Sequence[Entry], max_samples: int) -> List[Dict[str, Any]]:
    """:func:`op_facts` of each entry, with one ``predict`` call per (API, grads) for all
    the dtypes its entries ask (``predict`` traces every OpInfo variant of an API: the
    rows of div.floor_rounding and div.trunc_rounding share a call); a call that fails
    falls back to one call per entry, so that one dtype's failure stays its own."""
    from .predict import predict

    out: List[Optional[Dict[str, Any]]] = [None] * len(entries)
    groups: Dict[Tuple[str, bool], List[int]] = {}
    for i, e in enumerate(entries):
        found = _api_for(e.op or "", e.op_db or "op_db")
        if found is None:
            out[i] = {"status": "unknown", "reason": f"no op_db entry for {e.op}"}
            continue
        groups.setdefault((found[0], _with_grads(e)), []).append(i)
    for (api, grads), idx in groups.items():
        dtypes = sorted({entries[i].dtype for i in idx})
        preds = None
        if len(idx) > 1:
            try:
                preds = predict([api], profile, dtypes=dtypes, grads=grads, max_samples=max_samples)
            except Exception:  # noqa: BLE001 - asked again entry by entry below
                preds = None
        for i in idx:
            e = entries[i]
            key = _api_for(e.op or "", e.op_db or "op_db")[1]
            mine = preds
            if mine is None:
                try:
                    mine = predict([api], profile, dtypes=[e.dtype], grads=grads, max_samples=max_samples)
                except Exception as exc:  # the prediction itself failed: no answer about the chip
                    out[i] = {"status": "unknown", "reason": f"prediction failed: {type(exc).__name__}: {exc}"}
                    continue
            pred = next((p for p in mine if p.variant == key and p.dtype == e.dtype), None)
            out[i] = _facts(profile, pred, api, key, grads)
    return out  # type: ignore[return-value]


def _facts(profile, pred, api: str, key: str, grads: bool) -> Dict[str, Any]:
    if pred is None:
        return {"status": "unknown", "reason": f"no prediction for {key}"}
    refusals = []
    for r in pred.refusals:
        if r.phase == "backward" and not grads:
            continue
        entry = profile.op_support(r.op)
        refusals.append({"op": r.op, "dtype": r.dtype, "phase": r.phase,
                         "supported": bool(entry.supported) if entry is not None else profile.default == "allow",
                         "dtypes": list(entry.dtypes) if entry is not None and entry.dtypes else None,
                         "source": (entry.source if entry is not None else None)
                         or f"profile '{profile.name}' default: {profile.default}"})
    status = pred.status
    if status == "partial" and not refusals:  # only the backward refuses; a forward test runs
        status = "pass"
    return {"status": status, "reason": pred.reason, "api": api, "key": key, "grads": grads,
            "refusals": refusals, "samples": pred.samples, "cpu_refuses": pred.cpu_refuses}


def sweep_rows(location: str, device: str) -> Dict[Tuple[str, str], Dict[str, Any]]:
    """(op_db key, dtype) -> the sweep's row of an OpInfo entry (its function variant),
    from a sweep folder or store URL that ran on ``device``; a store of another device is
    refused (its rows say nothing about this one)."""
    from ..results.sweep_store import open_store

    store = open_store(Path(location), must_exist=True)
    try:
        ran_on = (store.meta().get("device") or {}).get("spec")
        if ran_on and ran_on != device:
            raise InputError(f"--store {location}: the sweep ran on {ran_on}, not {device}")
        out: Dict[Tuple[str, str], Dict[str, Any]] = {}
        for row in store.rows():
            if row.get("variant") and "[" not in row["variant"]:
                out.setdefault((row["variant"], row["dtype"]), row)
        return out
    finally:
        store.close()


def classify_op(e: Entry, facts: Dict[str, Any], error: Optional[Dict[str, Any]],
                emulated: bool, device: str, swept: Optional[Dict[str, Any]] = None) -> Answer:
    """The category of an @ops entry from its op's rows: the sweep's row when there is one
    (``swept``), the capability prediction with its kernel facts, the error against float64."""
    where = f" (predicted on {device})" if emulated else ""
    ev: Dict[str, Any] = {"op": e.op, "dtype": e.dtype, "test_kind": e.test_kind,
                          "prediction": {k: facts.get(k) for k in ("status", "reason", "api", "samples")}}
    refusals = facts.get("refusals") or []
    if swept is not None:
        ev["sweep_row"] = {k: swept.get(k) for k in ("api", "variant", "dtype", "status", "cause", "detail")}
        status, cause, detail = swept.get("status"), swept.get("cause"), str(swept.get("detail") or "")
        if refusals:
            ev["kernel_facts"] = refusals
        if status == "unsupported" and cause in ("dtype_limit", "no_kernel"):
            cat = "DTYPE" if cause == "dtype_limit" else "NOT_SUPPORT"
            fact = f" [{refusals[0]['source']}]" if refusals else ""
            return Answer(e.key, cat, f"the sweep's row: {detail[:300]}{fact}{where}", ev, emulated, "sweep-row")
        if status == "fail" and cause == "mismatch":
            return Answer(e.key, "VALUE", f"the sweep's row: {detail[:300]}{where}", ev, emulated, "sweep-row")
    if facts.get("status") in ("unsupported", "partial") and refusals:
        ev["kernel_facts"] = refusals
        first = refusals[0]
        cat = "DTYPE" if all(r["supported"] for r in refusals) else "NOT_SUPPORT"
        what = "; ".join(f"{r['op']} × {r['dtype']}" + (" (backward)" if r["phase"] == "backward" else "")
                         for r in refusals[:3])
        why = (f"{what} refused: the kernel takes {', '.join(first['dtypes'])}" if cat == "DTYPE" and first["dtypes"]
               else f"{what} refused")
        return Answer(e.key, cat, f"{why} [{first['source']}]{where}", ev, emulated, "opinfo-rows")
    if facts.get("status") == "unsupported" and facts.get("cpu_refuses"):
        return Answer(e.key, "UNDETERMINED", f"the op refuses {e.dtype} on the CPU too: "
                      "its test cannot say anything about the device", ev, emulated, "opinfo-rows")
    if facts.get("status") != "pass":
        return Answer(e.key, "UNDETERMINED", f"no capability answer: {facts.get('reason')}",
                      ev, emulated, "opinfo-rows")
    if error is not None:
        ev["error"] = error
    closer = _value_verdict(error)
    if closer == "device-worse":
        return Answer(e.key, "VALUE",
                      f"device max error vs float64 {error['device']:.3g}, the CPU's {error['cpu']:.3g}"
                      f"{where}", ev, emulated, "opinfo-rows")
    measured = (f"; device max error vs float64 {error['device']:.3g}, the CPU's {error['cpu']:.3g}"
                if closer == "as-close" else (f"; error not measured: {error.get('why')}" if error else ""))
    if error and error.get("exact") and closer == "as-close":
        measured = f"; the device's results equal the CPU's on {error.get('outputs')} output(s)"
    part = " (forward samples; the backward's kernels are allowed too)" if _with_grads(e) else ""
    if closer == "as-close":
        # the op × dtype samples run on the device and are as close to float64 as the CPU's
        stale = f"its {e.op} × {e.dtype} samples pass on {device}{part}{measured}"
        if emulated:
            return Answer(e.key, "STALE", f"predicted stale: {stale}; no capability limit keeps it "
                          f"disabled ({NOT_CAPABILITY} if it still fails there)", ev, True, "opinfo-rows")
        return Answer(e.key, "STALE", stale, ev, False, "opinfo-rows")
    if emulated:
        return Answer(e.key, "UNDETERMINED",
                      f"{NOT_CAPABILITY} (every op of its footprint is allowed on {device}{measured})",
                      ev, True, "opinfo-rows")
    return Answer(e.key, "UNDETERMINED", f"the op's rows pass on {device}{measured}", ev, False, "opinfo-rows")


def _value_verdict(error: Optional[Dict[str, Any]]) -> Optional[str]:
    """"device-worse" when the device is clearly farther from float64 than the CPU,
    "as-close" when it is as close; None when nothing was measured."""
    if not error or error.get("device") is None or error.get("cpu") is None:
        return None
    dev, cpu = float(error["device"]), float(error["cpu"])
    scale = float(error.get("scale") or 1.0)
    return "device-worse" if dev > 2.0 * cpu + 1e-6 * max(scale, 1.0) else "as-close"


# -- the error against a float64 golden -------------------------------------------------------

MEASURE_SAMPLES = 3
FACTS_CHUNK = 200  # op rows whose predictions are kept together
MEASURE_BATCH = 200  # (op, dtype) pairs per measuring child: its start (torch, the device) is shared


def measure_errors(pairs: Sequence[Tuple[str, str]], device: str, timeout: float) -> Dict[str, Dict[str, Any]]:
    """For each (op_db key, dtype): the max abs error of the device's and of the CPU's
    result against float64 on the CPU, over the op's first samples. Runs in a child process
    (``python -m torchparity.app.explain_skips``) bounded by ``timeout``; a pair without an
    answer gets {"why": ...}."""
    if not pairs:
        return {}
    request = json.dumps({"device": device, "pairs": list(pairs)})
    env = dict(os.environ)
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    try:
        proc = subprocess.run([sys.executable, "-m", "torchparity.app.explain_skips"], input=request.encode(),
                              capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {f"{k}|{d}": {"why": f"the measurement did not finish in {timeout:g} s"} for k, d in pairs}
    lines = [ln for ln in proc.stdout.decode(errors="replace").splitlines() if ln.startswith("{")]
    if not lines:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return {f"{k}|{d}": {"why": f"the measurement process failed: {tail[0][:200]}"} for k, d in pairs}
    return json.loads(lines[-1])


def _measure_main() -> int:
    import torch

    request = json.loads(sys.stdin.readline())
    from ..devices import get_adapter

    adapter = get_adapter(request["device"])
    adapter.setup()
    dev = adapter.torch_device
    from ..scenarios import opinfo as oi

    warnings.simplefilter("ignore")
    out: Dict[str, Dict[str, Any]] = {}
    for key, dtype in request["pairs"]:
        try:
            out[f"{key}|{dtype}"] = _measure_one(oi, oi.entry("op_db", key), getattr(torch, dtype), dev)
        except Exception as exc:
            out[f"{key}|{dtype}"] = {"why": f"{type(exc).__name__}: {str(exc)[:200]}"}
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


def _measure_one(oi, op, dtype, dev: str) -> Dict[str, Any]:
    import torch

    if not (dtype.is_floating_point or dtype.is_complex):
        return _compare_exact(oi, op, dtype, dev)
    wide = torch.complex128 if dtype.is_complex else torch.float64
    samples = oi.make_samples(op, dtype)[:MEASURE_SAMPLES]
    dev_err = cpu_err = scale = 0.0
    n = 0
    for s in samples:
        inp, args, kwargs = oi.sample_parts(s)
        args = (inp,) + args
        fn = op.op

        def cast(t, to):
            return t.to(to) if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()) else t

        def move(t):
            return t.to(dev) if isinstance(t, torch.Tensor) else t
        try:
            gold = fn(*oi.map_tensors(args, lambda t: cast(t, wide)), **oi.map_tensors(kwargs, lambda t: cast(t, wide)))
            cpu = fn(*args, **kwargs)
            on_dev = fn(*oi.map_tensors(args, move), **oi.map_tensors(kwargs, move))
        except Exception:
            continue
        for g, c, d in zip(_tensors(gold), _tensors(cpu), _tensors(on_dev)):
            if not (g.is_floating_point() or g.is_complex()) or g.shape != c.shape or g.shape != d.shape:
                continue
            g, c, d = g.detach().to(wide), c.detach().cpu().to(wide), d.detach().cpu().to(wide)
            ok = torch.isfinite(g) & torch.isfinite(c) & torch.isfinite(d) if not g.is_complex() else torch.ones_like(g, dtype=torch.bool)
            if not ok.any():
                continue
            cpu_err = max(cpu_err, float((c - g).abs()[ok].max()))
            dev_err = max(dev_err, float((d - g).abs()[ok].max()))
            scale = max(scale, float(g.abs()[ok].max()))
            n += 1
    if not n:
        return {"why": "no sample gave a finite floating result on both sides"}
    return {"device": dev_err, "cpu": cpu_err, "scale": scale, "outputs": n}


def _compare_exact(oi, op, dtype, dev: str) -> Dict[str, Any]:
    """An exact dtype (integers, bool): the device's results against the CPU's, element by
    element (float64 has nothing to add); "device" is the largest difference, "cpu" 0."""
    import torch

    worst, n = 0.0, 0
    for s in oi.make_samples(op, dtype)[:MEASURE_SAMPLES]:
        inp, args, kwargs = oi.sample_parts(s)
        args = (inp,) + args
        try:
            cpu = op.op(*args, **kwargs)
            on_dev = op.op(*oi.map_tensors(args, lambda t: t.to(dev) if isinstance(t, torch.Tensor) else t),
                           **oi.map_tensors(kwargs, lambda t: t.to(dev) if isinstance(t, torch.Tensor) else t))
        except Exception:
            continue
        for c, d in zip(_tensors(cpu), _tensors(on_dev)):
            d = d.detach().cpu()
            if c.shape != d.shape or c.dtype != d.dtype:
                worst, n = max(worst, float("inf")), n + 1
                continue
            if c.numel():
                diff = (c.to(torch.float64) - d.to(torch.float64)).abs()
                worst = max(worst, float(diff.nan_to_num(nan=0.0).max()))
            n += 1
    if not n:
        return {"why": "no sample ran on both sides"}
    return {"device": worst, "cpu": 0.0, "scale": 1.0, "outputs": n, "exact": True}


def _tensors(x) -> List[Any]:
    import torch

    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for t in x if isinstance(t, torch.Tensor)]
    return []


# -- replays ------------------------------------------------------------------------------

def _replayer():
    """The source whose cases replay an upstream test (declared ``replays``)."""
    from ..scenarios.sources import replaying, source

    names = replaying()
    if not names:
        raise RuntimeError("no scenario source replays upstream tests")
    return source(names[0])


def replay_case(e: Entry, tree: TreeIndex, side_timeout: float) -> Tuple[Optional[Dict[str, Any]], str]:
    """The worker case of the replaying source that runs the entry's test, or (None, why not)."""
    replayer = _replayer()

    found = tree.find(e.base_cls, e.module, e.generic)
    if found is None:
        return None, f"no class {e.base_cls} in the test tree {tree.root}"
    method = tree.method_of(e.base_cls, e.module, e.head if e.generic else e.test, e.generic)
    if method is None:
        return None, f"{found['file']}::{e.base_cls} has no test method {e.head if e.generic else e.test}"
    generic = e.generic and found["generic"]
    variant = None
    if generic:
        extra = (e.head[len(method) + 1:] if e.head != method else "")
        variant = "_".join(p for p in (extra, e.rest) if p) or "-"
    return ({"kind": replayer.case_kind, "api": e.key, "root": tree.root, "file": found["file"],
             "cls": e.base_cls, "test": method if generic else e.test, "generic": generic,
             "dtype": variant, "side_timeout": side_timeout, "isolation": None}, "")


_REGEX = re.compile(r"(?i)regex didn't match|does not match|not raised|assertRaises|"
                    r"expected .{0,60} to be raised|warning not triggered|Expected.*(error|exception)")
_MEMORY = re.compile(r"(?i)out of memory|\bOOM\b|memory (error|allocat)|alloc(ation)? failed|max_split_size")
_HCCL = re.compile(r"(?i)\bhccl\b|\bnccl\b|processgroup|c10d|distributed|rendezvous|collective")
_VALUE = re.compile(r"(?i)not close|mismatched elements|greatest (absolute|relative) difference|"
                    r"tensor-likes|scalars are not equal")


def classify_replay(e: Entry, payload: Dict[str, Any], emulated: bool, device: str) -> Answer:
    """The category of a replayed entry from its CPU-vs-device row."""
    status, cause, detail = payload.get("status"), payload.get("cause"), str(payload.get("detail") or "")
    where = f" (predicted on {device})" if emulated else ""
    ev = {"status": status, "cause": cause, "detail": detail, "outcomes": payload.get("outcomes")}

    def answer(cat: str, why: str, predicted: bool = emulated) -> Answer:
        return Answer(e.key, cat, why, ev, predicted, "replay")

    if status == "pass":
        if emulated:
            return answer("STALE", f"the test passes on {device}: predicted stale — no capability "
                          f"limit keeps it disabled; confirm on hardware ({detail})")
        return answer("STALE", f"passes on {device}: {detail}")
    if status in ("timeout", "crash") or cause in ("harness_error", "emulator_limit", "timeout", "crash"):
        if status == "crash" and not emulated and cause == "crash":
            return answer("OTHER", f"the device side crashed: {detail}")
        return answer("UNDETERMINED", f"no answer ({cause or status}): {detail}", False)
    if status == "skip":
        return answer("UNDETERMINED", detail, False)
    if cause == "dtype_limit":
        return answer("DTYPE", f"{detail}{where}")
    if cause in ("no_kernel", "feature_limit", "build_config"):
        return answer("NOT_SUPPORT", f"{detail}{where}")
    if cause == "exception_mismatch" or _REGEX.search(detail):
        return answer("ERROR_MSG_UNMATCH", f"{detail}{where}")
    if _MEMORY.search(detail):
        return answer("MEMORY", f"{detail}{where}")
    if _HCCL.search(detail):
        return answer("HCCL", f"{detail}{where}")
    if cause == "mismatch" and _VALUE.search(detail):
        return answer("VALUE", f"{detail}{where}")
    return answer("OTHER", f"{detail}{where}")


# -- the run -------------------------------------------------------------------------------

@dataclass
class Result:
    entries: List[Entry]
    answers: Dict[str, Answer]
    device: str
    emulated: bool
    soc: str
    profile: Optional[str]
    seconds: float
    source: str
    files: List[str] = field(default_factory=list)
    phases: Dict[str, float] = field(default_factory=dict)  # wall seconds of each part of this run

    def counts(self) -> Dict[str, int]:
        out = {c: 0 for c in CATEGORIES}
        for a in self.answers.values():
            out[a.category] += 1
        return out


def soc_label(adapter) -> str:
    """The SoC name written into the vendor's list: A2 for emu:ascend-a2 (the vendor's
    own labels are A1, A2, 910A), the device name on hardware."""
    profile = getattr(adapter, "profile", None)
    if profile is not None and profile.name.startswith("ascend-"):
        return profile.name[len("ascend-"):].upper()
    return adapter.device_name() or adapter.spec


def select(keys: List[str], sample: Optional[int]) -> List[str]:
    """Every entry, or an evenly spread sample of ``sample`` (every k-th, in file order)."""
    if not sample or sample >= len(keys):
        return keys
    step = len(keys) / sample
    return [keys[int(i * step)] for i in range(sample)]


def stratified(entries: List[Entry], n: int) -> List[Entry]:
    """A sample of ``n`` entries spread over the strata (class × kind × dtype family), each
    stratum in proportion to its size (at least one entry of each while ``n`` allows), every
    k-th entry in file order within a stratum: deterministic."""
    if n >= len(entries):
        return entries
    strata: Dict[Tuple[str, str, str], List[Entry]] = {}
    for e in entries:
        fam = "none" if not e.dtype else ("float" if "float" in e.dtype else "complex" if "complex" in e.dtype else "exact")
        strata.setdefault((e.base_cls, e.kind, fam), []).append(e)
    share = {k: max(1, round(n * len(v) / len(entries))) for k, v in strata.items()}
    while sum(share.values()) > n:  # trim the largest shares first
        k = max(share, key=lambda k: share[k])
        share[k] -= 1
    picked = set()
    for k, v in strata.items():
        m = min(share[k], len(v))
        step = len(v) / m if m else 0
        picked.update(id(v[int(i * step)]) for i in range(m))
    return [e for e in entries if id(e) in picked]


def explain_skips(*, disabled: str, tests: Optional[str], device: str, out: str,
                  sample: Optional[int] = None, stratify: bool = False, side_timeout: float = 60.0, jobs: int = 1,
                  max_samples: int = 3, measure_timeout: float = 300.0, store: Optional[str] = None,
                  progress: Optional[Callable[[str, int, int], None]] = None) -> Result:
    from ..devices import get_adapter

    started = time.monotonic()
    raw = load_disabled(disabled)
    adapter = get_adapter(device)
    why = adapter.unavailable_reason()
    if why:
        raise InputError(f"--device {device}: {why}")
    emulated = bool(getattr(adapter, "emulated", False))
    profile = getattr(adapter, "profile", None)
    if profile is None:
        from ..devices.profiles import load_profile

        profile = load_profile("ascend-a2") if adapter.type == "npu" else None
    out_dir = Path(out)
    swept = sweep_rows(store, adapter.spec) if store else None
    tree = TreeIndex.cached(tests, out_dir / "tree-index.json") if tests else None
    names = OpNames.load()
    if stratify and sample:
        entries = stratified([parse_entry(k, raw[k], names, tree) for k in raw], sample)
    else:
        entries = [parse_entry(k, raw[k], names, tree) for k in select(list(raw), sample)]
    kept = Store(out_dir)
    pool = None
    try:
        answers = {k: a for k, a in kept.answers(adapter.spec).items() if k in raw}
        todo = [e for e in entries if e.key not in answers]
        phases: Dict[str, float] = {"setup": round(time.monotonic() - started, 1)}
        _answer_unparsed(todo, answers, kept, adapter.spec)
        pool = _replay_pool(todo, tree, adapter, jobs)  # starting now: beside the @ops part
        t = time.monotonic()
        _answer_ops(todo, answers, kept, adapter, profile, emulated, max_samples, measure_timeout,
                    progress, swept)
        phases["opinfo"] = round(time.monotonic() - t, 1)
        t = time.monotonic()
        _answer_replays(todo, answers, kept, adapter, tree, emulated, side_timeout, jobs, progress, pool)
        phases["replay"] = round(time.monotonic() - t, 1)
    finally:
        if pool is not None:
            pool.close()
        kept.close()
    answers = {e.key: answers[e.key] for e in entries if e.key in answers}
    result = Result(entries, answers, adapter.spec, emulated, soc_label(adapter),
                    profile.name if profile is not None else None, round(time.monotonic() - started, 1),
                    disabled)
    from ..deliver.explain_skips import write_outputs

    result.phases = phases
    result.files = write_outputs(result, raw, out_dir)
    return result


def _answer_unparsed(todo: List[Entry], answers: Dict[str, Answer], store: Store, spec: str) -> None:
    for e in todo:
        if e.parse_error:
            a = Answer(e.key, "UNDETERMINED", f"the entry cannot be read: {e.parse_error}", how="parse")
            answers[e.key] = a
            store.put_answer(spec, a)


def _answer_ops(todo, answers, store, adapter, profile, emulated, max_samples, measure_timeout, progress,
                swept=None) -> None:
    ops = [e for e in todo if e.kind == "opinfo"]
    if not ops:
        return
    if profile is None:
        for e in ops:
            a = Answer(e.key, "UNDETERMINED", f"no capability profile for {adapter.spec}", how="opinfo-rows")
            answers[e.key] = a
            store.put_answer(adapter.spec, a)
        return
    spec = adapter.spec
    rows: Dict[str, Dict[str, Any]] = {}
    missing: Dict[str, Entry] = {}  # one entry per row whose facts the store lacks
    for e in ops:
        if e.dtype is None:
            continue
        k = _op_row_key(spec, e)
        if k not in rows:
            rows[k] = store.op_row(k) or {}
            if "facts" not in rows[k]:
                missing[k] = e
    # one predict call per (API, grads) for all its rows, a chunk of APIs at a time (kept as
    # each chunk is done: a rerun resumes from there)
    by_api: Dict[Tuple[str, bool], List[str]] = {}
    for k, e in missing.items():
        found = _api_for(e.op or "", e.op_db or "op_db")
        by_api.setdefault((found[0] if found else f"?{e.op}", _with_grads(e)), []).append(k)
    chunks: List[List[str]] = [[]]
    for group in by_api.values():
        if len(chunks[-1]) >= FACTS_CHUNK:
            chunks.append([])
        chunks[-1].extend(group)
    done = len(rows) - len(missing)
    for chunk in chunks:
        for k, facts in zip(chunk, op_facts_many(profile, [missing[k] for k in chunk], max_samples)):
            rows[k]["facts"] = facts
            store.put_op_row(k, rows[k])
        store.commit()
        done += len(chunk)
        if progress:
            progress("capability facts", done, len(rows))
    # the error against float64, for the rows the profile lets through
    need: Dict[Tuple[str, str], List[str]] = {}
    for e in ops:
        if e.dtype is None:
            continue
        k = _op_row_key(spec, e)
        facts = rows[k]["facts"]
        if facts.get("status") == "pass" and "error" not in rows[k]:
            need.setdefault((facts["key"], e.dtype), []).append(k)
    pending = list(need)
    for start in range(0, len(pending), MEASURE_BATCH):
        batch = pending[start:start + MEASURE_BATCH]
        measured = measure_errors(batch, spec, measure_timeout * max(1.0, len(batch) / 40))
        for pair in batch:
            got = measured.get(f"{pair[0]}|{pair[1]}", {"why": "no answer"})
            for k in need[pair]:
                rows[k]["error"] = got
                store.put_op_row(k, rows[k])
        if progress:
            progress("errors against float64", min(start + MEASURE_BATCH, len(pending)), len(pending))
    for e in ops:
        if e.dtype is None:
            a = Answer(e.key, "UNDETERMINED", f"an @ops test of {e.op} without a dtype in its name",
                       {"op": e.op, "test_kind": e.test_kind}, emulated, "opinfo-rows")
        else:
            row = rows[_op_row_key(spec, e)]
            key = row["facts"].get("key") or e.op
            a = classify_op(e, row["facts"], row.get("error"), emulated, spec,
                            (swept or {}).get((key, e.dtype)))
        answers[e.key] = a
        store.put_answer(spec, a)


def _replay_pool(todo: List[Entry], tree: Optional[TreeIndex], adapter, jobs: int):
    """The batched replays' zygotes, started (not waited for) when some entry will replay
    in them; None otherwise."""
    from ..run.upstream_handler import isolation

    if tree is None or isolation(adapter) != "fork" or not any(e.kind == "replay" for e in todo):
        return None
    from . import explain_skips_replay as R

    return R.ZygotePool(adapter.spec, R.zygote_env(adapter.spec, adapter.worker_env()), jobs).start()


def _answer_replays(todo, answers, store, adapter, tree, emulated, side_timeout, jobs, progress,
                    pool=None) -> None:
    rest = [e for e in todo if e.kind == "replay" and e.key not in answers]
    if not rest:
        return
    cases, owners = [], []
    for e in rest:
        if tree is None:
            a = Answer(e.key, "UNDETERMINED", "not an @ops test and no test tree given (--tests DIR) "
                       "to replay it in", how="replay")
        else:
            case, why = replay_case(e, tree, side_timeout)
            if case is not None:
                cases.append(case)
                owners.append(e)
                continue
            a = Answer(e.key, "UNDETERMINED", f"cannot replay: {why}", how="replay")
        answers[e.key] = a
        store.put_answer(adapter.spec, a)
    if not cases:
        return
    from ..run.upstream_handler import isolation

    if isolation(adapter) == "fork":  # the device lives in this process's memory: batched per file
        _answer_replays_batched(cases, owners, answers, store, adapter, emulated, side_timeout, jobs, progress,
                                pool)
        return
    from ..run.executors import make_executor
    from ..run.pool import CaseEvent

    init: Dict[str, Any] = {"device": adapter.spec, "modules": [], "warm": list(_replayer().warm)}
    pool = make_executor("local", init, jobs=jobs, extra_env=adapter.worker_env(), adapter=adapter)
    done = [0]

    def on_event(event: CaseEvent) -> None:
        e = owners[event.index]
        if event.kind == "result":
            a = classify_replay(e, event.payload, emulated, adapter.spec)
            a.evidence["method"] = cases[event.index]["test"]
            if a.category == "DTYPE":
                _add_kernel_fact(a, getattr(adapter, "profile", None))
        else:  # the worker died or overran: the harness's, never the chip's answer
            a = Answer(e.key, "UNDETERMINED", f"no answer: the worker {event.kind}: {event.detail[:300]}",
                       {"kind": event.kind}, False, "replay")
        answers[e.key] = a
        store.put_answer(adapter.spec, a)
        done[0] += 1
        if progress:
            progress("replays", done[0], len(cases))

    pool.run(cases, [2 * side_timeout + 30] * len(cases), on_event)


def _listed_names(e: Entry, device: str) -> List[str]:
    """The method names the listed test has on ``device`` ("cpu", or the device names)."""
    if not e.generic:
        return [e.test]
    tail = f"_{e.rest}" if e.rest else ""
    names = [e.test] if device != "cpu" and e.device != "cpu" else []
    for d in (("cpu",) if device == "cpu" else REPLAY_DEVICE_NAMES):
        name = f"{e.head}_{d}{tail}"
        if name not in names:
            names.append(name)
    return names


REPLAY_DEVICE_NAMES = ("npu", "privateuse1")


def _side(row: Optional[Dict[str, str]]) -> Dict[str, Any]:
    """A batched row as the side answer ``upstream_handler.compare`` takes."""
    if row is None:
        return {"absent": "not run"}
    outcome = row.get("outcome")
    if outcome in ("absent", "timeout", "crash"):
        return {outcome: row.get("detail", "")}
    if outcome == "file_error":
        return {"error": f"the test file does not import: {row.get('detail', '')}"}
    return {"variants": {"-": {k: v for k, v in row.items() if k in ("outcome", "detail", "exc_type", "chain")}}}


def _answer_replays_batched(cases, owners, answers, store, adapter, emulated, side_timeout, jobs,
                            progress, pool=None) -> None:
    """Each test file imported once per side for all its listed tests (explain_skips_replay):
    the listed test runs as listed first; one that does not pass there runs on the CPU too,
    so that a failure of the device is told apart from a test failing everywhere."""
    from ..run.upstream_handler import compare
    from . import explain_skips_replay as R

    env = R.zygote_env(adapter.spec, adapter.worker_env())
    spec = adapter.spec
    load_timeout = max(120.0, 2 * side_timeout)

    def requests(side: str, picked: List[int]) -> List[Dict[str, Any]]:
        by_file: Dict[Tuple[str, str], List[int]] = {}
        for i in picked:
            by_file.setdefault((cases[i]["root"], cases[i]["file"]), []).append(i)
        out = []
        for (root, rel), idx in sorted(by_file.items(), key=lambda kv: -len(kv[1])):
            tests = []
            for i in idx:
                e = owners[i]
                tests.append({"cls": e.base_cls if cases[i]["generic"] else e.cls, "generic": cases[i]["generic"],
                              "names": _listed_names(e, "device") if side == "device" else _listed_names(e, "cpu"),
                              "cpu_names": _listed_names(e, "cpu"),
                              # a generic test renamed by @parametrize since the list named it
                              "head": e.head if e.generic else None, "tail": f"_{e.rest}" if e.rest else ""})
            out.append({"id": f"{side}:{rel}", "root": root, "rel": rel, "side": side, "tests": tests,
                        "owners": idx, "torch_device": adapter.torch_device, "per_test": side_timeout,
                        "load_timeout": load_timeout})
        return out

    first: Dict[int, Dict[str, str]] = {}
    done = [0]
    total = len(cases)

    def finish(i: int, payload: Dict[str, Any], method: Optional[str], renamed=None) -> None:
        e = owners[i]
        a = classify_replay(e, payload, emulated, spec)
        a.evidence["method"] = method or cases[i]["test"]
        if renamed:  # the listed name is outdated: its test's parametrized copies answered
            a.evidence["renamed"] = renamed
            a.reason += (f"; the listed name matches no test of this tree (renamed upstream by "
                         f"@parametrize): ran its copies {', '.join(renamed)}")
        a.evidence["replay"] = "batched per file" + (" under torchparity's torch_npu stand-in"
                                                      if env.get("TORCHPARITY_TORCH_NPU") else "")
        if a.category == "DTYPE":
            _add_kernel_fact(a, getattr(adapter, "profile", None))
        a.evidence["seconds"] = timings.get(i, {})
        answers[e.key] = a
        store.put_answer(spec, a)
        done[0] += 1
        if progress:
            progress("replays", done[0], total)

    timings: Dict[int, Dict[str, Any]] = {}
    listed_cpu = [i for i in range(total) if owners[i].device == "cpu"]
    on_cpu_side = set(listed_cpu)
    again: List[int] = []
    # device rows an interrupted run kept: only their CPU round is left
    kept = store.device_rows(spec)
    for i in range(total):
        row = kept.get(owners[i].key)
        if row is not None and i not in on_cpu_side:
            first[i] = row
            timings[i] = _timing(row, "device")
            again.append(i)
    reqs = requests("device", [i for i in range(total) if i not in on_cpu_side and i not in first])
    reqs += [dict(r, id="listed-" + r["id"]) for r in requests("cpu", listed_cpu)]

    def on_first(req, j, row) -> None:
        i = req["owners"][j]
        timings[i] = _timing(row, req["side"])
        if row.get("outcome") in ("pass", "xfail"):
            finish(i, {"status": "pass", "cause": None, "detail": f"{row.get('method')}: {row['outcome']}",
                       "outcomes": {"device": row["outcome"]}}, row.get("method"), row.get("renamed"))
        elif row.get("outcome") == "file_error":  # the same import fails on the CPU side
            finish(i, {"status": "skip", "cause": "not_comparable", "detail": "cannot replay here: the test "
                       f"file does not import: {row.get('detail', '')}"}, None)
        elif i in on_cpu_side:  # a CPU test of the list that fails: nothing of the device in it
            finish(i, compare(_side(row), None, "cpu"), row.get("method"))
        elif cases[i]["generic"] and owners[i].base_cls in no_cpu_classes() and row.get("outcome") != "absent":
            # upstream never runs this class on the CPU: the device's round alone answers
            finish(i, _device_only(row, owners[i].base_cls, adapter), row.get("method"), row.get("renamed"))
        else:
            first[i] = row
            store.put_device_row(spec, owners[i].key, row)
            again.append(i)

    if reqs:
        R.run_requests(reqs, spec, env, jobs, on_first, pool)
    if not again:
        return

    def on_cpu(req, j, row) -> None:
        i = req["owners"][j]
        timings[i].update(_timing(row, "cpu"))
        dev = first[i]
        cpu = _side(row)
        payload = compare(cpu, _side(dev) if "variants" in cpu else None, adapter.type, adapter.error_patterns())
        finish(i, payload, dev.get("method"), dev.get("renamed"))

    R.run_requests(requests("cpu", sorted(again)), spec, env, jobs, on_cpu, pool)


def _device_only(row: Dict[str, Any], cls: str, adapter) -> Dict[str, Any]:
    """The payload of a listed test of a class upstream never instantiates for the CPU
    (``explain_skips_no_cpu.yaml``): its device row, classified as the comparison would."""
    from ..run.upstream_handler import classify_row

    side = _side(row)
    if "variants" not in side:
        kind, text = next(iter(side.items()))
        return {"status": "skip", "cause": "not_comparable", "detail": f"on {adapter.type}, {kind}: {text}"}
    status, cause, detail = classify_row(side["variants"]["-"], adapter.error_patterns())
    why = f"no CPU round: upstream never runs {cls} on the CPU [{no_cpu_classes()[cls]['source']}]"
    return {"status": status.value, "cause": cause.value,
            "detail": f"{row.get('outcome')} on {adapter.type}: {detail}; {why}", "outcomes": {"device": row.get("outcome")}}


def _timing(row: Dict[str, Any], side: str) -> Dict[str, Any]:
    """The seconds of one side of a batched replay: the test's own, and its file's import
    (shared by every test of the file on that side)."""
    return {k: v for k, v in ((side, row.get("seconds")), (f"{side}_file_import", row.get("load_s")))
            if v is not None}


# the scalar type names of c10's messages -> dtype names
_SCALAR_TYPES = {"Double": "float64", "Float": "float32", "Half": "float16", "BFloat16": "bfloat16",
                 "ComplexDouble": "complex128", "ComplexFloat": "complex64", "ComplexHalf": "complex32",
                 "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8",
                 "Bool": "bool", "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64"}


def _refused_dtype(name: str):
    """The dtype a refusal names: c10's scalar type name, or a dtype name as the emulator
    writes it ('uint16')."""
    return _SCALAR_TYPES.get(name) or (name if name in _SCALAR_TYPES.values() else None)


def _add_kernel_fact(a: Answer, profile) -> None:
    """The profile's fact behind a dtype refusal a replay met, with its source: the op the
    message names (c10's '"isclose_npu" not implemented for ...', or torch_npu's
    'isclose: NPU function error: call aclnnIsClose failed ... not implemented for DT_X'),
    and where the words come from (``chips/messages.yaml``)."""
    found = refused_kernels(a.reason)
    if profile is None or not found:
        return
    op, scalar, aclnn = found[0]
    entry = profile.op_support(f"aten.{op}")
    if entry is None:
        return
    from ..devices.profiles import vendor_messages

    fact = {"op": f"aten.{op}", "dtype": _refused_dtype(scalar), "dtypes": entry.dtypes, "source": entry.source}
    words = vendor_messages(getattr(profile, "vendor", None))
    if aclnn and words is not None and words.aclnn_dtype_check is not None:
        fact["wording"] = {"kernel": aclnn, "sources": words.aclnn_dtype_check.sources
                           + (words.aclnn_failure.sources if words.aclnn_failure else [])}
    a.evidence["kernel_facts"] = [fact]
    a.reason += f"; the kernel takes {', '.join(entry.dtypes or [])} [{entry.source}]"


def summary_counts(answers: Iterable[Answer]) -> Dict[str, int]:
    out = {c: 0 for c in CATEGORIES}
    for a in answers:
        out[a.category] += 1
    return out


if __name__ == "__main__":
    sys.exit(_measure_main())
