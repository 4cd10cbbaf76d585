"""The generated scenario sources (module, optim, distribution, member) on real APIs,
the CPU against itself; their determinism; and their coverage of the shipped docs list."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path

import pytest
import torch

from torchparity.run.execute import execute
from torchparity.scenarios.sources import distribution, member, module, optim, source

DOCS = Path(__file__).resolve().parents[1] / "data" / "ascend-native-api-docs"


@pytest.fixture(scope="module")
def docs_names():
    from torchparity.evidence.vendor_docs import load_vendor_docs

    return [e.name for e in load_vendor_docs(str(DOCS), "2.13.0").entries]


def _run_all(scs, adapter):
    out = []
    for sc in scs:
        for dt in sc.dtypes:
            result, _ = execute(sc, dt, adapter)
            out.append((sc.id, dt, str(result.status), result.detail))
    return out


@pytest.mark.parametrize("api, src, min_cases", [
    ("torch.nn.Linear", "module", 4),  # 2 inputs x {float32, float64} at least
    ("torch.optim.Adam", "optim", 6),  # 3 configurations x 2 dtypes
    ("torch.optim.Adam.load_state_dict", "optim", 2),
    ("torch.optim.lr_scheduler.OneCycleLR.get_last_lr", "optim", 2),
    ("torch.distributions.Normal.log_prob", "distribution", 2),
    ("torch.distributions.gamma.Gamma.rsample", "distribution", 2),
    ("torch.distributions.kl.kl_divergence", "distribution", 20),
    ("torch.Tensor.element_size", "member", 4),
    ("torch.UntypedStorage.nbytes", "member", 4),
    ("torch.nn.Module.state_dict", "member", 1),
    ("torch.nn.ParameterDict.popitem", "member", 1),
    ("torch.nn.modules.module.register_module_full_backward_hook", "member", 1),
    ("torch.nn.init.orthogonal_", "member", 2),
])
def test_real_api_passes_cpu_against_cpu(api, src, min_cases, cpu):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scs = source(src).scenarios(api, None)
        rows = _run_all(scs, cpu)
    assert all(sc.source == src and sc.api == api for sc in scs)
    assert len(rows) >= min_cases, rows
    assert [r for r in rows if r[2] != "pass"] == []


def test_module_compares_outputs_and_gradients(cpu):
    sc = module.scenarios("torch.nn.Linear", None)[0]
    torch.manual_seed(0)
    out = sc.fn("cpu", torch.float32)
    assert set(out) == {"output", "input_grads", "param_grads", "buffers"}
    assert out["output"].shape == (4, 8)
    assert out["input_grads"][0].shape == (4, 10)
    assert set(out["param_grads"]) == {"weight", "bias"}


@pytest.mark.parametrize("api", ["torch.nn.Linear", "torch.nn.LazyConv1d"])
def test_module_golden_is_the_same_case_computed_in_float64(cpu, api):
    # the golden draws the same inputs and weights as the float32 run, then computes in
    # float64: its values are the float32 run's to float32 rounding, and more precise (a
    # lazy module is materialised on the CPU in float32 first, not drawn again in float64)
    sc = module.scenarios(api, None)[0]
    torch.manual_seed(0)
    out = sc.fn("cpu", torch.float32)
    torch.manual_seed(0)
    gold = sc.golden(torch.float32)
    assert gold["output"].dtype == torch.float64 and gold["param_grads"]["weight"].dtype == torch.float64
    torch.testing.assert_close(gold["output"].float(), out["output"])
    torch.testing.assert_close(gold["param_grads"]["weight"].float(), out["param_grads"]["weight"])


def test_random_outputs_are_compared_by_summary(cpu):
    # a module that draws from the generator in this mode is compared by shapes only
    assert module.is_random(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5)))
    assert not module.is_random(torch.nn.Dropout(0.5).eval())
    assert not module.is_random(torch.nn.Dropout(0.0))
    assert module.is_random(torch.nn.RReLU()) and not module.is_random(torch.nn.RReLU().eval())
    draw = distribution.scenarios("torch.distributions.normal.Normal.sample", None)[0]
    torch.manual_seed(0)
    out = draw.fn("cpu", torch.float32)
    draws = out.pop("draws")  # the draws themselves: a two-sample test and a seeded repeat
    assert out == {"shape": (64, 2), "dtype": "torch.float32", "on_device": True, "in_support": True}
    assert tuple(draws.tensor.shape) == (64, 2)


def test_cpu_not_implemented_is_expected_on_the_device(cpu):
    # Distribution.mean is abstract: concrete classes that inherit it raise on the CPU,
    # and the scenario expects the same exception (not a harness error)
    scs = distribution.scenarios("torch.distributions.distribution.Distribution.mean", None)
    assert scs and all(sc.raises is not None and sc.raises.type == "NotImplementedError" for sc in scs)
    rows = _run_all(scs, cpu)
    assert {r[2] for r in rows} == {"pass"}
    assert all("raised as expected" in r[3] for r in rows)


def test_lbfgs_add_param_group_runs_without_a_step(cpu):
    # LBFGS steps one parameter group only (it asserts): the groups are compared
    (sc,) = optim.scenarios("torch.optim.LBFGS.add_param_group", None)
    torch.manual_seed(0)
    assert sc.fn("cpu", torch.float32)["groups"] == 2
    assert {r[2] for r in _run_all([sc], cpu)} == {"pass"}


def test_snippet_is_runnable():
    sc = distribution.scenarios("torch.distributions.Normal.log_prob", None)[0]
    code = sc.snippet('"cpu"', "float64")
    assert "{device}" not in code and "biject_to" not in code
    exec(compile(code, "<snippet>", "exec"), {})  # prints the log-probabilities
    for src, api in (("optim", "torch.optim.Adam"), ("optim", "torch.optim.lr_scheduler.StepLR"),
                     ("module", "torch.nn.Linear"), ("distribution", "torch.distributions.kl.kl_divergence")):
        one = source(src).scenarios(api, None)[0]
        exec(compile(one.snippet('"cpu"', "float32"), "<snippet>", "exec"), {})
    msc = member.scenarios("torch.Tensor.storage_offset", None)[0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(msc.snippet('"cpu"', "float32"), "<snippet>", "exec"), {})
    assert printed.getvalue().strip() == "4"


@pytest.mark.parametrize("mod, api", [
    (distribution, "torch.distributions.beta.Beta.entropy"),
    (optim, "torch.optim.SGD.step"),
    (member, "torch.TypedStorage.fill_"),
    (module, "torch.nn.BatchNorm1d"),
])
def test_scenarios_are_deterministic(mod, api):
    first = [(s.id, s.dtypes, s.raises) for s in mod.scenarios(api, None)]
    if hasattr(mod, "_cached"):
        mod._cached.cache_clear()
    else:  # a BlockSource: its scenarios are made again, not served from its cache
        mod.SOURCE.__dict__.pop("_scenarios_cache", None)
    again = [(s.id, s.dtypes, s.raises) for s in mod.scenarios(api, None)]
    assert first and first == again


def test_members_with_an_opinfo_belong_to_the_opinfo_source():
    assert member.scenarios("torch.Tensor.add", None) == []  # an op
    assert "opinfo" in member.why_not("torch.Tensor.add", None) or "op" in member.why_not("torch.Tensor.add", None)
    # a device-specific member is left out with its reason (numpy, apply_ and map_ now
    # answer "raised exactly off the CPU" and run on the CPU copy)
    assert member.scenarios("torch.Tensor.cuda", None) == []
    assert "CUDA device" in member.why_not("torch.Tensor.cuda", None)


def test_why_not_says_why():
    assert "not a torch.distributions" in distribution.why_not("torch.mm", None)
    assert "not a torch.optim" in optim.why_not("torch.mm", None)
    assert "not a torch.nn module" in module.why_not("torch.mm", None)
    assert "no ModuleInfo" in module.why_not("torch.nn.Sequential", None)
    # ModuleInfo's own skip of the device-vs-CPU test, for every dtype
    assert module.scenarios("torch.nn.GroupNorm", None) == []
    assert "test_cpu_gpu_parity" in module.why_not("torch.nn.GroupNorm", None)


def test_member_coverage_of_the_docs_list(docs_names):
    # the other sources' counts are checked by the slow whole-list test below
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        covered = [n for n in docs_names if member.scenarios(n, None)]
    assert len(covered) >= 250  # Tensor / Storage 170, torch.nn members and init 89


def test_module_coverage_of_the_docs_list(docs_names):
    # counted without probing every class (the slow test runs them all)
    from torchparity.scenarios.sources.base import resolve_quiet

    listed = [n for n in docs_names if n.startswith("torch.nn.")]
    with_info = [n for n in listed if module.info_for(resolve_quiet(n)) is not None]
    assert len(with_info) >= 100


@pytest.mark.slow
def test_every_generated_scenario_passes_cpu_against_cpu(docs_names):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from sources_parity import run_sources

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = run_sources(docs_names, "cpu")
    # APIs of the 3,249 listed that each source covers (measured: 108, 216, 476, 259)
    at_least = {"module": 100, "optim": 210, "distribution": 470, "member": 250, "runtime": 90}
    for run in runs:
        assert run.covered >= at_least[run.name], (run.name, run.covered)
        assert run.statuses.get("fail", 0) == 0 and run.statuses.get("error", 0) == 0, run.bad[:10]


def test_offer_asks_every_source_in_order():
    from torchparity.api.resolve import resolve
    from torchparity.scenarios.sources import offer

    api = "torch.distributions.normal.Normal.log_prob"
    got = offer(api, resolve(api).obj)
    assert {sc.source for sc in got.scenarios} == {"distribution"}
    assert got.tried["distribution"].endswith("scenario(s)")
    assert "not a torch.nn module" in got.tried["module"]
    assert "not a member of torch.Tensor" in got.tried["member"]


def test_pass_detail_never_prints_a_tensor_inside_a_dict():
    # printing a device tensor runs ops on the device (min/max for the format): a
    # dict output (the generated sources return many) is shortened like a list
    from torchparity.run.execute import _short

    text = _short({"y": torch.zeros(2, dtype=torch.float64), "n": 3})
    assert text == "{'y': tensor(shape=(2,), dtype=float64, device=cpu), 'n': 3}"


def test_an_api_no_source_runs_carries_its_owners_named_reason():
    from torchparity.app.check import why_none
    from torchparity.scenarios.sources import Offer, all_sources

    tried = {"hand": "no hand-written suite registers it", "fx": "needs a C++ toolchain"}
    owned = Offer(api="torch.x.y", tried=dict(tried), owners=["fx"])
    assert owned.reason == "fx: needs a C++ toolchain"
    assert why_none(owned.tried, owned.reason).en.startswith("No scenario ran: fx: needs a C++ toolchain.")
    assert Offer(api="torch.x.y", tried=dict(tried)).reason == "no scenario source covers this API"
    # every source that declares a domain answers owns() for names in and out of it
    for src in all_sources():
        assert src.owns("torch.no_such_namespace_here.f") is False, src.name
    from torchparity.scenarios.sources import distributed, distsvc
    assert distributed.owns("torch.distributed.all_reduce")
    # an etcd API is distsvc's, which names why it has no scenario, not the collectives'
    etcd = "torch.distributed.elastic.rendezvous.etcd_store.EtcdStore.get"
    assert distsvc.owns(etcd) and not distributed.owns(etcd)


def test_a_code_block_case_is_filed_under_its_source_module():
    # the footprint recorder tells scenario code from the API's by file: a block case's
    # file must be its source module's, not the shared helper's
    from torchparity.scenarios.sources import member, runtime

    (sc,) = member.scenarios("torch.Tensor.is_contiguous", None)
    assert sc.source_file == os.path.join(os.path.dirname(member.__file__), "cases.py")
    # runtime's cases are real functions in its package (runtime/cases.py), not base.py's
    home = os.path.dirname(runtime.__file__)
    scs = runtime.scenarios("torch.autograd.grad", None)
    assert scs and all(os.path.dirname(s.source_file) == home for s in scs)


def test_the_cpu_probe_prints_nothing_into_the_users_terminal(capfd):
    # planning probes every dtype on the CPU in the user's process: what a case prints
    # while it raises (an FX module's traceback on stderr) is no news for the user
    import sys

    from torchparity.scenarios.sources.base import probe

    def noisy(device, dtype):
        print("a traceback an FX module prints", file=sys.stderr)
        print("and something on stdout")
        if dtype != torch.float32:
            raise RuntimeError("Quantize only works on Float Tensor")

    got = probe(noisy, ["float32", "float64"])
    assert got["float32"] is None and isinstance(got["float64"], RuntimeError)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_the_construct_snippet_runs_where_a_member_is_not_implemented():
    """Issue 46: StudentT's 验证命令 raised NotImplementedError on the CPU (its cdf) where
    the case itself names the missing member; the snippet now does as the case does."""
    import contextlib
    import io

    import torch

    from torchparity.scenarios.sources.distribution import _code
    from torchparity.scenarios.sources.distribution import build as B

    code = _code(B.spec_for(torch.distributions.StudentT), "construct")
    code = code.replace("{device}", '"cpu"').replace("{dtype}", "torch.float32")  # as Scenario.snippet fills it
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {})
    assert "'cdf': 'NotImplementedError'" in out.getvalue() and "'log_prob': tensor(" in out.getvalue()


def test_a_member_infinite_everywhere_is_drawn_again_until_part_of_it_is_finite(cpu):
    """Issue 48: ``Pareto.variance`` is infinite for ``alpha <= 2``, which the seeded draw
    gave both batch entries: the case compared infinities only (and the API taken away
    read the same). Its parameters are drawn again until part of the variance is finite,
    and the case observes the API."""
    from torchparity.api.classify import code_objects
    from torchparity.api.resolve import resolve

    api = "torch.distributions.pareto.Pareto.variance"
    (sc,) = distribution.scenarios(api, None)
    cpu_value = sc.fn("cpu", torch.float64)
    assert torch.isfinite(cpu_value).any(), cpu_value
    obj = resolve(api).obj
    res, _ = execute(sc, "float64", cpu, footprint=True, api_obj=obj, api_codes=code_objects(obj))
    assert res.status == "pass" and res.own is not None and res.own.observes is True, (res.detail, res.own)
