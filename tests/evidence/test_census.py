"""Test census on the fixture trees: aliases, wrappers, device-generic classes, skips."""

from __future__ import annotations

import pytest

from torchparity.errors import InputError, UnknownApiError
from torchparity.evidence.census import backend_included, census, main_locations
from torchparity.evidence.scan import Instantiation, scan_source

from .conftest import FIXTURES

TREE = FIXTURES / "tests_tree"
UNPACK = "torch.autograd.forward_ad.unpack_dual"
ENTER = "torch.autograd.forward_ad.enter_dual_level"
GRADCHECK = "torch.autograd.gradcheck"
ITT = "torch.autograd.profiler.emit_itt"


@pytest.fixture(scope="module")
def result():
    return census(TREE, [UNPACK, ENTER, GRADCHECK, ITT], processes=1)


def site(ev, file, test, cls=None):
    found = [t for t in ev.tests if t.file == file and t.test == test and t.cls == cls]
    assert len(found) == 1, [(t.file, t.cls, t.test) for t in ev.tests]
    return found[0]


def counts(ev, file, test, cls=None):
    s = site(ev, file, test, cls)
    return s.direct, s.indirect


# -- aliases ------------------------------------------------------------------------------

def test_import_as_and_attribute_chains(result):
    ev = result.evidence[UNPACK]
    assert counts(ev, "test_aliases.py", "test_import_as", "TestAliases") == (1, 0)
    assert counts(ev, "test_aliases.py", "test_attribute_chain", "TestAliases") == (1, 0)
    assert counts(ev, "test_aliases.py", "test_from_import_alias_call", "TestAliases") == (2, 0)
    enter = result.evidence[ENTER]
    assert counts(enter, "test_aliases.py", "test_attribute_chain", "TestAliases") == (1, 0)


def test_from_import_as_and_reference_as_value(result):
    ev = result.evidence[GRADCHECK]
    assert counts(ev, "test_aliases.py", "test_from_import_as", "TestAliases") == (1, 0)
    assert counts(ev, "test_aliases.py", "test_reference_as_value", "TestAliases") == (1, 0)
    assert counts(result.evidence[UNPACK], "test_aliases.py", "test_reference_as_value",
                  "TestAliases") == (1, 0)


def test_top_level_rebinding_is_an_alias(result):
    ev = result.evidence[ENTER]
    s = site(ev, "test_aliases.py", "test_rebound_alias", "TestAliases")
    assert (s.direct, s.indirect) == (0, 1) and s.via == ["torch.autograd.forward_ad.dual_level"]


def test_methods_count_dotted_references_only_and_say_so():
    api = "torch.Tensor.add"
    ev = census(TREE, [api], processes=1, depth=0).evidence[api]
    assert counts(ev, "test_aliases.py", "test_tensor_method", "TestAliases") == (1, 0)
    assert any("calls through instances" in n for n in ev.notes)


def test_base_classes_are_sites():
    api = "torch.autograd.Function"
    ev = census(TREE / "test_aliases.py", [api], processes=1, depth=0).evidence[api]
    s = site(ev, "test_aliases.py", "<class body>", "Double")
    assert (s.kind, s.direct) == ("helper", 1)


def test_nested_function_counts_for_its_test(result):
    ev = result.evidence[UNPACK]
    assert counts(ev, "test_aliases.py", "test_nested_function", "TestAliases") == (1, 0)


def test_imports_and_unrelated_names_are_not_sites(result):
    ev = result.evidence[UNPACK]
    tests = {(t.file, t.test) for t in ev.tests}
    assert ("test_aliases.py", "test_import_is_not_a_site") not in tests
    assert ("test_aliases.py", "test_no_site") not in tests


def test_star_import_is_followed(result):
    ev = result.evidence[UNPACK]
    assert counts(ev, "sub/test_imported.py", "test_star", "TestImported") == (1, 0)


def test_module_definition_shadows_import(result):
    ev = result.evidence[GRADCHECK]
    assert not [t for t in ev.tests if t.file == "test_shadow.py"]


# -- wrappers (read from the installed torch) ---------------------------------------------

def test_dual_level_reaches_enter_dual_level(result):
    ev = result.evidence[ENTER]
    s = site(ev, "test_aliases.py", "test_dual_level_wrapper", "TestAliases")
    assert (s.direct, s.indirect) == (0, 1)
    assert s.via == ["torch.autograd.forward_ad.dual_level"]


