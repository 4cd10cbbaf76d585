"""Upstream tests as a scenario source: the tests the census finds for an API, replayed.

With a test tree (``check --tests DIR``: PyTorch's ``test/`` or a backend's port such as
Ascend/pytorch ``test/``), every test function the census (``evidence/census.py``) finds
using the API becomes one scenario, id ``file::Class::test``. Its cases run through the
``upstream`` worker case kind (``run/upstream_handler.py``): the test runs once on the
CPU and once on the device, each in a fork of the worker, and passes when the two
outcomes are the same. A test that fails on the CPU too is "not comparable".

- A device-generic test (its class goes through ``instantiate_device_type_tests``) runs
  in the class torch makes for the device type (``...PRIVATEUSE1`` for npu and the
  emulated device); a test whose ``@dtypes(...)`` lists plain torch dtypes gets one
  scenario dtype per listed dtype, any other runs all its variants under dtype ``-``.
- Any other test runs with the device as the default device, dtype ``-``.

The test tree reaches this module through :meth:`Source.prepare
<torchparity.scenarios.sources.base.Source.prepare>` (:func:`prepared`: the run's
``RunSettings.tests_dir``, from ``check --tests``), around the run's planning. Without a tree the source does not apply, so ``sweep``, ``predict`` and
``gentest`` never see upstream tests. A worker needs no setting: the ``upstream`` case
carries the tree, file, class and test. The census runs once per tree for all the APIs
asked (:func:`prepare`) and is cached here.
"""

from __future__ import annotations

import ast
import contextlib
import functools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ...dtypes import DTYPE_NAMES
from ...results.models import TestsEvidence, TestSite, Text
from ..registry import Scenario
from .base import ANY_DTYPE, ModuleSource, RunSettings

NAME = "upstream"
ORDER = 95  # after docstring (90): the fallback asks only the sources before it
CASE_KIND = "upstream"
# imported by the worker before its first replay (after the device is registered, so
# instantiate_device_type_tests knows the device type)
WARM = ("torch.testing._internal.common_device_type", "torch.testing._internal.common_utils")


@dataclass(frozen=True)
class Settings:
    tests_dir: Optional[str] = None
    backend: str = "npu"  # the PrivateUse1 device type name the census decides with
    side_timeout: float = 120.0  # seconds for one side (CPU or device) of one test
    max_tests: int = 40  # per API: direct users first
    depth: int = 2  # census wrapper depth
    isolation: Optional[str] = None  # "fork" | "spawn"; None: by device (upstream_handler)


_SETTINGS = Settings()
_CENSUS: Dict[Tuple[str, str, int, str], TestsEvidence] = {}


def settings() -> Settings:
    return _SETTINGS


def configure(tests_dir: Optional[str] = None, **changes: Any) -> Settings:
    """Set the test tree (None: off) and other settings; returns the previous ones."""
    global _SETTINGS
    before = _SETTINGS
    _SETTINGS = replace(_SETTINGS, tests_dir=str(tests_dir) if tests_dir else None, **changes)
    return before


@contextlib.contextmanager
def configured(tests_dir: Optional[str], **changes: Any) -> Iterator[Settings]:
    """:func:`configure` for a block, then the settings from before."""
    global _SETTINGS
    before = configure(tests_dir, **changes)
    try:
        yield _SETTINGS
    finally:
        _SETTINGS = before


@contextlib.contextmanager
def prepared(run: RunSettings, apis: Iterable[str]) -> Iterator[Optional[Dict[str, TestsEvidence]]]:
    """The run's settings for its planning; yields the census of ``apis`` (None without a
    test tree: ``apis`` is then not read)."""
    with configured(run.tests_dir, backend=run.backend, side_timeout=run.side_timeout):
        yield prepare(list(apis)) if run.tests_dir else None


def _key(api: str, s: Settings) -> Tuple[str, str, int, str]:
    return (str(Path(s.tests_dir or "").resolve()), s.backend, s.depth, api)


def prepare(apis: Sequence[str]) -> Dict[str, TestsEvidence]:
    """Run the census once for the ``apis`` not seen yet; their TestsEvidence."""
    from ...evidence.census import census

    s = settings()
    if not s.tests_dir:
        return {}
    todo = [a for a in dict.fromkeys(apis) if _key(a, s) not in _CENSUS]
    if todo:
        found = census(s.tests_dir, todo, backend=s.backend, depth=s.depth).evidence
        for api, ev in found.items():
            _CENSUS[_key(api, s)] = ev
    return {a: _CENSUS[_key(a, s)] for a in apis}


def test_sites(api: str) -> List[TestSite]:
    """The census' test functions for ``api`` that become scenarios: direct users first,
    at most ``max_tests``."""
    s = settings()
    ev = prepare([api]).get(api)
    if ev is None:
        return []
    seen = set()
    out = []
    for t in sorted((t for t in ev.tests if t.kind == "test"), key=lambda t: t.direct == 0):
        key = (t.file, t.cls, t.test)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out[: s.max_tests]


def _root(api: str) -> str:
    s = settings()
    ev = prepare([api]).get(api)
    return ev.tree if ev is not None and ev.tree else str(s.tests_dir)


def scenario_id(site: TestSite) -> str:
    return "::".join(p for p in (site.file, site.cls, site.test) if p)


# -- dtypes a device-generic test declares ---------------------------------------------

_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                  "int": "int32", "short": "int16", "cfloat": "complex64",
                  "cdouble": "complex128"}


