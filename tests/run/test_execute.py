"""judge_outcomes decides statuses from the two runs; a fake adapter stands for a device."""

from torchparity.devices.base import DeviceAdapter
from torchparity.results.models import Text
from torchparity.run.execute import Outcome, judge_outcomes
from torchparity.scenarios.registry import Raises, Scenario


class FakeNpu(DeviceAdapter):
    type = "npu"


def _sc(raises=None, compare="values"):
    t = Text(en="x", zh="x")
    return Scenario(id="s", api="x.f", fn=lambda d, t: None, description=t, expected=t,
                    raises=raises, compare=compare)


ADAPTER = FakeNpu("npu")


def test_device_dtype_refusal_is_unsupported():
    dev = Outcome(exc=RuntimeError("\"dot_npu\" not implemented for 'Double'"))
    j = judge_outcomes(_sc(), Outcome(value=1), dev, ADAPTER)
    assert (j.status.value, j.cause.value) == ("unsupported", "dtype_limit")


def test_a_scenarios_wrapped_device_refusal_is_the_answer():
    """A scenario whose assert_close hits the device's refused isclose: torch.testing raises
    "Comparing ... resulted in the unexpected exception above" while handling the refusal;
    the refusal (kept in the chain) is the answer, and the detail names both."""
    try:
        try:
            raise RuntimeError("\"isclose_npu\" not implemented for 'ComplexFloat'")
        except RuntimeError:
            raise RuntimeError("Comparing\n\nTensorOrArrayPair(...)\n\nresulted in the unexpected exception above.")  # noqa: B904
    except RuntimeError as exc:
        wrapped = exc
    j = judge_outcomes(_sc(), Outcome(value=1), Outcome(exc=wrapped), ADAPTER)
    assert (j.status.value, j.cause.value) == ("unsupported", "dtype_limit")
    assert j.detail.startswith("RuntimeError: \"isclose_npu\"") and "raised within RuntimeError: Comparing" in j.detail


def test_a_refusal_on_a_later_line_is_described():
    """torch_npu's aclnn failures say why on a later line; the one-line detail keeps it."""
    msg = ("isclose: NPU function error: call aclnnIsClose failed, error code is 161002\n"
           "[ERROR] ERR00100 PTA call acl api failed.\n"
           "AclNN_Parameter_Error(EZ1001): Tensor self not implemented for DT_COMPLEX64, should be in "
           "dtype support list [DT_FLOAT].")
    j = judge_outcomes(_sc(), Outcome(value=1), Outcome(exc=RuntimeError(msg)), ADAPTER)
    assert (j.status.value, j.cause.value) == ("unsupported", "dtype_limit")
    assert "call aclnnIsClose failed" in j.detail and "not implemented for DT_COMPLEX64" in j.detail


def test_build_config_even_when_the_cpu_reference_raised_too():
    exc = RuntimeError("Can't use ITT profiler - PyTorch was compiled without ITT")
    j = judge_outcomes(_sc(), Outcome(exc=exc), Outcome(exc=exc), ADAPTER)
    assert (j.status.value, j.cause.value) == ("unsupported", "build_config")
    assert "CPU reference" in j.detail


