"""One issue per task: ``issues/<api>.{zh,en}.md`` for every API of a run, or one file per
task given with ``check --task NAME=API,API`` (seed 000 files gradcheck + gradgradcheck as
one task, seed 001 enter_dual_level + unpack_dual).

Each issue is the report of its own APIs only (their scenarios, verdicts, the rows of the
other devices of the run), rendered by the same template as the combined report; links to
the folder's other deliverables are made relative to ``issues/``, and the commands name
the generated test files of the issue's own APIs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import InputError, shown
from ..results.models import Report
from ..results.store import write_text_atomic
from .artifacts import artifacts
from .format import LANGS

ISSUES_DIR = "issues"
Task = Tuple[Optional[str], List[str]]  # (task name or None, API names)


def parse_tasks(texts: Sequence[str]) -> List[Task]:
    """``NAME=API,API`` options as (name, apis); a malformed one is bad input."""
    out: List[Task] = []
    for text in texts:
        name, sep, rest = text.partition("=")
        apis = [a.strip() for a in rest.split(",") if a.strip()]
        if not sep or not name.strip() or not apis:
            raise InputError(f"--task {shown(text)!r}: expected NAME=API[,API...], e.g. 32=torch.autograd.gradcheck")
        if not re.fullmatch(r"[\w.\-]+", name.strip()):
            raise InputError(f"--task {shown(text)!r}: the name may hold letters, digits, '.', '-' and '_' only")
        out.append((name.strip(), apis))
    return out


def check_tasks(tasks: Sequence[Task], apis: Sequence[str]) -> List[Task]:
    """Before anything runs: every API of a task is one of those named, in one task only."""
    seen: Dict[str, str] = {}
    for name, mine in tasks:
        for api in mine:
            if api not in apis:
                raise InputError(f"--task {shown(name)}: {shown(api)} is not one of the APIs to check; name it too")
            if api in seen:
                raise InputError(f"--task {name}: {api} is in task {seen[api]} already")
            seen[api] = str(name)
    if len({n for n, _ in tasks}) != len(tasks):
        raise InputError("--task: two tasks have the same name")
    return list(tasks)


def group(report: Report, tasks: Sequence[Task] = ()) -> List[Task]:
    """The issues of ``report``: each task's APIs (in the run's order), then every API no
    task names, alone. A task naming an API the run did not check is bad input."""
    names = [a.name for a in report.apis]
    qualified = {a.analysis.qualified_name: a.name for a in report.apis}
    out: List[Task] = []
    taken: set = set()
    for name, apis in tasks:
        mine = []
        for api in apis:
            real = api if api in names else qualified.get(api)
            if real is None:
                raise InputError(f"--task {shown(name)}: {shown(api)} is not one of the APIs checked")
            if real in taken:
                raise InputError(f"--task {name}: {api} is in another task too")
            taken.add(real)
            mine.append(real)
        out.append((name, [n for n in names if n in mine]))
    out += [(None, [n]) for n in names if n not in taken]
    return out


def sub_report(report: Report, apis: Sequence[str]) -> Report:
    """``report`` narrowed to ``apis``: their results, and their rows of the other devices."""
    keep = set(apis)
    runs = [r.model_copy(update={"apis": [a for a in r.apis if a.name in keep]}) for r in report.runs]
    return report.model_copy(update={"apis": [a for a in report.apis if a.name in keep], "runs": runs})


def file_stem(task: Task) -> str:
    name, apis = task
    return f"task-{name}" if name else apis[0]


def relative_files(files: Dict[str, Any], apis: Sequence[str]) -> Dict[str, Any]:
    """The folder's deliverables as an issue in ``issues/`` links them; the test files
    (run from the folder, as the commands say) only those of ``apis``."""
    from .report import test_file_for

    out = dict(files)
    for key in ("html", "screenshot", "screenshot_svg"):
        out[key] = f"../{files[key]}" if files.get(key) else None
    mine = {f for api in apis for f in test_file_for(files, api)}
    out["tests"] = {style: [f for f in paths if f in mine] for style, paths in (files.get("tests") or {}).items()}
    out["tests"] = {k: v for k, v in out["tests"].items() if v}
    out["issue"] = True
    return out


def write_issues(report: Report, folder: Path, tasks: Sequence[Task] = ()) -> List[str]:
    """Write ``folder/issues/<stem>.<lang>.md`` for every issue; returns the stems."""
    from .report import render_markdown

    folder = Path(folder)
    files = artifacts(folder)
    stems = []
    for task in group(report, tasks):
        name, apis = task
        sub = sub_report(report, apis)
        mine = relative_files(files, apis)
        if len(apis) != len(report.apis):
            mine["screenshot"] = mine["screenshot_svg"] = None  # the screenshot shows the whole run
        stem = file_stem(task)
        for lang in LANGS:
            write_text_atomic(folder / ISSUES_DIR / f"{stem}.{lang}.md",
                              render_markdown(sub, lang, mine, task=name))
        stems.append(stem)
    return stems


def issues_writer(tasks: Sequence[Task] = ()):
    """A check() writer: the per-task issues (run after the generated tests, so the
    commands name real files)."""
    def write(report: Report, out: Path) -> None:
        write_issues(report, out, tasks)
    return write
