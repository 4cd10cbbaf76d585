"""The sweep's result store: one SQLite file, written as results arrive.

Safe against ``kill -9``: WAL journal, one transaction per result, and a primary key per
(api, variant, sample_set, dtype) so a rerun can skip what is done and never duplicates
a row. ``meta`` holds what the sweep ran on (device, environment, options); a store is
tied to one device.
"""

from __future__ import annotations

import json
import os
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
    """The store in ``path``: a ``results.sqlite`` file, or a folder holding one."""

    def __init__(self, path: Path):
        path = Path(path)
        if path.is_dir() and path.name != FILENAME:
            path = path / FILENAME
        if path.exists() and not path.is_file():
            raise InputError(f"{path}: exists and is not a file; a sweep keeps its results "
                             "in a file of this name")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{path.parent}: cannot create folder: {exc.strerror}") from None
        self.path = path
        try:
            self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            why = " ".join(str(exc).split())
            raise InputError(f"{path}: not a torchparity sweep store ({why})") from None

    def _check_schema(self) -> None:
        """A results.sqlite of another program (same table names, other columns) or a
        damaged one is refused here, not with a traceback halfway through a sweep."""
        for table, wanted in (("meta", ("key", "value")), ("results", COLUMNS)):
            have = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            missing = [c for c in wanted if c not in have]
            if missing:
                raise sqlite3.DatabaseError(f"table {table} lacks column(s) {', '.join(missing)}")
        problem = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            raise sqlite3.DatabaseError(f"damaged: {' '.join(str(problem).split())}")

    def _damaged(self, exc: Exception) -> InputError:
        why = " ".join(str(exc).split())
        return InputError(f"{self.path}: cannot use this sweep store ({type(exc).__name__}: {why})")

    # -- meta ---------------------------------------------------------------------------
    def meta(self) -> Dict[str, Any]:
        try:
            return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise self._damaged(exc) from None

    def set_meta(self, values: Dict[str, Any]) -> None:
        try:
            with self._tx():
                for k, v in values.items():
                    self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                    (k, json.dumps(v, ensure_ascii=False)))
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    # -- results ------------------------------------------------------------------------
    def done_keys(self) -> Set[Key]:
        try:
            return {tuple(r) for r in self.db.execute(
                "SELECT api, variant, sample_set, dtype FROM results")}
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

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
        try:
            with self._tx():
                self.db.execute(
                    f"INSERT OR REPLACE INTO results ({', '.join(cols)}) "
                    f"VALUES ({', '.join('?' for _ in cols)})", [values[c] for c in cols])
        except sqlite3.DatabaseError as exc:  # disk full, read-only now: earlier rows stay
            raise self._damaged(exc) from None

    def delete(self, key: Key) -> None:
        """Drop the row of one key, if any (a result that no longer applies)."""
        with self._tx():
            self.db.execute("DELETE FROM results WHERE api = ? AND variant = ? AND sample_set = ? "
                            "AND dtype = ?", tuple(key))

    def rows(self, keys: Optional[Iterable[Key]] = None) -> List[Dict[str, Any]]:
        try:
            return self._rows(keys)
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise self._damaged(exc) from None

    def _rows(self, keys: Optional[Iterable[Key]]) -> List[Dict[str, Any]]:
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
        if exc_type is None:
            self.db.execute("COMMIT")
            return
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite rolled back itself (disk full); the original error tells why


def open_store(out_dir: Path, must_exist: bool = False) -> SweepStore:
    """The store of the sweep folder ``out_dir`` (always a folder: ``sweep-2.13.0`` is a
    folder name, not a file name). Readers (``must_exist``) may also name the file."""
    path = Path(out_dir)
    if must_exist and path.is_file():
        return SweepStore(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{out_dir}: exists and is not a folder")
    file = path / FILENAME
    if must_exist and not file.is_file():
        raise InputError(f"{out_dir}: no sweep results here (expected {file.name})")
    return SweepStore(file)


class SweepLock:
    """One sweep at a time per folder: an exclusive lock on ``OUT/sweep.lock`` (which holds
    the holder's PID), released when the sweep ends or its process dies."""

    NAME = "sweep.lock"

    def __init__(self, out_dir: Path):
        self.path = Path(out_dir) / self.NAME
        self.fd: Optional[int] = None

    def __enter__(self) -> "SweepLock":
        try:
            import fcntl
        except ImportError:  # no flock (Windows): no lock
            return self
        try:
            fd = os.open(str(self.path), os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot create the sweep lock: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise InputError(f"{self.path.parent}: another sweep (pid {holder}) is writing here; "
                             "wait for it to end or use another --out") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *_exc) -> None:
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)
            except OSError:
                pass
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None
