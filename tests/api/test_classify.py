from torchparity.api.classify import analyse, calls_user_callable, code_objects, is_context_manager
from torchparity.api.resolve import resolve


def test_python_function_with_its_cpp_binding():
    a = analyse(resolve("torch.autograd.forward_ad.unpack_dual"))
    assert a.kind == "function" and a.implementation == "python_function"
    assert any(b.endswith("_unpack_dual") for b in a.bindings)
    assert a.signature.startswith("(tensor")
    assert a.summary.startswith("Unpack a")
    assert a.source_file.endswith("forward_ad.py") and a.source_line > 0


def test_enter_dual_level_reaches_a_private_binding_not_an_op():
    a = analyse(resolve("torch.autograd.forward_ad.enter_dual_level"))
    assert a.bindings == ["torch._C._enter_dual_level"]


def test_class_and_builtins():
    itt = analyse(resolve("torch.autograd.profiler.emit_itt"))
    assert (itt.kind, itt.implementation) == ("class", "python_class")
    assert any("_enable_profiler" in b for b in itt.bindings)
    mm = analyse(resolve("torch.mm"))
    assert (mm.kind, mm.implementation) == ("builtin", "aten_operator")
    assert "(" not in mm.summary.split(" ")[0]  # the signature line is not the summary
    assert analyse(resolve("torch.ops.aten.mm")).implementation == "aten_operator"


def test_harness_facts():
    from torchparity.results.models import FootprintEntry

    called_back = [FootprintEntry(op="aten.mul", source="callable", count=1, dtypes=["float64"])]
    own = [FootprintEntry(op="aten.mul", source="api", count=1, dtypes=["float64"])]
    assert calls_user_callable(called_back)
    assert not calls_user_callable(own) and not calls_user_callable([])
    assert is_context_manager(resolve("torch.autograd.profiler.emit_itt").obj)
    assert not is_context_manager(resolve("torch.autograd.forward_ad.enter_dual_level").obj)


def test_a_lazy_attribute_that_imports_a_missing_package_is_not_a_crash():
    """torch.onnx.ONNXProgram's methods read names (onnx, onnxscript) that import packages
    this machine may lack; the analysis answers without them."""
    from torchparity.api.classify import analyse
    from torchparity.api.resolve import resolve

    for name in ("torch.onnx.ONNXProgram", "torch.onnx.ONNXProgram.save"):
        assert analyse(resolve(name)).kind


def test_a_factory_partials_own_code_is_what_it_builds():
    """torch.ao's ``with_args`` wrappers are partials: an observer they make (and the
    observers a QConfig holds) is the API's own code, not code around it."""
    from torch.ao.quantization import HistogramObserver, default_qconfig
    from torch.ao.quantization.observer import default_histogram_observer

    from torchparity.api.classify import code_objects

    assert HistogramObserver.forward.__code__ in code_objects(default_histogram_observer)
    assert default_qconfig.activation.p.func.forward.__code__ in code_objects(default_qconfig)


def test_a_name_the_op_namespace_has_itself_is_no_operator():
    """``torch.ops.aten.__reduce_ex__`` is the namespace object's own method, ``name`` its
    string: neither is an aten operator (a check of such a method crashed in analyse)."""
    from torchparity.api.classify import aten_op_for

    assert aten_op_for("torch.Tensor.mm") == "aten.mm"
    for name in ("torch.Tensor.__reduce_ex__", "torch.distributed.Store.__init__", "torch.Tag.name",
                 "torch.Tensor.__format__"):
        assert aten_op_for(name) is None, name


def test_wraps_user_code_only_where_a_callable_was_called_back(tmp_path):
    """Issue 48 item 3: a parameter named ``module`` or ``f`` is no callable the API runs:
    fully_shard (its own all-gathers) and torch.export.save (``f`` is a file) are not
    "wraps user code"; gradcheck, which calls back the function given, is."""
    import torch

    from torchparity.api.footprint import FootprintRecorder
    from torchparity.app.check import _is_harness

    for name in ("torch.distributed.fsdp.fully_shard", "torch.export.save"):
        assert not _is_harness(resolve(name), []), name
    gradcheck = resolve("torch.autograd.gradcheck")

    def user(x):
        return (x * x).sum()
    rec = FootprintRecorder("cpu", api_objects=[gradcheck.obj], api_codes=code_objects(gradcheck.obj),
                            user_files=[__file__])
    with rec:
        torch.autograd.gradcheck(user, (torch.rand(3, dtype=torch.float64, requires_grad=True),))
    assert _is_harness(gradcheck, rec.entries())
    assert _is_harness(resolve("torch.autograd.profiler.emit_itt"), [])  # a context manager


def test_a_class_owns_the_methods_it_defines_not_its_bases():
    """Issue 48 item 3: Module._call_impl is no module class's own code (every module's ops
    were credited to whatever class was asked); the class's own forward is."""
    import torch

    codes = code_objects(torch.nn.Linear)
    assert torch.nn.Linear.forward.__code__ in codes
    assert torch.nn.Module._call_impl.__code__ not in codes
    assert torch.nn.Module.to.__code__ not in codes
    from torchparity.api.footprint import FootprintRecorder

    lin = torch.nn.Linear(2, 2)
    relu = torch.nn.ReLU()
    rec = FootprintRecorder("cpu", api_objects=[torch.nn.ReLU], api_codes=code_objects(torch.nn.ReLU),
                            user_files=[__file__])
    with rec:
        relu(lin(torch.ones(1, 2)))
    by_op = {e.op: e.source for e in rec.entries()}
    assert by_op["aten.addmm"] == "scenario" and by_op["aten.relu"] == "api", by_op
