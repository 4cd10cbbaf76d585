"""World bodies of the ``distpar`` source: ``torch.distributed.pipelining``. Rank r runs
stage r of a 2-stage pipeline (single-stage schedules) or stages r and r + 2 of a 4-stage
one (multi-stage schedules); the last stage computes a squared-error loss against a
target. Every rank returns the last stage's outputs and losses (None elsewhere) and its
stages' gradients."""

from __future__ import annotations

import torch

from .util import cast, inputs, part

N_MICRO = 4


def _layers(n):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return [cast(torch.nn.Linear(4, 4), "cpu") for _ in range(n)]


def _loss(y, target):
    return ((y - target) ** 2).sum()


def _batch(device):
    return inputs(device, 0, 0, rows=8), inputs(device, 0, 1, rows=8)


def _drive(schedule, rank, world, device, stage_mods):
    x, target = _batch(device)
    losses = []
    if rank == 0:
        got = schedule.step(x)
    else:
        got = schedule.step(target=target, losses=losses)
    last = rank == world - 1
    return {"out": got.detach() if last and got is not None else None,
            "losses": [v.detach() for v in losses] if last else None,
            "grads": [p.grad for mod in stage_mods for p in mod.parameters()]}


def pipe(rank, world, device, dtype):
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe, schedules

    out = {}

    def single(kind):
        def run():
            mod = _layers(world)[rank].to(device)
            stage = PipelineStage(mod, rank, world, torch.device(device))
            sched = kind(stage, n_microbatches=N_MICRO, loss_fn=_loss)
            return _drive(sched, rank, world, device, [mod])
        return run

    part(out, "gpipe", single(ScheduleGPipe))
    part(out, "1f1b", single(schedules.Schedule1F1B))

    def multi(kind):
        def run():
            layers = _layers(2 * world)
            mods = [layers[rank].to(device), layers[rank + world].to(device)]
            stages = [PipelineStage(mods[0], rank, 2 * world, torch.device(device)),
                      PipelineStage(mods[1], rank + world, 2 * world, torch.device(device))]
            sched = kind(stages, n_microbatches=N_MICRO, loss_fn=_loss)
            x, target = _batch(device)
            losses = []
            if rank == 0:
                got = sched.step(x, target=target, losses=losses)
            else:
                got = sched.step(target=target, losses=losses)
            last = rank == world - 1  # holds the last stage (2 * world - 1)
            return {"out": got.detach() if last and got is not None else None,
                    "losses": [v.detach() for v in losses] if last else None,
                    "grads": [p.grad for mod in mods for p in mod.parameters()]}
        return run

    part(out, "interleaved_1f1b", multi(schedules.ScheduleInterleaved1F1B))
    part(out, "looped_bfs", multi(schedules.ScheduleLoopedBFS))
    part(out, "interleaved_zero_bubble", multi(schedules.ScheduleInterleavedZeroBubble))

    def traced():
        from torch.distributed.pipelining import SplitPoint, build_stage, pipeline

        seq = torch.nn.Sequential(*_layers(world)).to(device)
        x, target = _batch(device)
        p = pipeline(seq, mb_args=(x.chunk(N_MICRO)[0],), split_spec={"1": SplitPoint.BEGINNING})
        stage_mod = p.get_stage_module(rank)
        stage = build_stage(stage_mod, rank, p.info(), torch.device(device))
        sched = ScheduleGPipe(stage, n_microbatches=N_MICRO, loss_fn=_loss)
        got = _drive(sched, rank, world, device, [stage_mod])
        got["num_stages"] = p.num_stages
        got["pipe_type"] = type(p).__name__
        return got
    part(out, "traced", traced)

    def split():
        # the split point is the pipe_split() call in forward: no split_spec, so without
        # it the module is one stage (num_stages 1, and rank 1 has no stage to build)
        from torch.distributed.pipelining import build_stage, pipe_split, pipeline

        class Split(torch.nn.Module):
            def __init__(self, layers):
                super().__init__()
                self.a, self.b = layers

            def forward(self, x):
                x = self.a(x)
                pipe_split()
                return self.b(x)

        mod = Split(_layers(world)).to(device)
        x, _ = _batch(device)
        p = pipeline(mod, mb_args=(x.chunk(N_MICRO)[0],))
        stage_mod = p.get_stage_module(rank)
        stage = build_stage(stage_mod, rank, p.info(), torch.device(device))
        got = _drive(ScheduleGPipe(stage, n_microbatches=N_MICRO, loss_fn=_loss), rank, world, device,
                     [stage_mod])
        got["num_stages"] = p.num_stages
        return got
    part(out, "split", split)
    return out
