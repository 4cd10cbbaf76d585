"""The sweep's result store, written as results arrive: a SQLAlchemy database.

``--store URL`` names it: SQLite (the embedded default, ``OUT/results.sqlite``) or
PostgreSQL (``postgresql://user@host/db``: several machines write one sweep). Safe against
``kill -9``: one transaction per result (SQLite in WAL mode). One row per case, keyed
(api, variant, sample_set, dtype), written by an upsert (``INSERT ... ON CONFLICT``), so a
rerun skips what any writer finished and concurrent writers never duplicate a row. The
tables and their Alembic migrations are in ``store_schema``; ``meta`` holds what the sweep
ran on (device, environment, options); a store is tied to one device.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from ..errors import InputError
from .store_schema import ADDED_BY_MIGRATIONS, COLUMNS, KEY_COLUMNS, meta_table, results_table

FILENAME = "results.sqlite"
Key = Tuple[str, str, str, str]  # (api, variant, sample_set, dtype)
JSON_COLUMNS = ("metric", "counts", "payload")
BOOL_COLUMNS = ("claimed", "claimed_backward", "emulated")
POSTGRES_EXTRA = "pip install 'torchparity[postgres]'"


def is_url(text: Union[str, Path]) -> bool:
    """A store named by a URL (``postgresql://...``, ``sqlite:///...``), not a path."""
    return isinstance(text, str) and "://" in text


def _one_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc)
    return " ".join(text.split())[:300]


