"""Taking a value away (issue 48): a constant, an enum member, a class attribute, a
classproperty or a C type's property is rebound on its owner to a stand-in of its kind
while the run lasts, so a case that reads it can observe it."""

from __future__ import annotations

import pytest
import torch
from torch.ao.quantization.backend_config import ObservationType
from torch.distributions import constraints

from torchparity.api.classify import code_objects
from torchparity.api.resolve import resolve
from torchparity.devices import get_adapter
from torchparity.run.execute import execute
from torchparity.run.takeaway import PERTURBED, REPLAYED
from torchparity.run.takeaway_values import VALUE, stand_in, value_takeaway
from torchparity.scenarios import sources

M = ObservationType


@pytest.mark.parametrize("value, check", [
    (M.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT,  # enum: another member of the same enum
     lambda v: v is M.OUTPUT_SHARE_OBSERVER_WITH_INPUT),
    (M.INPUT_OUTPUT_NOT_OBSERVED, lambda v: v is M.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT),
    (True, lambda v: v is False),  # bool: negated
    (False, lambda v: v is True),
    (torch.float32, lambda v: v is torch.float64),  # dtype: another of its family
    (torch.quint8, lambda v: v is torch.qint8),  # a quantized dtype stays quantized
    (torch.complex64, lambda v: v is torch.complex128),
    (constraints.unit_interval,  # constraint: another one, of the same event dim
     lambda v: isinstance(v, constraints.Constraint) and v is not constraints.unit_interval
     and v.event_dim == 0 and bool(v.check(torch.tensor(-1.0)))),
    (constraints.one_hot, lambda v: isinstance(v, constraints.Constraint) and v.event_dim == 1
     and type(v) is not type(constraints.one_hot)),
    ({"p": constraints.unit_interval}, lambda v: set(v) == {"p"} and v["p"] is not constraints.unit_interval),
    (3, lambda v: v == 4),
    ("name", lambda v: isinstance(v, str) and v != "name"),
], ids=["enum", "enum-last", "bool-true", "bool-false", "dtype", "qdtype", "cdtype", "constraint",
        "constraint-event", "dict", "int", "str"])
def test_a_stand_in_is_of_the_same_kind_with_another_value(value, check):
    assert check(stand_in(value)), stand_in(value)


def test_a_qconfig_stands_in_for_another_qconfig_of_its_module():
    import torch.ao.quantization.qconfig as qc

    other = stand_in(qc.float_qparams_weight_only_qconfig, qc, "float_qparams_weight_only_qconfig")
    assert type(other) is qc.QConfig and other is not qc.float_qparams_weight_only_qconfig


def test_a_classproperty_is_rebound_while_the_run_lasts_and_restored():
    take, why = value_takeaway("torch.FloatStorage.dtype", torch.float32)
    assert take is not None and take.how == VALUE, why
    with take.recording():
        assert torch.FloatStorage.dtype is torch.float32  # recording reads through
    assert take.calls == 1
    with take.stubbing(PERTURBED):
        assert torch.FloatStorage.dtype is torch.float64
        assert torch.DoubleStorage.dtype is torch.float64  # only the owner's is rebound
    with take.stubbing(REPLAYED):
        assert torch.FloatStorage.dtype is torch.float32
    assert torch.FloatStorage.dtype is torch.float32 and "dtype" in vars(torch.FloatStorage)
    assert type(vars(torch.FloatStorage)["dtype"]).__name__ == "_ClassPropertyDescriptor"


def test_an_enum_member_and_an_inherited_class_attribute_are_rebound_and_restored():
    take, _ = value_takeaway("torch.ao.quantization.backend_config.ObservationType.INPUT_OUTPUT_NOT_OBSERVED",
                             M.INPUT_OUTPUT_NOT_OBSERVED)
    with take.stubbing(PERTURBED):
        assert M.INPUT_OUTPUT_NOT_OBSERVED is M.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT
    assert M.INPUT_OUTPUT_NOT_OBSERVED.name == "INPUT_OUTPUT_NOT_OBSERVED" and len(list(M)) == 3
    # defined on _StorageBase, read on an UntypedStorage: rebound on the owner only, then removed
    take, _ = value_takeaway("torch.UntypedStorage.is_sparse_csr", False)
    st = torch.ones(2).untyped_storage()
    with take.stubbing(PERTURBED):
        assert st.is_sparse_csr is True
    assert st.is_sparse_csr is False and "is_sparse_csr" not in vars(torch.UntypedStorage)


def test_a_flag_on_a_module_object_reads_perturbed_and_writes_through():
    cudnn = torch.backends.cudnn
    before = cudnn.deterministic
    take, _ = value_takeaway("torch.backends.cudnn.deterministic", before)
    # torch's test utilities freeze the global flags once imported: allow plain assignment here
    mutable = getattr(torch.backends, "__allow_nonbracketed_mutation")
    with take.stubbing(PERTURBED), mutable():
        assert cudnn.deterministic is (not before)
        cudnn.deterministic = True  # the original setter
        assert torch._C._get_cudnn_deterministic() is True
        cudnn.deterministic = before
    assert cudnn.deterministic is before


