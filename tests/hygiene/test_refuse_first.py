"""Refuse first, work after (issue 47, points 1 and 2): every bad input of ``check`` is one
line and exit 2 before torch is imported, a worker starts or a scenario module runs; a name
outside torch's namespaces imports nothing; a huge value is not echoed whole; ``--store``
that is no URL is refused, never a SQLite file of that name.

All torch-free probes run in ONE fresh interpreter (torch, once imported, stays imported), which
records after each probe whether torch was imported; that keeps this file to about a second."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchparity.errors import InputError, UnknownApiError

SRC = str(Path(__file__).resolve().parents[2] / "src")

DRIVER = textwrap.dedent("""
    import io, json, sys
    from torchparity import cli

    out = []
    for argv in json.loads(sys.stdin.read()):
        sys.argv = ["torchparity", *argv]
        err, stdout = io.StringIO(), io.StringIO()
        sys.stderr, sys.stdout = err, stdout
        try:
            cli.main()
            code = 0
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.stderr, sys.stdout = sys.__stderr__, sys.__stdout__
        out.append({"argv": argv[:3], "code": code, "err": err.getvalue(),
                    "stdout": stdout.getvalue(), "torch": "torch" in sys.modules})
    print(json.dumps(out))
""")


def _probe(argvs, cwd):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    proc = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(argvs), cwd=str(cwd),
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _vendor_docs(root: Path, bad: str) -> Path:
    folder = root / "pytorch_2-13-0"
    folder.mkdir(parents=True)
    (folder / "good.md").write_text("# torch\n\n## torch.abs\n\n支持\n", encoding="utf-8")
    if bad == "utf8":
        (folder / "bad.md").write_bytes(b"# torch\n\xff\xfe not utf-8 \xc3\x28\n")
    elif bad == "fifo":
        os.mkfifo(str(folder / "bad.md"))
    elif bad == "huge":
        with open(folder / "bad.md", "wb") as fh:  # sparse: 9 MiB on paper, nothing on disk
            fh.truncate(9 * 1024 * 1024)
    return root


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("refuse")
    (tmp / "a-file").write_text("mine\n", encoding="utf-8")
    (tmp / "broken.py").write_text("def broken(:\n    pass\n", encoding="utf-8")
    (tmp / "exits.py").write_text("import os\nos._exit(3)\n", encoding="utf-8")
    os.mkfifo(str(tmp / "fifo.py"))
    (tmp / "rules.yaml").write_bytes(b"vocabulary: x\n\xff\xfe\n")
    (tmp / "cfg.yaml").write_text("jobs: 0\n", encoding="utf-8")
    docs = {bad: _vendor_docs(tmp / f"vd-{bad}", bad) for bad in ("utf8", "fifo", "huge")}
    huge = "torch." + "a" * 120_000 + "!"
    cases = {
        "non-torch name": ["check", "this.s", "--device", "cpu", "-q"],
        "huge name": ["check", huge, "--device", "cpu", "-q"],
        "huge non-torch name": ["check", "x" * 120_000, "--device", "cpu", "-q"],
        "out is a file": ["check", "torch.abs", "--device", "cpu", "-q", "--out", str(tmp / "a-file")],
        "out cannot be made": ["check", "torch.abs", "--device", "cpu", "-q",
                               "--out", "/proc/self/no-such/x"],
        "vendor docs not utf-8": ["check", "torch.abs", "--device", "cpu", "-q", "--vendor-docs",
                                  str(docs["utf8"]), "--torch-version", "2.13.0"],
        "vendor docs fifo": ["check", "torch.abs", "--device", "cpu", "-q", "--vendor-docs",
                             str(docs["fifo"]), "--torch-version", "2.13.0"],
        "vendor docs huge": ["check", "torch.abs", "--device", "cpu", "-q", "--vendor-docs",
                             str(docs["huge"]), "--torch-version", "2.13.0"],
        "tests missing": ["check", "torch.abs", "--device", "cpu", "-q", "--tests", str(tmp / "none")],
        "scenarios syntax": ["check", "torch.abs", "--device", "cpu", "-q",
                             "--scenarios", str(tmp / "broken.py")],
        "scenarios fifo": ["check", "torch.abs", "--device", "cpu", "-q",
                           "--scenarios", str(tmp / "fifo.py")],
        "scenarios junk module": ["check", "torch.abs", "--device", "cpu", "-q",
                                  "--scenarios", "not a module"],
        "rules not utf-8": ["check", "torch.abs", "--device", "cpu", "-q",
                            "--category-rules", str(tmp / "rules.yaml")],
        "config jobs 0": ["check", "torch.abs", "-q", "--config", str(tmp / "cfg.yaml")],
        "dtypes": ["check", "torch.abs", "--device", "cpu", "-q", "--dtypes", "float99"],
        "gentest style": ["check", "torch.abs", "--device", "cpu", "-q", "--gentest", "nope"],
        "task": ["check", "torch.abs", "--device", "cpu", "-q", "--task", "t=torch.add"],
        "store not a url": ["check", "--apis-from-vendor-docs", str(tmp / "vd-utf8"), "--out",
                            str(tmp / "listed"), "--store", "not a url", "--device", "cpu", "-q"],
        # the last: a scenario file that would end the process is never run while refusing
        "exits, with a bad dtype": ["check", "torch.abs", "--device", "cpu", "-q", "--dtypes",
                                    "nope", "--scenarios", str(tmp / "exits.py")],
    }
    results = _probe(list(cases.values()), tmp)
    return tmp, dict(zip(cases, results))


@pytest.mark.parametrize("probe", [
    "non-torch name", "huge name", "huge non-torch name", "out is a file", "out cannot be made",
    "vendor docs not utf-8", "vendor docs fifo", "vendor docs huge", "tests missing",
    "scenarios syntax", "scenarios fifo", "scenarios junk module", "rules not utf-8",
    "config jobs 0", "dtypes", "gentest style", "task", "store not a url",
    "exits, with a bad dtype"])
def test_refused_in_one_line_before_torch_loads(probes, probe):
    _, results = probes
    r = results[probe]
    lines = r["err"].strip().splitlines()
    assert r["code"] == 2, r
    assert len(lines) == 1 and "internal error" not in r["err"] and "Traceback" not in r["err"], r["err"][:2000]
    assert len(lines[0]) < 1200, f"{len(lines[0])} characters echoed"
    assert not r["torch"], f"torch was imported before '{probe}' was refused"


def test_a_non_torch_name_runs_no_import_time_code(probes):
    _, results = probes
    r = results["non-torch name"]
    assert "Zen of Python" not in r["stdout"] and "Zen of Python" not in r["err"]
    assert "not a torch API" in r["err"] and "torch." in r["err"]


def test_store_that_is_no_url_leaves_no_file_of_its_name(probes):
    tmp, results = probes
    assert "not a database URL" in results["store not a url"]["err"]
    assert not (tmp / "not a url").exists()


def test_open_store_refuses_a_store_flag_that_is_no_url(tmp_path, monkeypatch):
    from torchparity.results.sweep_store import open_store

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="not a database URL"):
        open_store(tmp_path / "out", url="not a url")
    assert not (tmp_path / "not a url").exists()


def test_resolve_imports_no_package_outside_torch(monkeypatch):
    from torchparity.api.resolve import resolve

    monkeypatch.delitem(sys.modules, "this", raising=False)
    with pytest.raises(UnknownApiError, match="not a torch API"):
        resolve("this.s")
    assert "this" not in sys.modules


def test_a_backend_namespace_can_be_added(monkeypatch):
    import types

    from torchparity.api.resolve import resolve

    mod = types.ModuleType("tp_backend_ns")
    mod.f = len
    monkeypatch.setitem(sys.modules, "tp_backend_ns", mod)
    with pytest.raises(UnknownApiError, match="not a torch API"):
        resolve("tp_backend_ns.f")
    monkeypatch.setenv("TORCHPARITY_NAMESPACES", "tp_backend_ns")
    assert resolve("tp_backend_ns.f").obj is len


def test_a_huge_unknown_torch_name_is_cut(monkeypatch, capsys):
    """Through resolve (torch loaded): the 120 KB name echoed at most once, cut."""
    from torchparity import cli

    monkeypatch.setattr(sys, "argv", ["torchparity", "check", "torch." + "b" * 120_000, "-q",
                                      "--device", "cpu"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1
    assert len(err) < 1200 and "120006 characters" in err


def test_a_report_with_a_5001_digit_integer_is_one_line(tmp_path):
    """was: ValueError (Python's int-string limit) through as an internal error, exit 1"""
    from torchparity.results.store import load_report

    path = tmp_path / "report.json"
    path.write_text('{"tool_version": ' + "9" * 5001 + "}", encoding="utf-8")
    with pytest.raises(InputError, match="not a torchparity report") as info:
        load_report(path)
    assert len(str(info.value)) < 400
