"""``--style npu``: test files that live in Ascend/pytorch's test tree without torchparity.

A file imports only ``torch``, ``torch_npu`` and the testing helpers those projects ship
(``torch.testing._internal``: ``instantiate_device_type_tests``, ``@ops`` over the op_db
entries it names, ``@dtypes``; ``TestCase`` and ``run_tests`` from
``torch.testing._internal.common_utils``, as Ascend's device-type files do, e.g.
test/test_matmul_npu.py and test/npu/test_torch_fill_uninitialized_memory.py, instantiated
``only_for="privateuse1"`` as they are). The device comes from the test framework, never
from the file.

What goes in:

- an **OpInfo** case: ``@ops([the op_db entry by name and variant], allowed_dtypes=check's
  dtypes)``; the test makes the samples as ``check`` does (seeded, on the CPU, the same
  cap) and judges **every** sample: the device output (and the gradients where check
  judged them) against the CPU with ``torch.testing.assert_close``;
- a **hand** scenario or a **code-block** case (member, fx, tooling, nnutil, quant, ...):
  its function inlined (the scenario code; a code-block body with the module helpers it
  reads), run on the CPU and on the device in its own test, compared with
  ``assert_close`` (exact for integer and bool results, as assert_close is);
- a dtype ``check`` found refused on the device (``--limits-from`` / ``check --gentest``):
  its own test, ``unittest.skipIf`` on the chip the limit was recorded on, the fact and
  its source in the reason; a refusal is the recorded answer, never a failing test.

What cannot be said without torchparity stays out, named in the file's header: random
draws (compared by distribution), the sources that re-make a scenario (optim,
distribution, module, docstring, ...), worlds of ranks and upstream replays. ``--style
npu-judged`` writes those (and everything else) as files judged by torchparity.

Safety as in ``deliver.gentest``: code comes only from scenario functions' own source
(parsed with ``ast``), every text is a ``repr()`` literal, every identifier validated.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import InputError
from ..results.models import Report
from .gentest import (
    CaseCode,
    GeneratedFile,
    check_api_name,
    class_name,
    file_name,
    identifier,
    limits_by_source,
    marked,
    safe_identifier,
    source_environment,
)

STYLE = "npu"
_CALLS = ("op", "method", "inplace")


@dataclass
class NpuOpCase:
    """An OpInfo scenario: the op_db entry (name, variant) and how check called it."""

    id: str
    source: str
    name: str
    variant: str
    call: str  # op | method | inplace | alias:<name> | alias_method:<name> | ...
    dtypes: List[str]
    max_samples: Optional[int] = None
    grads: bool = True
    doc: str = ""


@dataclass
class NpuCodeCase:
    """A hand scenario or a code-block case: its function's code, called ``fn(device,
    dtype, **kwargs)`` on the CPU and on the device."""

    id: str
    source: str
    code: str  # defines ``fn`` (and what it reads)
    fn: str
    dtypes: List[str]
    kwargs: Dict[str, Any] = field(default_factory=dict)
    compare: str = "values"
    raises: Optional[Tuple[str, str]] = None
    quiet: bool = False
    doc: str = ""
    scenario: str = ""  # the scenario id check's rows carry, when not ``id`` (one shape of it)


@dataclass
class LeftOut:
    id: str
    source: str
    why: str


def _dtype_ident(name: str) -> str:
    import torch

    if not isinstance(getattr(torch, identifier(name), None), torch.dtype):
        raise InputError(f"{name!r} is not a torch dtype")
    return name


def _comment(text: str, limit: int = 200) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in (text or ""))[:limit]


def _reason(limit: Dict[str, str], dtype: str, where: str) -> str:
    detail = (limit.get("detail") or "").strip().splitlines()
    return (f"{dtype}: the device refuses it ({limit.get('status')}, {limit.get('cause')})"
            + (f": {detail[0][:200]}" if detail else "")
            + f" [recorded by torchparity check on {where}]")


def _split(dtypes: Sequence[str], limits: Dict[str, Dict[str, str]]) -> Tuple[List[str], List[str]]:
    return [d for d in dtypes if d not in limits], [d for d in dtypes if d in limits]


def generate_npu(api: str, qualified: str, ops: Sequence[NpuOpCase],
                 codes: Sequence[NpuCodeCase], left_out: Sequence[LeftOut], *,
                 tool_version: str, report: Optional[Report] = None,
                 name: Optional[str] = None) -> Optional[GeneratedFile]:
    """The ``--style npu`` file of one API (see the module docstring); None when no case
    of the API can be said without torchparity."""
    check_api_name(api)
    check_api_name(qualified)
    if not ops and not codes:
        return None
    spec, limits = recorded_limits(report, api, qualified)
    details = _details(report, api, qualified)
    chip = None
    where = ""
    if report is not None:
        # the SoC name torch_npu.npu.get_device_name gives, without our "(emulated)" label
        chip = (report.environment.device_name or report.device.name or "").split(" (")[0] or None
        where = (f"{spec}{' (emulated)' if report.device.emulated else ''}, chip {chip}, "
                 f"torch {report.environment.torch}")
    tests: List[Dict[str, Any]] = []
    used: Dict[str, int] = {}

    def test_name(text: str) -> str:
        t = "test_" + safe_identifier(text, "case")
        used[t] = used.get(t, 0) + 1
        return t if used[t] == 1 else f"{t}_{used[t]}"

    for c in ops:
        kind, _, alias = c.call.partition(":")
        if kind not in _CALLS and not (kind in ("alias", "alias_method", "alias_inplace")
                                       and alias):
            raise InputError(f"{api}: OpInfo call {c.call!r} has no npu-style spelling")
        case_limits = {d: dict(limits[(c.source, c.id, d)], detail=details.get((c.source, c.id, d), ""))
                       for d in c.dtypes if (c.source, c.id, d) in limits}
        ok, refused = _split(c.dtypes, case_limits)
        base = test_name(f"{c.source}_{c.id}")
        common = {"kind": "op", "id": f"{c.source}:{c.id}", "name": c.name, "variant": c.variant,
                  "call": c.call, "max_samples": c.max_samples, "grads": c.grads, "doc": c.doc}
        if ok:
            tests.append(dict(common, test=base, dtypes=[_dtype_ident(d) for d in ok], skip=None,
                              emulator=False))
        tests += _limit_tests(common, base, refused, case_limits, where)
    code = _Code(reserved=[class_name(api)])
    kept_codes = []
    for c in codes:
        if not code.add(c.code, c.kwargs):
            left_out = list(left_out) + [LeftOut(c.id, c.source, "its code rebinds a name the file "
                                                 "binds otherwise")]
            continue
        kept_codes.append(c)
        sid = c.scenario or c.id
        case_limits = {d: dict(limits[(c.source, sid, d)], detail=details.get((c.source, sid, d), ""))
                       for d in c.dtypes if (c.source, sid, d) in limits}
        ok, refused = _split(c.dtypes, case_limits)
        base = test_name(f"{c.source}_{c.id}")
        common = {"kind": "code", "id": f"{c.source}:{c.id}", "fn": identifier(c.fn),
                  "kwargs": c.kwargs, "compare": c.compare, "raises": c.raises,
                  "quiet": c.quiet, "doc": c.doc}
        if ok:
            tests.append(dict(common, test=base, dtypes=[_dtype_ident(d) for d in ok], skip=None,
                              emulator=False))
        tests += _limit_tests(common, base, refused, case_limits, where)
    if not tests:
        return None
    name = name or file_name(api)
    text = source_environment().get_template("gentest_ascend_npu.py.j2").render(
        api=api, qualified=qualified, cls=class_name(api), tests=tests, file=name,
        tool_version=tool_version, code=code.statements(), code_imports=code.imports(),
        has_ops=any(t["kind"] == "op" for t in tests),
        has_code_tests=any(t["kind"] == "code" for t in tests),
        limits_chip=chip if any(t["skip"] for t in tests) else None,
        left_out=[{"id": f"{x.source}:{x.id}", "why": _comment(x.why)} for x in left_out],
    )
    ast.parse(text)  # a generated file that does not parse is our bug: fail here
    return GeneratedFile(api=api, style=STYLE, name=name, text=marked(text),
                         tests=sum(len(t["dtypes"]) for t in tests))


def _limit_tests(common: Dict[str, Any], base: str, refused: List[str],
                 limits: Dict[str, Dict[str, str]], where: str) -> List[Dict[str, Any]]:
    """The refused dtypes' tests: one for the chip's limits (skipped on that chip), one for
    the emulator's (skipped on the emulated device only)."""
    out = []
    for emulator in (False, True):
        ds = [d for d in refused if (limits[d].get("cause") == EMULATOR_LIMIT) == emulator]
        if ds:
            out.append(dict(common, test=base + ("_emulator_limit" if emulator else "_recorded_limit"),
                            dtypes=[_dtype_ident(d) for d in ds], emulator=emulator,
                            skip="; ".join(_reason(limits[d], d, where) for d in ds)))
    return out