def test_unclassified_device_error_and_outcomes_that_differ():
    """Issue 48 item 4: the device raising where the CPU returned is a device error; the
    device returning where the CPU raised is a difference (fail, exception_mismatch); both
    raising without a declared refusal is "both sides refused", not comparable."""
    j = judge_outcomes(_sc(), Outcome(value=1), Outcome(exc=ValueError("boom")), ADAPTER)
    assert (j.status.value, j.cause.value) == ("error", "device_error")
    j = judge_outcomes(_sc(), Outcome(exc=ValueError("a")), Outcome(exc=ValueError("a")), ADAPTER)
    assert (j.status.value, j.cause.value) == ("skip", "not_comparable")
    assert j.detail.startswith("both sides refused: the device raised ValueError: a")
    j = judge_outcomes(_sc(), Outcome(exc=ValueError("a")), Outcome(value=1), ADAPTER)
    assert (j.status.value, j.cause.value) == ("fail", "exception_mismatch")
    assert "the device returned where the CPU raises ValueError: a" in j.detail
    # the CPU's own limit (its kernel lacks the dtype) is no reference: not comparable
    lim = Outcome(exc=RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Half'"))
    j = judge_outcomes(_sc(), lim, Outcome(value=1), ADAPTER)
    assert (j.status.value, j.cause.value) == ("skip", "not_comparable")


def test_expected_exception():
    sc = _sc(Raises("RuntimeError", "Nested"))
    ok = Outcome(exc=RuntimeError("Nested forward mode AD is not supported"))
    assert judge_outcomes(sc, ok, ok, ADAPTER).status.value == "pass"
    j = judge_outcomes(sc, ok, Outcome(value=1), ADAPTER)
    assert (j.status.value, j.cause.value) == ("fail", "exception_mismatch")
    j = judge_outcomes(sc, ok, Outcome(exc=KeyError("x")), ADAPTER)
    assert j.status.value == "error"


def test_not_compared_scenarios_report_the_value():
    j = judge_outcomes(_sc(compare="none"), Outcome(value=True), Outcome(value=False), ADAPTER)
    assert j.status.value == "pass" and "False" in j.detail


def test_a_mismatch_from_another_code_path_is_named():
    import torch

    from torchparity.judge.judgement import Judgement
    from torchparity.results.models import Cause, Status
    from torchparity.run.execute import explain_by_path

    def third(device, dtype):  # accumulates in float64 on the CPU only (tensors stay on the CPU)
        acc = torch.float64 if device == "cpu" else dtype
        return (torch.ones(4, dtype=acc) / 3).to(dtype)

    sc = Scenario(id="s", api="x.f", fn=third, description=Text(en="x", zh="x"), expected=Text(en="x", zh="x"))
    j = Judgement(Status.FAIL, Cause.MISMATCH, "values differ")
    explain_by_path(sc, torch.float16, ADAPTER, j)
    assert j.cause == Cause.DEVICE_PATH and j.detail.endswith("; values differ")
    assert ("only there aten.div.Tensor(float16), aten.ones(dtype=float16); "
            "only on the CPU aten._to_copy(float64, dtype=float16)") in j.detail, j.detail
    same = Scenario(id="s", api="x.f", fn=lambda d, t: torch.ones(4, dtype=t) / 3,
                    description=Text(en="x", zh="x"), expected=Text(en="x", zh="x"))
    j = Judgement(Status.FAIL, Cause.MISMATCH, "values differ")
    explain_by_path(same, torch.float16, ADAPTER, j)
    assert (j.cause, j.detail) == (Cause.MISMATCH, "values differ")


def _noisy(g, scale, seed):
    import torch

    gen = torch.Generator().manual_seed(seed)
    return (g * (1 + scale * torch.randn(g.shape, generator=gen, dtype=torch.float64))).float()


def test_a_declared_golden_judges_the_device_against_the_cpus_own_error():
    import torch

    from torchparity.run.execute import golden_of

    class OnHost(DeviceAdapter):  # the outputs here are CPU tensors
        type = "cpu"
    host = OnHost("cpu")

    g = torch.linspace(1, 2, 64, dtype=torch.float64)
    t = Text(en="x", zh="x")
    sc = Scenario(id="s", api="x.f", fn=lambda d, dt: None, description=t, expected=t,
                  golden=lambda dt: {"out": g})
    cpu = Outcome(value={"out": _noisy(g, 1e-4, 1)})
    like_cpu = Outcome(value={"out": _noisy(g, 1e-4, 2)})  # as far from the golden as the CPU
    worse = Outcome(value={"out": _noisy(g, 1e-2, 3)})
    # without a golden the two float32 results are judged against each other: a mismatch
    j = judge_outcomes(_sc(), cpu, like_cpu, host)
    assert (j.status.value, j.cause.value) == ("fail", "mismatch")
    golden = golden_of(sc, torch.float32, host)
    j = judge_outcomes(sc, cpu, like_cpu, host, golden)
    assert j.status.value == "pass" and j.metric.standard == "golden float32", j
    j = judge_outcomes(sc, cpu, worse, host, golden_of(sc, torch.float32, host))
    assert (j.status.value, j.cause.value) == ("fail", "mismatch")
    assert golden_of(sc, torch.float64, host) is None  # nothing more precise than float64
    # none declared: the scenario's own code rerun in float64 on the same draws
    # (scenarios/golden.py) is its golden, and float64 has none
    assert callable(golden_of(_sc(), torch.float32, host))
    assert golden_of(_sc(), torch.float64, host) is None


_BACKWARD_REFUSED = """
import torch
from torchparity.devices import get_adapter
from torchparity.results.models import Text
from torchparity.run.execute import execute
from torchparity.scenarios.registry import Scenario

adapter = get_adapter("emu:ascend-a2")
adapter.setup()

def elu_grad(device, dtype):  # A2 runs elu in float64 but refuses its backward kernel
    x = torch.linspace(-2, 2, 6, dtype=dtype).to(device).requires_grad_()
    torch.nn.functional.elu(x).sum().backward()
    return x.grad

t = Text(en="x", zh="x")
sc = Scenario(id="s", api="torch.nn.functional.elu", fn=elu_grad, description=t, expected=t)
result, entries = execute(sc, "float64", adapter, footprint=True,
                          api_obj=torch.nn.functional.elu)
print(result.status, result.cause)
print(sorted(e.op for e in entries))

# the docstring source's dispatch mode (random draws on the CPU) around the same backward
from torchparity.results.error_rules import classify_exception
from torchparity.scenarios.sources.docstring.execute import CpuRandom
try:
    with CpuRandom(adapter.torch_device):
        elu_grad(adapter.torch_device, torch.float64)
except RuntimeError as exc:
    print(*(v.value for v in classify_exception(type(exc).__name__, str(exc))))
"""


def test_a_device_kernel_refused_in_backward_keeps_its_footprint(tmp_path):
    """The footprint rerun of a case whose device kernel raises inside backward once
    killed the worker (std::terminate on the autograd device thread); it now records the
    ops up to the failure, the failing backward kernel included, and the process lives.
    The docstring source's dispatch mode (CpuRandom) died the same way; it now raises."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "backward_refused.py"
    script.write_text(_BACKWARD_REFUSED, encoding="utf-8")
    src = str(Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=src))
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, ops, in_doc_mode = proc.stdout.strip().splitlines()[-3:]
    assert status == "unsupported dtype_limit"
    assert "'aten.elu'" in ops and "'aten.elu_backward'" in ops, ops
    assert in_doc_mode == "unsupported dtype_limit"


def test_the_footprint_recorder_raises_a_backward_kernel_error_where_backward_was_called():
    import pytest
    import torch

    from torchparity.api.footprint import FootprintRecorder

    class Refuses(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("\"foo_npu\" not implemented for 'Double'")

    x = torch.ones(2, requires_grad=True)
    rec = FootprintRecorder("cpu")
    with pytest.raises(RuntimeError, match="foo_npu"):
        with rec:
            Refuses.apply(x).sum().backward()
    assert rec.take_backward_failure() is None  # nothing kept where nothing was kept


def test_a_dtype_difference_stays_metadata_whatever_path_it_took():
    """Issue 20 item 7: a device that widens float16 results to float32 takes another path
    too (its later ops run in float32); the first real difference is the dtype."""
    import torch

    from torchparity.judge.judgement import Judgement
    from torchparity.results.models import Cause, Status
    from torchparity.run.execute import explain_by_path

    def widened(device, dtype):  # the "device" returns float32 where the CPU keeps float16
        out = torch.ones(4, dtype=dtype) / 3
        return out if device == "cpu" else out.float() * 1

    sc = Scenario(id="s", api="x.f", fn=widened, description=Text(en="x", zh="x"), expected=Text(en="x", zh="x"))
    j = Judgement(Status.FAIL, Cause.METADATA, "output: dtype torch.float32, CPU gave torch.float16")
    explain_by_path(sc, torch.float16, ADAPTER, j)
    assert j.cause == Cause.METADATA, j.detail
    assert j.detail.startswith("output: dtype torch.float32") and "note: the API takes another code path" in j.detail


def test_a_counter_that_differs_is_state():
    from torchparity.judge.judgement import Judgement
    from torchparity.results.models import Cause, FootprintEntry, Metric, Status
    from torchparity.run.execute import explain_by_state

    exact = Metric(name="equal", value=0.0, threshold=1.0, standard="exact")
    counter = [FootprintEntry(op="runtime.npu.memory_allocated", source="api", count=1, dtypes=[])]
    j = Judgement(Status.FAIL, Cause.MISMATCH, "output['grows_by_nbytes']: CPU gave True, device gave False", exact)
    explain_by_state(j, counter)
    assert j.cause == Cause.STATE
    # a number the API computed on the device stays a values difference
    computed = [FootprintEntry(op="aten.sum", source="api", count=1, dtypes=["float32"])]
    j = Judgement(Status.FAIL, Cause.MISMATCH, "output: CPU gave 3, device gave 4",
                  Metric(name="abs_diff", value=1.0, threshold=0.0, standard="exact"))
    explain_by_state(j, computed)
    assert j.cause == Cause.MISMATCH



_COUNTER_STUCK = """
import torch
from torchparity.devices import get_adapter
from torchparity.devices.emulator import faults
from torchparity.results.models import Text
from torchparity.run.execute import execute
from torchparity.scenarios.registry import Scenario

adapter = get_adapter("emu:ascend-a2")
adapter.setup()
mod = getattr(torch, adapter.type)

def counts(device, dtype):
    m = mod if device != "cpu" else None
    before = m.memory_allocated() if m else 0
    t = torch.empty(1024, dtype=dtype, device=device) if m else None  # the CPU run allocates nothing
    after = m.memory_allocated() if m else 4096
    return {"grows_by_nbytes": after - before == 4096}

t = Text(en="x", zh="x")
sc = Scenario(id="c", api="torch.cuda.memory_allocated", fn=counts, description=t, expected=t)
with faults.injecting(["memstat-zero"]):
    result, _ = execute(sc, "float32", adapter, footprint=True, api_obj=mod.memory_allocated)
print(result.status, result.cause)
"""


def test_a_counter_stuck_at_zero_is_state_though_the_device_allocated():
    """The device run allocates (its footprint differs from the CPU run's) and its memory
    counter reads 0: the first real difference is the counter (`state`), not `device_path`."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _COUNTER_STUCK], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["fail", "state"], out.stdout + out.stderr[-1000:]
