"""``yamlmodel.safe_load``: libyaml's parser where PyYAML has it, with what
``yaml.safe_load`` returns and raises (every worker and rank process reads a profile)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from torchparity import yamlmodel
from torchparity.devices.profiles import load_profile
from torchparity.errors import TorchparityError

PKG = Path(yamlmodel.__file__).resolve().parent
SHIPPED = sorted(PKG.rglob("*.yaml"))

needs_libyaml = pytest.mark.skipif(getattr(yaml, "CSafeLoader", None) is None,
                                   reason="this PyYAML was built without libyaml")


def test_the_package_ships_yaml_to_compare():
    names = {p.name for p in SHIPPED}
    assert "ascend-a2.yaml" in names and "ascend-registered-ops.yaml" in names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(PKG)))
def test_every_shipped_file_loads_as_safe_load_loads_it(path):
    text = path.read_text(encoding="utf-8")
    assert yamlmodel.safe_load(text) == yaml.safe_load(text)


TRICKY = """\
on: yes
off: no
date: 2024-01-02
octal: 0o17
old_octal: 017
float: 1e3
inf: .inf
null_: ~
anchor: &a {x: [1, 2.5, "s"]}
alias: *a
multi: |
  line one
  line two
key with spaces: 'quoted: yes'
"""


def test_the_resolvers_are_safe_load_s():
    assert yamlmodel.safe_load(TRICKY) == yaml.safe_load(TRICKY)
    assert yamlmodel.safe_load("") is None


@needs_libyaml
def test_libyaml_parses_it(monkeypatch):
    used = []
    real = yaml.load

    def spy(text, Loader):
        used.append(Loader)
        return real(text, Loader=Loader)

    monkeypatch.setattr(yaml, "load", spy)
    yamlmodel.safe_load("a: 1")
    assert used == [yaml.CSafeLoader]


def test_a_python_only_yaml_gives_the_same(monkeypatch):
    monkeypatch.setattr(yamlmodel, "_FAST_LOADER", None)
    assert yamlmodel.safe_load(TRICKY) == yaml.safe_load(TRICKY)


@pytest.mark.parametrize("bad", ["a: [1, 2\nb: 3\n", "a: b: c\n", "- a\nb: 1\n", "a: !!python/object:os.system x\n"])
def test_what_it_raises_is_safe_load_s(bad):
    with pytest.raises(yaml.YAMLError) as slow:
        yaml.safe_load(bad)
    with pytest.raises(yaml.YAMLError) as fast:
        yamlmodel.safe_load(bad)
    assert type(fast.value) is type(slow.value) and str(fast.value) == str(slow.value)


def test_a_bad_profile_names_its_line_as_before(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: x\ndevice_type: npu\nops: [1, 2\n", encoding="utf-8")
    with pytest.raises(TorchparityError, match=r"p\.yaml: line \d+: invalid YAML in profile"):
        load_profile(str(path))
