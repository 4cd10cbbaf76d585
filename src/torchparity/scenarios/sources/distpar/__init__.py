"""Parallelism on top of ``torch.distributed`` as a scenario source: DDP and its comm
hooks, FSDP and ``fully_shard``, ``DeviceMesh`` / ``DTensor`` / tensor parallelism,
pipelining, ZeRO, ``Join`` and distributed checkpointing, in worlds of 2 ranks.

Each world body (``BODIES``: ``ddp``, ``join``, ``zero``, ``fsdp``, ``fully_shard``,
``mesh``, ``pipe``, ``dcp``) runs in a world of ``world`` (2 local rank processes on
127.0.0.1 with the device's collective backend: gloo for the CPU, gloo over host memory
for the emulated device; bounded in time, no orphans, its folder removed). A body builds a
small seeded model on the device, wraps it, runs forward / backward / step (or saves and
loads a checkpoint in the world's folder) and returns ``{part: value}`` per rank; a part
that raises keeps its error and the parts after it still run. Each API is one or more
parts (``APIS``); its scenario runs the body's world once per worker process (the
per-rank outcomes are kept, ``run_world``'s batch) and returns its part of every rank, or
raises the part's error. The CPU reference is the same world on the CPU (gloo).

A few pieces need no world (``LOCAL``): ``nn.parallel.data_parallel``, the micro-batch
helpers of pipelining and the checkpoint stagers run in the worker on the device.

Not here (``WHY_NOT``): APIs that need RPC (``DistributedOptimizer``: the distsvc source asks it) or a fused ring
attention path the CPU does not have (``context_parallel``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Dict, List, Tuple

import torch

from ....results.models import Text
from ...registry import Raises, Scenario
from ..base import FLOATS, ModuleSource, probed
from ..world import case_error
from . import dcp as _distpar_dcp
from . import ddp as _distpar_ddp
from . import fsdp as _distpar_fsdp
from . import mesh as _distpar_mesh
from . import pipe as _distpar_pipe
from .local import LOCAL
from .util import ERROR, in_dtype, not_run

NAME = "distpar"
ORDER = 64
DTYPES = ("float32",)
WORLD_S = 420.0  # one world (a body runs many parts; the machine may be slow)
PREFIXES = ("torch.distributed.", "torch.nn.parallel.")

# each body makes its models and inputs in the case's dtype (``util.in_dtype``)
BODIES: Dict[str, Callable[[int, int, str, torch.dtype], Any]] = {name: in_dtype(body) for name, body in {
    "ddp": _distpar_ddp.ddp,
    "join": _distpar_ddp.join,
    "zero": _distpar_ddp.zero,
    "fsdp": _distpar_fsdp.fsdp,
    "fully_shard": _distpar_fsdp.fully_shard_body,
    "mesh": _distpar_mesh.mesh,
    "pipe": _distpar_pipe.pipe,
    "dcp": _distpar_dcp.dcp_body,
}.items()}

_D = "torch.distributed."
_HOOKS = _D + "algorithms.ddp_comm_hooks."
_FSDP = _D + "fsdp.FullyShardedDataParallel."
_CK = _D + "checkpoint."
_PP = _D + "pipelining."
_ZERO = _D + "optim.ZeroRedundancyOptimizer"
_DDP = "torch.nn.parallel.DistributedDataParallel"
_MESH = _D + "device_mesh.DeviceMesh"
_TP = _D + "tensor.parallel."

# API -> (body, part, what the part does)
APIS: Dict[str, Tuple[str, str, str]] = {}


def _add(body: str, part: str, what: str, *apis: str) -> None:
    for api in apis:
        APIS[api] = (body, part, what)


_add("ddp", "ddp", "DDP over a seeded model: forward, backward, SGD step", _DDP)
_add("ddp", "allreduce_hook", "DDP with register_comm_hook(None, allreduce_hook)",
     _DDP + ".register_comm_hook", _HOOKS + "default_hooks.allreduce_hook")
_add("ddp", "fp16_compress_hook", "DDP gradients all-reduced in float16",
     _HOOKS + "default_hooks.fp16_compress_hook")
_add("ddp", "bf16_compress_hook", "DDP gradients all-reduced in bfloat16",
     _HOOKS + "default_hooks.bf16_compress_hook")
_add("ddp", "noop_hook", "DDP with the no-op hook: gradients stay local", _HOOKS + "debugging_hooks.noop_hook")
_add("ddp", "PowerSGDState", "a PowerSGDState's settings", _HOOKS + "powerSGD_hook.PowerSGDState")
_add("ddp", "powerSGD_hook", "3 DDP steps with PowerSGD (rank 1, from step 2)", _HOOKS + "powerSGD_hook.powerSGD_hook")
_add("ddp", "batched_powerSGD_hook", "3 DDP steps with batched PowerSGD",
     _HOOKS + "powerSGD_hook.batched_powerSGD_hook")
_add("ddp", "fp16_compress_wrapper", "PowerSGD wrapped to communicate in float16",
     _HOOKS + "default_hooks.fp16_compress_wrapper")
_add("ddp", "bf16_compress_wrapper", "PowerSGD wrapped to communicate in bfloat16",
     _HOOKS + "default_hooks.bf16_compress_wrapper")
_add("ddp", "GradBucket", "a hook that reads every GradBucket member and doubles the buffer",
     *(_D + "GradBucket" + m for m in ("", ".buffer", ".gradients", ".index", ".is_last",
                                        ".parameters", ".set_buffer")))
_add("ddp", "no_sync", "a backward under no_sync, then a synchronised one", _DDP + ".no_sync")
_add("ddp", "join", "uneven inputs (rank r sees r + 1 batches) under DDP.join()", _DDP + ".join")
_add("ddp", "join_hook", "DDP.join_hook and Join([ddp]) over uneven inputs", _DDP + ".join_hook")
_add("join", "Join", "a Joinable counter with its JoinHook under Join, uneven inputs",
     *(_D + "algorithms." + n for n in ("Join", "Join.notify_join_context", "JoinHook", "JoinHook.main_hook",
                                        "JoinHook.post_hook", "Joinable", "Joinable.join_device",
                                        "Joinable.join_hook", "Joinable.join_process_group")))
_add("zero", "step", "ZeroRedundancyOptimizer(SGD with momentum): 2 steps, parameters after",
     _ZERO, _ZERO + ".step")
_add("zero", "add_param_group", "a second parameter group added, then a step", _ZERO + ".add_param_group")
_add("zero", "consolidate_state_dict", "consolidate_state_dict(to=0), then state_dict() on rank 0",
     _ZERO + ".consolidate_state_dict", _ZERO + ".state_dict")
_add("zero", "load_state_dict", "the consolidated state loaded into a new optimizer, one more step",
     _ZERO + ".load_state_dict")
_add("zero", "join", "join_hook, join_device and join_process_group under Join, uneven inputs",
     _ZERO + ".join_hook", _ZERO + ".join_device", _ZERO + ".join_process_group",
     # torch's implementation of the abstract property, whose group the case reads (the
     # Join case's Counter is the scenario's own implementation)
     _D + "algorithms.Joinable.join_process_group")
_add("zero", "PostLocalSGDOptimizer", "3 steps averaging every 2, state_dict / load_state_dict",
     *(_D + "optim.PostLocalSGDOptimizer" + m for m in ("", ".step", ".state_dict", ".load_state_dict")))
_add("fsdp", "forward", "FSDP forward / backward, full parameters", _FSDP + "forward")
for _cfg in ("ShardingStrategy", "MixedPrecision", "CPUOffload", "BackwardPrefetch"):
    _add("fsdp", _cfg, f"FSDP built with a {_cfg}: forward / backward", _D + "fsdp." + _cfg)
_add("fsdp", "members", "FSDP's module-level members", *(_FSDP + m for m in (
    "apply", "check_is_root", "fsdp_modules", "module", "named_buffers", "named_parameters")))
_add("fsdp", "forward", "summon_full_params after a backward", _FSDP + "summon_full_params")
_add("fsdp", "clip_grad_norm_", "clip_grad_norm_(0.5) after a backward", _FSDP + "clip_grad_norm_")
_add("fsdp", "no_sync", "a backward under no_sync, then a synchronised one", _FSDP + "no_sync")
_add("fsdp", "register_comm_hook", "NO_SHARD FSDP with the all-reduce comm hook", _FSDP + "register_comm_hook")
_add("fsdp", "state_dict_types", "state_dict under the full, sharded and local state-dict types",
     *(_FSDP + m for m in ("get_state_dict_type", "set_state_dict_type", "state_dict_type")),
     *(_D + "fsdp." + c for c in ("FullStateDictConfig", "ShardedStateDictConfig", "LocalStateDictConfig",
                                  "StateDictConfig", "StateDictSettings", "FullOptimStateDictConfig",
                                  "ShardedOptimStateDictConfig", "LocalOptimStateDictConfig",
                                  "OptimStateDictConfig")))
_add("fsdp", "optim_states", "SGD momentum state through every FSDP optimizer-state helper", *(_FSDP + m for m in (
    "full_optim_state_dict", "sharded_optim_state_dict", "flatten_sharded_optim_state_dict",
    "shard_full_optim_state_dict", "scatter_full_optim_state_dict", "optim_state_dict",
    "optim_state_dict_to_load", "rekey_optim_state_dict")))
_add("fully_shard", "fully_shard", "fully_shard per layer and at the root: backward, SGD step",
     _D + "fsdp.fully_shard")
_add("mesh", "DeviceMesh", "a 1-D DeviceMesh of the device type", _MESH)
for _m in ("get_coordinate", "get_rank", "get_local_rank", "get_group", "get_all_groups", "from_group"):
    _add("mesh", _m, f"DeviceMesh.{_m} on a 1-D mesh", f"{_MESH}.{_m}")
_add("mesh", "distribute_tensor", "a 4x4 tensor sharded on dim 0", _D + "tensor.distribute_tensor")
_add("mesh", "from_local", "each rank's rows as one DTensor", _D + "tensor.DTensor", _D + "tensor.DTensor.from_local")
_add("mesh", "redistribute", "Shard(1) -> Replicate -> Shard(0)", _D + "tensor.DTensor.redistribute")
_add("mesh", "Shard", "a tensor sharded on dim 1", _D + "tensor.placement_types.Shard")
_add("mesh", "_StridedShard", "a _StridedShard(0, split_factor=2) DTensor made whole",
     _D + "tensor.placement_types._StridedShard")
_add("mesh", "distribute_module", "a replicated module with DTensor inputs", _D + "tensor.distribute_module")
_add("mesh", "parallelize_module", "colwise then rowwise linear layers", _TP + "parallelize_module")
for _s in ("ColwiseParallel", "RowwiseParallel", "PrepareModuleInput", "PrepareModuleOutput", "loss_parallel"):
    _add("mesh", _s, f"{_s} on a small MLP (loss_parallel: cross entropy of class-sharded logits)", _TP + _s)
_add("pipe", "gpipe", "2 stages, 4 micro-batches, GPipe", _PP + "schedules.ScheduleGPipe",
     _PP + "stage.PipelineStage", _PP + "schedules.PipelineScheduleSingle",
     _PP + "schedules.PipelineScheduleSingle.step")
_add("pipe", "1f1b", "2 stages, 4 micro-batches, 1F1B", _PP + "schedules.Schedule1F1B")
_add("pipe", "interleaved_1f1b", "4 stages on 2 ranks, interleaved 1F1B", _PP + "schedules.ScheduleInterleaved1F1B",
     _PP + "schedules.PipelineScheduleMulti", _PP + "schedules.PipelineScheduleMulti.step")
_add("pipe", "looped_bfs", "4 stages on 2 ranks, looped BFS", _PP + "schedules.ScheduleLoopedBFS")
_add("pipe", "interleaved_zero_bubble", "4 stages on 2 ranks, interleaved zero bubble",
     _PP + "schedules.ScheduleInterleavedZeroBubble")
_add("pipe", "traced", "pipeline() split at a SplitPoint, build_stage, GPipe", _PP + "pipeline", _PP + "Pipe",
     _PP + "SplitPoint", _PP + "stage.build_stage")
_add("pipe", "split", "pipeline() split where forward calls pipe_split(), build_stage, GPipe",
     _PP + "pipe_split")
_add("dcp", "round_trip", "save then load a model, a Stateful, a per-rank tensor and an int",
     _CK + "state_dict_saver.save", _CK + "stateful.Stateful", _CK + "stateful.Stateful.state_dict",
     _CK + "stateful.Stateful.load_state_dict", _CK + "FileSystemWriter", _CK + "FileSystemReader",
     _CK + "DefaultLoadPlanner", _CK + "LoadPlanner", _CK + "StorageReader", _CK + "StorageWriter")
_add("dcp", "legacy", "save_state_dict / load_state_dict (the deprecated names)",
     _CK + "state_dict_saver.save_state_dict", _CK + "state_dict_loader.load_state_dict")
# the records of the round trip: what each planner / storage method returned
for _rec, _api in (
        ("SavePlanner.set_up_planner", "SavePlanner.set_up_planner"),
        ("SavePlanner.create_local_plan", "SavePlanner.create_local_plan"),
        ("SavePlanner.create_global_plan", "SavePlanner.create_global_plan"),
        ("SavePlanner.finish_plan", "SavePlanner.finish_plan"),
        ("SavePlanner.resolve_data", "SavePlanner.resolve_data"),
        ("DefaultSavePlanner.lookup_object", "DefaultSavePlanner.lookup_object"),
        ("DefaultSavePlanner.transform_object", "DefaultSavePlanner.transform_object"),
        ("SavePlan", "SavePlan"), ("WriteItem", "planner.WriteItem"),
        ("WriteItem.tensor_storage_size", "planner.WriteItem.tensor_storage_size"),
        ("LoadPlanner.set_up_planner", "LoadPlanner.set_up_planner"),
        ("LoadPlanner.create_local_plan", "LoadPlanner.create_local_plan"),
        ("LoadPlanner.create_global_plan", "LoadPlanner.create_global_plan"),
        ("LoadPlanner.finish_plan", "LoadPlanner.finish_plan"),
        ("LoadPlanner.load_bytes", "LoadPlanner.load_bytes"),
        ("LoadPlanner.resolve_tensor", "LoadPlanner.resolve_tensor"),
        ("LoadPlanner.commit_tensor", "LoadPlanner.commit_tensor"),
        ("DefaultLoadPlanner.lookup_tensor", "DefaultLoadPlanner.lookup_tensor"),
        ("DefaultLoadPlanner.transform_tensor", "DefaultLoadPlanner.transform_tensor"),
        ("LoadPlan", "LoadPlan"), ("ReadItem", "ReadItem"),
        ("StorageWriter.reset", "StorageWriter.reset"),
        ("StorageWriter.set_up_storage_writer", "StorageWriter.set_up_storage_writer"),
        ("StorageWriter.prepare_local_plan", "StorageWriter.prepare_local_plan"),
        ("StorageWriter.prepare_global_plan", "StorageWriter.prepare_global_plan"),
        ("StorageWriter.write_data", "StorageWriter.write_data"),
        ("StorageWriter.finish", "StorageWriter.finish"),
        ("StorageWriter.storage_meta", "StorageWriter.storage_meta"),
        ("Writer.validate_checkpoint_id", "StorageWriter.validate_checkpoint_id"),
        ("StorageReader.reset", "StorageReader.reset"),
        ("StorageReader.read_metadata", "StorageReader.read_metadata"),
        ("StorageReader.set_up_storage_reader", "StorageReader.set_up_storage_reader"),
        ("StorageReader.prepare_local_plan", "StorageReader.prepare_local_plan"),
        ("StorageReader.prepare_global_plan", "StorageReader.prepare_global_plan"),
        ("StorageReader.read_data", "StorageReader.read_data"),
        ("Reader.validate_checkpoint_id", "StorageReader.validate_checkpoint_id")):
    _add("dcp", "round_trip|" + _rec, f"what {_rec.split('.')[-1]} returned during a save / load round trip",
         _CK + _api)
_BTS = _CK + "format_utils.BroadcastingTorchSaveReader"
_add("dcp", "torch_save", "a torch.save file loaded with BroadcastingTorchSaveReader and DynamicMetaLoadPlanner",
     _BTS, _CK + "format_utils.DynamicMetaLoadPlanner")
for _m in ("prepare_global_plan", "prepare_local_plan", "read_data", "read_metadata", "reset",
           "set_up_storage_reader", "validate_checkpoint_id"):
    _add("dcp", "torch_save|" + _m, f"what {_m} returned loading a torch.save file", f"{_BTS}.{_m}")
for _h in ("StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict", "get_state_dict",
           "set_model_state_dict", "set_optimizer_state_dict", "set_state_dict"):
    _add("dcp", _h, f"{_h} on a model after an Adam step", _CK + "state_dict." + _h)

# the API's own refusal, on the CPU as on the device (torch 2.13): API -> (type, message)
RAISES = {
    # DDP.register_comm_hook accepts a bf16 hook only with CUDA + NCCL or XPU + XCCL
    _HOOKS + "default_hooks.bf16_compress_hook": ("TypeError", "BF16 all reduce communication hook required"),
    _HOOKS + "default_hooks.bf16_compress_wrapper": ("TypeError", "BF16 all reduce communication hook required"),
    # batched PowerSGD hands its 2-D Q matrix to an orthogonaliser that wants a batch (3-D)
    _HOOKS + "powerSGD_hook.batched_powerSGD_hook": ("AssertionError", ""),
}

WHY_NOT = {
    _D + "optim.DistributedOptimizer": "needs torch.distributed.rpc and distributed autograd: asked in the "
                                       "distsvc source's RPC world (parameters on the callee's device)",
    _D + "optim.DistributedOptimizer.step": "needs torch.distributed.rpc and distributed autograd: asked in "
                                            "the distsvc source's RPC world (parameters on the callee's device)",
    _D + "tensor.experimental.context_parallel": "ring attention shards only the CUDA flash / efficient "
                                                 "attention kernels; the CPU reference has neither",
}


def _pick(per_rank: List[Any], part: str) -> List[Any]:
    """The part's value of every rank; its error raised as such: a rank's device refusal
    before what its peers raised because of it (a closed pair, a recv timed out), else the
    first rank's."""
    key, _, record = part.partition("|")
    values, errors = [], []
    for rank, entry in enumerate(per_rank):
        value = entry.get(key)
        if record and not (isinstance(value, dict) and ERROR in value):
            value = (entry.get(key + "_reader", {}) if key == "torch_save" else entry).get(record)
        if isinstance(value, dict) and ERROR in value:
            errors.append((rank, value[ERROR]))
        values.append(value)
    if errors:
        # a refused scaffolding step (util.scaffold_step) stays one: "scaffolding refused"
        raise case_error(errors)
    return values


