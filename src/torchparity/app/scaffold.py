"""`torchparity scaffold API`: a suite module to start from, for an API no source covers well.

The module is pre-filled with what is known: the signature, the docstring example blocks
(and why a block cannot run, where it cannot), the footprint seen so far (the ops the
docstring examples dispatched, run once in a worker on ``device``; none when no example
runs) and the open questions, as TODO comments. Its one scenario raises
:class:`~torchparity.scenarios.registry.NotRunnable` until someone writes the body, so
``check`` reports it as ``skip`` ("not runnable: ... not written yet"), never as a pass.
The file imports and registers as it is: drop it into ``scenarios/suites/`` or pass it
with ``--scenarios FILE``.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import torch

from ..api.resolve import resolve
from ..errors import InputError
from ..results.store import write_text_atomic
from ..scenarios import registry, sources


@dataclass
class Scaffold:
    api: str
    path: Optional[Path]
    text: str
    covered_by: List[str] = field(default_factory=list)  # sources that already give scenarios
    examples: int = 0
    runnable: int = 0


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError) as exc:
        return f"(not available: {exc})"


def _docstring_run(api: str, scs: list, device: str) -> Tuple[Dict[str, Tuple[str, str]], List[Dict[str, Any]]]:
    """(scenario id -> (status, detail), footprint entries) of the docstring examples run
    once on ``device`` in a worker (a crash or a hang there does not reach this process)."""
    from ..devices import get_adapter
    from ..run.answer import answer_of
    from ..run.pool import WorkerPool

    if not scs:
        return {}, []
    adapter = get_adapter(device)
    reason = adapter.unavailable_reason()
    if reason:
        raise InputError(f"device {device}: {reason}")
    outcome: Dict[str, Tuple[str, str]] = {}
    entries: List[Dict[str, Any]] = []

    def on_event(ev):
        sid = scs[ev.index].id
        answer = answer_of(ev)
        if answer.result is None:  # a crash, a timeout, a harness error: not run
            outcome[sid] = (ev.kind if ev.kind != "result" else "error",
                            str(ev.detail or answer.harness_error or "")[:200])
            return
        outcome[sid] = (answer.status, answer.detail[:200])
        entries.extend(e.model_dump(mode="json") for e in answer.footprint or [])

    cases = [sources.case_for(sc, api, "float32", footprint=True) for sc in scs]
    WorkerPool({"device": adapter.spec, "modules": []}, jobs=1).run(
        cases, [sc.timeout_s or 60.0 for sc in scs], on_event)
    return outcome, entries


def _merge(entries: List[Dict[str, Any]]) -> List[str]:
    seen: Dict[Tuple[str, str], Tuple[set, int]] = {}
    for e in entries:
        dts, n = seen.get((e["op"], e.get("source", "api")), (set(), 0))
        seen[(e["op"], e.get("source", "api"))] = (dts | set(e["dtypes"]), n + e["count"])
    return [f"{op} [{', '.join(sorted(dts))}] x{n} ({src})"
            for (op, src), (dts, n) in sorted(seen.items(), key=lambda kv: (kv[0][1] != "api", kv[0][0]))]


def _comment(text: str, prefix: str = "#   ") -> str:
    return "".join(f"{prefix}{ln}".rstrip() + "\n" for ln in text.splitlines())


def _module_text(api: str, obj: Any, examples: List[Tuple[str, Optional[str]]],
                 runs: Dict[str, Tuple[str, str]], footprint: List[str], covered: List[str],
                 device: str) -> str:
    sig = _signature(obj)
    short = api.rsplit(".", 1)[-1]
    fn_name = re.sub(r"\W", "_", short).strip("_").lower() or "api"
    lines = [f'"""Scenarios for {api} (a scaffold written by `torchparity scaffold`, torch {torch.__version__}).\n',
             "Drop this file into src/torchparity/scenarios/suites/ or pass it with --scenarios FILE.",
             "Until the TODOs below are done, its scenario raises NotRunnable: `check` reports it as",
             '"skip" (not runnable: not written yet), never as a pass.\n"""\n',
             "from torchparity.scenarios.registry import NotRunnable, scenario\n",
             f"API = {api!r}\n",
             f"# Signature: {short}{sig}"]
    if covered:
        lines.append(f"# Note: the {', '.join(covered)} source(s) already give it scenarios; a suite here "
                     "is asked first (the hand source) and adds to them.")
    lines.append("#")
    if not examples:
        lines.append("# Docstring examples: none (its docstring has no >>> example).")
    for n, (src, why) in enumerate(examples, 1):
        status, detail = runs.get(f"example{n}", ("not run", ""))
        if why:
            state = f"not runnable: {why}"
        elif status == "not run":
            state = "not run here" + (f": the {', '.join(covered)} source(s) cover the API" if covered else "")
        elif status == "pass":
            state = f"runs on {device}" + ("" if device == "cpu" else ": the same values as the CPU")
        else:
            state = f"ran on {device}: {status} {detail}".strip()
        lines.append(f"# Docstring example {n} ({state}):")
        lines.append(_comment(src).rstrip("\n"))
    lines.append("#")
    if footprint:
        lines.append(f"# Footprint seen so far (ops the runnable docstring examples dispatched on {device}):")
        lines += [f"#   {f}" for f in footprint[:40]]
    else:
        lines.append("# Footprint seen so far: none (no docstring example ran, or it dispatched no op).")
    lines += ["#",
              "# TODO (open questions):",
              "# - Inputs: which arguments and shapes exercise the device? Build them on the CPU and",
              "#   move them with .to(device), so the CPU reference run sees the same values.",
              "# - Dtypes: which does the API take? List them in dtypes= (one scenario per case, every dtype).",
              "# - Outputs: return what to compare with the CPU (tensors, numbers, reprs); random or",
              "#   uninitialised outputs need compare=\"none\" or a summary (shape, dtype, device).",
              "# - Errors: where the API must raise on every device, declare raises=Raises(type, match).",
              "# - Does the API touch the device at all? (an empty footprint says it may not)",
              "", "",
              "@scenario(API, \"todo\", dtypes=[\"float32\"],",
              f"          en=\"{short}: TODO describe the case\", zh=\"{short}：待补充用例说明\",",
              "          expect_en=\"TODO the expected behaviour\", expect_zh=\"待补充预期结果\")",
              f"def {fn_name}_todo(device, dtype):",
              "    # TODO: build the inputs on the CPU, move them to `device`, call the API, return the outputs.",
              f"    raise NotRunnable(\"scaffold for {api}: the scenario body is not written yet (TODO)\")",
              ""]
    return "\n".join(lines)


