"""Hostile input is one line and exit 2, never an internal error or a silent success
(issue 10, points 7 and 8). The CLI is driven in-process (``cli.main``), so these stay fast."""

import sys

import pytest

from torchparity import cli
from torchparity.app.config import merge_options
from torchparity.app.sweep import read_api_file
from torchparity.devices.profiles import load_profile
from torchparity.errors import InputError, ProfileError
from torchparity.judge.verdict import load_rules
from torchparity.scenarios import registry

BAD_UTF8 = b"device: cpu\njobs: 1\n# \xff\xfe not utf-8 \xc3\x28\n"


def _cli(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["torchparity", *args])
    with pytest.raises(SystemExit) as done:
        cli.main()
    err = capsys.readouterr().err
    return done.value.code, err


def _one_line_exit_2(code, err):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in err and "Traceback" not in err, err


@pytest.mark.parametrize("loader", ["profile", "config", "category rules", "apis"])
def test_invalid_utf8_in_a_user_file_is_an_input_error(tmp_path, loader):
    path = tmp_path / "file.yaml"
    path.write_bytes(BAD_UTF8)
    load = {"profile": load_profile, "config": lambda p: merge_options(p, device=None),
            "category rules": load_rules, "apis": read_api_file}[loader]
    with pytest.raises((InputError, ProfileError), match="not UTF-8"):
        load(str(path) if loader in ("profile", "apis") else path)


def test_invalid_utf8_config_through_the_cli(tmp_path, monkeypatch, capsys):
    path = tmp_path / "c.yaml"
    path.write_bytes(BAD_UTF8)
    _one_line_exit_2(*_cli(monkeypatch, capsys, "check", "torch.abs", "--config", str(path)))


@pytest.mark.parametrize("source, message", [
    ("def broken(:\n    pass\n", "syntax error at line 1"),
    ("import sys\nsys.exit(0)\n", r"sys.exit\(0\)"),
    ("raise RuntimeError('boom')\n", "RuntimeError: boom"),
])
def test_a_scenario_file_that_fails_at_import_is_one_line(tmp_path, source, message):
    path = tmp_path / "user_scenarios.py"
    path.write_text(source, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        registry.load_suites([str(path)])
    assert "torchparity_user_user_scenarios" not in sys.modules


def test_sys_exit_0_in_a_scenario_module_does_not_end_check_silently(tmp_path, monkeypatch, capsys):
    path = tmp_path / "exits.py"
    path.write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    code, err = _cli(monkeypatch, capsys, "check", "torch.abs", "--device", "cpu",
                     "--scenarios", str(path), "-q")
    _one_line_exit_2(code, err)
    assert "sys.exit(0)" in err


@pytest.mark.parametrize("junk", ["__import__('os').system('true')", "!!!!", "../../etc/passwd",
                                  "torch..abs", "torch.abs; rm -rf /"])
def test_sweep_apis_junk_lines_are_refused_like_check(tmp_path, junk):
    path = tmp_path / "apis.txt"
    path.write_text(f"# my list\ntorch.abs\n{junk}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3"):
        read_api_file(str(path))


def test_sweep_apis_good_lines_still_read(tmp_path):
    path = tmp_path / "apis.txt"
    path.write_text("torch.abs  # the first\n\ntorch.add\ntorch.abs\ntorch.nn.functional.nope\n",
                    encoding="utf-8")
    # a well-formed name that names nothing is listed with the APIs without scenarios
    assert read_api_file(str(path)) == ["torch.abs", "torch.add", "torch.nn.functional.nope"]


@pytest.mark.parametrize("template", ["{foo}", "{0}", "{}", "{op.__class__}", "unclosed {op"])
def test_a_profile_error_template_with_an_unknown_field_is_refused_at_load(tmp_path, template):
    path = tmp_path / "p.yaml"
    path.write_text(f"name: p\nerrors:\n  dtype: '{template}'\n", encoding="utf-8")
    with pytest.raises(ProfileError, match="errors.dtype"):
        load_profile(str(path))


def test_a_profile_error_template_with_known_fields_loads(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nerrors:\n  dtype: '{kernel} / {op} / {backend}: no {dtype} {{sic}}'\n",
                    encoding="utf-8")
    prof = load_profile(str(path))
    assert prof.errors.dtype.format(op="o", kernel="k", backend="b", dtype="d") == "k / o / b: no d {sic}"


@pytest.mark.parametrize("line", ["jobs: 0", "jobs: -3", "timeout: 0"])
def test_config_values_a_flag_would_refuse_are_refused(tmp_path, line):
    path = tmp_path / "c.yaml"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=line.split(":")[0]):
        merge_options(path, jobs=None, timeout=None)
