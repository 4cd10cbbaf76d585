"""The nnutil source: torch.nn utilities and containers, torch.utils.data and
torch.utils.checkpoint used on the device and compared with the CPU."""

from __future__ import annotations

import pytest
import torch

from tests.devices.emulator.helpers import run_python
from torchparity.api.resolve import maybe_resolve
from torchparity.run.execute import execute
from torchparity.scenarios.sources import nnutil, offer


def test_every_case_names_an_api_of_this_torch():
    unresolved = [api for api in nnutil.members() if maybe_resolve(api) is None]
    assert unresolved == []


def test_other_namespaces_are_answered_without_work():
    assert nnutil.scenarios("torch.abs", torch.abs) == []
    assert nnutil.scenarios("torch.nn.parallel.DistributedDataParallel", None) == []
    assert "not torch.nn" in nnutil.why_not("torch.abs", torch.abs)
    assert "CUDA-only" in nnutil.why_not("torch.nn.functional.scaled_mm", None)


def test_offer_reaches_the_source_with_stable_ids():
    found = offer("torch.nn.utils.clip_grad_norm_", torch.nn.utils.clip_grad_norm_)
    mine = [sc for sc in found.scenarios if sc.source == "nnutil"]
    assert [sc.id for sc in mine] == ["use"] and mine[0].dtypes == ("float32", "float64", "float16", "bfloat16")
    assert found.tried["nnutil"] == "1 scenario(s)"
    assert "clip_grad_norm_(net.parameters()" in mine[0].snippet('"npu"')


def test_random_pruning_is_tagged_and_judged_by_property(cpu):
    (sc,) = nnutil.scenarios("torch.nn.utils.prune.RandomStructured.compute_mask", None)
    assert "random" in sc.tags
    result, _ = execute(sc, "float32", cpu)
    assert result.status == "pass", result.detail


@pytest.mark.parametrize("api", ["torch.nn.utils.prune.RandomUnstructured.compute_mask",
                                 "torch.nn.utils.prune.RandomUnstructured.apply",
                                 "torch.nn.utils.prune.RandomStructured.compute_mask"])
def test_a_random_mask_is_judged_by_facts_no_draw_decides(api):
    """The facts a random method's mask is judged by are the same whatever it drew (the
    device draws other numbers than the CPU): an unstructured method's mask is judged by
    how many entries are zero, not by how many whole rows the draw happened to zero."""
    (sc,) = nnutil.scenarios(api, None)
    seen = set()
    for seed in range(40):
        torch.manual_seed(seed)
        seen.add(repr(sc.fn("cpu", torch.float32)))
    assert len(seen) == 1, sorted(seen)[:2]


@pytest.mark.parametrize("api", ["torch.utils.data.DataLoader", "torch.nn.utils.rnn.PackedSequence.to",
                                 "torch.utils.checkpoint.checkpoint"])
def test_cases_pass_on_the_cpu_against_itself(cpu, api):
    (sc,) = nnutil.scenarios(api, None)
    result, _ = execute(sc, "float32", cpu)
    assert result.status == "pass", result.detail


def test_cases_on_the_emulated_ascend_device(tmp_path):
    out = run_python("""
        from torchparity.devices import get_adapter
        from torchparity.run.execute import execute
        from torchparity.scenarios.sources import nnutil
        adapter = get_adapter("emu:ascend-a2")
        adapter.setup()
        for api, dtype in [("torch.nn.utils.clip_grad_norm_", "float32"),
                           ("torch.nn.utils.clip_grad_norm_", "float64"),
                           ("torch.nn.utils.rnn.pack_padded_sequence", "float32"),
                           ("torch.utils.data.DataLoader", "float32"),
                           ("torch.utils.checkpoint.checkpoint", "float32"),
                           ("torch.nn.utils.prune.L1Unstructured.apply", "float32"),
                           ("torch.nn.functional.dropout", "float16"),
                           ("torch.nn.EmbeddingBag", "float32")]:
            (sc,) = nnutil.scenarios(api, None)
            result, _ = execute(sc, dtype, adapter)
            print(api, dtype, result.status, result.emulated, (result.detail or "")[:200])
        """, tmp_path, timeout=300)
    lines = {tuple(ln.split()[:2]): ln.split()[2:4] for ln in out.splitlines() if ln.startswith("torch.")}
    for key in [("torch.nn.utils.clip_grad_norm_", "float32"), ("torch.nn.utils.rnn.pack_padded_sequence", "float32"),
                ("torch.utils.data.DataLoader", "float32"), ("torch.utils.checkpoint.checkpoint", "float32"),
                ("torch.nn.utils.prune.L1Unstructured.apply", "float32"), ("torch.nn.functional.dropout", "float16")]:
        assert lines[key] == ["pass", "True"], out
    # the A2 profile has no float64 PReLU and no EmbeddingBag: refused, as on the device
    assert lines[("torch.nn.utils.clip_grad_norm_", "float64")] == ["unsupported", "True"], out
    assert lines[("torch.nn.EmbeddingBag", "float32")] == ["unsupported", "True"], out


def test_full_backward_global_hook_is_planned_after_a_plain_one_ran(cpu):
    # torch keeps a process-wide flag once register_module_backward_hook ran, even after
    # its handle is removed; the case starts from a fresh process's state and restores it
    import torch.nn.modules.module as M

    api = "torch.nn.modules.module.register_module_full_backward_hook"
    flag = M._global_is_full_backward_hook
    try:
        M.register_module_backward_hook(lambda *a: None).remove()
        nnutil.SOURCE.__dict__.pop("_scenarios_cache", None)
        (sc,) = nnutil.scenarios(api, None)
        result, _ = execute(sc, "float32", cpu)
        assert result.status == "pass", result.detail
        assert M._global_is_full_backward_hook is False  # put back as it was
    finally:
        M._global_is_full_backward_hook = flag
        nnutil.SOURCE.__dict__.pop("_scenarios_cache", None)


def test_the_golden_is_the_same_body_in_float64():
    (sc,) = nnutil.scenarios("torch.nn.functional.scaled_dot_product_attention", None)
    assert sc.golden is not None and "compute" not in sc.snippet('"cpu"').splitlines()[-1]
    torch.manual_seed(0)
    gold = sc.golden(torch.float32)
    torch.manual_seed(0)
    plain = sc.fn("cpu", torch.float32)
    assert [t.dtype for t in gold] == [torch.float64] * 3 and [t.dtype for t in plain] == [torch.float32] * 3
    torch.testing.assert_close(gold[0].float(), plain[0], atol=1e-4, rtol=1e-4)