def scaffold(api: str, out: Optional[str] = None, *, device: str = "cpu", run_examples: bool = True) -> Scaffold:
    """Write (under ``out`` when given) the scaffold suite module of ``api``."""
    resolved = resolve(api)  # an unknown name: InputError (one line, exit 2)
    registry.load_suites()
    # the examples are the fallback source's (docstring examples: the long tail)
    examples_source = sources.fallback()
    offer = sources.offer(resolved.name, resolved.obj)
    covered = sorted({sc.source for sc in offer.scenarios}
                     - {examples_source.name if examples_source else ""})
    examples = examples_source.examples(resolved.name) if examples_source else []
    # a worker finds the scenarios through the source, which yields to an earlier one:
    # the examples of a covered API are not run here (check runs the covering source)
    scs = (examples_source.scenarios(resolved.name, resolved.obj)
           if examples_source and run_examples and not covered else [])
    runs, entries = _docstring_run(resolved.name, scs, device)
    text = _module_text(resolved.name, resolved.obj, examples, runs, _merge(entries), covered, device)
    path = None
    if out is not None:
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"--out {out}: exists and is not a folder")
        path = folder / f"scaffold_{re.sub(r'[^0-9A-Za-z]+', '_', resolved.name)}.py"
        write_text_atomic(path, text)
    return Scaffold(api=resolved.name, path=path, text=text, covered_by=covered,
                    examples=len(examples), runnable=sum(1 for s, _ in runs.values() if s != "skip"))