class SweepStore:
    """The store at ``location``: a ``results.sqlite`` file, a folder holding one, or a
    SQLAlchemy URL (``sqlite:///FILE``, ``postgresql://...``)."""

    def __init__(self, location: Union[str, Path]):
        import sqlalchemy as sa
        from sqlalchemy.exc import SQLAlchemyError

        self.path: Optional[Path] = None  # the SQLite file, if the store is one
        self._conn = None
        self._statements: Dict[Any, Any] = {}
        if is_url(location):
            url = _parse_url(str(location))
            if url.get_backend_name() == "sqlite":
                if not url.database or url.database == ":memory:":
                    raise InputError(f"--store {location}: name a SQLite file (sqlite:///FILE)")
                self.path = _sqlite_file(Path(url.database))
                url = url.set(database=str(self.path))
        else:
            self.path = _sqlite_file(Path(location))
            url = sa.engine.make_url("sqlite://").set(database=str(self.path))
        self.url = url
        self.backend = url.get_backend_name()
        self.where = str(self.path) if self.path else url.render_as_string(hide_password=True)
        try:
            self.engine = _engine(url)
            self._validate(before_migrations=True)
            from .store_schema import migrate

            migrate(self.engine)
            self._validate()
        except InputError:
            self.close()
            raise
        except (SQLAlchemyError, ValueError, TypeError, OSError) as exc:
            from sqlalchemy.exc import OperationalError

            self.close()
            what = ("cannot open this sweep store" if isinstance(exc, OperationalError)
                    else "not a torchparity sweep store")  # unreachable / other tables, damaged
            raise InputError(f"{self.where}: {what} ({_one_line(exc)})") from None

    # -- opening ------------------------------------------------------------------------
    def _validate(self, before_migrations: bool = False) -> None:
        """A results.sqlite of another program (same table names, other columns) or a
        damaged one is refused here, before any migration writes to it, not with a
        traceback halfway through a sweep."""
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            if self.backend == "sqlite":
                problem = conn.exec_driver_sql("PRAGMA quick_check(1)").scalar()
                if problem != "ok":
                    raise ValueError(f"damaged: {' '.join(str(problem).split())}")
            inspector = sa.inspect(conn)
            for table, wanted in (("meta", ("key", "value")), ("results", COLUMNS)):
                if not inspector.has_table(table):
                    continue
                have = {c["name"] for c in inspector.get_columns(table)}
                missing = [c for c in wanted if c not in have
                           and not (before_migrations and c in ADDED_BY_MIGRATIONS)]
                if missing:
                    raise ValueError(f"table {table} lacks column(s) {', '.join(missing)}")

    def _damaged(self, exc: Exception) -> InputError:
        return InputError(f"{self.where}: cannot use this sweep store "
                          f"({type(getattr(exc, 'orig', None) or exc).__name__}: {_one_line(exc)})")

    def _tx(self):
        """A transaction on the store's one connection (kept open: a sweep writes a row per
        case, and a checkout, statement build and compile per row cost 15x the write)."""
        if self._conn is None:
            self._conn = self.engine.connect()
        return _Tx(self._conn)

    # -- meta ---------------------------------------------------------------------------
    def meta(self) -> Dict[str, Any]:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self._tx() as conn:
                return {k: json.loads(v) for k, v in
                        conn.execute(meta_table.select().order_by(meta_table.c.key))}
        except (SQLAlchemyError, ValueError, TypeError) as exc:
            raise self._damaged(exc) from None

    def set_meta(self, values: Dict[str, Any]) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        rows = [{"key": k, "value": json.dumps(v, ensure_ascii=False)} for k, v in values.items()]
        if not rows:
            return
        try:
            with self._tx() as conn:
                conn.execute(self._upsert(meta_table, ("key",)), rows)
        except SQLAlchemyError as exc:
            raise self._damaged(exc) from None

    # -- results ------------------------------------------------------------------------
    def done_keys(self) -> Set[Key]:
        from sqlalchemy.exc import SQLAlchemyError

        cols = [results_table.c[k] for k in KEY_COLUMNS]
        try:
            with self._tx() as conn:
                return {tuple(r) for r in conn.execute(results_table.select().with_only_columns(*cols))}
        except SQLAlchemyError as exc:
            raise self._damaged(exc) from None

    def add(self, row: Dict[str, Any]) -> None:
        """Store one result in its own transaction (replacing an earlier one of that key)."""
        from sqlalchemy.exc import SQLAlchemyError

        values = _encode(row)
        try:
            with self._tx() as conn:
                conn.execute(self._upsert(results_table, KEY_COLUMNS, list(values)), values)
        except SQLAlchemyError as exc:  # disk full, read-only now, server gone: earlier rows stay
            raise self._damaged(exc) from None

    def _upsert(self, table, keys: Sequence[str], cols: Optional[List[str]] = None):
        cache_key = (table.name, tuple(cols) if cols is not None else None)
        stmt = self._statements.get(cache_key)
        if stmt is None:
            stmt = self._statements[cache_key] = self._build_upsert(table, keys, cols)
        return stmt

    def _build_upsert(self, table, keys: Sequence[str], cols: Optional[List[str]]):
        """INSERT ... ON CONFLICT (key) DO UPDATE: the row of a key is written once, the
        last writer's values win; columns it does not give are emptied, as in a new row
        (``_encode`` always gives the ones that have defaults)."""
        if self.backend == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        stmt = insert(table)
        names = [c.name for c in table.columns if c.name not in keys]
        given = set(cols) if cols is not None else set(names)
        update = {n: stmt.excluded[n] if n in given else None for n in names}
        return stmt.on_conflict_do_update(index_elements=list(keys), set_=update)

    def delete(self, key: Key) -> None:
        """Drop the row of one key, if any (a result that no longer applies)."""
        from sqlalchemy.exc import SQLAlchemyError

        where = [results_table.c[k] == v for k, v in zip(KEY_COLUMNS, key)]
        try:
            with self._tx() as conn:
                conn.execute(results_table.delete().where(*where))
        except SQLAlchemyError as exc:
            raise self._damaged(exc) from None

    def clear(self) -> None:
        """Drop every result and the meta (a finished check's store, before the next run
        on the same folder starts afresh: its results live on in that run's report.json)."""
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self._tx() as conn:
                conn.execute(results_table.delete())
                conn.execute(meta_table.delete())
        except SQLAlchemyError as exc:
            raise self._damaged(exc) from None

    def rows(self, keys: Optional[Iterable[Key]] = None) -> List[Dict[str, Any]]:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            return self._rows(keys)
        except (SQLAlchemyError, ValueError, TypeError) as exc:
            raise self._damaged(exc) from None

    def _rows(self, keys: Optional[Iterable[Key]]) -> List[Dict[str, Any]]:
        t = results_table
        query = t.select().order_by(t.c.created, *(t.c[k] for k in KEY_COLUMNS))
        wanted = set(keys) if keys is not None else None
        out = []
        with self._tx() as conn:
            for raw in conn.execute(query):
                r = dict(zip(COLUMNS, (raw._mapping[c] for c in COLUMNS)))
                if wanted is not None and tuple(r[k] for k in KEY_COLUMNS) not in wanted:
                    continue
                for col in JSON_COLUMNS:
                    if r[col] is not None:
                        r[col] = json.loads(r[col])
                for col in BOOL_COLUMNS:
                    if r[col] is not None:
                        r[col] = bool(r[col])
                out.append(r)
        return out

    def count(self) -> int:
        import sqlalchemy as sa

        with self._tx() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(results_table)).scalar())

    def close(self) -> None:
        if getattr(self, "_conn", None) is not None:
            try:
                self._conn.close()
            except Exception:  # a server gone away: nothing left to close
                pass
            self._conn = None
        engine = getattr(self, "engine", None)
        if engine is not None:
            engine.dispose()
            self.engine = None


