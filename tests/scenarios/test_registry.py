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
