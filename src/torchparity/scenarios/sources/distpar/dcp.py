"""World bodies of the ``distpar`` source: ``torch.distributed.checkpoint`` — save and
load a state dict of device tensors in the world's folder, through planners and storage
layers that record what each of their methods returned (the default implementations do
the work: the record is what the API produced), and the ``state_dict`` helpers.

The file writer is asked for its serial loader (``per_thread_copy_ahead=0``) on every
device: its default overlapping loader needs device streams, which the emulated device
does not have.
"""

from __future__ import annotations

from typing import Any, Dict, List

import torch

from .util import cast, inputs, model, part, scaffold_step, world_dir


def _items(plan) -> List[Any]:
    return sorted(((getattr(i, "index", None) or i.dest_index).fqn, type(i).__name__, i.type.name)
                  for i in plan.items)


def _value(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if hasattr(v, "getvalue"):  # io.BytesIO of an object
        return len(v.getvalue()) > 0
    return v


def _recorders():
    import torch.distributed.checkpoint as dcp

    log: Dict[str, List[Any]] = {}

    def rec(name, value):
        log.setdefault(name, []).append(value)

    class SavePlanner(dcp.DefaultSavePlanner):
        def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
            rec("SavePlanner.set_up_planner", (sorted(state_dict), is_coordinator))
            return super().set_up_planner(state_dict, storage_meta, is_coordinator)

        def create_local_plan(self):
            plan = super().create_local_plan()
            rec("SavePlanner.create_local_plan", _items(plan))
            rec("SavePlan", type(plan).__name__)
            rec("WriteItem", sorted(type(i).__name__ for i in plan.items))
            rec("WriteItem.tensor_storage_size", sorted((i.index.fqn, i.tensor_storage_size())
                                                        for i in plan.items))
            return plan

        def create_global_plan(self, all_plans):
            plans, meta = super().create_global_plan(all_plans)
            rec("SavePlanner.create_global_plan", ([_items(p) for p in plans], sorted(meta.state_dict_metadata)))
            return plans, meta

        def finish_plan(self, new_plan):
            plan = super().finish_plan(new_plan)
            rec("SavePlanner.finish_plan", _items(plan))
            return plan

        def resolve_data(self, write_item):
            data = super().resolve_data(write_item)
            rec("SavePlanner.resolve_data", (write_item.index.fqn, _value(data)))
            return data

        def lookup_object(self, index):
            obj = super().lookup_object(index)
            rec("DefaultSavePlanner.lookup_object", (index.fqn, _value(obj)))
            return obj

        def transform_object(self, write_item, object):
            data = super().transform_object(write_item, object)
            rec("DefaultSavePlanner.transform_object", (write_item.index.fqn, _value(data)))
            return data

    class LoadPlanner(dcp.DefaultLoadPlanner):
        def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
            rec("LoadPlanner.set_up_planner", (sorted(state_dict), is_coordinator))
            return super().set_up_planner(state_dict, metadata, is_coordinator)

        def create_local_plan(self):
            plan = super().create_local_plan()
            rec("LoadPlanner.create_local_plan", _items(plan))
            rec("LoadPlan", type(plan).__name__)
            rec("ReadItem", sorted((type(i).__name__, i.dest_index.fqn, tuple(i.lengths)) for i in plan.items))
            return plan

        def create_global_plan(self, global_plan):
            plans = super().create_global_plan(global_plan)
            rec("LoadPlanner.create_global_plan", [_items(p) for p in plans])
            return plans

        def finish_plan(self, new_plan):
            plan = super().finish_plan(new_plan)
            rec("LoadPlanner.finish_plan", _items(plan))
            return plan

        def load_bytes(self, read_item, value):
            rec("LoadPlanner.load_bytes", read_item.dest_index.fqn)
            return super().load_bytes(read_item, value)

        def resolve_tensor(self, read_item):
            t = super().resolve_tensor(read_item)
            rec("LoadPlanner.resolve_tensor", (read_item.dest_index.fqn, tuple(t.shape), str(t.dtype)))
            return t

        def commit_tensor(self, read_item, tensor):
            rec("LoadPlanner.commit_tensor", (read_item.dest_index.fqn, tensor.detach().clone()))
            return super().commit_tensor(read_item, tensor)

        def lookup_tensor(self, index):
            t = super().lookup_tensor(index)
            rec("DefaultLoadPlanner.lookup_tensor", (index.fqn, tuple(t.shape)))
            return t

        def transform_tensor(self, read_item, tensor):
            t = super().transform_tensor(read_item, tensor)
            rec("DefaultLoadPlanner.transform_tensor", (read_item.dest_index.fqn, tuple(t.shape)))
            return t

    return log, rec, SavePlanner, LoadPlanner


def _storage(rec):
    import torch.distributed.checkpoint as dcp

    class Writer(dcp.FileSystemWriter):
        def reset(self, checkpoint_id=None):
            rec("StorageWriter.reset", checkpoint_id is not None)
            return super().reset(checkpoint_id)

        def set_up_storage_writer(self, is_coordinator, *args, **kwargs):
            rec("StorageWriter.set_up_storage_writer", is_coordinator)
            return super().set_up_storage_writer(is_coordinator, *args, **kwargs)

        def prepare_local_plan(self, plan):
            got = super().prepare_local_plan(plan)
            rec("StorageWriter.prepare_local_plan", _items(got))
            return got

        def prepare_global_plan(self, plans):
            got = super().prepare_global_plan(plans)
            rec("StorageWriter.prepare_global_plan", [_items(p) for p in got])
            return got

        def write_data(self, plan, planner):
            fut = super().write_data(plan, planner)
            results = fut.wait()
            rec("StorageWriter.write_data", sorted((r.index.fqn, r.size_in_bytes > 0) for r in results))
            return fut

        def finish(self, metadata, results):
            rec("StorageWriter.finish", sorted(metadata.state_dict_metadata))
            return super().finish(metadata, results)

        def storage_meta(self):
            meta = super().storage_meta()
            rec("StorageWriter.storage_meta", type(meta).__name__)
            return meta

    class Reader(dcp.FileSystemReader):
        def reset(self, checkpoint_id=None):
            rec("StorageReader.reset", checkpoint_id is not None)
            return super().reset(checkpoint_id)

        def read_metadata(self, *args, **kwargs):
            meta = super().read_metadata(*args, **kwargs)
            rec("StorageReader.read_metadata", sorted(meta.state_dict_metadata))
            return meta

        def set_up_storage_reader(self, metadata, is_coordinator, *args, **kwargs):
            rec("StorageReader.set_up_storage_reader", is_coordinator)
            return super().set_up_storage_reader(metadata, is_coordinator, *args, **kwargs)

        def prepare_local_plan(self, plan):
            got = super().prepare_local_plan(plan)
            rec("StorageReader.prepare_local_plan", _items(got))
            return got

        def prepare_global_plan(self, plans):
            got = super().prepare_global_plan(plans)
            rec("StorageReader.prepare_global_plan", [_items(p) for p in got])
            return got

        def read_data(self, plan, planner):
            fut = super().read_data(plan, planner)
            fut.wait()
            rec("StorageReader.read_data", _items(plan))
            return fut

    return Writer, Reader


class _Counter:
    """A ``Stateful`` holding a device tensor."""

    def __init__(self, device, start):
        self.value = torch.full((3,), float(start)).to(device)

    def state_dict(self):
        return {"value": self.value}

    def load_state_dict(self, sd):
        self.value.copy_(sd["value"])


def dcp_body(rank, world, device, dtype):
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.stateful import Stateful

    out = {}
    log, rec, SavePlanner, LoadPlanner = _recorders()
    Writer, Reader = _storage(rec)
    path = world_dir(f"dcp-{dtype}")  # one checkpoint per dtype (the dtypes share a world)

    def round_trip():
        m = model(device)
        counter = _Counter(device, 7)
        sd = {"model": m.state_dict(), "counter": counter, "shard": inputs(device, rank, 0)[rank],
              "step": 3}
        dcp.save(sd, checkpoint_id=path, storage_writer=Writer(path, per_thread_copy_ahead=0),
                 planner=SavePlanner())
        rec("Writer.validate_checkpoint_id", Writer.validate_checkpoint_id(path))
        fresh = {"model": {k: torch.zeros_like(v) for k, v in m.state_dict().items()},
                 "counter": _Counter(device, 0), "shard": cast(torch.zeros(4), device), "step": 0}
        dcp.load(fresh, checkpoint_id=path, storage_reader=Reader(path), planner=LoadPlanner())
        rec("Reader.validate_checkpoint_id", Reader.validate_checkpoint_id(path))
        return {"model": fresh["model"], "counter": fresh["counter"].value, "shard": fresh["shard"],
                "step": fresh["step"], "is_stateful": isinstance(counter, Stateful)}
    part(out, "round_trip", round_trip)
    for name, values in log.items():
        out[name] = values

    def legacy():
        sub = world_dir(f"dcp-legacy-{dtype}")
        sd = {"w": inputs(device, rank, 1)[0]}
        dcp.save_state_dict(sd, storage_writer=dcp.FileSystemWriter(sub, per_thread_copy_ahead=0))
        back = {"w": cast(torch.zeros(4), device)}
        dcp.load_state_dict(back, storage_reader=dcp.FileSystemReader(sub))
        return back
    part(out, "legacy", legacy)
    _torch_save(out, rank, device)
    _helpers(out, rank, device)
    return out


def _torch_save(out, rank, device):
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.format_utils import (
        BroadcastingTorchSaveReader,
        DynamicMetaLoadPlanner,
    )

    seen: Dict[str, Any] = {}

    class Reader(BroadcastingTorchSaveReader):
        def read_metadata(self):
            meta = super().read_metadata()
            seen["read_metadata"] = type(meta).__name__
            return meta

        def set_up_storage_reader(self, metadata, is_coordinator):
            seen["set_up_storage_reader"] = is_coordinator
            return super().set_up_storage_reader(metadata, is_coordinator)

        def prepare_local_plan(self, plan):
            got = super().prepare_local_plan(plan)
            seen["prepare_local_plan"] = _items(got)
            return got

        def prepare_global_plan(self, plans):
            got = super().prepare_global_plan(plans)
            seen["prepare_global_plan"] = [_items(p) for p in got]
            return got

        def read_data(self, plan, planner):
            fut = super().read_data(plan, planner)
            seen["read_data"] = _items(plan)
            return fut

        def reset(self, checkpoint_id=None):
            seen["reset"] = checkpoint_id is not None
            return super().reset(checkpoint_id)

    def run():
        path = world_dir("torch-save") + "/model.pt"
        if rank == 0:
            torch.save({"w": torch.arange(4.0), "b": torch.ones(2)}, path)
        dist.barrier()
        sd = {"w": torch.zeros(4).to(device), "b": torch.zeros(2).to(device)}
        dcp.load(sd, storage_reader=Reader(), planner=DynamicMetaLoadPlanner(), checkpoint_id=path)
        seen["validate_checkpoint_id"] = BroadcastingTorchSaveReader.validate_checkpoint_id(path)
        return sd
    part(out, "torch_save", run)
    out["torch_save_reader"] = dict(seen)


def _helpers(out, rank, device):
    from torch.distributed.checkpoint import state_dict as S

    def make():
        m = model(device)
        opt = torch.optim.Adam(m.parameters(), lr=0.1, foreach=False)
        m(inputs(device, rank, 0)).sum().backward()
        scaffold_step(opt)
        return m, opt

    opts = S.StateDictOptions(full_state_dict=True, cpu_offload=False)

    def options():
        m, opt = make()
        return {"model": S.get_model_state_dict(m, options=opts), "fields": (
            opts.full_state_dict, opts.cpu_offload, opts.ignore_frozen_params, opts.strict)}
    part(out, "StateDictOptions", options)
    part(out, "get_model_state_dict", lambda: S.get_model_state_dict(make()[0]))
    part(out, "get_optimizer_state_dict", lambda: _osd(S.get_optimizer_state_dict(*make())))

    def both():
        msd, osd = S.get_state_dict(*make())
        return {"model": msd, "optim": _osd(osd)}
    part(out, "get_state_dict", both)

    def set_model():
        src, _ = make()
        dst = cast(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)), device)
        got = S.set_model_state_dict(dst, S.get_model_state_dict(src))
        return {"missing": got.missing_keys, "params": [p.detach().clone() for p in dst.parameters()]}
    part(out, "set_model_state_dict", set_model)

    def set_optim():
        m, opt = make()
        osd = S.get_optimizer_state_dict(m, opt)
        m2, opt2 = make()
        S.set_optimizer_state_dict(m2, opt2, osd)
        return _osd(S.get_optimizer_state_dict(m2, opt2))
    part(out, "set_optimizer_state_dict", set_optim)

    def set_both():
        m, opt = make()
        msd, osd = S.get_state_dict(m, opt)
        m2, opt2 = make()
        got = S.set_state_dict(m2, opt2, model_state_dict=msd, optim_state_dict=osd)
        return {"missing": got.missing_keys, "params": [p.detach().clone() for p in m2.parameters()]}
    part(out, "set_state_dict", set_both)


def _osd(osd):
    return {"state": {str(k): v for k, v in osd["state"].items()},
            "groups": [{k: v for k, v in g.items() if k != "params"} for g in osd["param_groups"]]}
