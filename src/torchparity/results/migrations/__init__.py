"""Alembic migrations of the sweep store (see ``results.store_schema``)."""
