"""Injected device faults and device noise (``devices/emulator/faults.py``, ``noise.py``).

Each fault: active on the device (the device result changes the way the bug says) and the
CPU side untouched (the same computation on CPU tensors equals a run without the fault).
In-process through ``faults.injecting`` (a real run sets TORCHPARITY_EMU_FAULT before its
processes start); the environment path, the worker pool and 2-rank worlds are checked by
the slow tests at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from torchparity.devices.emulator import faults, noise


@pytest.fixture
def x():
    torch.manual_seed(0)
    return torch.randn(4, 6)


def _check_cpu(fn, names):
    """fn() on CPU tensors gives the same result with and without the faults."""
    torch.manual_seed(0)
    clean = fn()
    with faults.injecting(names):
        torch.manual_seed(0)
        faulty = fn()
    if isinstance(clean, torch.Tensor):
        assert torch.equal(clean, faulty) and clean.dtype == faulty.dtype
        assert clean.stride() == faulty.stride()
    else:
        assert clean == faulty


@pytest.mark.parametrize("name,eps", [("numeric-1e-2", 1e-2), ("numeric-1e-3", 1e-3),
                                      ("numeric-1e-4", 1e-4)])
def test_numeric_scales_device_elementwise_reduction_matmul(dev, x, name, eps):
    d = x.to(dev)
    with faults.injecting([name]):
        add = (d + 1).cpu()
        red = d.sum(1).cpu()
        mm = (d @ d.t()).cpu()
        ints = (d.long() + 1).cpu()
    torch.testing.assert_close(add, (x + 1) * (1 + eps), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(red, x.sum(1) * (1 + eps), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mm, (x @ x.t()) * (1 + eps), rtol=1e-5, atol=1e-5)
    assert torch.equal(ints, x.long() + 1)  # integer results are not floating results
    assert not torch.equal(add, x + 1)
    _check_cpu(lambda: (x + 1) @ x.t(), [name])


def test_reduce_drop_skips_the_last_element(dev, x):
    d = x.to(dev)
    with faults.injecting(["reduce-drop"]):
        assert torch.allclose(d.sum(1).cpu(), x[:, :-1].sum(1))
        assert torch.allclose(d.amax(0).cpu(), x[:-1].amax(0))
        assert torch.allclose(d.sum().cpu(), x.reshape(-1)[:-1].sum())
        assert torch.allclose(d.mean(dim=1, keepdim=True).cpu(), x[:, :-1].mean(1, keepdim=True))
    _check_cpu(lambda: x.sum(1) + x.mean(), ["reduce-drop"])


def test_dtype_widen_returns_float32(dev, x):
    h = x.half().to(dev)
    with faults.injecting(["dtype-widen"]):
        assert (h + 1).dtype == torch.float32
        assert h.sum().dtype == torch.float32
        assert (x.to(dev) + 1).dtype == torch.float32  # float32 stays float32
    _check_cpu(lambda: x.half() + 1, ["dtype-widen"])


def test_dtype_widen_touches_what_it_widens(dev, x):
    """The oracle's applicability (``touches``) agrees with the device: an op reached only
    as its composite's out= call (rad2deg) and an in-place op keep float16 under the fault
    and are not touched; a functional kernel (neg, celu's elu) is widened and touched."""
    h = x.half().to(dev)
    with faults.injecting(["dtype-widen"]):
        kept = {"aten.rad2deg": torch.rad2deg(h), "aten.deg2rad": torch.deg2rad(h),
                "aten.add_.Tensor": h.clone().add_(1)}
        widened = {"aten.neg": torch.neg(h), "aten.celu": torch.celu(h)}
    for name, out in kept.items():
        assert out.dtype == torch.float16 and not faults.touches("dtype-widen", name), name
    for name, out in widened.items():
        assert out.dtype == torch.float32 and faults.touches("dtype-widen", name), name


def test_numeric_faults_touch_what_they_scale(dev, x):
    """A numeric fault scales floating results only: a comparison's bool result is the
    same under it and ``touches`` says so; sub (isclose's inside) is scaled and touched."""
    d = x.to(dev)
    with faults.injecting(["numeric-1e-2"]):
        kept = {"aten.lt.Tensor": torch.lt(d, torch.full_like(x, 0.5).to(dev)), "aten.isnan.default": torch.isnan(d)}
        scaled = d - 0.25
    assert torch.equal(kept["aten.lt.Tensor"].cpu(), x < 0.5)
    assert torch.equal(kept["aten.isnan.default"].cpu(), torch.isnan(x))
    for name in kept:
        assert not faults.touches("numeric-1e-2", name), name
    assert not torch.allclose(scaled.cpu(), x - 0.25, rtol=1e-3, atol=0)
    assert faults.touches("numeric-1e-2", "aten.sub.Tensor")


def test_strides_touches_new_outputs_only():
    assert faults.touches("strides", "aten.empty_strided")
    assert faults.touches("strides", "aten.neg")
    assert not faults.touches("strides", "aten.transpose.int")  # a view
    assert not faults.touches("strides", "aten.add_.Tensor")  # the result is its input


def test_strides_are_lost(dev, x):
    d = x.to(dev)
    with faults.injecting(["strides"]):
        assert torch.empty_strided((2, 3), (1, 2), device=dev).stride() == (3, 1)
        assert d.t().clone().stride() == (4, 1)  # preserve_format implied (1, 6)
        assert d.t().stride() == (1, 6)  # a view keeps its strides (no new output)
    assert d.t().clone().stride() == (1, 6)
    _check_cpu(lambda: x.t().clone(), ["strides"])


def test_inplace_copy_leaves_the_input(dev, x):
    d = x.to(dev).clone()
    with faults.injecting(["inplace-copy"]):
        d.add_(1)
        d.mul_(2)
    assert torch.equal(d.cpu(), x)
    d.add_(1)
    assert torch.equal(d.cpu(), x + 1)

    def cpu():
        y = x.clone()
        y.add_(1)
        return y
    _check_cpu(cpu, ["inplace-copy"])


def test_grad_zero_zeroes_backward_kernels(dev, x):
    a = x.to(dev).requires_grad_()
    with faults.injecting(["grad-zero"]):
        a.relu().sum().backward()  # threshold_backward
    assert a.grad is not None and not a.grad.cpu().any()

    def cpu():
        b = x.clone().requires_grad_()
        b.relu().sum().backward()
        return b.grad
    _check_cpu(cpu, ["grad-zero"])
    assert cpu().any()


def test_rng_unseeded_ignores_seed_and_generator(dev):
    with faults.injecting(["rng-unseeded"]):
        torch.manual_seed(0)
        a = torch.randn(8, device=dev).cpu()
        torch.manual_seed(0)
        b = torch.randn(8, device=dev).cpu()
        c = torch.empty(8, device=dev).uniform_(generator=torch.Generator().manual_seed(1)).cpu()
        e = torch.empty(8, device=dev).uniform_(generator=torch.Generator().manual_seed(1)).cpu()
    assert not torch.equal(a, b) and not torch.equal(c, e)
    torch.manual_seed(0)
    a = torch.randn(8, device=dev).cpu()
    torch.manual_seed(0)
    assert torch.equal(a, torch.randn(8, device=dev).cpu())
    _check_cpu(lambda: torch.randn(8), ["rng-unseeded"])


def test_memstat_zero_reports_zero(dev):
    keep = torch.empty(1 << 18, device=dev)
    mod = getattr(torch, dev)
    assert mod.memory_allocated() >= keep.numel() * 4
    with faults.injecting(["memstat-zero"]):
        assert mod.memory_allocated() == 0 and mod.max_memory_allocated() == 0
        assert set(mod.memory_stats().values()) == {0}
    assert mod.memory_allocated() >= keep.numel() * 4
    del keep


def test_nan_drop_treats_nan_as_absent(dev):
    z = torch.tensor([1.0, float("nan"), 3.0])
    d = z.to(dev)
    with faults.injecting(["nan-drop"]):
        assert d.max().item() == 3.0 and d.min().item() == 1.0 and d.sum().item() == 4.0
        zero = torch.zeros(3, device=dev)
        assert torch.equal(torch.maximum(d, zero).cpu(), torch.tensor([1.0, 0.0, 3.0]))
    assert torch.isnan(d.max().cpu())
    _check_cpu(lambda: torch.isnan(z.max()).item(), ["nan-drop"])


def test_collective_noop_returns_local_tensors(dev):
    """In a 1-rank-free way: the helpers the collectives use keep the local values."""
    from torchparity.devices.emulator import collectives

    out = torch.zeros(4)
    inp = torch.tensor([1.0, 2.0])
    gloo_target = collectives._gather_local(out, inp)  # noqa: SLF001 (the module's own helper)
    assert torch.equal(out, torch.tensor([1.0, 2.0, 1.0, 2.0])) and gloo_target is not out
    rs = torch.zeros(2)
    collectives._scatter_local(rs, torch.arange(4.0), rank=1, size=2)  # noqa: SLF001
    assert torch.equal(rs, torch.tensor([2.0, 3.0]))
    assert faults.touches("collective-noop", "c10d.allreduce_")
    assert faults.touches("collective-noop", "c10d.reduce_")  # the oracle's survivor (stop 35)
    for op in ("c10d.broadcast_", "c10d.alltoall_base_", "c10d.gather_", "c10d.scatter_"):
        assert faults.touches("collective-noop", op), op  # the seed-1 sample's survivors
    assert not faults.touches("collective-noop", "c10d.barrier")


def test_touches_is_the_applicability_test():
    assert faults.touches("numeric-1e-3", "aten.add.Tensor")
    assert faults.touches("numeric-1e-3", "aten.mm")
    assert not faults.touches("numeric-1e-3", "aten.clone")
    assert faults.touches("reduce-drop", "aten.sum.dim_IntList")
    assert not faults.touches("reduce-drop", "aten.add")
    assert faults.touches("grad-zero", "aten.threshold_backward")
    assert faults.touches("rng-unseeded", "aten.normal_")
    assert faults.touches("rng-unseeded", "aten.native_dropout")
    assert faults.touches("inplace-copy", "aten.add_.Tensor")
    assert not faults.touches("inplace-copy", "aten.copy_")
    assert faults.touches("nan-drop", "aten.max")
    assert faults.touches("strides", "aten.empty_strided")
    assert not faults.touches("memstat-zero", "aten.add")


def test_labels_and_problems():
    env = {faults.ENV: "numeric-1e-3, strides", faults.NUMERICS_ENV: "device"}
    assert faults.labels(env) == ["fault:numeric-1e-3", "fault:strides", "numerics:device"]
    assert faults.problem(env) is None
    assert "unknown fault 'bogus'" in faults.problem({faults.ENV: "strides,bogus"})
    assert "unknown mode" in faults.problem({faults.NUMERICS_ENV: "chip"})
    assert faults.labels({}) == []


def test_noise_stays_within_what_correct_hardware_does(dev):
    torch.manual_seed(0)
    x = torch.randn(64, 300)
    w, im = torch.randn(4, 3, 3, 3), torch.randn(2, 3, 8, 8)
    d = x.to(dev)
    with faults.injecting([], noise=True):
        s = d.sum(1).cpu()
        e = d.exp().cpu()
        c = torch.nn.functional.conv2d(im.to(dev), w.to(dev)).cpu()
        a = (d + 1).cpu()
    gold = x.double()
    assert not torch.equal(s, x.sum(1))  # another order rounds otherwise ...
    torch.testing.assert_close(s.double(), gold.sum(1), rtol=1e-5, atol=1e-4)  # ... within f32
    ulps = ((e.view(torch.int32) - x.exp().view(torch.int32)).abs()).max().item()
    assert 0 < ulps <= 1
    ref = torch.nn.functional.conv2d(im, w)
    assert not torch.equal(c, ref)
    assert ((c - ref).abs().max() / ref.abs().max()).item() < 2e-3  # HF32: 10 mantissa bits
    assert torch.equal(a, x + 1)  # no rule for add: untouched
    with faults.injecting([], noise=True):
        assert torch.equal(x.sum(1), x.sum(1)) and torch.equal(x.exp(), torch.exp(x))


def test_noise_rules_are_data_with_sources():
    data = noise.rules()
    assert data["rules"] and all(r["source"] and r["kind"] in noise.KINDS for r in data["rules"])
    assert "ascend-a2" in data["profiles"]
    assert noise.rules_for("some-other-chip") == []


def _cli(args, env_extra, cwd):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-c", "from torchparity.cli import main; main()", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600)


def test_unknown_fault_is_one_line_exit_2(tmp_path):
    r = _cli(["check", "torch.add", "--device", "emu:ascend-a2", "--out", str(tmp_path / "o")],
             {faults.ENV: "numeric-1e-3,nosuchbug"}, tmp_path)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "nosuchbug" in lines[0] and "Traceback" not in r.stderr


@pytest.mark.slow
def test_fault_reaches_the_worker_pool_and_every_row(tmp_path):
    out = tmp_path / "o"
    r = _cli(["check", "torch.add", "--device", "emu:ascend-a2", "--dtypes", "float32",
              "--max-samples", "2", "--out", str(out)], {faults.ENV: "numeric-1e-3"}, tmp_path)
    report = json.loads((out / "report.json").read_text())
    assert "fault:numeric-1e-3" in report["environment"]["extra"]["injected"]
    rows = [s for a in report["apis"] for s in a["scenarios"]]
    assert rows and all(s["injected"] == ["fault:numeric-1e-3"] for s in rows)
    assert any(s["status"] == "fail" for s in rows), r.stdout[-2000:]


def test_collective_noop_work_answers_with_the_callers_tensors():
    """DDP's reducer and ``Join`` read a collective's result from its work's future, not
    from the tensors they passed: under the fault that future must hold the caller's
    tensors as this rank left them, not the copies gloo reduced."""
    from torchparity.devices.emulator import collectives

    class Work(torch.distributed.Work):  # gloo's work on its copies, reduced or failed
        def __init__(self, value=None, error=None):
            super().__init__()
            self.future, self.error = torch.futures.Future(), error
            self.future.set_result(value) if error is None else self.future.set_exception(error)

        def wait(self, timeout=None):
            if self.error is not None:
                raise self.error
            return True

        def get_future(self):
            return self.future

    mine = [torch.ones(2)]
    work = collectives._noop(Work([torch.full((2,), 3.0)]), mine)  # noqa: SLF001 (the module's own helper)
    assert work.wait()
    assert work.get_future().value()[0] is mine[0]
    with pytest.raises(RuntimeError, match="peer gone"):
        collectives._noop(Work(error=RuntimeError("peer gone")), mine).wait()  # noqa: SLF001


@pytest.mark.slow  # two 2-rank worlds under the fault, ~30 s: .ci/run's slow suite runs it
def test_collective_noop_reaches_ddp_and_join(tmp_path):
    """The oracle: DDP's gradient buckets and ``Join`` take their all-reduce's result from
    the work's future, which still held gloo's reduced copies, so both passed under it."""
    out = tmp_path / "o"
    _cli(["check", "torch.nn.parallel.DistributedDataParallel", "torch.distributed.algorithms.Join",
          "--device", "emu:ascend-a2", "--dtypes", "float32", "--out", str(out), "--no-html", "--gentest", "none"],
         {faults.ENV: "collective-noop"}, tmp_path)
    report = json.loads((out / "report.json").read_text())
    for a in report["apis"]:
        rows = [s for s in a["scenarios"] if s.get("source") == "distpar"]
        assert rows and all(s["status"] == "fail" for s in rows), (a["name"], [(s["status"], s.get("detail")) for s in rows])


@pytest.mark.slow
def test_collective_noop_reaches_the_rank_processes(tmp_path):
    out = tmp_path / "o"
    _cli(["check", "torch.distributed.all_reduce", "--device", "emu:ascend-a2", "--dtypes",
          "float32", "--out", str(out)], {faults.ENV: "collective-noop"}, tmp_path)
    report = json.loads((out / "report.json").read_text())
    rows = [s for a in report["apis"] for s in a["scenarios"] if s.get("source") == "distributed"]
    assert rows and any(s["status"] == "fail" for s in rows)


@pytest.mark.slow
def test_collective_noop_reaches_reduce(tmp_path):
    """The oracle (stop 35): ``dist.reduce`` (the sum on the root) was left alone by the
    fault, so its rows passed under it in every dtype."""
    out = tmp_path / "o"
    _cli(["check", "torch.distributed.reduce", "--device", "emu:ascend-a2", "--dtypes",
          "float32,float16", "--out", str(out), "--no-html", "--gentest", "none"],
         {faults.ENV: "collective-noop"}, tmp_path)
    report = json.loads((out / "report.json").read_text())
    rows = [s for a in report["apis"] for s in a["scenarios"] if s.get("source") == "distributed"]
    assert rows and all(s["status"] == "fail" for s in rows), [(s["status"], s.get("detail")) for s in rows]


@pytest.mark.slow
def test_collective_noop_reaches_all_to_all_and_broadcast(tmp_path):
    """The seed-1 oracle sample: all_to_all_single survived the fault, which left alltoall
    (and broadcast, gather, scatter) alone."""
    out = tmp_path / "o"
    _cli(["check", "torch.distributed.all_to_all_single", "torch.distributed.broadcast", "--device",
          "emu:ascend-a2", "--dtypes", "float32", "--out", str(out), "--no-html", "--gentest", "none"],
         {faults.ENV: "collective-noop"}, tmp_path)
    report = json.loads((out / "report.json").read_text())
    for a in report["apis"]:
        rows = [s for s in a["scenarios"] if s.get("source") == "distributed"]
        assert rows and all(s["status"] == "fail" for s in rows), (a["name"], [(s["status"], s.get("detail")) for s in rows])


@pytest.mark.slow  # a 2-rank pipeline check under the fault, ~45 s: .ci/run's slow suite runs it
def test_collective_noop_reaches_point_to_point_recv(tmp_path):
    """The oracle (stop 33): a pipeline's stages pass activations by send/recv, which the
    fault left alone, so every pipelining schedule survived it. A recv that leaves its
    buffer as it was must turn the schedule's row red."""
    assert faults.touches("collective-noop", "c10d.recv_")
    out = tmp_path / "o"
    _cli(["check", "torch.distributed.pipelining.schedules.ScheduleGPipe", "--device", "emu:ascend-a2",
          "--dtypes", "float32", "--out", str(out), "--no-html", "--gentest", "none"],
         {faults.ENV: "collective-noop"}, tmp_path)
    report = json.loads((out / "report.json").read_text())
    rows = [s for a in report["apis"] for s in a["scenarios"]]
    # red either way: the stage computes on what the buffer held, or reads a garbage shape
    assert rows and all(s["status"] != "pass" for s in rows), [(s["status"], s.get("detail")) for s in rows]


def test_autograd_grad_case_shows_a_widened_accumulation(dev):
    """autograd.grad's runtime case reaches g by two paths, so the engine adds two
    gradients: a device whose add returns float32 for float16 inputs hands back a float32
    gradient (a single path's widened backward result is cast back by the engine)."""
    from torchparity.scenarios.sources.runtime.cases import autograd_grad

    assert [t.dtype for t in autograd_grad(dev, torch.float16)] == [torch.float16] * 5
    with faults.injecting(["dtype-widen"]):
        assert autograd_grad(dev, torch.float16)[0].dtype == torch.float32


def test_noise_repeats_itself_as_a_correct_device_does(dev):
    """The ulp noise is a function of the value it moves: a seeded draw, run twice under
    the noise, is the same twice (before, the direction came from a running generator, and
    the repeat check of a seeded sampler failed a correct device); values still move."""
    x = torch.linspace(0.5, 2.0, 4096)
    a, b = x.clone(), x.clone()
    noise.nudge(a, 2)
    noise.nudge(b, 2)
    assert torch.equal(a, b) and not torch.equal(a, x)
    assert (a.view(torch.int32) - x.view(torch.int32)).abs().max() <= 2
    with faults.injecting([], noise=True):
        draws = []
        for _ in range(2):
            torch.manual_seed(0)
            draws.append(torch.distributions.Laplace(torch.zeros(64).to(dev), torch.ones(64).to(dev)).rsample().cpu())
    assert torch.equal(draws[0], draws[1])


@pytest.mark.parametrize("fault", ["rng-unseeded", "numeric-1e-2", "numeric-1e-4"])
def test_alpha_dropout_case_shows_unseeded_and_scaled_draws(dev, fault):
    """alpha_dropout's nnutil case was mean/std bounds: a device that ignored the seed or
    scaled its results passed. It now draws twice under one seed and checks the formula."""
    from torchparity.scenarios.sources.nnutil.cases import nn_functional_alpha_dropout as case

    def flags():
        torch.manual_seed(0)
        return [v for v in case(dev, torch.float32) if isinstance(v, bool)]
    assert all(flags())
    with faults.injecting([fault]):
        assert not all(flags())