def test_common_utils_gradcheck_is_a_wrapper(result):
    ev = result.evidence[GRADCHECK]
    s = site(ev, "test_aliases.py", "test_common_utils_wrapper", "TestAliases")
    assert (s.direct, s.indirect) == (0, 1)
    assert s.via == ["torch.testing._internal.common_utils.gradcheck"]
    s2 = site(ev, "test_aliases.py", "test_gradgradcheck_depth_two", "TestAliases")
    assert (s2.direct, s2.indirect) == (0, 1)
    assert s2.via[0].startswith("torch.testing._internal.common_utils.gradgradcheck -> ")
    assert "torch.testing._internal.common_utils.gradcheck" in ev.via


def test_depth_zero_keeps_direct_sites_only():
    r = census(TREE, [GRADCHECK], processes=1, depth=0)
    ev = r.evidence[GRADCHECK]
    assert ev.indirect_sites == 0
    assert ev.direct_sites == 2


def test_in_file_helpers_give_indirect_sites(result):
    ev = result.evidence[UNPACK]
    helper = site(ev, "test_aliases.py", "_method_helper", "TestAliases")
    assert helper.kind == "helper" and (helper.direct, helper.indirect) == (1, 0)
    module_helper = site(ev, "test_aliases.py", "module_helper")
    assert module_helper.kind == "helper" and module_helper.direct == 1
    user = site(ev, "test_aliases.py", "test_uses_helpers", "TestAliases")
    assert (user.direct, user.indirect) == (0, 2)
    assert set(user.via) == {"test_aliases.py::TestAliases._method_helper",
                             "test_aliases.py::module_helper"}
    off = census(TREE, [UNPACK], processes=1, local_helpers=False).evidence[UNPACK]
    assert not [t for t in off.tests if t.test == "test_uses_helpers"]


def test_wrapper_depth_on_a_fake_package(fakepkg_on_path):
    api = "tpfake.core.target"
    tree = FIXTURES / "fake_tests"
    ev = census(tree, [api], roots=("tpfake",), processes=1, depth=2).evidence[api]
    got = {t.test: (t.direct, t.indirect) for t in ev.tests}
    assert got == {"test_direct_reexport": (1, 0), "test_level1": (0, 2),
                   "test_level2": (0, 1), "test_ctx": (0, 1)}
    assert "tpfake.wrap.level2 -> tpfake.wrap.level1" in ev.via
    shallow = census(tree, [api], roots=("tpfake",), processes=1, depth=1).evidence[api]
    assert {t.test for t in shallow.tests} == {"test_direct_reexport", "test_level1", "test_ctx"}


# -- device-generic classes and skips ----------------------------------------------------

def test_device_generic_classes_and_only_for(result):
    ev = result.evidence[UNPACK]
    classes = {(c.file, c.cls): c for c in ev.classes}
    pu1 = classes[("test_device_generic.py", "TestForPrivateUse1")]
    assert pu1.device_generic and pu1.only_for == ["privateuse1"] and pu1.backend_included
    cpu_cuda = classes[("test_device_generic.py", "TestCpuCudaOnly")]
    # a module-level literal passed by name is read through
    assert cpu_cuda.only_for == ["cpu", "cuda"] and cpu_cuda.backend_included is False
    exc = classes[("test_device_generic.py", "TestExceptBackend")]
    assert exc.except_for == ["npu"] and exc.backend_included is False
    every = classes[("test_device_generic.py", "TestEveryDevice")]
    assert every.device_generic and every.only_for is None and every.backend_included is True
    computed = classes[("test_device_generic.py", "TestComputedOnlyFor")]
    assert computed.only_for == ["<devices()>"] and computed.backend_included is None
    not_generic = classes[("test_device_generic.py", "TestNotGeneric")]
    assert not not_generic.device_generic and not_generic.backend_included is None


def test_class_instantiated_from_another_file(result):
    ev = result.evidence[UNPACK]
    cls = next(c for c in ev.classes if c.cls == "TestImported")
    assert cls.device_generic and cls.instantiated_in == "other/test_main.py"
    assert cls.only_for == ["cpu", "privateuse1"] and cls.backend_included


def test_skip_decorators(result):
    ev = result.evidence[UNPACK]
    f = "test_device_generic.py"
    c = "TestForPrivateUse1"
    only_cuda = site(ev, f, "test_only_cuda", c)
    assert only_cuda.skip == "skipped" and only_cuda.runs_on_backend is False
    assert "onlyCUDA" in only_cuda.skip_reason
    other_device = site(ev, f, "test_skip_cuda_if", c)
    assert other_device.skip is None and other_device.runs_on_backend is True
    assert site(ev, f, "test_only_privateuse1", c).skip is None
    assert site(ev, f, "test_native", c).skip is None
    dynamo = site(ev, f, "test_dynamo", c)
    assert dynamo.skip == "conditional" and "dynamo trips on it" in dynamo.skip_reason
    backend = site(ev, f, "test_skip_backend", c)
    assert backend.skip == "skipped" and "broken on the backend" in backend.skip_reason
    always = site(ev, f, "test_always_skipped", c)
    assert always.skip == "skipped" and always.skip_reason == "skip: always"


