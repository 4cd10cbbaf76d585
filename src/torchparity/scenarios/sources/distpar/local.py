"""The ``distpar`` pieces that need no world: run in the worker process on the device
(inputs made on the CPU, seeded by the runner, moved)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import torch


def _data_parallel(device, dtype):
    from torch.nn.parallel import data_parallel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        m = torch.nn.Linear(4, 2)
    m = m.to(device=device, dtype=dtype)
    x = torch.randn(3, 4).to(device=device, dtype=dtype)
    # device_ids=None is "every visible device": on the device, its one device, where
    # data_parallel calls the module on its inputs. torch 2.13's data_parallel has no CPU
    # path ("device type could not be determined"), so the CPU reference is the module
    # called on the same inputs: what data_parallel over one device must return.
    if torch.device(device).type == "cpu":
        return m(x)
    return data_parallel(m, x)
    return data_parallel(m, x)


def _chunks(device, dtype):
    from torch.distributed.pipelining.microbatch import (
        TensorChunkSpec,
        split_args_kwargs_into_chunks,
    )

    x = torch.randn(6, 4).to(device=device, dtype=dtype)
    y = torch.randn(2, 6).to(device=device, dtype=dtype)
    args, kwargs = split_args_kwargs_into_chunks((x,), {"y": y}, 3,
                                                 args_chunk_spec=(TensorChunkSpec(0),),
                                                 kwargs_chunk_spec={"y": TensorChunkSpec(1)})
    return {"args": [list(a) for a in args], "kwargs": kwargs}


def _chunk_spec(device, dtype):
    from torch.distributed.pipelining.microbatch import TensorChunkSpec, merge_chunks

    spec = TensorChunkSpec(1)
    parts = [torch.randn(2, 2).to(device=device, dtype=dtype) for _ in range(3)]
    return {"repr": repr(spec), "split_dim": spec.split_dim, "merged": merge_chunks(parts, spec)}


def _merge(device, dtype):
    from torch.distributed.pipelining.microbatch import TensorChunkSpec, merge_chunks

    parts = [{"a": torch.randn(2, 3).to(device=device, dtype=dtype), "n": 1} for _ in range(3)]
    return merge_chunks(parts, {"a": TensorChunkSpec(0), "n": None})


def _stager(sync: bool):
    def run(device, dtype):
        from torch.distributed.checkpoint.staging import AsyncStager, BlockingAsyncStager

        stager = BlockingAsyncStager(cache_staged_state_dict=False)
        sd = {"w": torch.randn(3, 2).to(device=device, dtype=dtype), "step": 4,
              "nested": {"b": torch.arange(3).to(device)}}
        staged = stager.stage(sd)
        if sync:
            stager.synchronize_staging()
        # staged copies live on the CPU on every device: compared as values
        return {"staged": {"w": staged["w"].tolist(), "step": staged["step"],
                           "b": staged["nested"]["b"].tolist()}, "staged_device_types": sorted(
                    {v.device.type for v in (staged["w"], staged["nested"]["b"])}),
                "is_async_stager": isinstance(stager, AsyncStager),
                "should_synchronize_after_execute": stager.should_synchronize_after_execute,
                "source_kept": sd["w"]}
    return run


_ST = "torch.distributed.checkpoint.staging."
_MB = "torch.distributed.pipelining.microbatch."

# API -> (fn(device, dtype), what, extra tags)
LOCAL: Dict[str, Tuple[Callable[[str, Any], Any], str, Tuple[str, ...]]] = {
    "torch.nn.parallel.data_parallel": (_data_parallel, "a seeded Linear on one device", ()),
    _MB + "split_args_kwargs_into_chunks": (_chunks, "args split on dim 0, a kwarg on dim 1, 3 chunks", ()),
    _MB + "TensorChunkSpec": (_chunk_spec, "a spec on dim 1 merging 3 chunks", ()),
    _MB + "merge_chunks": (_merge, "3 chunks of a dict merged on dim 0", ()),
}
for _api, _sync in (("AsyncStager", True), ("AsyncStager.stage", False),
                    ("AsyncStager.synchronize_staging", True),
                    ("AsyncStager.should_synchronize_after_execute", False),
                    ("BlockingAsyncStager", False), ("BlockingAsyncStager.stage", False),
                    ("BlockingAsyncStager.synchronize_staging", True)):
    LOCAL[_ST + _api] = (_stager(_sync), "BlockingAsyncStager stages a state dict of device tensors to "
                         "the CPU" + (", then synchronize_staging()" if _sync else ""), ())
