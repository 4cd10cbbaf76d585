"""The sweep's result store: one SQLite file, written as results arrive.

Safe against ``kill -9``: WAL journal, one transaction per result, and a primary key per
(api, variant, sample_set, dtype) so a rerun can skip what is done and never duplicates
a row. ``meta`` holds what the sweep ran on (device, environment, options); a store is
tied to one device.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from ..errors import InputError

FILENAME = "results.sqlite"
Key = Tuple[str, str, str, str]  # (api, variant, sample_set, dtype)

COLUMNS = ("api", "variant", "sample_set", "dtype", "status", "cause", "detail", "metric",
           "counts", "claimed", "claimed_backward", "kind", "seconds", "emulated", "created",
           "note")
JSON_COLUMNS = ("metric", "counts")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    api TEXT NOT NULL,
    variant TEXT NOT NULL,
    sample_set TEXT NOT NULL,
    dtype TEXT NOT NULL,
    status TEXT NOT NULL,
    cause TEXT,
    detail TEXT NOT NULL DEFAULT '',
    metric TEXT,
    counts TEXT,
    claimed INTEGER,
    claimed_backward INTEGER,
    kind TEXT,
    seconds REAL,
    emulated INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    note TEXT,
    PRIMARY KEY (api, variant, sample_set, dtype)
);
"""


class SweepStore:
    def __init__(self, path: Path):
        path = Path(path)
        if path.is_dir() or not path.suffix:
            path = path / FILENAME
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        try:
            self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{path}: not a torchparity sweep store ({exc})") from None

    # -- meta ---------------------------------------------------------------------------
    def meta(self) -> Dict[str, Any]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def set_meta(self, values: Dict[str, Any]) -> None:
        with self._tx():
            for k, v in values.items():
                self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                (k, json.dumps(v, ensure_ascii=False)))

    # -- results ------------------------------------------------------------------------
    def done_keys(self) -> Set[Key]:
        return {tuple(r) for r in self.db.execute(
            "SELECT api, variant, sample_set, dtype FROM results")}

    def add(self, row: Dict[str, Any]) -> None:
        """Store one result in its own transaction (replacing an earlier one of that key)."""
        values = dict(row)
        values.setdefault("created", time.time())
        for col in JSON_COLUMNS:
            if values.get(col) is not None:
                values[col] = json.dumps(values[col], ensure_ascii=False)
        for col in ("claimed", "claimed_backward", "emulated"):
            if values.get(col) is not None:
                values[col] = int(bool(values[col]))
        values.setdefault("emulated", 0)
        values.setdefault("detail", "")
        cols = [c for c in COLUMNS if c in values]
        with self._tx():
            self.db.execute(
                f"INSERT OR REPLACE INTO results ({', '.join(cols)}) "
                f"VALUES ({', '.join('?' for _ in cols)})", [values[c] for c in cols])

    def delete(self, key: Key) -> None:
        """Drop the row of one key, if any (a result that no longer applies)."""
        with self._tx():
            self.db.execute("DELETE FROM results WHERE api = ? AND variant = ? AND sample_set = ? "
                            "AND dtype = ?", tuple(key))

    def rows(self, keys: Optional[Iterable[Key]] = None) -> List[Dict[str, Any]]:
        cur = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY rowid")
        wanted = set(keys) if keys is not None else None
        out = []
        for raw in cur:
            r = dict(zip(COLUMNS, raw))
            if wanted is not None and (r["api"], r["variant"], r["sample_set"], r["dtype"]) not in wanted:
                continue
            for col in JSON_COLUMNS:
                if r[col] is not None:
                    r[col] = json.loads(r[col])
            for col in ("claimed", "claimed_backward", "emulated"):
                if r[col] is not None:
                    r[col] = bool(r[col])
            out.append(r)
        return out

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def close(self) -> None:
        self.db.close()

    def _tx(self):
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, exc_type, *_):
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def open_store(out_dir: Path, must_exist: bool = False) -> SweepStore:
    path = Path(out_dir)
    file = path / FILENAME if path.suffix == "" else path
    if must_exist and not file.is_file():
        raise InputError(f"{out_dir}: no sweep results here (expected {file.name})")
    return SweepStore(file)