def test_itt_skip_condition_is_recorded(result):
    ev = result.evidence[ITT]
    s = site(ev, "test_device_generic.py", "test_itt", "TestForPrivateUse1")
    assert s.direct == 1 and s.device_generic and s.runs_on_backend is True
    assert s.skip == "conditional"
    assert s.skip_reason == "skipIf(not torch.profiler.itt.is_available()): ITT is required"


def test_class_skip_applies_to_its_tests_and_backend_names(result):
    ev = result.evidence[UNPACK]
    f, c = "test_device_generic.py", "TestNotGeneric"
    names = site(ev, f, "test_names_backend", c)
    assert names.uses_backend and names.runs_on_backend is True
    assert names.skip == "conditional" and "needs CUDA" in names.skip_reason
    assert site(ev, f, "test_npu_method", c).uses_backend  # .npu() on a call result
    plain = site(ev, f, "test_plain", c)
    assert not plain.uses_backend and plain.runs_on_backend is False
    assert plain.skip == "skipped"  # @onlyCPU on top of the class condition


def test_totals_and_locations(result):
    ev = result.evidence[UNPACK]
    assert ev.direct_sites == sum(t.direct for t in ev.tests)
    assert ev.indirect_sites == sum(t.indirect for t in ev.tests)
    assert ev.files == len({t.file for t in ev.tests})
    assert main_locations(ev, 2) == ["test_aliases.py → TestAliases",
                                     "test_device_generic.py → TestForPrivateUse1"]
    assert ev.device_generic_sites == sum(t.direct + t.indirect for t in ev.tests
                                          if t.device_generic)
    assert 0 < ev.backend_runnable_sites < ev.device_generic_sites


def test_broken_file_is_reported_not_fatal(tmp_path):
    (tmp_path / "test_broken.py").write_text("def broken(:\n    pass\n")
    (tmp_path / "test_ok.py").write_text("import torch.autograd.forward_ad as fw\n"
                                         "def test_x():\n    fw.unpack_dual(1)\n")
    r = census(tmp_path, [UNPACK], processes=1)
    assert list(r.parse_errors) == ["test_broken.py"]
    assert r.evidence[UNPACK].direct_sites == 1
    assert any("could not be parsed" in n for n in r.evidence[UNPACK].notes)


def test_parallel_scan_matches_serial():
    serial = census(TREE, [UNPACK], processes=1).evidence[UNPACK]
    parallel = census(TREE, [UNPACK], processes=2).evidence[UNPACK]
    assert serial.model_dump() == parallel.model_dump()


def test_bad_input():
    with pytest.raises(InputError, match="test folder not found"):
        census(FIXTURES / "nope", [UNPACK])
    with pytest.raises(UnknownApiError):
        census(TREE, ["torch.autograd.forward_ad.unpack_duall"])


def test_backend_included_rules():
    def inst(only=None, exc=None, only_lit=True, exc_lit=True):
        return Instantiation("C", "local", only, exc, only_lit, exc_lit, 1)

    assert backend_included(inst(), "npu") is True
    assert backend_included(inst(only=["npu"]), "npu") is True
    assert backend_included(inst(only=["cuda"]), "npu") is False
    assert backend_included(inst(exc=["privateuse1"]), "npu") is False
    assert backend_included(inst(only=["<f()>"], only_lit=False), "npu") is None


def test_scan_source_reports_references_by_scope():
    src = b"import torch as t\nclass TestX:\n    def test_a(self):\n        t.nn.functional.relu(1)\n"
    scan = scan_source(src, "test_x.py")
    assert list(scan.refs) == ["torch.nn.functional.relu"]
    (line, scope), = scan.refs["torch.nn.functional.relu"]
    assert line == 4 and scan.scopes[scope].name == "test_a" and scan.scopes[scope].cls == "TestX"


def test_one_file_and_empty_folder(tmp_path):
    ev = census(TREE / "test_aliases.py", [ENTER], processes=1).evidence[ENTER]
    assert {t.file for t in ev.tests} == {"test_aliases.py"}
    with pytest.raises(InputError, match="no Python files"):
        census(tmp_path, [ENTER])
