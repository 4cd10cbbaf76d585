"""Every input of ``check`` validated before any work: no torch import, no worker, no
scenario module run. A bad value is one line (InputError / UnknownApiError, exit 2) in the
time the command line takes to start, not after start-up, planning and every case.

What is checked here (each as the later code would refuse it, only sooner): the API names
(dotted, inside torch's namespaces: ``api.resolve.check_dotted``), the config file, the
devices' spelling, ``--timeout``, ``--executor``, ``--dtypes``, ``--gentest`` styles,
``--task`` lines, the category rules file, the ``--tests``/``--docs``/``--vendor-docs``
folders (the vendor docs read whole: a file that is not UTF-8, a FIFO or an oversized one
is refused now), ``--scenarios`` files (a regular, UTF-8 Python file that compiles: it is
not run here), ``--store`` (a database URL) and ``--out`` (a folder that can be written).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from ..errors import InputError, shown

SCENARIO_FILE_CAP = 8 * 1024 * 1024  # a scenario .py file larger than this is no scenario file


@dataclass
class CheckInputs:
    """What ``check`` was asked, validated; ``options`` are the merged flags and config."""

    apis: List[str]
    options: Dict[str, Any]
    dtypes: Optional[List[str]] = None
    gentest_styles: List[str] = field(default_factory=list)
    tasks: Any = None


def installed_torch_version() -> Optional[str]:
    """The installed torch's version from its package metadata, without importing it."""
    from importlib import metadata

    try:
        return metadata.version("torch").split("+", 1)[0]
    except metadata.PackageNotFoundError:
        return None


def check_apis(apis: Sequence[str], scenarios: Sequence[str] = ()) -> List[str]:
    from ..api.resolve import allow_namespaces, check_dotted

    allow_namespaces(scenarios)  # a module the user names may check its own APIs
    return [check_dotted(name) for name in apis]


def check_scenario_files(modules: Sequence[str]) -> None:
    """A ``--scenarios`` value: a dotted module name, or a ``.py`` file that is a regular
    UTF-8 file and compiles. Nothing is imported or run here."""
    for name in modules:
        if not name.endswith(".py"):
            if not name or any(not p.isidentifier() for p in name.split(".")):
                raise InputError(f"--scenarios {shown(name)}: neither a .py file nor a dotted "
                                 "module name")
            continue
        source = read_small_text(Path(name), "--scenarios", SCENARIO_FILE_CAP)
        try:
            compile(source, name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise InputError(f"scenario file {shown(name)}: syntax error at line {exc.lineno}: "
                             f"{exc.msg}") from None
        except ValueError as exc:  # a NUL byte in the source
            raise InputError(f"scenario file {shown(name)}: {exc}") from None


SCENARIO_IMPORT_LIMIT_S = 120.0  # a scenario module's import-time work, in the probe process

PROBE = r"""
import json, os, sys, threading
from torchparity.scenarios import registry
try:
    registry.load_suites(json.loads(sys.argv[1]))
except BaseException as exc:  # refused as check would refuse it: the caller imports again
    print("TORCHPARITY-PROBE " + json.dumps({"loaded": False}), flush=True)
    os._exit(0)
left = [t.name for t in threading.enumerate()
        if t is not threading.main_thread() and t.is_alive() and not t.daemon]
print("TORCHPARITY-PROBE " + json.dumps({"loaded": True, "threads": left}), flush=True)
os._exit(0)
"""


def probe_scenario_modules(modules: Sequence[str], limit_s: float = SCENARIO_IMPORT_LIMIT_S) -> None:
    """Import the ``--scenarios`` modules once in a throwaway process, with a time limit,
    before this process imports them: a module that ends the process at import
    (``os._exit``), hangs there, or leaves a non-daemon thread running (``check`` would
    never exit) is one line naming it, not a silent end or a hang."""
    import json
    import subprocess
    import sys

    if not modules:
        return
    what = f"--scenarios {shown(', '.join(modules))}"
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(modules))],
                              capture_output=True, text=True, env=env, timeout=limit_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise InputError(f"{what}: importing it took over {limit_s:.0f} s (a module that waits "
                         "or loops at import cannot be used)") from None
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("TORCHPARITY-PROBE ")]
    if not lines:
        raise InputError(f"{what}: importing it ended the process (exit status {proc.returncode}"
                         "; os._exit or a signal at import?)")
    found = json.loads(lines[-1].split(" ", 1)[1])
    if found.get("threads"):
        raise InputError(f"{what}: importing it leaves thread(s) running "
                         f"({shown(', '.join(found['threads']))}) that would keep check from "
                         "ending; start them as daemon threads, or inside a scenario")


