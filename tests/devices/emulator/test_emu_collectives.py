"""torch.distributed on the emulated device: gloo over host views, profile refusals.

A world of one rank (a ``HashStore``, no network, no other process) is enough to see that
every collective reaches the emulated backend with device tensors and writes its result
into them; the 2-rank harness is tested in tests/scenarios/test_distributed_source.py.
"""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from .helpers import run_python


@pytest.fixture
def world1(dev):
    from torchparity.devices.emulator.collectives import register

    dist.init_process_group(register(), store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield dev
    finally:
        dist.destroy_process_group()


@pytest.mark.filterwarnings("ignore:.*is deprecated:FutureWarning")  # torch 2.13 renames
def test_collectives_write_into_device_tensors(world1):
    dev = world1
    x = torch.arange(4.0)
    t = x.to(dev)
    dist.all_reduce(t)
    assert t.device.type == dev
    torch.testing.assert_close(t.cpu(), x)
    dist.broadcast(t, src=0)
    out = torch.zeros(4, device=dev)
    dist.all_gather_into_tensor(out, (x + 1).to(dev))  # torch's all_gather_single path
    torch.testing.assert_close(out.cpu(), x + 1)
    dist.reduce_scatter_tensor(out, (x * 2).to(dev))
    torch.testing.assert_close(out.cpu(), x * 2)
    a2a = torch.zeros(4, device=dev)
    dist.all_to_all_single(a2a, (x - 1).to(dev))
    torch.testing.assert_close(a2a.cpu(), x - 1)
    outs = [torch.zeros(4, device=dev)]
    dist.all_gather(outs, (x * 3).to(dev))
    torch.testing.assert_close(outs[0].cpu(), x * 3)
    dist.barrier()
    assert dist.get_backend() == "torchparity_emu"


def test_a_profile_refuses_a_collective_dtype(tmp_path):
    out = run_python("""
        import torch, torch.distributed as dist
        from torchparity.devices.emulator.collectives import register
        dist.init_process_group(register(), store=dist.HashStore(), rank=0, world_size=1)
        t = torch.ones(3, dtype=torch.float64).to("npu")
        try:
            dist.all_reduce(t)
            print("no refusal")
        except RuntimeError as exc:
            print(exc)
        f = torch.ones(3).to("npu")
        dist.all_reduce(f)  # float32 is listed
        dist.broadcast(t, src=0)  # not listed: default allow
        print("float32 ok", f.cpu().tolist())
        dist.destroy_process_group()
        """, tmp_path, profile_yaml="""
        name: c10d-test
        device_type: npu
        ops:
          c10d.allreduce_:
            dtypes: [float32]
        """)
    assert "\"allreduce_npu\" not implemented for 'Double'" in out
    assert "float32 ok [1.0, 1.0, 1.0]" in out


def test_the_collectives_the_dispatcher_never_sees_are_heard(world1):
    """The emulator's process group is Python: its collectives bypass torch's dispatcher,
    so a rank's footprint recorder hears them through ``observing`` (a C++ backend's
    ``c10d`` ops reach a dispatch mode by themselves); CPU-only and refused calls too."""
    from torchparity.devices.emulator.collectives import observing

    dev = world1
    heard = []
    with observing(lambda op, ts: heard.append((op, [t.dtype for t in ts]))):
        t = torch.ones(3).to(dev)
        dist.all_reduce(t)
        dist.broadcast(t, src=0)
        dist.barrier()
        dist.all_reduce(torch.ones(2))  # host tensors: no device collective
    assert heard == [("c10d.allreduce_", [torch.float32]), ("c10d.broadcast_", [torch.float32]),
                     ("c10d.barrier", [])]
    dist.all_reduce(t)
    assert len(heard) == 3  # closed: no one hears