def _world_fn(body: str, part: str, golden: bool = False):
    def run(device: str, dtype: torch.dtype):
        from ..world import run_world

        # one world runs the body in every float dtype (the CPU's probe at planning, then
        # the CPU reference, reuse it in this process); a part that world did not run (an
        # earlier part left it out of step: util.part) runs alone in a world of its own
        per_rank = run_world(f"{NAME}:{body}", device, dtype, batch=FLOATS, timeout_s=WORLD_S,
                             golden=golden)
        key = part.partition("|")[0]
        if any(not_run(entry.get(key)) for entry in per_rank):
            # (one such world per part and device, every float dtype in it: the APIs that
            # share the part reuse it)
            per_rank = run_world(f"{NAME}:{body}@{key}", device, dtype, batch=FLOATS,
                                 timeout_s=WORLD_S, golden=golden)
        return _pick(per_rank, part)
    run.__name__ = f"world_{body}" + ("_golden" if golden else "")
    return run


def _golden(body: str, part: str):
    """The float64 golden of a world case (``Scenario.golden``): the body in a CPU world
    whose models and inputs are made in the case's dtype, then computed on in float64
    (``world.run_world(golden=True)``, ``util.cast``)."""
    fn = _world_fn(body, part, golden=True)

    def golden(dtype: torch.dtype):
        return fn("cpu", dtype)
    golden.__name__ = f"float64_golden_{body}"
    return golden