def test_a_flag_answered_by_its_owners_getattr_reads_perturbed():
    """torch.backends.cuda.matmul answers allow_tf32 through its class's __getattr__."""
    m = torch.backends.cuda.matmul
    before = m.allow_tf32
    take, why = value_takeaway("torch.backends.cuda.matmul.allow_tf32", before)
    assert take is not None, why
    with take.recording():
        assert m.allow_tf32 is before
    assert take.calls == 1
    with take.stubbing(PERTURBED):
        assert m.allow_tf32 is (not before)
    assert m.allow_tf32 is before and "__getattr__" in vars(type(m))


def test_a_module_constant_is_rebound_with_its_reexports():
    import torch.ao.quantization as Q
    import torch.ao.quantization.qconfig as qc

    original = qc.float_qparams_weight_only_qconfig
    take, _ = value_takeaway("torch.ao.quantization.qconfig.float_qparams_weight_only_qconfig", original)
    with take.recording():
        pass
    assert take.calls is None  # a module global's reads cannot be counted
    with take.stubbing(PERTURBED):
        assert Q.float_qparams_weight_only_qconfig is not original
        assert qc.float_qparams_weight_only_qconfig is Q.float_qparams_weight_only_qconfig
    assert Q.float_qparams_weight_only_qconfig is original and qc.float_qparams_weight_only_qconfig is original


def test_a_c_type_slot_is_not_rebound_and_says_why():
    take, why = value_takeaway("torch._C.TensorBase.is_sparse_csr", torch._C.TensorBase.is_sparse_csr)
    assert take is None and why.startswith("C type slot: cannot rebind"), why


def _answered(api, dtype="float32"):
    api_obj = resolve(api).obj
    sc = next(s for s in sources.offer(api, api_obj).scenarios if dtype in s.dtypes)
    result, _ = execute(sc, dtype, get_adapter("cpu"), footprint=True, api_obj=api_obj,
                        api_codes=code_objects(api_obj))
    return result


@pytest.mark.parametrize("api", [
    "torch.FloatStorage.dtype",
    "torch.UntypedStorage.is_sparse_csr",
    "torch.distributions.lowrank_multivariate_normal.LowRankMultivariateNormal.has_rsample",
    "torch.ao.quantization.backend_config.ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT",
    "torch.monitor.Stat.count",
    "torch.Tag.name",
])
def test_a_value_apis_case_observes_it_end_to_end(api):
    """Before, these were left to the frames ("a dtype value, not a function"): no case
    observed them."""
    result = _answered(api)
    assert result.own is not None and result.own.method == "takeaway" and result.own.how == VALUE, result.own
    assert result.own.observes is True and result.status == "pass", (result.status, result.own)


def test_a_value_read_with_no_stand_in_is_not_taken_away_and_says_why(fixture_path):
    """A device has no other value the case could use: the same outcome would read hollow;
    nothing is taken away, said so."""
    import tp_fixture_values as lib

    take, why = value_takeaway("tp_fixture_values.Host.where", vars(lib.Host)["where"], owner=lib.Host)
    assert take is not None, why  # an object's descriptor: what it reads is seen in the run
    with take.recording():
        assert lib.case("cpu", torch.float32) == ["cpu", 3]
    assert take.how is None and "no stand-in" in take.why and take.calls == 1, take.why


def test_an_attribute_of_a_tensor_is_left_to_the_frames_with_the_reason():
    """Reading a device-data holder's attribute is device state (run.execute.host_attribute):
    the value route leaves it to the frames, labelled."""
    result = _answered("torch.Tensor.is_leaf")
    assert result.own.method == "frames" and "device-data holder" in result.own.reason, result.own


def test_a_class_read_through_its_classproperty_observes_it():
    """A legacy storage class's case reads its dtype (a classproperty) and never constructs
    it: the class's own code includes that getter, so taken away, the case sees another
    dtype (it read "hollow: the case never calls the API" on the CPU)."""
    result = _answered("torch.QUInt2x4Storage")
    assert result.own is not None and result.own.how == "code" and result.own.observes is True, result.own
    assert result.status == "pass", result.detail


def test_a_value_the_case_works_through_keeps_the_frames_attribution_of_what_it_still_did():
    """A QConfig is read, not called, but its observers do the device work: taken away,
    its stand-in's observers still do the same ops, which stay the API's (as for a replayed
    object); an enum member's read does nothing of its own."""
    from torchparity.judge.evidence import row_evidence

    api = "torch.ao.quantization.qconfig.float_qparams_weight_only_qconfig"
    obj = resolve(api).obj
    sc = sources.offer(api, obj).scenarios[0]
    result, entries = execute(sc, "float32", get_adapter("cpu"), footprint=True, api_obj=obj,
                              api_codes=code_objects(obj))
    assert result.own.how == VALUE and result.own.observes is True, result.own
    assert "works through" in result.own.reason
    assert "aten.aminmax" in {e.op for e in entries if e.source == "api"}
    assert row_evidence(result.status, result.cause, entries, own=result.own) == "device-compute"
