"""The sweep store on PostgreSQL against SQLite (the embedded default), in one run.

    python benchmarks/store_backends.py                  # op_db[:40] x 4 dtypes, emu:ascend-a2
    python benchmarks/store_backends.py --limit 0        # the whole op_db x 4 dtypes

1. The same sweep (first N op_db entries x {float32, float16, bfloat16, float64} on
   ``emu:ascend-a2``) into a fresh SQLite file and into a fresh Postgres database,
   wall-clock from start to matrix written; the two stores must hold the same rows.
2. The store alone: N results written one transaction each (as a sweep writes them), then
   ``done_keys()`` and ``rows()`` read back, on each backend.

Postgres: ``--pg-url`` / ``TORCHPARITY_TEST_PG_URL`` (a server whose user may create
databases), else a throwaway cluster on 127.0.0.1 started here (tests/pgcluster.py) and
stopped at the end: fsync on, ``synchronous_commit=off`` — the durability of the SQLite
store's WAL with ``synchronous=NORMAL`` (a killed process loses nothing, a power cut may
lose the last commits on either). The load average before and after is printed: other processes on a
shared machine distort both timings.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import pgcluster  # noqa: E402

DTYPES = ["float32", "float16", "bfloat16", "float64"]


def timed_sweep(out: str, store, device: str, only, jobs):
    from torchparity.app.sweep import sweep

    start = time.perf_counter()
    summary = sweep(out=out, device=device, catalogue=True, only=only, dtypes=DTYPES, jobs=jobs,
                    store=store)
    return time.perf_counter() - start, summary


def rows_of(location):
    from torchparity.results.sweep_store import open_store

    store = open_store(location, must_exist=True)
    try:
        return sorted((r["api"], r["variant"], r["sample_set"], r["dtype"], r["status"], r["cause"])
                      for r in store.rows())
    finally:
        store.close()


def store_writes(location, n: int):
    from torchparity.results.sweep_store import SweepStore

    store = SweepStore(location)
    start = time.perf_counter()
    for i in range(n):
        store.add(dict(api=f"torch.api{i % 97}", variant=f"v{i}", sample_set="sample_inputs",
                       dtype="float32", status="pass", detail="x" * 80,
                       metric={"name": "max_abs", "value": 1e-6}, counts={"forward": {"pass": 3}},
                       claimed=True, emulated=True, seconds=0.01))
    write = time.perf_counter() - start
    start = time.perf_counter()
    keys, rows = store.done_keys(), store.rows()
    read = time.perf_counter() - start
    store.close()
    assert len(keys) == len(rows) == n
    return write, read


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="emu:ascend-a2")
    ap.add_argument("--limit", type=int, default=40, help="first N op_db entries (0: all)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--pg-url", default=os.environ.get(pgcluster.ENV))
    opts = ap.parse_args()

    from torchparity.scenarios import opinfo as oi

    keys = [e.key for e in oi.entries()]
    only = keys[: opts.limit] if opts.limit else None
    cluster = None
    server = opts.pg_url
    if not server:
        cluster = pgcluster.Cluster(durable=True)
        why = cluster.why_not()
        if why:
            print(f"no PostgreSQL: {why}; set {pgcluster.ENV} or --pg-url")
            return 2
        server = cluster.start()
    print(f"load average before: {os.getloadavg()}")
    try:
        db1, db2 = pgcluster.create_database(server), pgcluster.create_database(server)
        with tempfile.TemporaryDirectory() as tmp:
            lite_s, lite = timed_sweep(f"{tmp}/sqlite", None, opts.device, only, opts.jobs)
            pg_s, pg = timed_sweep(f"{tmp}/pg", db1, opts.device, only, opts.jobs)
            same = rows_of(f"{tmp}/sqlite") == rows_of(db1)
            print(f"sweep op_db[:{len(only or keys)}] x {len(DTYPES)} dtypes on {opts.device}: "
                  f"{lite.planned} cases")
            print(f"  SQLite   {lite_s:7.1f} s")
            print(f"  Postgres {pg_s:7.1f} s   ratio {pg_s / lite_s:.2f}x   same rows: {same}")
            lw, lr = store_writes(f"{tmp}/w.sqlite", opts.writes)
            pw, pr = store_writes(db2, opts.writes)
        print(f"store alone, {opts.writes} results one transaction each, then read back:")
        print(f"  SQLite   write {lw:6.2f} s ({opts.writes / lw:7.0f}/s)  read {lr:5.2f} s")
        print(f"  Postgres write {pw:6.2f} s ({opts.writes / pw:7.0f}/s)  read {pr:5.2f} s  "
              f"write ratio {pw / lw:.2f}x")
        for db in (db1, db2):
            pgcluster.drop_database(server, db)
    finally:
        if cluster is not None:
            cluster.stop()
    print(f"load average after: {os.getloadavg()}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
