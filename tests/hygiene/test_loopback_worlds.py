"""Worlds, stores and rendezvous listen on loopback only.

Read from the kernel's socket table (/proc/net/tcp, /proc/net/tcp6) while the code runs:
every listening socket of this process and of the processes below it must be on
127.0.0.0/8 or ::1. ``TCPStore("127.0.0.1", 0, ..., is_master=True)`` alone listens on
``*:PORT`` (every interface), as does the TCPStore a rendezvous handler starts itself.
"""

import os

import pytest
import torch

from tests.hygiene.sockets import ListenWatch, is_loopback, listening

dist = pytest.importorskip("torch.distributed")
if not dist.is_available():
    pytest.skip("torch.distributed is not built in", allow_module_level=True)


def test_the_address_reader_tells_loopback_from_the_wildcard():
    assert is_loopback("127.0.0.1:80") and is_loopback("[0000:0000:0000:0000:0000:0000:0000:0001]:80")
    assert not is_loopback("0.0.0.0:80") and not is_loopback("[0000:0000:0000:0000:0000:0000:0000:0000]:80")
    assert not is_loopback("10.1.2.3:80")
    store = dist.TCPStore("127.0.0.1", 0, 1, True, wait_for_workers=False)  # torch's own binding
    try:
        found = listening([os.getpid()])
        assert any(addr.endswith(f":{store.port}") for addr in found), found
    finally:
        del store


@pytest.mark.parametrize("libuv", [True, False])
def test_the_store_helper_listens_on_loopback_only(libuv):
    from torchparity.scenarios.sources.distsvc.store import tcp_store

    store = tcp_store(use_libuv=libuv)
    port = store.port
    try:
        found = listening([os.getpid()])
        mine = [a for a in found if a.endswith(f":{store.port}")]
        assert mine and all(is_loopback(a) for a in mine), found
        client = dist.TCPStore("127.0.0.1", store.port, 1, False)
        client.set("k", "v")
        assert store.get("k") == b"v"
        del client
    finally:
        del store
    assert not [a for a in listening([os.getpid()]) if a.endswith(f":{port}")], "not closed"


@pytest.mark.parametrize("case", ["c10d_case", "dynamic_memory_case", "c10d_create_backend_case"])
def test_rendezvous_cases_listen_on_loopback_only(case, monkeypatch):
    """The handler's rank 0 hosts a shared TCPStore; create_backend hosts one: what this
    process listens on is read right after each of those calls returns (the stores are
    alive then), and by a poller meanwhile."""
    from torch.distributed.elastic.rendezvous import c10d_rendezvous_backend as c10d
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import DynamicRendezvousHandler

    from torchparity.scenarios.sources.distsvc import rdzv as R

    seen = {}

    def sampled(fn):
        def call(*args, **kwargs):
            out = fn(*args, **kwargs)
            seen.update(listening([os.getpid()]))
            return out
        return call

    monkeypatch.setattr(c10d, "create_backend", sampled(c10d.create_backend))
    monkeypatch.setattr(DynamicRendezvousHandler, "next_rendezvous",
                        sampled(DynamicRendezvousHandler.next_rendezvous))
    with ListenWatch(period=0.005, tree=False) as watch:
        getattr(R, case)("cpu", torch.float32)
    seen.update(watch.seen)
    assert seen, "the case listened nowhere: the probe missed it"
    assert all(is_loopback(a) for a in seen), seen


def test_a_collective_world_listens_on_loopback_only():
    """A 2-rank gloo world of the distributed source: the store here, gloo in the ranks."""
    from torchparity.scenarios.sources.world import run_world

    seen = {}
    for _ in range(4):  # a rank's gloo listener lives milliseconds: a busy CI machine's poller can miss it
        with ListenWatch(period=0.002) as watch:
            got = run_world("all_reduce_sum", "cpu", torch.float32)
        assert len(got) == 2
        seen.update(watch.seen)
        assert not watch.off_host(), watch.seen
        if len(seen) >= 2:
            break
    assert len(seen) >= 2, seen  # the store and at least one rank's gloo


@pytest.mark.slow
@pytest.mark.parametrize("body", ["pg", "rpc"])
def test_distsvc_worlds_listen_on_loopback_only(body):
    """Process-group set-up (env://) and RPC (TensorPipe) worlds of distsvc."""
    from torchparity.scenarios.sources.distsvc.procs import _run_world

    with ListenWatch() as watch:
        ranks = _run_world(body, "cpu")
    assert all("value" in r for r in ranks), ranks
    assert watch.seen and not watch.off_host(), watch.seen


@pytest.mark.slow
def test_an_elastic_agent_listens_on_loopback_only():
    from torchparity.scenarios.sources.distsvc.agent import agent_case

    with ListenWatch() as watch:
        agent_case("cpu", torch.float32)
    assert watch.seen and not watch.off_host(), watch.seen


def test_world_ranks_are_told_to_listen_on_the_loopback(monkeypatch):
    """NCCL / HCCL / gloo worlds on real devices: the ranks' environment names the loopback
    interface (the listening sockets of NCCL and HCCL cannot be read on a CPU machine)."""
    from torchparity.scenarios.sources import world

    seen = []

    class Started(Exception):
        pass

    def start_rank(entry, args, err, env):
        seen.append(env)
        raise Started

    monkeypatch.setattr(world, "start_rank", start_rank)
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "eth0")  # a user's setting does not leak off-host
    with pytest.raises(Started):
        world._start_world([("cpu", [("all_reduce_sum", "float32")])], 2, 5.0)
    env = seen[0]
    assert env["GLOO_SOCKET_IFNAME"] == "lo" and env["NCCL_SOCKET_IFNAME"] == "lo"
    assert env["HCCL_IF_IP"] == "127.0.0.1" and env["HCCL_SOCKET_IFNAME"] == "lo"
