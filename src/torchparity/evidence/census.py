"""Upstream test census: where a test tree uses an API, directly or through wrappers.

One parse per file (worker processes), one resolution per distinct dotted name (this
process, cached), then counting per file -> class -> test. See scan.py for the syntax
side and wrappers.py for how a name is tied to an API.

Counting rules (stated once, used everywhere):

- a *site* is one reference to a name in code - a call, a ``with``, the object passed
  as a value, or a base class; imports and decorators are not sites;
- *direct*: the name is the API itself (after following import aliases and attribute
  chains: ``fwAD.unpack_dual``, ``from torch.autograd import gradcheck as gc``);
- *indirect*: the name is a wrapper whose source in the installed torch reaches the API
  (``dual_level`` -> ``enter_dual_level``), up to ``depth`` levels; or (one level) an
  in-file helper function/method with sites of its own, referenced from a test;
- a site belongs to the outermost function around it (a test method, a helper, or
  ``<module>``); nested functions count for their enclosing test.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import InputError
from ..results.models import TestClassInfo, TestsEvidence, TestSite
from .decorators import combine
from .scan import FileScan, Instantiation, scan_file
from .wrappers import Resolver, WrapperAnalyzer, is_missing

MAX_LINES = 8  # lines kept per test site
SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", "node_modules"}


@dataclass
class _Count:
    direct: int = 0
    indirect: int = 0
    lines: List[int] = field(default_factory=list)
    via: Dict[str, int] = field(default_factory=dict)


@dataclass
class CensusResult:
    """Per API, the TestsEvidence; plus how the scan went."""

    evidence: Dict[str, TestsEvidence]
    files: int
    parse_errors: Dict[str, str]
    seconds: float
    names: int  # distinct dotted names resolved
    phases: Dict[str, float] = field(default_factory=dict)  # scan, lookup, wrappers, count


def list_test_files(root: Path) -> List[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith(".py"):
                out.append(Path(dirpath) / f)
    return out


def _indexed_scan(arg: Tuple[int, Tuple[str, str, Tuple[str, ...], str]]) -> Tuple[int, FileScan]:
    index, job = arg
    return index, scan_file(job)


def scan_iter(root: Path, files: List[Path], roots: Tuple[str, ...], backend: str,
              processes: Optional[int]) -> Iterator[Tuple[int, FileScan]]:
    """(index in ``files``, scan) as workers finish, so the caller can work meanwhile."""
    jobs = [(str(p), p.relative_to(root).as_posix(), roots, backend) for p in files]
    if processes is None:
        processes = min(os.cpu_count() or 1, 8)
    ctx = None
    if processes > 1 and len(jobs) >= 16:
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # no fork (Windows): stay in this process
            ctx = None
    if ctx is None:
        for i, job in enumerate(jobs):
            yield i, scan_file(job)
        return
    # big files first so the pool's tail is short
    order = sorted(range(len(jobs)), key=lambda i: -files[i].stat().st_size)
    with ctx.Pool(processes) as pool:
        yield from pool.imap_unordered(_indexed_scan, [(i, jobs[i]) for i in order],
                                       chunksize=4)


def scan_all(root: Path, files: List[Path], roots: Tuple[str, ...] = ("torch",),
             backend: str = "npu", processes: Optional[int] = None) -> List[FileScan]:
    out: List[Optional[FileScan]] = [None] * len(files)
    for i, scan in scan_iter(root, files, roots, backend, processes):
        out[i] = scan
    return [s for s in out if s is not None]


def backend_included(inst: Instantiation, backend: str) -> Optional[bool]:
    """Would ``instantiate_device_type_tests`` give the backend (PrivateUse1) a copy?

    Mirrors torch.testing._internal.common_device_type.filter_desired_device_types:
    ``only_for``/``except_for`` hold device types, the backend's name standing for
    "privateuse1". None when a value is not a literal.
    """
    names = {"privateuse1", backend.lower()}
    if inst.only_for is not None:
        if not inst.only_literal:
            return None
        if not any(v.lower() in names for v in inst.only_for):
            return False
    if inst.except_for is not None:
        if not inst.except_literal:
            return None
        if any(v.lower() in names for v in inst.except_for):
            return False
    return True


def _device_generic(scans: Sequence[FileScan], backend: str
                    ) -> Dict[Tuple[str, str], Tuple[Instantiation, str]]:
    """(file, class) -> (instantiation, file calling it), across files (imported classes)."""
    by_module = {s.module: s for s in scans}
    out: Dict[Tuple[str, str], Tuple[Instantiation, str]] = {}
    for s in scans:
        package = s.module.rsplit(".", 1)[0] if "." in s.module else ""
        for inst in s.instantiations:
            if inst.origin == "local":
                key = (s.rel, inst.cls)
            else:
                mod, _, cls = inst.origin.rpartition(".")
                target = by_module.get(mod) or by_module.get(f"{package}.{mod}" if package else mod)
                if target is None:
                    continue
                key = (target.rel, cls)
            prev = out.get(key)
            # keep the most permissive call when a class is instantiated more than once
            if prev is None or (backend_included(prev[0], backend) is not True
                                and backend_included(inst, backend) is True):
                out[key] = (inst, s.rel)
    return out


def census(tests_dir: Union[str, Path], apis: Sequence[str], backend: str = "npu",
           depth: int = 2, processes: Optional[int] = None,
           roots: Sequence[str] = ("torch",), local_helpers: bool = True) -> CensusResult:
    """Scan every ``*.py`` under ``tests_dir`` once for all ``apis``.

    ``backend``: the device type name of the PrivateUse1 backend ("npu"), used to decide
    whether a device-generic class gets a copy for it and whether a test names it.
    ``depth``: how many levels of torch wrappers to follow (0 = direct sites only).
    Raises InputError for a missing folder, UnknownApiError for an unknown API.
    """
    from ..api.resolve import allow_namespaces, resolve

    started = time.perf_counter()
    root = Path(tests_dir)
    if root.is_file() and root.suffix == ".py":  # one file: its folder is the tree
        files = [root]
        root = root.parent
    elif root.is_dir():
        files = list_test_files(root)
    else:
        raise InputError(f"test folder not found: {root}")
    allow_namespaces(roots)  # the packages the caller scans for are named on purpose
    targets = {api: resolve(api).obj for api in apis}
    if not files:
        raise InputError(f"no Python files under {root}")
    roots_t = tuple(roots)
    phases: Dict[str, float] = {}
    mark = time.perf_counter()
    resolver = Resolver(roots_t)
    analyzer = WrapperAnalyzer(targets, roots_t, depth=depth)
    # every distinct name once: look each up as its file's scan arrives (imports happen
    # here, while workers parse the rest), then ask which reach a target (the wrapper
    # filter needs the imported modules)
    objects: Dict[str, object] = {}
    ordered: List[Optional[FileScan]] = [None] * len(files)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, s in scan_iter(root, files, roots_t, backend, processes):
            ordered[i] = s
            for dotted in s.refs:
                if dotted not in objects:
                    objects[dotted] = resolver.lookup(dotted)
        scans = [s for s in ordered if s is not None]
        phases["scan+lookup"] = time.perf_counter() - mark
        hits: Dict[str, List[Tuple[str, Optional[str]]]] = {}  # name -> [(api, via)]
        for dotted, obj in objects.items():
            found: List[Tuple[str, Optional[str]]] = []
            if not is_missing(obj):
                direct = analyzer.targets_of(obj)
                found = [(t, None) for t in direct]
                if depth > 0:
                    for t, chain in analyzer.reach(obj).items():
                        if t not in direct:
                            found.append((t, " -> ".join(chain)))
            hits[dotted] = found
    names = len(objects)
    phases["wrappers"] = time.perf_counter() - mark - phases["scan+lookup"]

    generic = _device_generic(scans, backend)
    method_like = {api for api, obj in targets.items() if _is_method_like(obj)}
    evidence = {api: _evidence_for(api, scans, hits, generic, backend, local_helpers, root)
                for api in apis}
    errors = {s.rel: s.error for s in scans if s.error}
    for ev in evidence.values():
        if errors:
            ev.notes.append(f"{len(errors)} file(s) could not be parsed: "
                            + ", ".join(sorted(errors)[:5]))
    for api in method_like:
        evidence[api].notes.append(
            "a method: calls through instances (x.name(...)) are not counted, only dotted "
            f"references such as {api}")
    for ev in evidence.values():
        bad = sorted(resolver.import_errors)
        if bad:
            shown = ", ".join(f"{m} ({resolver.import_errors[m]})" for m in bad[:5])
            ev.notes.append("modules that could not be imported here, so names under them "
                            f"were not followed: {shown}" + (" ..." if len(bad) > 5 else ""))
    phases["count"] = time.perf_counter() - mark - sum(phases.values())
    return CensusResult(evidence=evidence, files=len(files), parse_errors=errors,
                        seconds=time.perf_counter() - started, names=names, phases=phases)


def _is_method_like(obj: object) -> bool:
    """Methods and descriptors of classes (torch.Tensor.add): used through instances."""
    import inspect

    kind = type(obj).__name__
    if kind in ("method_descriptor", "wrapper_descriptor", "getset_descriptor",
                "member_descriptor", "property"):
        return True
    qual = getattr(obj, "__qualname__", "") or ""
    return inspect.isfunction(obj) and "." in qual and "<locals>" not in qual


def _evidence_for(api: str, scans: Sequence[FileScan],
                  hits: Dict[str, List[Tuple[str, Optional[str]]]],
                  generic: Dict[Tuple[str, str], Tuple[Instantiation, str]],
                  backend: str, local_helpers: bool, root: Path) -> TestsEvidence:
    ev = TestsEvidence(tree=str(root))
    via_total: Dict[str, int] = {}
    sites: List[TestSite] = []
    classes: Dict[Tuple[str, str], TestClassInfo] = {}
    files_with = 0
    names = [(dotted, via) for dotted, found in hits.items() for t, via in found if t == api]
    for s in scans:
        counts: Dict[int, _Count] = {}
        for dotted, via in names:
            refs = s.refs.get(dotted)
            if refs:
                for line, scope in refs:
                    c = counts.setdefault(scope, _Count())
                    if via is None:
                        c.direct += 1
                    else:
                        c.indirect += 1
                        c.via[via] = c.via.get(via, 0) + 1
                    c.lines.append(line)
        if local_helpers and counts:
            _propagate_helpers(s, counts)
        if not counts:
            continue
        files_with += 1
        for scope_id in sorted(counts, key=lambda i: s.scopes[i].line):
            c = counts[scope_id]
            sc = s.scopes[scope_id]
            cls_info = s.classes.get(sc.cls) if sc.cls else None
            top_cls = sc.cls.split(".", 1)[0] if sc.cls else None
            inst = generic.get((s.rel, top_cls)) if top_cls else None
            skips = list(cls_info.skips if cls_info else []) + list(sc.skips)
            skip, reason = combine(skips)
            if skip == "skipped":
                runs: Optional[bool] = False
            elif inst is not None:
                runs = backend_included(inst[0], backend)
            else:
                runs = sc.uses_backend
            site = TestSite(file=s.rel, cls=sc.cls, test=sc.name, direct=c.direct,
                            indirect=c.indirect, device_generic=inst is not None,
                            skip_reason=reason, kind=sc.kind, lines=sorted(c.lines)[:MAX_LINES],
                            via=sorted(c.via, key=lambda v: -c.via[v]), runs_on_backend=runs,
                            skip=skip, uses_backend=sc.uses_backend)
            sites.append(site)
            for v, n in c.via.items():
                via_total[v] = via_total.get(v, 0) + n
            ev.direct_sites += c.direct
            ev.indirect_sites += c.indirect
            if inst is not None:
                ev.device_generic_sites += c.direct + c.indirect
                if runs:
                    ev.backend_runnable_sites += c.direct + c.indirect
            if sc.cls:
                key = (s.rel, top_cls)
                info = classes.get(key)
                if info is None:
                    top = s.classes.get(top_cls) if top_cls else None
                    skip_c, reason_c = combine(top.skips if top else [])
                    info = classes[key] = TestClassInfo(
                        file=s.rel, cls=top_cls, device_generic=inst is not None,
                        only_for=inst[0].only_for if inst else None,
                        except_for=inst[0].except_for if inst else None,
                        backend_included=backend_included(inst[0], backend) if inst else None,
                        instantiated_in=inst[1] if inst else None, skip_reason=reason_c)
                info.direct += c.direct
                info.indirect += c.indirect
                if sc.kind == "test":
                    info.tests += 1
    ev.tests = sites
    ev.files = files_with
    ev.via = sorted(via_total, key=lambda v: (-via_total[v], v))
    ev.classes = sorted(classes.values(), key=lambda i: (-(i.direct + i.indirect), i.file, i.cls))
    return ev


def _propagate_helpers(s: FileScan, counts: Dict[int, _Count]) -> None:
    """One level: a scope referencing an in-file helper that has sites gets indirect ones."""
    helper_sites: Dict[str, int] = {}
    for scope_id in counts:
        sc = s.scopes[scope_id]
        if sc.kind != "helper" or sc.name.startswith("<"):
            continue
        key = f"{sc.cls}.{sc.name}" if sc.cls else sc.name
        helper_sites[key] = scope_id
    if not helper_sites:
        return
    for scope_id, sc in enumerate(s.scopes):
        for key, lines in sc.local_calls.items():
            src = helper_sites.get(key)
            if src is None or src == scope_id:
                continue
            c = counts.setdefault(scope_id, _Count())
            c.indirect += len(lines)
            label = f"{s.rel}::{key}"
            c.via[label] = c.via.get(label, 0) + len(lines)
            c.lines.extend(lines)


def main_locations(ev: TestsEvidence, n: int = 2) -> List[str]:
    """"file → class" for the seeds' "main location" column: the classes with most direct
    sites (then indirect ones); by indirect sites when the API has no direct site."""
    ranked = sorted(ev.classes, key=lambda c: (-c.direct, -c.indirect, c.file, c.cls))
    return [f"{c.file} → {c.cls}" for c in ranked[:n]]


def iter_sites(ev: TestsEvidence, kind: Optional[str] = "test") -> Iterable[TestSite]:
    return (t for t in ev.tests if kind is None or t.kind == kind)
