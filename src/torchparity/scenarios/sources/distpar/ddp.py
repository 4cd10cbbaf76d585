"""World bodies of the ``distpar`` source: DDP with its comm hooks, ``Join``, ZeRO and
post-local SGD. Each body runs in every rank of a 2-rank world (``world``) and
returns ``{part: value}``; a part that raises is kept as its error (``distpar.util.part``)
so the parts after it still run.

Models are seeded alike on every rank (built on the CPU, then moved to the device); the
inputs differ per rank (seeded with the rank), so what the collectives do is visible.
"""

from __future__ import annotations

import torch

from .util import cast, inputs, model, part, sgd_step


def _ddp(device, **kw):
    from torch.nn.parallel import DistributedDataParallel as DDP

    return DDP(model(device), **kw)


def _grads(m):
    return [p.grad.clone() for p in m.parameters()]


def _train(ddp, device, rank, steps=1):
    for i in range(steps):
        ddp(inputs(device, rank, i)).sum().backward()
    return _grads(ddp.module)


def ddp(rank, world, device, dtype):
    from torch.distributed.algorithms.ddp_comm_hooks import debugging_hooks as dbg
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as hooks
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd

    out = {}

    def plain():
        d = _ddp(device)
        grads = _train(d, device, rank)
        return {"grads": grads, "after_step": sgd_step(d.module)}
    part(out, "ddp", plain)

    def with_hook(hook, state=None, steps=1):
        def run():
            d = _ddp(device)
            d.register_comm_hook(state, hook)
            return _train(d, device, rank, steps)
        return run

    part(out, "allreduce_hook", with_hook(hooks.allreduce_hook))
    part(out, "fp16_compress_hook", with_hook(hooks.fp16_compress_hook))
    part(out, "bf16_compress_hook", with_hook(hooks.bf16_compress_hook))
    part(out, "noop_hook", with_hook(dbg.noop_hook))

    def psgd_state(**kw):
        return psgd.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                                  start_powerSGD_iter=2, min_compression_rate=0.5,
                                  use_error_feedback=True, warm_start=True, random_seed=0, **kw)

    def state_fields():
        s = psgd_state()
        return {k: getattr(s, k) for k in ("matrix_approximation_rank", "start_powerSGD_iter",
                                           "use_error_feedback", "warm_start", "iter")}
    part(out, "PowerSGDState", state_fields)
    part(out, "powerSGD_hook", with_hook(psgd.powerSGD_hook, psgd_state(), steps=3))
    part(out, "batched_powerSGD_hook", with_hook(psgd.batched_powerSGD_hook, psgd_state(), steps=3))
    part(out, "fp16_compress_wrapper",
         with_hook(hooks.fp16_compress_wrapper(psgd.powerSGD_hook), psgd_state(), steps=3))
    part(out, "bf16_compress_wrapper",
         with_hook(hooks.bf16_compress_wrapper(psgd.powerSGD_hook), psgd_state(), steps=3))

    def bucket_hook():
        seen = []

        def hook(state, bucket):
            seen.append({"type": type(bucket).__name__, "index": bucket.index(), "is_last": bucket.is_last(),
                         "buffer": bucket.buffer().clone(),
                         "gradients": [g.clone() for g in bucket.gradients()],
                         "parameters": [tuple(p.shape) for p in bucket.parameters()]})
            bucket.set_buffer(bucket.buffer() * 2)  # the reduced grads come out doubled
            return hooks.allreduce_hook(state, bucket)
        d = _ddp(device)
        d.register_comm_hook(None, hook)
        return {"grads": _train(d, device, rank), "buckets": seen}
    part(out, "GradBucket", bucket_hook)

    def no_sync():
        d = _ddp(device)
        with d.no_sync():
            d(inputs(device, rank, 0)).sum().backward()
        local = _grads(d.module)
        d(inputs(device, rank, 1)).sum().backward()
        return {"local": local, "synced": _grads(d.module)}
    part(out, "no_sync", no_sync)

    def uneven():  # rank r sees r + 1 batches; join() shadows the missing all-reduces
        d = _ddp(device)
        with d.join():
            for i in range(rank + 1):
                d(inputs(device, rank, i)).sum().backward()
        return _grads(d.module)
    part(out, "join", uneven)

    def join_hook():
        from torch.distributed.algorithms import Join

        d = _ddp(device)
        hook = d.join_hook(divide_by_initial_world_size=True)
        with Join([d]):
            for i in range(rank + 1):
                d(inputs(device, rank, i)).sum().backward()
        return {"hook": type(hook).__name__, "grads": _grads(d.module)}
    part(out, "join_hook", join_hook)
    return out


