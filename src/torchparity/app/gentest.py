"""`torchparity gentest`: test files from the scenarios of some APIs, from every source.

It asks the scenario sources (``scenarios.sources``) as ``check`` does and writes one file
per API:

- hand-written scenarios (source ``hand``): their functions copied into the file, which
  runs on its own (``deliver.gentest.generate``);
- every other source (OpInfo, module, optim, distribution, the code-block sources,
  distributed worlds, ...): each scenario's worker case (``sources.case_for``, the route
  ``check`` takes) as data, one test per dtype — per dtype and OpInfo sample for OpInfo —
  judged by ``run.standalone`` with check's comparison (``deliver.gentest.generate_replay``).
  An API with both gets the second file as ``test_<api>_sources.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

from ..api.resolve import allow_namespaces, resolve
from ..deliver.gentest import (
    DEFAULT_SUPPORTED_DEVICES,
    STYLES,
    GeneratedFile,
    ReplayCase,
    file_name,
    function_source,
    generate,
    generate_replay,
    write_generated,
)
from ..deliver.gentest_npu import LeftOut, NpuCodeCase, NpuOpCase, generate_npu
from ..errors import InputError
from ..results.models import Report
from ..run.standalone import FROM_ENV, portable, samples_of
from ..scenarios import registry, sources
from ..scenarios.registry import Scenario
from ..scenarios.sources.base import BlockSource, standalone_source
from ..version import __version__
from .check import plan_scenarios


def replay_case(sc: Scenario, api: str, max_samples: Optional[int] = None) -> ReplayCase:
    """One generated-source scenario as data for its test file."""
    case, root = portable(sources.case_for(sc, api, sc.dtypes[0], max_samples=max_samples))
    case.pop("dtype", None)
    case.pop("footprint", None)
    runs: list = []
    for d in sc.dtypes:
        n = samples_of(case, d)
        runs += [(d, i) for i in range(n)] if n else [(d, None)]
    try:
        snippet = sc.snippet("DEVICE")
    except Exception:  # a snippet is for reading; the case is the test
        snippet = ""
    if root:  # the folder of this machine is no part of the file
        snippet = snippet.replace(root, FROM_ENV)
    return ReplayCase(id=sc.id, source=sc.source, case=case, runs=runs,
                      doc=sc.description.en, snippet=snippet, **_block_code(sc, api))


def _block_code(sc: Scenario, api: str) -> dict:
    """A code-block case's own code for the file (its body's standalone source, which
    the report's snippet shows too), or nothing for a case of another kind."""
    src = sources.source(sc.source)
    case = src.case_of(api) if isinstance(src, BlockSource) else None
    if case is None or getattr(sc.fn, "__name__", "") != case.body.__name__:
        return {}
    return dict(code=standalone_source(case.body), body=case.body.__name__,
                kwargs=case.kwargs(api), quiet=src.quiet)


def gentest(apis: Sequence[str], style: str, out: Optional[str], *,
            scenario_modules: Sequence[str] = (), report: Optional[Report] = None,
            supported_devices: Sequence[str] = DEFAULT_SUPPORTED_DEVICES,
            max_samples: Optional[int] = None,
            dtypes: Optional[Sequence[str]] = None,
            tests_dir: Optional[str] = None, force: bool = False) -> List[GeneratedFile]:
    """Generate the test files of each API in ``style``; writes them under ``out`` when given.

    ``report``: a check report whose refused cases become recorded limits in the files.
    ``max_samples``: at most N OpInfo samples per dtype (as ``check --max-samples``);
    ``dtypes``: only those dtypes (as ``check --dtypes``); ``tests_dir``: a test tree whose
    tests of each API are replayed too (as ``check --tests``; the files read the tree from
    ``$TORCHPARITY_TESTS`` when they run). A file already at a generated file's path that
    is not one of ours (no marker line) is kept unless ``force``; each file's ``outcome``
    says what happened to it.
    """
    if style not in STYLES:
        raise InputError(f"unknown test style {style!r}; use one of: {', '.join(STYLES)}")
    if not apis:
        raise InputError("no API given: name at least one, e.g. torch.autograd.gradcheck")
    if max_samples is not None and max_samples < 1:
        raise InputError("--max-samples must be at least 1")
    if tests_dir is not None and not Path(tests_dir).is_dir():
        raise InputError(f"--tests {tests_dir}: no such folder")
    allow_namespaces(scenario_modules)  # a module the user names may check its own APIs
    resolved = [resolve(name) for name in apis]
    registry.load_suites(scenario_modules)
    settings = sources.RunSettings(tests_dir=tests_dir)
    with sources.prepared(settings, [r.name for r in resolved]):  # as check plans
        files = _generate(resolved, style, dtypes=dtypes, report=report,
                          supported_devices=supported_devices, max_samples=max_samples)
    if out is not None:
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"--out {out}: exists and is not a folder")
        for f in files:
            f.outcome = write_generated(folder / f.name, f.text, force=force)
    return files