def read_small_text(path: Path, flag: str, cap: int) -> str:
    """A user's text file, read without blocking or filling the memory: a regular file of at
    most ``cap`` bytes, UTF-8; anything else one line."""
    what = f"{flag} {shown(path)}"
    try:
        fd = os.open(str(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(f"{what}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{what}: not a regular file (a FIFO, a device or a folder)")
        if info.st_size > cap:
            raise InputError(f"{what}: {info.st_size} bytes, over the {cap // (1024 * 1024)} MiB "
                             "such a file may have")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(cap + 1)
    except OSError as exc:
        raise InputError(f"{what}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(raw) > cap:
        raise InputError(f"{what}: over the {cap // (1024 * 1024)} MiB such a file may have")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what}: not UTF-8 text (byte {exc.start})") from None


def check_folders(options: Dict[str, Any]) -> None:
    for key, flag in (("tests", "--tests"), ("docs", "--docs"), ("vendor_docs", "--vendor-docs")):
        folder = options.get(key)
        if folder is not None and not Path(folder).is_dir():
            raise InputError(f"{flag} {shown(folder)}: no such folder")
    if options.get("vendor_docs") is not None:  # every file of the version read now
        from ..evidence.vendor_docs import load_vendor_docs

        load_vendor_docs(options["vendor_docs"],
                         options.get("torch_version") or installed_torch_version())


def preflight(apis: Sequence[str], *, config: Optional[Path] = None, device: Optional[str] = None,
              tests=None, docs=None, vendor_docs=None, torch_version: Optional[str] = None,
              chips: Sequence[str] = (), timeout: Optional[float] = None,
              jobs: Optional[int] = None, executor: str = "local",
              ray_address: Optional[str] = None, scenarios: Sequence[str] = (),
              category_rules: Optional[Path] = None, dtypes: Optional[str] = None,
              gentest_styles: Sequence[str] = (), task: Sequence[str] = (),
              out: Optional[Path] = None) -> CheckInputs:
    """Validate every input of ``check`` (named APIs), cheapest first; returns them merged."""
    from ..app.config import merge_options
    from ..deliver.gentest import expand_styles
    from ..deliver.issues import check_tasks, parse_tasks
    from ..devices import device_specs, validate_spec
    from ..dtypes import DTYPE_NAMES
    from ..judge.rules_file import load_rules
    from ..run.executors import check_executor

    if not apis:
        raise InputError("no API given: name at least one, e.g. torch.autograd.gradcheck, "
                         "or use --apis-from-vendor-docs DIR")
    names = check_apis(apis, scenarios)
    opts = merge_options(config, device=device, tests=tests, docs=docs, vendor_docs=vendor_docs,
                         torch_version=torch_version, chips=list(chips), timeout=timeout, jobs=jobs)
    for spec in device_specs(opts["device"]):
        validate_spec(spec)
    if opts["timeout"] is not None and opts["timeout"] <= 0:
        raise InputError("--timeout must be positive")
    check_executor(executor, ray_address)
    wanted = None
    if dtypes is not None:
        wanted = [d.strip() for d in dtypes.split(",") if d.strip()]
        bad = [d for d in wanted if d not in DTYPE_NAMES]
        if bad or not wanted:
            raise InputError(f"--dtypes: unknown {shown(', '.join(bad)) or '(none given)'}; "
                             f"known: {', '.join(DTYPE_NAMES)}")
    # default: the files 测试方法 runs (judged by torchparity, on any device); the files for
    # Ascend's own test tree are --gentest npu
    styles = expand_styles(list(gentest_styles) or ["npu-judged"])
    tasks = check_tasks(parse_tasks(list(task)), names)
    if category_rules is not None:
        load_rules(category_rules)
    check_scenario_files(scenarios)
    check_folders(opts)
    probe_scenario_modules(scenarios)  # the one step that may import torch: only with --scenarios
    if out is not None:
        from ..results.store import prepare_out

        prepare_out(Path(out))
    return CheckInputs(apis=names, options=opts, dtypes=wanted, gentest_styles=styles, tasks=tasks)