def _counter(device):
    """A ``Joinable`` counting the inputs every rank saw (the pattern of torch's docs):
    a rank that ran out of inputs shadows the count's all-reduce with zeros."""

    from torch.distributed.algorithms import Join, Joinable, JoinHook

    class CounterHook(JoinHook):
        def __init__(self, counter):
            self.counter = counter
            self.mains = 0

        def main_hook(self):
            self.mains += 1
            torch.distributed.all_reduce(torch.zeros(1).to(self.counter.device))

        def post_hook(self, is_last_joiner: bool):
            self.counter.last = is_last_joiner

    class Counter(Joinable):
        def __init__(self):
            super().__init__()
            self.device = torch.device(device)
            self.total = torch.zeros(1).to(device)
            self.last = None
            self.hook = None

        def __call__(self):
            Join.notify_join_context(self)
            t = torch.ones(1).to(self.device)
            torch.distributed.all_reduce(t)
            self.total += t

        def join_hook(self, **kwargs):
            self.hook = CounterHook(self)
            return self.hook

        @property
        def join_device(self):
            return self.device

        @property
        def join_process_group(self):
            return torch.distributed.group.WORLD

    return Counter()


def join(rank, world, device, dtype):
    from torch.distributed.algorithms import Join

    out = {}

    def counted():
        c = _counter(device)
        with Join([c]):
            for _ in range(rank + 2):
                c()
        return {"total": c.total, "last_joiner": c.last, "main_hooks": c.hook.mains,
                "on_its_device": c.join_device == torch.device(device),
                "group_size": c.join_process_group.size()}
    part(out, "Join", counted)
    return out


def _zero(device, **kw):
    from torch.distributed.optim import ZeroRedundancyOptimizer

    m = model(device)
    return m, ZeroRedundancyOptimizer(m.parameters(), optimizer_class=torch.optim.SGD, lr=0.1,
                                      momentum=0.9, **kw)


def zero(rank, world, device, dtype):
    out = {}

    def step():
        m, z = _zero(device)
        for i in range(2):
            z.zero_grad()
            m(inputs(device, rank, i)).sum().backward()
            z.step()
        return [p.detach().clone() for p in m.parameters()]
    part(out, "step", step)

    def add_group():
        m, z = _zero(device, parameters_as_bucket_view=False)
        extra = cast(torch.nn.Linear(2, 2), device)
        z.add_param_group({"params": list(extra.parameters()), "lr": 0.05})
        (m(inputs(device, rank, 0)).sum() + extra(cast(torch.ones(1, 2), device)).sum()).backward()
        z.step()
        return {"groups": len(z.param_groups), "extra": [p.detach().clone() for p in extra.parameters()]}
    part(out, "add_param_group", add_group)

    def consolidated():
        m, z = _zero(device)
        m(inputs(device, rank, 0)).sum().backward()
        z.step()
        z.consolidate_state_dict(to=0)
        sd = z.state_dict() if rank == 0 else None
        return None if sd is None else {"param_groups": len(sd["param_groups"]),
                                        "state": {k: v["momentum_buffer"] for k, v in sd["state"].items()}}
    part(out, "consolidate_state_dict", consolidated)

    def reload():
        m, z = _zero(device)
        m(inputs(device, rank, 0)).sum().backward()
        z.step()
        z.consolidate_state_dict(to=0)
        sd = z.state_dict() if rank == 0 else None
        import torch.distributed as dist

        box = [sd]
        dist.broadcast_object_list(box, src=0)  # the consolidated dict, to every rank
        m2, z2 = _zero(device)
        z2.load_state_dict(box[0])
        m2(inputs(device, rank, 1)).sum().backward()
        z2.step()
        return [p.detach().clone() for p in m2.parameters()]
    part(out, "load_state_dict", reload)

    def joined():
        from torch.distributed.algorithms import Join

        m, z = _zero(device)
        hook = z.join_hook()
        with Join([z]):  # the same number of steps on every rank (ZeRO's shadow step
            for i in range(2):  # alone, without DDP, does not match a live rank's broadcasts)
                z.zero_grad()
                m(inputs(device, rank, i)).sum().backward()
                z.step()
        return {"hook": type(hook).__name__, "on_its_device": z.join_device.type == torch.device(device).type,
                "group_size": z.join_process_group.size(),
                "params": [p.detach().clone() for p in m.parameters()]}
    part(out, "join", joined)

    def post_local():
        from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
        from torch.distributed.optim import PostLocalSGDOptimizer

        m = model(device)
        opt = PostLocalSGDOptimizer(torch.optim.SGD(m.parameters(), lr=0.1),
                                    PeriodicModelAverager(period=2, warmup_steps=0))
        for i in range(3):
            opt.zero_grad()
            m(inputs(device, rank, i)).sum().backward()
            opt.step()
        sd = opt.state_dict()
        opt2 = PostLocalSGDOptimizer(torch.optim.SGD(m.parameters(), lr=0.1),
                                     PeriodicModelAverager(period=2, warmup_steps=0))
        opt2.load_state_dict(sd)
        return {"params": [p.detach().clone() for p in m.parameters()],
                "step": sd.get("step"), "reloaded_step": opt2.averager.step}
    part(out, "PostLocalSGDOptimizer", post_local)
    return out
