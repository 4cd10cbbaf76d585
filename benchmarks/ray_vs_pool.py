"""The Ray executor against the local worker pool, on the same cores.

    python benchmarks/ray_vs_pool.py                 # op_db x {f32, f16, bf16, f64}, emu:ascend-a2
    python benchmarks/ray_vs_pool.py --ops 150 --empty 400

Starts a Ray cluster of two nodes on the loopback, one CPU each, so Ray's two actors get
the same two cores as the pool's two workers; the ratio of the two sweeps' wall times is
then Ray's own overhead (target <= 1.15x). Both sweeps are ``app.sweep`` as users run it
(store, matrix), each into a fresh folder, timed from start to matrix written; cluster
start-up is not on either clock (a cluster outlives many sweeps), each run's worker
start-up is. The two matrices are compared row for row.

Then the scheduler's ceiling: ``--empty`` cases that do nothing (``benchmarks/empty_case.py``)
through each executor, cases per second from the first result to the last (worker
start-up off the clock).

``--ops N`` takes N op_db entries spread evenly over it (a documented subset for a
shared machine); the default is all of them. The load average before and after is
printed: other processes on a shared machine distort both timings.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every Ray address on the loopback
HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
sys.path.insert(0, HERE)

DTYPES = ["float32", "float16", "bfloat16", "float64"]


def start_cluster():
    import ray
    from ray.cluster_utils import Cluster

    node = dict(num_cpus=1, node_ip_address="127.0.0.1", include_dashboard=False)
    nodes = Cluster(initialize_head=True,
                    head_node_args=dict(node, temp_dir=tempfile.mkdtemp(prefix="tpray")))
    nodes.add_node(**node)
    ray.init(address=nodes.address, log_to_driver=False, logging_level="ERROR")
    return ray, nodes


def sweep_rows(executor: str, only, max_samples):
    from torchparity.app.sweep import sweep
    from torchparity.results.sweep_store import open_store

    out = tempfile.mkdtemp(prefix=f"tp-{executor}-")
    start = time.monotonic()
    summary = sweep(out=out, device="emu:ascend-a2", catalogue=True, dtypes=DTYPES,
                    jobs=2, only=only, max_samples=max_samples, executor=executor)
    seconds = time.monotonic() - start
    store = open_store(out)
    rows = sorted((r["api"], r["variant"], r["sample_set"], r["dtype"], r["status"],
                   r["cause"]) for r in store.rows())
    store.close()
    return seconds, summary, rows


def empty_rate(executor, n: int) -> float:
    from torchparity.run.pool import WorkerPool
    from torchparity.run.ray_executor import RayExecutor

    init = {"device": "emu:ascend-a2", "modules": ["empty_case"]}
    runner = (WorkerPool(init, jobs=2) if executor == "local"
              else RayExecutor(init, device_type="npu", emulated=True))
    stamps = []
    runner.run([{"kind": "empty"}] * n, [60.0] * n, lambda e: stamps.append(time.monotonic()))
    assert len(stamps) == n
    return (n - 1) / (stamps[-1] - stamps[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=None, help="N op_db entries spread evenly")
    parser.add_argument("--max-samples", type=int, default=None)
    parser.add_argument("--empty", type=int, default=400, help="empty cases per executor")
    args = parser.parse_args()

    from torchparity.scenarios import opinfo as oi

    keys = [e.key for e in oi.entries()]
    only = None
    if args.ops and args.ops < len(keys):
        step = len(keys) / args.ops
        only = [keys[int(i * step)] for i in range(args.ops)]
    print(f"load average before: {os.getloadavg()}")
    t = time.monotonic()
    ray, nodes = start_cluster()
    print(f"two-node Ray cluster up in {time.monotonic() - t:.1f} s: {ray.cluster_resources()}")
    try:
        local_s, local_sum, local_rows = sweep_rows("local", only, args.max_samples)
        ray_s, ray_sum, ray_rows = sweep_rows("ray", only, args.max_samples)
        print(f"sweep op_db ({len(only or keys)} of {len(keys)} entries) x {len(DTYPES)} dtypes "
              f"on emu:ascend-a2, {local_sum.planned} cases")
        print(f"  local pool (2 workers):      {local_s:7.1f} s  {local_sum.counts}")
        print(f"  Ray, 2 nodes x 1 CPU actor:  {ray_s:7.1f} s  {ray_sum.counts}")
        print(f"  ratio Ray / pool: {ray_s / local_s:.2f}x (target <= 1.15x); "
              f"matrices row for row equal: {ray_rows == local_rows} ({len(ray_rows)} rows)")
        local_rate = empty_rate("local", args.empty)
        ray_rate = empty_rate("ray", args.empty)
        print(f"empty cases ({args.empty}): local pool {local_rate:.0f}/s, Ray {ray_rate:.0f}/s")
    finally:
        ray.shutdown()
        nodes.shutdown()
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
