"""World bodies of the ``distpar`` source: ``DeviceMesh``, ``DTensor`` and tensor
parallelism (``parallelize_module`` and its styles), on a 1-D mesh of the device type."""

from __future__ import annotations

import torch

from .util import cast, inputs, part


def _dtype_of(device: str) -> str:
    return device.split(":")[0]


def _tp_model(device):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    return cast(m, device)


def _run_tp(m, device):
    x = inputs(device, 0, 0)  # tensor parallelism wants the same input on every rank
    y = m(x)
    y = y.full_tensor() if hasattr(y, "full_tensor") else y
    y.sum().backward()
    grads = []
    for p in m.parameters():
        g = p.grad
        grads.append(g.full_tensor() if hasattr(g, "full_tensor") else g)
    return {"out": y.detach(), "grads": grads}


def mesh(rank, world, device, dtype):
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
    from torch.distributed.tensor import (
        DTensor,
        Replicate,
        Shard,
        distribute_module,
        distribute_tensor,
    )
    from torch.distributed.tensor.placement_types import _StridedShard

    out = {}
    dt = _dtype_of(device)
    full = torch.arange(16.0).reshape(4, 4).to(dtype)

    def make_mesh():
        m = DeviceMesh(dt, list(range(world)))
        return {"shape": tuple(m.shape), "ndim": m.ndim, "mesh": m.mesh.tolist(),
                "its_device_type": m.device_type == dt, "size": m.size()}
    part(out, "DeviceMesh", make_mesh)
    m = init_device_mesh(dt, (world,), mesh_dim_names=("tp",))
    part(out, "get_coordinate", lambda: m.get_coordinate())
    part(out, "get_rank", lambda: m.get_rank())
    part(out, "get_local_rank", lambda: m.get_local_rank("tp"))

    def group():
        g = m.get_group("tp")
        t = torch.full((2,), float(rank + 1)).to(device)
        dist.all_reduce(t, group=g)
        return {"size": g.size(), "rank": dist.get_rank(g), "sum": t}
    part(out, "get_group", group)
    part(out, "get_all_groups", lambda: [g.size() for g in m.get_all_groups()])

    def from_group():
        fm = DeviceMesh.from_group(dist.group.WORLD, dt)
        d = distribute_tensor(full.to(device), fm, [Shard(0)])
        return {"mesh": fm.mesh.tolist(), "local": d.to_local(), "full": d.full_tensor()}
    part(out, "from_group", from_group)

    def dist_tensor():
        d = distribute_tensor(full.to(device), m, [Shard(0)])
        return {"local": d.to_local(), "placements": str(d.placements), "shape": tuple(d.shape),
                "doubled_sum": (d * 2).sum().full_tensor(), "full": d.full_tensor()}
    part(out, "distribute_tensor", dist_tensor)

    def from_local():
        local = inputs(device, rank, 0)
        d = DTensor.from_local(local, m, [Shard(0)])
        return {"shape": tuple(d.shape), "full": d.full_tensor(), "is_dtensor": isinstance(d, DTensor),
                "replicated": d.redistribute(m, [Replicate()]).to_local()}
    part(out, "from_local", from_local)

    def redistribute():
        d = distribute_tensor(full.to(device), m, [Shard(1)])
        r = d.redistribute(m, [Replicate()])
        back = r.redistribute(m, [Shard(0)])
        return {"shard1_local": d.to_local(), "replicated": r.to_local(), "shard0_local": back.to_local()}
    part(out, "redistribute", redistribute)

    def shard():
        d = distribute_tensor(full.to(device), m, [Shard(1)])
        return {"repr": repr(Shard(1)), "dim": Shard(1).dim, "local": d.to_local(),
                "is_shard": d.placements[0].is_shard(1)}
    part(out, "Shard", shard)

    def strided():
        p = _StridedShard(0, split_factor=2)
        d = DTensor.from_local(inputs(device, rank, 0, rows=4), m, [p])
        return {"repr": repr(p), "full": d.full_tensor(), "is_shard": p.is_shard()}
    part(out, "_StridedShard", strided)

    def dist_module():
        mod = _tp_model(device)
        dm = distribute_module(mod, m, input_fn=lambda mod, args, mesh: tuple(
            DTensor.from_local(a, mesh, [Replicate()]) for a in args))
        return _run_tp(dm, device)
    part(out, "distribute_module", dist_module)
    _parallel(out, m, device, rank)
    return out


def _parallel(out, m, device, rank):
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        PrepareModuleInput,
        PrepareModuleOutput,
        RowwiseParallel,
        loss_parallel,
        parallelize_module,
    )

    def both():
        return _run_tp(parallelize_module(_tp_model(device), m, {"0": ColwiseParallel(), "2": RowwiseParallel()}),
                       device)
    part(out, "parallelize_module", both)
    part(out, "ColwiseParallel", lambda: _run_tp(parallelize_module(
        _tp_model(device), m, {"0": ColwiseParallel(output_layouts=Replicate())}), device))
    part(out, "RowwiseParallel", lambda: _run_tp(parallelize_module(
        _tp_model(device), m, {"2": RowwiseParallel(input_layouts=Replicate())}), device))

    def prepare_input():
        mod = parallelize_module(_tp_model(device), m, PrepareModuleInput(
            input_layouts=(Shard(0),), desired_input_layouts=(Replicate(),), use_local_output=True))
        return mod(inputs(device, rank, 0, rows=2)).detach()  # each rank's rows, gathered
    part(out, "PrepareModuleInput", prepare_input)

    def prepare_output():
        mod = parallelize_module(_tp_model(device), m, PrepareModuleOutput(
            output_layouts=(Replicate(),), desired_output_layouts=(Shard(0),)))
        return mod(inputs(device, 0, 0, rows=4)).detach()  # this rank's rows of the output
    part(out, "PrepareModuleOutput", prepare_output)

    def lossp():
        g = torch.Generator().manual_seed(5)
        logits = cast(torch.randn(4, 6, generator=g), device)
        target = torch.tensor([0, 5, 2, 3]).to(device)
        d = distribute_tensor(logits, m, [Shard(1)]).requires_grad_()
        with loss_parallel():
            loss = torch.nn.functional.cross_entropy(d, target)
            loss.backward()
        return {"loss": loss.full_tensor().detach(), "grad": d.grad.full_tensor()}
    part(out, "loss_parallel", lossp)
