"""`torchparity gentest`: test files from the registered scenarios of some APIs.

It asks the scenario sources (``scenarios.sources``) like every command, and writes the
scenarios whose function source is a readable test on its own: the hand-written ones
(``GENERATED_FROM``). Scenarios of the generated sources (OpInfo, ...) are run by
``check`` and ``sweep``; upstream's own test files already hold them.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

from ..api.resolve import resolve
from ..deliver.gentest import DEFAULT_SUPPORTED_DEVICES, STYLES, GeneratedFile, generate
from ..errors import InputError
from ..results.models import Report
from ..results.store import write_text_atomic
from ..scenarios import registry, sources
from ..version import __version__

GENERATED_FROM = ("hand",)


def gentest(apis: Sequence[str], style: str, out: Optional[str], *,
            scenario_modules: Sequence[str] = (), report: Optional[Report] = None,
            supported_devices: Sequence[str] = DEFAULT_SUPPORTED_DEVICES) -> List[GeneratedFile]:
    """Generate one test file per API in ``style``; writes them under ``out`` when given.

    ``report``: a check report whose refused cases (status unsupported) become recorded
    limits in the files (skipped on that device type only if they still raise there).
    """
    if style not in STYLES:
        raise InputError(f"unknown test style {style!r}; use one of: {', '.join(STYLES)}")
    if not apis:
        raise InputError("no API given: name at least one, e.g. torch.autograd.gradcheck")
    resolved = [resolve(name) for name in apis]
    registry.load_suites(scenario_modules)
    files = []
    for r in resolved:
        offer = sources.offer(r.name, r.obj)
        scenarios = [sc for sc in offer.scenarios if sc.source in GENERATED_FROM]
        others = sorted({sc.source for sc in offer.scenarios} - set(GENERATED_FROM))
        if not scenarios and others:
            raise InputError(f"{r.name}: only the {', '.join(others)} source(s) apply; gentest writes "
                             "hand-written scenarios only (check and sweep run the others)")
        files.append(generate(r.name, r.qualified_name, scenarios, style, tool_version=__version__,
                              report=report, supported_devices=supported_devices))
    if out is not None:
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"--out {out}: exists and is not a folder")
        for f in files:
            write_text_atomic(folder / f.name, f.text)
    return files


def gentest_writer(style: str, scenario_modules: Sequence[str] = ()):
    """A check() writer: the report's APIs as test files under ``out/tests/<style>/``,
    with the cases the device refused recorded as limits."""

    def write(report: Report, out: Path) -> None:
        apis = [a.name for a in report.apis
                if any((s.source or "hand") in GENERATED_FROM for s in a.scenarios)]
        if apis:
            gentest(apis, style, str(Path(out) / "tests" / style), report=report,
                    scenario_modules=scenario_modules)

    write.__name__ = f"gentest_{style.replace('-', '_')}"
    return write