@functools.lru_cache(maxsize=256)
def _parsed(path: str) -> Optional[ast.Module]:
    try:
        return ast.parse(Path(path).read_bytes(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def _find_def(tree: ast.Module, cls: Optional[str], test: str) -> Optional[ast.AST]:
    body: Sequence[ast.AST] = tree.body
    for part in (cls.split(".") if cls else []):
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == test), None)


def declared_dtypes(root: str, site: TestSite) -> Optional[Tuple[str, ...]]:
    """The dtypes of ``@dtypes(torch.float32, ...)`` on a device-generic test, when that is
    the only dtype decorator and lists plain dtypes; else None (its variants run as ``-``)."""
    tree = _parsed(str(Path(root) / site.file))
    node = _find_def(tree, site.cls, site.test) if tree is not None else None
    if node is None:
        return None
    found: Optional[List[str]] = None
    for dec in node.decorator_list:  # type: ignore[attr-defined]
        func = dec.func if isinstance(dec, ast.Call) else dec
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name.startswith("dtypesIf") or name in ("ops", "parametrize"):
            return None
        if name != "dtypes" or not isinstance(dec, ast.Call) or dec.keywords:
            continue
        names = []
        for arg in dec.args:
            if not (isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name)
                    and arg.value.id == "torch"):
                return None
            names.append(_DTYPE_ALIASES.get(arg.attr, arg.attr))
        if found is not None or not names or any(n not in DTYPE_NAMES for n in names):
            return None
        found = list(dict.fromkeys(names))
    return tuple(found) if found else None


# -- scenarios --------------------------------------------------------------------------

def _not_run(device, dtype):
    raise NotImplementedError("an upstream test runs through the 'upstream' case kind: "
                              "run the command in the scenario's snippet")


_SUFFIX = {"cpu": "CPU", "cuda": "CUDA"}


def _code(root: str, site: TestSite, backend: str) -> str:
    if site.device_generic and site.cls:
        top, _, inner = site.cls.partition(".")
        cls = top + _SUFFIX.get(backend, "PRIVATEUSE1") + (f".{inner}" if inner else "")
        how = ("device-generic: runs in the class instantiate_device_type_tests makes for "
               "the device (register the backend before torch.testing._internal is imported)")
        target = f"{site.file}::{cls}"
        select = f" -k {site.test}_"
    else:
        how = "runs as written on the CPU; on the device with torch.set_default_device(DEVICE)"
        target = "::".join(p for p in (site.file, site.cls, site.test) if p)
        select = ""
    return (f"# upstream test {scenario_id(site)} ({how}); device {{device}}\n"
            f"# cd {root} && python -m pytest -q '{target}'{select}\n")


def _scenario(api: str, root: str, site: TestSite, s: Settings) -> Scenario:
    generic = site.device_generic and site.cls is not None
    dtypes = (declared_dtypes(root, site) if generic else None) or (ANY_DTYPE,)
    how_en = ("device-generic: in the class made for the device" if generic
              else "the device as the default device")
    how_zh = "设备通用用例：在为该设备生成的测试类中运行" if generic else "以该设备为默认设备运行"
    use = "direct" if site.direct else "indirect"
    tags = ["upstream", "device-generic" if generic else "default-device", use]
    if site.uses_backend and not generic:  # .npu(), "npu" strings: its "CPU" run is not one
        how_en += "; it names the device itself, so its CPU run may use the device too"
        how_zh += "；用例自身指定了设备，CPU 侧运行也可能用到该设备"
        tags.append("names-device")
    return Scenario(
        id=scenario_id(site), api=api, fn=_not_run, source=NAME, module=__name__,
        description=Text(en=f"upstream test ({how_en}; uses the API {use}ly)",
                         zh=f"上游用例（{how_zh}；{'直接' if site.direct else '间接'}调用该接口）"),
        expected=Text(en="same outcome as on the CPU", zh="与 CPU 上的结果相同"),
        dtypes=tuple(dtypes), tags=tuple(tags),
        timeout_s=2 * s.side_timeout + 30, compare="none", code=_code(root, site, s.backend),
    )


def scenarios(api: str, obj: Any) -> List[Scenario]:
    s = settings()
    if not s.tests_dir:
        return []
    root = _root(api)
    return [_scenario(api, root, site, s) for site in test_sites(api)]


def why_not(api: str, obj: Any) -> str:
    s = settings()
    if not s.tests_dir:
        return "no test tree given (check --tests DIR)"
    ev = prepare([api]).get(api)
    if ev is not None and ev.tests:
        return f"the census finds it only outside test functions in {ev.tree}"
    return f"the census finds no test using it in {s.tests_dir}"


def case(sc: Scenario, dtype: str, *, max_samples: Optional[int] = None,
         grads: bool = True, footprint: bool = False) -> Dict[str, Any]:
    """The ``upstream`` worker case of one scenario and dtype."""
    site = next(t for t in test_sites(sc.api) if scenario_id(t) == sc.id)
    return {"kind": CASE_KIND, "api": sc.api, "root": _root(sc.api), "file": site.file,
            "cls": site.cls, "test": site.test,
            "generic": site.device_generic and site.cls is not None,
            "dtype": dtype, "side_timeout": settings().side_timeout,
            "isolation": settings().isolation}


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, prepare=prepared, case=case,
                      case_kind=CASE_KIND, warm=WARM, replays=True)
