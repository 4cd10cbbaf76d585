"""World bodies of the ``distpar`` source: ``FullyShardedDataParallel`` (FSDP1), its
configuration classes and optimizer-state helpers, and ``fully_shard`` (FSDP2)."""

from __future__ import annotations

import torch

from .util import inputs, model, part, scaffold_step


def _fsdp(device, **kw):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    m = model(device)
    kw.setdefault("device_id", torch.device(device))  # the CPU too: FSDP asks it be named
    return FSDP(m, use_orig_params=True, **kw)


def _fwd_bwd(f, device, rank, steps=1):
    for i in range(steps):
        f(inputs(device, rank, i)).sum().backward()
    return [p.grad.clone() if p.grad is not None else None for p in f.parameters()]


def _full_params(f):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    with FSDP.summon_full_params(f):
        return [p.detach().clone() for p in f.parameters()]


def fsdp(rank, world, device, dtype):
    from torch.distributed.fsdp import (
        BackwardPrefetch,
        CPUOffload,
        FullOptimStateDictConfig,
        FullStateDictConfig,
        LocalOptimStateDictConfig,
        LocalStateDictConfig,
        MixedPrecision,
        OptimStateDictConfig,
        ShardedOptimStateDictConfig,
        ShardedStateDictConfig,
        ShardingStrategy,
        StateDictConfig,
        StateDictSettings,
        StateDictType,
    )
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    out = {}

    def trained(**kw):
        def run():
            f = _fsdp(device, **kw)
            return {"grads": _fwd_bwd(f, device, rank), "full": _full_params(f)}
        return run

    part(out, "forward", trained())
    part(out, "ShardingStrategy", trained(sharding_strategy=ShardingStrategy.SHARD_GRAD_OP))
    part(out, "MixedPrecision", trained(mixed_precision=MixedPrecision(
        param_dtype=torch.float16, reduce_dtype=torch.float32, buffer_dtype=torch.float32)))
    part(out, "CPUOffload", trained(cpu_offload=CPUOffload(offload_params=False)))
    part(out, "BackwardPrefetch", trained(backward_prefetch=BackwardPrefetch.BACKWARD_POST))

    def members():
        f = _fsdp(device)
        seen = []
        f.apply(lambda mod: seen.append(type(mod).__name__))
        return {"apply": seen, "check_is_root": f.check_is_root(),
                "fsdp_modules": len(FSDP.fsdp_modules(f)), "module": type(f.module).__name__,
                "named_parameters": [(n, tuple(p.shape)) for n, p in f.named_parameters()],
                "named_buffers": [n for n, _ in f.named_buffers()]}
    part(out, "members", members)

    def clip():
        f = _fsdp(device)
        _fwd_bwd(f, device, rank)
        norm = f.clip_grad_norm_(0.5)
        return {"norm": norm, "grads": [None if p.grad is None else p.grad.clone() for p in f.parameters()]}
    part(out, "clip_grad_norm_", clip)

    def no_sync():
        f = _fsdp(device)
        with f.no_sync():
            f(inputs(device, rank, 0)).sum().backward()
        return _fwd_bwd(f, device, rank)
    part(out, "no_sync", no_sync)

    def comm_hook():
        from torch.distributed.algorithms._comm_hooks import default_hooks as hooks

        f = _fsdp(device, sharding_strategy=ShardingStrategy.NO_SHARD)
        f.register_comm_hook(hooks.DefaultState(torch.distributed.group.WORLD), hooks.allreduce_hook)
        return _fwd_bwd(f, device, rank)
    part(out, "register_comm_hook", comm_hook)

    def state_types():
        f = _fsdp(device)
        got = {}
        for kind, cfg, ocfg in ((StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=False),
                                 FullOptimStateDictConfig(rank0_only=False)),
                                (StateDictType.SHARDED_STATE_DICT, ShardedStateDictConfig(),
                                 ShardedOptimStateDictConfig()),
                                (StateDictType.LOCAL_STATE_DICT, LocalStateDictConfig(),
                                 LocalOptimStateDictConfig())):
            FSDP.set_state_dict_type(f, kind, cfg, ocfg)
            settings = FSDP.get_state_dict_type(f)
            with FSDP.state_dict_type(f, kind, cfg, ocfg):
                sd = f.state_dict()
            got[kind.name] = {"settings": [type(settings).__name__, settings.state_dict_type.name,
                                           type(settings.state_dict_config).__name__,
                                           type(settings.optim_state_dict_config).__name__,
                                           isinstance(settings.state_dict_config, StateDictConfig),
                                           isinstance(settings.optim_state_dict_config, OptimStateDictConfig),
                                           isinstance(settings, StateDictSettings)],
                              "keys": sorted(sd), "full": kind == StateDictType.FULL_STATE_DICT and
                              [v.detach().clone() for v in sd.values()]}
        return got
    part(out, "state_dict_types", state_types)

    def optim_states():
        # SGD with momentum: one per-element state. FSDP gathers each state name into one
        # reused buffer and keeps views of it, copied out by ``.cpu()`` — a no-op on the
        # CPU, so there every earlier state (Adam's exp_avg) reads the last one gathered
        # (exp_avg_sq): a CPU reference a correct device cannot match (torch 2.13,
        # fsdp/_optim_utils.py, _gather_all_orig_param_state)
        f = _fsdp(device)
        opt = torch.optim.SGD(f.parameters(), lr=0.1, momentum=0.9, foreach=False)
        _fwd_bwd(f, device, rank)
        scaffold_step(opt)
        full = FSDP.full_optim_state_dict(f, opt, rank0_only=False)
        got = {"full_optim_state_dict": _state_summary(full)}
        sharded = FSDP.sharded_optim_state_dict(f, opt)
        got["sharded_optim_state_dict"] = sorted(sharded["state"])
        # the flattened states themselves, not only their keys: keys alone read the same
        # whatever the API put under them (the case did not observe it)
        got["flatten_sharded_optim_state_dict"] = _state_summary(
            FSDP.flatten_sharded_optim_state_dict(sharded, f, opt))
        got["shard_full_optim_state_dict"] = sorted(FSDP.shard_full_optim_state_dict(full, f)["state"])
        got["scatter_full_optim_state_dict"] = sorted(FSDP.scatter_full_optim_state_dict(
            full if rank == 0 else None, f)["state"])
        osd = FSDP.optim_state_dict(f, opt)
        got["optim_state_dict"] = _state_summary(osd)
        to_load = FSDP.optim_state_dict_to_load(f, opt, osd)
        opt.load_state_dict(to_load)
        got["optim_state_dict_to_load"] = sorted(to_load["state"])
        got["rekey_optim_state_dict"] = sorted(FSDP.rekey_optim_state_dict(
            full, torch.distributed.fsdp.OptimStateKeyType.PARAM_ID, f)["state"])
        return got
    part(out, "optim_states", optim_states)
    return out


def _state_summary(sd):
    return {str(k): {n: v.detach().clone() if isinstance(v, torch.Tensor) else v for n, v in s.items()}
            for k, s in sd["state"].items()}


def fully_shard_body(rank, world, device, dtype):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    out = {}

    def run():
        mesh = init_device_mesh(device.split(":")[0], (world,))
        m = model(device)
        for layer in m:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer, mesh=mesh)
        fully_shard(m, mesh=mesh)
        opt = torch.optim.SGD(m.parameters(), lr=0.1, foreach=False)
        m(inputs(device, rank, 0)).sum().backward()
        grads = [p.grad.full_tensor() for p in m.parameters()]
        scaffold_step(opt)
        return {"grads": grads, "params": [p.detach().full_tensor() for p in m.parameters()],
                "local_shapes": [tuple(p.to_local().shape) for p in m.parameters()]}
    part(out, "fully_shard", run)
    return out