def _code(body: str, part: str) -> str:
    return ("from torchparity.scenarios.sources.world import run_world\n"
            f"per_rank = run_world('{NAME}:{body}', {{device}}, {{dtype}})  # 2 ranks; "
            f"the body is distpar.BODIES[{body!r}], this API's part: {part!r}\n")


@functools.lru_cache(maxsize=None)
def _scenarios(api: str) -> Tuple[Scenario, ...]:
    if api in LOCAL:
        # one process: asked in every float dtype the CPU runs it in (float16 and bfloat16,
        # the dtypes an Ascend user trains in, included)
        fn, what, tags = LOCAL[api]
        return tuple(probed(
            "local", api, NAME, fn, DTYPES,
            en=f"{api} in one process on the device: {what}",
            zh=f"{api} 在设备上单进程运行: {what}",
            expect_en="the same result as on the CPU", expect_zh="与 CPU 结果一致",
            tags=("distributed",) + tags))
    body, part, what = APIS[api]
    sid = f"world2-{body}-{part.replace('|', '-')}"
    description = Text(en=f"{api} in a world of 2 ranks on the device's collective backend: {what}",
                       zh=f"{api} 在设备通信后端上的 2 进程组中运行: {what}")
    raises = Raises(*RAISES[api]) if api in RAISES else None
    expected = (Text(en=f"raises {raises.type} on every rank, as on the CPU (gloo)",
                     zh=f"每个 rank 都抛出 {raises.type}，与 CPU (gloo) 相同") if raises else
                Text(en="every rank's result equals the same world's on the CPU (gloo)",
                     zh="每个 rank 的结果与 CPU (gloo) 上同样进程组的结果一致"))
    as_given = Scenario(
        id=sid, api=api, fn=_world_fn(body, part), description=description,
        expected=expected, raises=raises, dtypes=DTYPES, source=NAME, timeout_s=900.0,
        code=_code(body, part), tags=("distributed",))
    if raises is not None:  # the API's own refusal, whatever the dtype: nothing to probe
        return (as_given,)
    # every world body builds its model and inputs in the case's dtype (util.in_dtype): asked
    # in every float dtype, float16 and bfloat16 included; the CPU world's answer per dtype
    # (one world for all, at planning) keeps those the API runs in, as for any probed case.
    # A CPU world that answers in no dtype (it cannot start here, it hung) keeps the float32
    # scenario, whose run then says so (a harness error, never a silent gap)
    got = probed(sid, api, NAME, as_given.fn, DTYPES, en=description.en, zh=description.zh,
                 expect_en=expected.en, expect_zh=expected.zh, code=as_given.code,
                 tags=as_given.tags, golden=_golden(body, part))
    return tuple(dataclasses.replace(sc, timeout_s=900.0) for sc in got) or (as_given,)


def scenarios(api: str, obj: Any) -> List[Scenario]:
    if not api.startswith(PREFIXES) or (api not in APIS and api not in LOCAL):
        return []
    return list(_scenarios(api))


def owns(api: str) -> bool:
    return api.startswith(PREFIXES) and (api in APIS or api in LOCAL or api in WHY_NOT)


def why_not(api: str, obj: Any) -> str:
    if not api.startswith(PREFIXES):
        return "not a torch.distributed or torch.nn.parallel API"
    if api in WHY_NOT:
        return WHY_NOT[api]
    return ("not a DDP / FSDP / DTensor / pipelining / ZeRO / Join / checkpoint API the 2-rank "
            "harness runs")


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns)