def npu_cases(scenarios: Sequence[Scenario], api: str, max_samples: Optional[int] = None):
    """(OpInfo cases, code cases, cases left out) of an API for the ``npu`` style: what a
    file can say with torch, torch_npu and torch.testing._internal alone."""
    from ..scenarios import opinfo as oi

    copied = {src.name for src in sources.all_sources() if src.writes_functions}
    ops: List[NpuOpCase] = []
    codes: List[NpuCodeCase] = []
    left: List[LeftOut] = []
    for sc in scenarios:
        doc = sc.description.en
        if "random" in sc.tags:
            left.append(LeftOut(sc.id, sc.source, "random draws: compared by distribution"))
            continue
        if sc.source in copied:
            fn, body = function_source(sc)
            shapes = [tuple(s) for s in sc.shapes] or [None]
            for i, shape in enumerate(shapes):
                codes.append(NpuCodeCase(
                    id=sc.id if len(shapes) == 1 else f"{sc.id}_shape{i}", source=sc.source,
                    code="import torch\n\n\n" + body, fn=fn, dtypes=list(sc.dtypes),
                    kwargs={} if shape is None else {"shape": shape}, compare=sc.compare,
                    raises=(sc.raises.type, sc.raises.match) if sc.raises else None, doc=doc,
                    scenario=sc.id))
            continue
        case = sources.case_for(sc, api, sc.dtypes[0], max_samples=max_samples)
        if case.get("kind") == "opinfo":
            why = None
            if case.get("db", "op_db") != "op_db" or case.get("reference"):
                why = "a reference-input or python_ref_db case"
            elif str(case.get("call", "op")).startswith("api:"):
                why = "an API that reaches the entry through its footprint"
            else:
                op = oi.OpEntry(api=case["api"], key=case["key"], db="op_db",
                                call=case.get("call", "op")).opinfo
                if oi.output_kind(op) != "values":
                    why = f"an op whose output is {oi.output_kind(op)}"
            if why:
                left.append(LeftOut(sc.id, sc.source, why))
                continue
            ops.append(NpuOpCase(id=sc.id, source=sc.source, name=op.name,
                                 variant=op.variant_test_name, call=case.get("call", "op"),
                                 dtypes=list(sc.dtypes), max_samples=case.get("max_samples"),
                                 grads=bool(case.get("grads", True)), doc=doc))
            continue
        block = _block_code(sc, api)
        if block:
            codes.append(NpuCodeCase(id=sc.id, source=sc.source, code=block["code"],
                                     fn=block["body"], dtypes=list(sc.dtypes),
                                     kwargs=block["kwargs"], compare=sc.compare,
                                     raises=(sc.raises.type, sc.raises.match) if sc.raises else None,
                                     quiet=block["quiet"], doc=doc))
            continue
        left.append(LeftOut(sc.id, sc.source, f"a {case.get('kind', 'source')} case of the "
                            f"{sc.source} source: torchparity re-makes it"))
    return ops, codes, left


def _generate(resolved, style: str, *, dtypes, report, supported_devices,
              max_samples) -> List[GeneratedFile]:
    files = []
    for r in resolved:
        offer = plan_scenarios(r.name, r.obj, dtypes)
        if style == "npu":
            if not offer.scenarios:
                raise InputError(f"{r.name}: no scenario source gives it a scenario "
                                 f"({offer.reason}); there is nothing to generate")
            ops, codes, left = npu_cases(offer.scenarios, r.name, max_samples)
            f = generate_npu(r.name, r.qualified_name, ops, codes, left,
                             tool_version=__version__, report=report)
            if f is not None:
                files.append(f)
            continue
        # sources whose scenario functions are copied as they are (hand suites); every
        # other source's scenarios go into the file as worker cases
        copied = {src.name for src in sources.all_sources() if src.writes_functions}
        hand = [sc for sc in offer.scenarios if sc.source in copied]
        others = [sc for sc in offer.scenarios if sc.source not in copied]
        if not offer.scenarios:
            raise InputError(f"{r.name}: no scenario source gives it a scenario ({offer.reason}); "
                             "there is nothing to generate")
        if hand:
            files.append(generate(r.name, r.qualified_name, hand, style, tool_version=__version__,
                                  report=report, supported_devices=supported_devices))
        if others:
            name = file_name(r.name)
            if hand:
                name = name[:-3] + "_sources.py"
            cases = [replay_case(sc, r.name, max_samples) for sc in others]
            files.append(generate_replay(r.name, r.qualified_name, cases, style,
                                         tool_version=__version__, report=report,
                                         supported_devices=supported_devices, name=name))
    return files


def gentest_writer(style: str, scenario_modules: Sequence[str] = (),
                   max_samples: Optional[int] = None, tests_dir: Optional[str] = None,
                   force: bool = False):
    """A check() writer: the report's APIs as test files under ``out/tests/<style>/``,
    with the cases the device refused recorded as limits (``tests_dir``: check's
    ``--tests``, whose replays get tests too)."""

    def write(report: Report, out: Path) -> None:
        apis = [a.name for a in report.apis if a.scenarios]
        if apis:
            gentest(apis, style, str(Path(out) / "tests" / style), report=report,
                    scenario_modules=scenario_modules, max_samples=max_samples,
                    tests_dir=tests_dir, force=force)

    write.__name__ = f"gentest_{style.replace('-', '_')}"
    return write
