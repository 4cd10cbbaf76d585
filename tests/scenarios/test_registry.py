import ast

import pytest

from torchparity.api.resolve import resolve
from torchparity.scenarios import registry
from torchparity.scenarios.registry import DTYPE_NAMES, scenario

SEED_ROWS = {
    # every row of both seeds, by scenario id
    "torch.autograd.gradcheck": {"slow_mul", "slow_sin_cos", "slow_exp", "slow_sum", "slow_linear",
                                 "fast_mul", "raise_exception_false", "raise_exception_true",
                                 "check_undefined_grad", "check_batched_grad", "check_forward_ad"},
    "torch.autograd.gradgradcheck": {"slow_mul", "slow_sin_cos", "slow_exp", "slow_sum",
                                     "slow_linear", "fast_mul", "raise_exception_false",
                                     "check_undefined_grad", "check_batched_grad"},
    "torch.autograd.profiler.emit_itt": {"disabled_noop", "enabled", "record_shapes", "itt_is_available"},
    "torch.autograd.forward_ad.enter_dual_level": {"returns_int_level", "explicit_level",
                                                   "exit_clears_tangent", "nested_raises"},
    "torch.autograd.forward_ad.unpack_dual": {"device_kept", "square_tangent", "plain_tensor"},
}


@pytest.fixture(scope="module", autouse=True)
def loaded():
    registry.load_suites()


@pytest.mark.parametrize("api", sorted(SEED_ROWS))
def test_suites_cover_every_seed_row(api):
    ids = {s.id for s in registry.scenarios_for_object(resolve(api).obj)}
    assert SEED_ROWS[api] <= ids


def test_aliases_find_the_same_scenarios():
    a = registry.scenarios_for_object(resolve("torch.autograd.gradcheck.gradcheck").obj)
    b = registry.scenarios_for_object(resolve("torch.autograd.gradcheck").obj)
    assert a and a == b


def test_forward_ad_dtypes_and_bilingual_texts():
    unpack = registry.scenarios_for_object(resolve("torch.autograd.forward_ad.unpack_dual").obj)
    assert {"float16", "float32"} <= {d for s in unpack for d in s.dtypes}
    for s in unpack:
        assert s.description.en and s.description.zh and s.expected.en and s.expected.zh


def test_snippet_is_runnable_python_without_the_decorator():
    sc = registry.find("torch.autograd.gradcheck", "slow_mul")
    snippet = sc.snippet('"cpu"')
    tree = ast.parse(snippet)
    assert "@scenario" not in snippet
    namespace = {}
    exec(compile(tree, "<snippet>", "exec"), namespace)  # prints True
    assert snippet.strip().endswith('print(gradcheck_slow_mul("cpu", torch.float64))')


def test_bad_registrations_are_refused():
    with pytest.raises(ValueError):
        scenario("x.y", "a", en="", zh="", expect_en="", expect_zh="", dtypes=["float99"])
    with pytest.raises(ValueError):
        scenario("x.y", "a", en="", zh="", expect_en="", expect_zh="", compare="approx")
    with pytest.raises(ValueError):
        scenario("torch.autograd.gradcheck", "slow_mul", en="", zh="", expect_en="",
                 expect_zh="")(lambda d, t: None)


def test_dtype_names_are_torch_dtypes():
    import torch

    for name in DTYPE_NAMES:
        assert isinstance(getattr(torch, name), torch.dtype)


def test_a_scenario_without_a_golden_gets_its_own_code_in_float64():
    """A hand/table scenario that compares values gets a float64 golden (scenarios.golden):
    the same draws, every computation after them in float64, so a correct device whose
    reductions run in another order is judged against the CPU's own error (the quantizable
    LSTM's parameter gradient failed the direct float32 bar under reordered reductions)."""
    import torch

    from torchparity.judge.compare import compare_outputs
    from torchparity.results.models import Text
    from torchparity.scenarios.registry import Scenario

    def fn(device, dtype):
        torch.manual_seed(0)
        x = torch.randn(256, dtype=dtype, device=device)
        return (x + 1e4) - 1e4  # the CPU's float32 loses x's low bits; float64 keeps them

    sc = Scenario(id="s", api="a", fn=fn, description=Text(en="", zh=""), expected=Text(en="", zh=""))
    assert sc.golden is not None
    golden = sc.golden(torch.float32)
    cpu = fn("cpu", torch.float32)
    assert golden.dtype == torch.float64 and (golden - cpu.double()).abs().max() > 0
    dev = golden.to(torch.float32)  # a device that rounds better than the CPU (other order)
    assert compare_outputs(cpu, dev, "cpu").status == "fail"  # the direct float32 bar
    assert compare_outputs(cpu, dev, "cpu", golden=golden).status == "pass"
    raising = Scenario(id="r", api="a", fn=fn, description=Text(en="", zh=""),
                       expected=Text(en="", zh=""), compare="none")
    assert raising.golden is None