EMULATOR_LIMIT = "emulator_limit"


def recorded_limits(report: Optional[Report], api: str, qualified: str):
    """(device spec, {(source, id, dtype): {status, cause}}): the cases check found the
    device refusing: unsupported / partial rows, and the skips whose cause is the device's
    (an emulator limit; scaffolding the device refused, which check cannot compare)."""
    spec, out = limits_by_source(report, api, qualified)
    if report is None:
        return spec, out
    for a in report.apis:
        if a.name not in (api, qualified) and a.qualified_name != qualified:
            continue
        for s in a.scenarios:
            if s.status == "skip" and (s.cause == EMULATOR_LIMIT or (s.detail or "").startswith(
                    "scaffolding refused")):
                out[(s.source or "hand", s.id, s.dtype or "")] = {"status": s.status,
                                                                  "cause": s.cause or ""}
    return spec, out


def _details(report: Optional[Report], api: str, qualified: str) -> Dict[Tuple[str, str, str], str]:
    if report is None:
        return {}
    return {(s.source or "hand", s.id, s.dtype or ""): s.detail or ""
            for a in report.apis if a.name in (api, qualified) or a.qualified_name == qualified
            for s in a.scenarios}


class _Code(CaseCode):
    """The inlined functions: the names the npu template binds are reserved too; their
    imports go with the file's own (``import torch`` is one of those)."""

    def __init__(self, reserved: Sequence[str] = ()) -> None:
        super().__init__(reserved=list(reserved) + list(_NPU_TEMPLATE_NAMES))

    def imports(self) -> str:
        return "\n".join(i for i in self._imports if i not in ("import torch", "import unittest"))

    def statements(self) -> str:
        return "\n\n\n".join(self._stmts)


_NPU_TEMPLATE_NAMES = ("torch_npu", "unittest", "dtypes", "ops", "op_db", "OpDTypes",
                       "instantiate_device_type_tests", "TestCase", "run_tests", "DEVICE_NAME",
                       "LIMITS_CHIP", "ON_LIMITS_CHIP", "SEED", "KWARGS")