class _Tx:
    """``with store._tx() as conn``: commit on success, roll back on an error (and keep
    the connection usable for the next row)."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        self.tx = self.conn.begin()
        return self.conn

    def __exit__(self, exc_type, *_):
        if exc_type is None:
            self.tx.commit()
            return
        try:
            self.tx.rollback()
        except Exception:  # the database rolled back itself (disk full, server gone)
            pass


def _encode(row: Dict[str, Any]) -> Dict[str, Any]:
    values = dict(row)
    values.setdefault("created", time.time())
    for col in JSON_COLUMNS:
        if values.get(col) is not None:
            values[col] = json.dumps(values[col], ensure_ascii=False)
    for col in BOOL_COLUMNS:
        if values.get(col) is not None:
            values[col] = int(bool(values[col]))
    values.setdefault("emulated", 0)
    values.setdefault("detail", "")
    unknown = [c for c in values if c not in COLUMNS]
    if unknown:
        raise ValueError(f"not a column of the sweep store: {', '.join(unknown)}")
    return {c: values[c] for c in COLUMNS if c in values}


def _sqlite_file(path: Path) -> Path:
    if path.is_dir() and path.name != FILENAME:
        path = path / FILENAME
    if path.exists() and not path.is_file():
        raise InputError(f"{path}: exists and is not a file; a sweep keeps its results "
                         "in a file of this name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{path.parent}: cannot create folder: {exc.strerror}") from None
    return path


def _masked(text: str) -> str:
    """A URL as typed, its password hidden (``user:***@``) and on one line."""
    import re

    return re.sub(r"(//[^/@:]*):[^@/]*@", r"\1:***@", " ".join(text.split()))


def parse_store_flag(text: str):
    """The URL a ``--store`` value names, checked before any work: a value that is no URL
    (``--store 'not a url'``) is refused, never taken for the name of a SQLite file in the
    current folder; the default store is ``OUT/results.sqlite``, named by ``--out``."""
    if not is_url(text):
        from ..errors import shown

        raise InputError(f"--store {shown(_masked(text))}: not a database URL (sqlite:///FILE or "
                         "postgresql://USER@HOST:PORT/DB; without --store the results go to "
                         "OUT/results.sqlite)")
    return _parse_url(text)


def _parse_url(text: str):
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(text)  # a port that is no number, an unclosed [ ...: ValueError
    except (ArgumentError, ValueError):
        raise InputError(f"--store {_masked(text)}: not a database URL (sqlite:///FILE or "
                         "postgresql://USER@HOST:PORT/DB)") from None
    if url.port is not None and not 0 < url.port < 65536:
        raise InputError(f"--store {url.render_as_string(hide_password=True)}: port {url.port} "
                         "is not a TCP port (1-65535)")
    backend = url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise InputError(f"--store {url.render_as_string(hide_password=True)}: unsupported "
                         f"database '{backend}'; use sqlite:///FILE or postgresql://...")
    if backend == "postgresql" and url.get_driver_name() in ("psycopg2", "postgresql") \
            and "+" not in url.drivername:
        url = url.set(drivername="postgresql+psycopg")  # psycopg 3, the postgres extra's driver
    if backend == "postgresql":
        try:
            url.get_dialect().import_dbapi()
        except ImportError:
            raise InputError(f"--store {url.render_as_string(hide_password=True)}: the PostgreSQL "
                             f"driver is not installed; {POSTGRES_EXTRA}") from None
    return url


def _engine(url):
    import sqlalchemy as sa
    from sqlalchemy import event

    if url.get_backend_name() == "sqlite":
        engine = sa.create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # transactions begin below, not in the driver
            dbapi_conn.execute("PRAGMA journal_mode=WAL")
            dbapi_conn.execute("PRAGMA synchronous=NORMAL")

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            # deferred: a write transaction's first statement is its write, so it waits for
            # the lock (busy timeout) instead of failing to upgrade a read lock
            conn.exec_driver_sql("BEGIN")

        return engine
    return sa.create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": 10})


def open_store(out_dir: Path, must_exist: bool = False,
               url: Optional[str] = None) -> SweepStore:
    """The store of a sweep: ``url`` (``--store``) when given, else the SQLite file of the
    sweep folder ``out_dir`` (always a folder: ``sweep-2.13.0`` is a folder name, not a
    file name). Readers (``must_exist``) may also name the file, or a URL as ``out_dir``."""
    if url is None and is_url(str(out_dir)):
        url = str(out_dir)
    if url is not None:
        parse_store_flag(url)
        return SweepStore(url)
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
    the holder's PID), released when the sweep ends or its process dies. A sweep that ends
    removes the file (while it still holds the lock); one that dies leaves it, unlocked,
    for the next to take."""

    NAME = "sweep.lock"

    def __init__(self, out_dir: Path, name: str = NAME, what: str = "sweep"):
        self.path = Path(out_dir) / name
        self.what = what  # "check" takes the same lock, on OUT/check.lock
        self.fd: Optional[int] = None

    def __enter__(self) -> "SweepLock":
        try:
            import fcntl
        except ImportError:  # no flock (Windows): no lock
            return self
        for _ in range(100):  # the holder may remove the file between our open and flock
            try:
                fd = os.open(str(self.path), os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise InputError(f"{self.path}: cannot create the {self.what} lock: {exc.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise InputError(f"{self.path.parent}: another {self.what} (pid {holder}) is writing here; "
                                 "wait for it to end or use another --out") from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except OSError:  # removed meanwhile
                same = False
            if same:
                break
            os.close(fd)  # locked a file its last holder had removed: take the new one
        else:
            raise InputError(f"{self.path}: the {self.what} lock keeps changing; is another "
                             f"{self.what} starting here?")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *_exc) -> None:
        if self.fd is not None:
            try:
                os.unlink(self.path)  # still locked: no other sweep holds this file
            except OSError:
                try:
                    os.ftruncate(self.fd, 0)
                except OSError:
                    pass
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None
