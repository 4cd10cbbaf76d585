"""The Ray executor on a real two-node Ray cluster on the loopback (slow: a cluster and
a worker per actor start here). Each node says it has two NPUs (``{"NPU": 2}``), the
stand-in for an Ascend machine; everything stops at the end of the module."""

import os
import shutil
import signal
import tempfile
import threading

import pytest
from support import FIXTURES, require_ray

from torchparity.run.ray_executor import RayExecutor

pytestmark = pytest.mark.slow

NODE = dict(num_cpus=1, resources={"NPU": 2}, node_ip_address="127.0.0.1",
            include_dashboard=False)


@pytest.fixture(scope="module")
def cluster():
    ray = require_ray()
    from ray.cluster_utils import Cluster

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        # keep every Ray address on the loopback (Ray maps 127.0.0.1 to the host's address)
        mp.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # for the nodes' processes
        mp.setattr(ray._private.ray_constants, "ENABLE_RAY_CLUSTER", False)  # and here
        old = os.environ.get("PYTHONPATH", "")  # the nodes' workers import the fixtures
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(FIXTURES), old) if p))
        mp.syspath_prepend(str(FIXTURES))
        temp = tempfile.mkdtemp(prefix="tpray")  # short: Ray's socket paths live in it
        # Ray writes the cluster's address to <default temp>/ray/ray_current_cluster even
        # when the nodes get their own temp_dir; on a clean machine /tmp/ray does not exist,
        # so the default temp dir is ours too (nothing is left under /tmp/ray)
        mp.setenv("RAY_TMPDIR", temp)
        os.makedirs(os.path.join(temp, "ray"), exist_ok=True)
        nodes = Cluster(initialize_head=True,
                        head_node_args=dict(NODE, temp_dir=os.path.join(temp, "ray")))
        try:
            nodes.add_node(**NODE)
            ray.init(address=nodes.address, log_to_driver=False, logging_level="ERROR")
            yield ray
        finally:
            ray.shutdown()
            nodes.shutdown()
            shutil.rmtree(temp, ignore_errors=True)


def _naps(n):
    return [{"kind": "suite", "api": "tp_fixture_ray.target", "scenario": "naps",
             "dtype": "float32"}] * n


def test_an_actor_killed_mid_sweep_costs_its_case_only_and_is_replaced(cluster):
    assert cluster.cluster_resources()["NPU"] == 4
    ex = RayExecutor({"device": "cpu", "modules": ["tp_fixture_ray"]}, device_type="npu")
    assert ex.resources == {"NPU": 1.0}
    events, killed = [], []

    def kill_one():  # every actor has a case while cases are pending
        victim = ex.started[0]["pid"]
        killed.append(victim)
        os.kill(victim, signal.SIGKILL)

    def on_event(event):
        events.append(event)
        if len(events) == 1:
            threading.Timer(0.3, kill_one).start()

    ex.run(_naps(12), [60] * 12, on_event)
    assert killed
    assert sorted(e.index for e in events) == list(range(12))  # none lost, none twice
    crashes = [e for e in events if e.kind == "crash"]
    assert len(crashes) == 1 and crashes[0].detail.startswith("Ray actor died")
    assert all(e.payload["result"]["status"] == "pass" for e in events if e.kind == "result")
    assert len({s["node"] for s in ex.started}) == 2  # both nodes ran cases
    assert ex.spawned == 5  # a replacement was asked for (the others may finish first)


def test_a_sweep_on_the_cluster_gives_the_local_pools_matrix_row_for_row(cluster, tmp_path):
    from torchparity.app.sweep import sweep
    from torchparity.results.sweep_store import open_store

    def rows(executor):
        out = tmp_path / executor
        summary = sweep(out=str(out), device="emu:ascend-a2", apis=["torch.abs", "torch.mul"],
                        dtypes=["float32", "float16", "bfloat16", "float64"], max_samples=3,
                        jobs=2, executor=executor)
        store = open_store(out)
        try:
            got = sorted((r["api"], r["variant"], r["sample_set"], r["dtype"], r["status"],
                          r["cause"], r["emulated"]) for r in store.rows())
        finally:
            store.close()
        return summary, got

    local_summary, local_rows = rows("local")
    ray_summary, ray_rows = rows("ray")
    assert ray_rows == local_rows and len(ray_rows) == local_summary.planned == 8
    assert ray_summary.counts == local_summary.counts
    assert all(r[-1] for r in ray_rows)  # labelled emulated


def test_a_ray_sweep_into_postgres_gives_the_local_sqlite_matrix_row_for_row(cluster, tmp_path,
                                                                           pg_url):
    """Issue 12's whole path: actors on both nodes write one PostgreSQL store; the rows and
    the matrix equal a local-pool sweep into the default SQLite store."""
    import json

    from torchparity.app.sweep import sweep
    from torchparity.results.sweep_store import open_store

    def rows(out, executor, store=None):
        summary = sweep(out=str(out), device="emu:ascend-a2", apis=["torch.abs", "torch.mul"],
                        dtypes=["float32", "float64"], max_samples=2, jobs=2,
                        executor=executor, store=store)
        db = open_store(out, url=store)
        try:
            got = sorted((r["api"], r["variant"], r["sample_set"], r["dtype"], r["status"],
                          r["cause"]) for r in db.rows())
        finally:
            db.close()
        matrix = json.loads((out / "matrix.json").read_text(encoding="utf-8"))["rows"]
        keys = ("device", "api", "variant", "dtype", "status", "cause", "claimed", "source")
        return summary, got, [{k: r[k] for k in keys} for r in matrix]  # not its timings

    _, local_rows, local_matrix = rows(tmp_path / "local", "local")
    ray_summary, ray_rows, ray_matrix = rows(tmp_path / "ray", "ray", store=pg_url)
    assert ray_rows == local_rows and len(ray_rows) == ray_summary.planned == 4
    assert ray_matrix == local_matrix
