"""``torch.distributed`` as a scenario source: collectives run in a world of two ranks.

Each collective, point-to-point and process-group API gets a scenario whose function
starts a world of ``world.WORLD_SIZE`` (2) local rank processes on the device under
test, with that device's collective backend (gloo for the CPU, nccl for cuda, hccl with
torch_npu; for the emulated device gloo over the host memory of its tensors), runs one
body of ``BODIES`` in every rank and returns the per-rank outputs. The CPU reference is
the same function with ``device="cpu"``: the same world, on gloo. Inputs are made on the
CPU, seeded per rank, and moved to the rank's device.

Covered (``APIS``): the collectives (``all_reduce``, ``broadcast``, ``reduce``,
``all_gather``, ``all_gather_into_tensor``, ``reduce_scatter``, ``reduce_scatter_tensor``,
``gather``, ``scatter``, ``all_to_all``, ``all_to_all_single``, ``barrier``, the object
collectives), point to point (``send``/``recv``, ``isend``/``irecv``,
``batch_isend_irecv`` with ``P2POp``), ``ReduceOp``, and the process-group queries
(``new_group``, ``get_rank``, ``get_world_size``, ``get_group_rank``, ``get_global_rank``,
``get_process_group_ranks``, ``is_initialized``). Not here: APIs whose answer is the
backend's name (``get_backend``), launch and rendezvous machinery (``init_process_group``
itself, elastic, ``Store`` classes), DTensor, FSDP, RPC and checkpointing.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import torch

from ...results.models import Text
from ..registry import Scenario
from .base import ModuleSource
from .world import computing_golden

NAME = "distributed"
ORDER = 60
PREFIX = "torch.distributed."
FLOATS = ("float32", "float16", "bfloat16", "float64")
INTS = ("int32", "int64", "int8", "uint8")
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("bool",)
GROUP_DTYPES = ("float32",)  # process-group APIs: one dtype for the tensor they move


def _compute(dtype: torch.dtype) -> torch.dtype:
    """The dtype a body computes in: the case's, or float64 in a case that computes the
    float64 golden (``world.computing_golden``) of a floating one."""
    return torch.float64 if computing_golden() and dtype.is_floating_point else dtype


def _input(rank: int, dtype: torch.dtype, n: int = 4) -> torch.Tensor:
    """Seeded CPU values that differ per rank (the rank seeds its generator); in a golden
    case rounded to ``dtype``, then upcast: the golden starts from the same values."""
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,)).bool()
    if dtype.is_floating_point:
        return torch.randn(n).to(dtype).to(_compute(dtype))
    return torch.randint(0 if dtype == torch.uint8 else -4, 5, (n,)).to(dtype)


def _on(rank, dtype, device, n=4):
    return _input(rank, dtype, n).to(device)


# -- bodies: (rank, world, device, dtype) -> outputs of this rank ---------------------------

def _all_reduce(op_name: str, async_op: bool = False):
    def body(rank, world, device, dtype):
        import torch.distributed as dist

        t = _on(rank, dtype, device)
        work = dist.all_reduce(t, op=getattr(dist.ReduceOp, op_name), async_op=async_op)
        if async_op:
            work.wait()
        return t
    return body


def _broadcast(rank, world, device, dtype):
    import torch.distributed as dist

    t = _on(rank, dtype, device)
    dist.broadcast(t, src=0)
    return t


def _reduce(rank, world, device, dtype):
    import torch.distributed as dist

    t = _on(rank, dtype, device)
    dist.reduce(t, dst=0)
    return t if rank == 0 else None  # what a non-destination rank holds is unspecified


def _all_gather(rank, world, device, dtype):
    import torch.distributed as dist

    outs = [torch.zeros(4, dtype=_compute(dtype)).to(device) for _ in range(world)]
    dist.all_gather(outs, _on(rank, dtype, device))
    return outs


def _all_gather_into_tensor(rank, world, device, dtype):
    import torch.distributed as dist

    out = torch.zeros(4 * world, dtype=_compute(dtype)).to(device)
    dist.all_gather_into_tensor(out, _on(rank, dtype, device))
    return out


def _reduce_scatter(rank, world, device, dtype):
    import torch.distributed as dist

    out = torch.zeros(4, dtype=_compute(dtype)).to(device)
    dist.reduce_scatter(out, [_on(rank, dtype, device) for _ in range(world)])
    return out


def _reduce_scatter_tensor(rank, world, device, dtype):
    import torch.distributed as dist

    out = torch.zeros(4, dtype=_compute(dtype)).to(device)
    dist.reduce_scatter_tensor(out, _on(rank, dtype, device, 4 * world))
    return out


def _gather(rank, world, device, dtype):
    import torch.distributed as dist

    outs = [torch.zeros(4, dtype=_compute(dtype)).to(device) for _ in range(world)] if rank == 0 else None
    dist.gather(_on(rank, dtype, device), gather_list=outs, dst=0)
    return outs


def _scatter(rank, world, device, dtype):
    import torch.distributed as dist

    out = torch.zeros(4, dtype=_compute(dtype)).to(device)
    ins = [_on(rank, dtype, device) for _ in range(world)] if rank == 0 else None
    dist.scatter(out, scatter_list=ins, src=0)
    return out


def _all_to_all(rank, world, device, dtype):
    import torch.distributed as dist

    outs = [torch.zeros(2, dtype=_compute(dtype)).to(device) for _ in range(world)]
    dist.all_to_all(outs, [_on(rank, dtype, device, 2) for _ in range(world)])
    return outs


def _all_to_all_single(rank, world, device, dtype):
    import torch.distributed as dist

    out = torch.zeros(2 * world, dtype=_compute(dtype)).to(device)
    dist.all_to_all_single(out, _on(rank, dtype, device, 2 * world))
    return out


def _all_to_all_single_uneven(rank, world, device, dtype):
    import torch.distributed as dist

    # rank r sends r + 1 elements to every peer: splits differ between ranks
    ins = _on(rank, dtype, device, (rank + 1) * world)
    out = torch.zeros(sum(r + 1 for r in range(world)), dtype=_compute(dtype)).to(device)
    dist.all_to_all_single(out, ins, output_split_sizes=[r + 1 for r in range(world)],
                           input_split_sizes=[rank + 1] * world)
    return out


def _barrier(rank, world, device, dtype):
    import torch.distributed as dist

    t = _on(rank, dtype, device)
    dist.barrier()
    return t


def _send_recv(rank, world, device, dtype):
    import torch.distributed as dist

    t = _on(rank, dtype, device)
    if rank == 0:
        dist.send(t, dst=1)
        return None
    if rank == 1:
        dist.recv(t, src=0)
        return t
    return None


def _isend_irecv(rank, world, device, dtype):
    import torch.distributed as dist

    t = _on(rank, dtype, device)
    if rank == 0:
        dist.isend(t, dst=1).wait()
        return None
    if rank == 1:
        dist.irecv(t, src=0).wait()
        return t
    return None


def _batch_isend_irecv(rank, world, device, dtype):
    import torch.distributed as dist

    send = _on(rank, dtype, device)
    recv = torch.zeros(4, dtype=_compute(dtype)).to(device)
    ops = [dist.P2POp(dist.isend, send, (rank + 1) % world),
           dist.P2POp(dist.irecv, recv, (rank - 1) % world)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    return recv


def _new_group(rank, world, device, dtype):
    import torch.distributed as dist

    group = dist.new_group(ranks=list(range(world)))
    t = _on(rank, dtype, device)
    dist.all_reduce(t, group=group)
    return [t, dist.get_rank(group), dist.get_world_size(group)]


def _group_queries(rank, world, device, dtype):
    import torch.distributed as dist

    group = dist.new_group(ranks=list(reversed(range(world))))
    t = _on(rank, dtype, device)
    dist.broadcast(t, group_src=0, group=group)  # group rank 0 is the last global rank
    return [t, dist.get_rank(), dist.get_world_size(), dist.is_initialized(),
            dist.get_group_rank(group, rank), dist.get_global_rank(group, 0),
            dist.get_process_group_ranks(group)]


def _object(kind: str):
    def body(rank, world, device, dtype):
        import torch.distributed as dist

        obj = {"rank": rank, "values": _input(rank, dtype).tolist()}
        if kind == "broadcast_object_list":
            objs = [obj]
            dist.broadcast_object_list(objs, src=0, device=device)
            return repr(objs)
        if kind == "all_gather_object":
            objs = [None] * world
            dist.all_gather_object(objs, obj)
            return repr(objs)
        if kind == "gather_object":
            objs = [None] * world if rank == 0 else None
            dist.gather_object(obj, objs, dst=0)
            return repr(objs)
        got = [None]
        dist.scatter_object_list(got, [dict(obj, to=r) for r in range(world)] if rank == 0 else None, src=0)
        return repr(got)
    return body


BODIES: Dict[str, Callable[[int, int, str, torch.dtype], Any]] = {
    "all_reduce_sum": _all_reduce("SUM"),
    "all_reduce_max": _all_reduce("MAX"),
    "all_reduce_async": _all_reduce("SUM", async_op=True),
    "all_reduce_product": _all_reduce("PRODUCT"),
    "all_reduce_min": _all_reduce("MIN"),
    "broadcast": _broadcast,
    "reduce": _reduce,
    "all_gather": _all_gather,
    "all_gather_into_tensor": _all_gather_into_tensor,
    "reduce_scatter": _reduce_scatter,
    "reduce_scatter_tensor": _reduce_scatter_tensor,
    "gather": _gather,
    "scatter": _scatter,
    "all_to_all": _all_to_all,
    "all_to_all_single": _all_to_all_single,
    "all_to_all_single_uneven": _all_to_all_single_uneven,
    "barrier": _barrier,
    "send_recv": _send_recv,
    "isend_irecv": _isend_irecv,
    "batch_isend_irecv": _batch_isend_irecv,
    "new_group": _new_group,
    "group_queries": _group_queries,
    "broadcast_object_list": _object("broadcast_object_list"),
    "all_gather_object": _object("all_gather_object"),
    "gather_object": _object("gather_object"),
    "scatter_object_list": _object("scatter_object_list"),
}

# API (after "torch.distributed.") -> [(body, dtypes, what it checks)]
_Row = Tuple[str, Tuple[str, ...], str]
APIS: Dict[str, List[_Row]] = {
    "all_reduce": [("all_reduce_sum", ALL, "sum over the ranks"),
                   ("all_reduce_max", NUMERIC, "max over the ranks"),
                   ("all_reduce_async", ("float32",), "sum with async_op=True, then wait()")],
    "ReduceOp": [("all_reduce_sum", ("float32",), "ReduceOp.SUM"),
                 ("all_reduce_product", ("float32",), "ReduceOp.PRODUCT"),
                 ("all_reduce_min", ("float32",), "ReduceOp.MIN"),
                 ("all_reduce_max", ("float32",), "ReduceOp.MAX")],
    "broadcast": [("broadcast", ALL, "rank 0's tensor on every rank")],
    "reduce": [("reduce", NUMERIC, "sum on rank 0")],
    "all_gather": [("all_gather", ALL, "every rank's tensor on every rank, as a list")],
    "all_gather_into_tensor": [("all_gather_into_tensor", ALL, "every rank's tensor, concatenated")],
    "reduce_scatter": [("reduce_scatter", NUMERIC, "a list reduced, one part per rank")],
    "reduce_scatter_tensor": [("reduce_scatter_tensor", NUMERIC, "a tensor reduced, one part per rank")],
    "gather": [("gather", ALL, "every rank's tensor on rank 0")],
    "scatter": [("scatter", ALL, "rank 0's list, one tensor per rank")],
    "all_to_all": [("all_to_all", ALL, "list i of rank r to rank i")],
    "all_to_all_single": [("all_to_all_single", ALL, "even splits"),
                          ("all_to_all_single_uneven", ("float32",), "uneven split sizes")],
    "barrier": [("barrier", GROUP_DTYPES, "every rank passes it")],
    "send": [("send_recv", ALL, "rank 0 sends, rank 1 receives")],
    "recv": [("send_recv", ALL, "rank 0 sends, rank 1 receives")],
    "isend": [("isend_irecv", ALL, "rank 0 isends, rank 1 irecvs, both wait")],
    "irecv": [("isend_irecv", ALL, "rank 0 isends, rank 1 irecvs, both wait")],
    "batch_isend_irecv": [("batch_isend_irecv", ALL, "a ring: send to the next rank, receive from the previous")],
    "P2POp": [("batch_isend_irecv", GROUP_DTYPES, "P2POp(isend/irecv) through batch_isend_irecv")],
    "new_group": [("new_group", GROUP_DTYPES, "all_reduce in a new group of every rank")],
    "get_rank": [("group_queries", GROUP_DTYPES, "ranks and sizes, world and group")],
    "get_world_size": [("group_queries", GROUP_DTYPES, "ranks and sizes, world and group")],
    "get_group_rank": [("group_queries", GROUP_DTYPES, "global to group rank in a reversed group")],
    "get_global_rank": [("group_queries", GROUP_DTYPES, "group to global rank in a reversed group")],
    "get_process_group_ranks": [("group_queries", GROUP_DTYPES, "the ranks of a reversed group")],
    "is_initialized": [("group_queries", GROUP_DTYPES, "True inside the world")],
    "broadcast_object_list": [("broadcast_object_list", GROUP_DTYPES, "rank 0's object on every rank")],
    "all_gather_object": [("all_gather_object", GROUP_DTYPES, "every rank's object on every rank")],
    "gather_object": [("gather_object", GROUP_DTYPES, "every rank's object on rank 0")],
    "scatter_object_list": [("scatter_object_list", GROUP_DTYPES, "rank 0's objects, one per rank")],
}


def _fn(body: str, dtypes: Tuple[str, ...], golden: bool = False):
    def run(device: str, dtype: torch.dtype):
        from .world import run_world

        return run_world(body, device, dtype, batch=dtypes, golden=golden)
    run.__name__ = f"world_{body}" + ("_golden" if golden else "")
    return run


def _golden(body: str, dtypes: Tuple[str, ...]):
    """The float64 golden of a world case (``Scenario.golden``), computed in the ranks of a
    CPU world (``world.run_world(golden=True)``): inputs made in the case's dtype, the
    collective and its buffers in float64. A dispatch mode in this process would see none
    of the ranks' ops, and the CPU's own float16 sum would pass for the golden."""
    fn = _fn(body, dtypes, golden=True)

    def golden(dtype: torch.dtype):
        return fn("cpu", dtype)
    golden.__name__ = f"float64_golden_{body}"
    return golden


def _code(body: str) -> str:
    return ("from torchparity.scenarios.sources.world import run_world\n"
            f"per_rank = run_world({body!r}, {{device}}, {{dtype}})  # 2 ranks; "
            f"the body is distributed.BODIES[{body!r}]\n")


def scenarios(api: str, obj: Any) -> List[Scenario]:
    if not api.startswith(PREFIX) or api[len(PREFIX):] not in APIS:
        return []
    out = []
    for body, dtypes, what in APIS[api[len(PREFIX):]]:
        out.append(Scenario(
            id=f"world2-{body}", api=api, fn=_fn(body, tuple(dtypes)),
            description=Text(en=f"{api} in a world of 2 ranks on the device's collective backend: {what}",
                             zh=f"{api} 在设备通信后端上的 2 进程组中运行: {what}"),
            expected=Text(en="every rank's result equals the same world's on the CPU (gloo)",
                          zh="每个 rank 的结果与 CPU (gloo) 上同样进程组的结果一致"),
            dtypes=tuple(dtypes), source=NAME, timeout_s=600.0, code=_code(body),
            tags=("distributed",), golden=_golden(body, tuple(dtypes))))
    return out


def owns(api: str) -> bool:
    # its own collectives only: the rest of torch.distributed belongs to sources that name
    # their own reasons (distsvc, distpar)
    return api.startswith(PREFIX) and api[len(PREFIX):] in APIS


def why_not(api: str, obj: Any) -> str:
    if not api.startswith(PREFIX):
        return "not a torch.distributed API"
    return ("not a collective, point-to-point or process-group API the 2-rank harness runs "
            f"(it runs {len(APIS)}: {', '.join(sorted(APIS))})")


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns)
