"""The sweep store's tables (SQLAlchemy Core) and their migrations (Alembic).

One schema for every backend: SQLite (the embedded default, ``OUT/results.sqlite``) and
PostgreSQL (several machines writing one sweep). ``results`` has one row per case, keyed
(api, variant, sample_set, dtype); writers upsert on that key (``INSERT ... ON CONFLICT``),
so concurrent writers never duplicate a case. ``meta`` holds what the sweep ran on.

Schema versions are Alembic revisions in ``migrations/versions`` (shipped in the package);
``migrate`` brings a store to ``HEAD`` when it is opened. A SQLite store written before
the migrations existed has the tables of revision 0001 and no ``alembic_version``: 0001
creates only what is missing, so such a store is adopted as it is.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.engine import Connection, Engine

HEAD = "0003"  # the newest revision in migrations/versions (a test checks it is Alembic's head)
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Postgres: one migration at a time per database (two machines opening a new store at once)
_PG_MIGRATION_LOCK = 0x7470_7377  # "tpsw"

metadata = MetaData()

meta_table = Table(
    "meta", metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

results_table = Table(
    "results", metadata,
    Column("api", Text, nullable=False),
    Column("variant", Text, nullable=False),
    Column("sample_set", Text, nullable=False),
    Column("dtype", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("cause", Text),
    Column("detail", Text, nullable=False, server_default=""),
    Column("metric", Text),
    Column("counts", Text),
    Column("claimed", Integer),
    Column("claimed_backward", Integer),
    Column("kind", Text),
    Column("seconds", Float),
    Column("emulated", Integer, nullable=False, server_default="0"),
    Column("created", Float, nullable=False),
    Column("note", Text),
    Column("evidence", Text),  # revision 0002: device-compute | device-state | host-only | none
    Column("payload", Text),  # revision 0003: check's whole result (JSON), for resuming
    PrimaryKeyConstraint("api", "variant", "sample_set", "dtype", name="results_pkey"),
)

KEY_COLUMNS = ("api", "variant", "sample_set", "dtype")
# columns a later revision adds: an older store lacks them until it is migrated
ADDED_BY_MIGRATIONS = ("evidence", "payload")
COLUMNS = tuple(c.name for c in results_table.columns)


def current_revision(conn: Connection) -> str:
    """The store's Alembic revision, or "" when it has none yet."""
    from sqlalchemy import inspect

    if not inspect(conn).has_table("alembic_version"):
        return ""
    row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    return row[0] if row else ""


def migrate(engine: Engine) -> None:
    """Upgrade the store to HEAD (nothing to do, and Alembic not even imported, when it is
    there already: the common case of every open after the first)."""
    with engine.connect() as conn:
        revision = current_revision(conn)
        conn.rollback()
    if revision == HEAD:
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # held until this transaction ends
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
