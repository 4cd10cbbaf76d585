"""Alembic's entry: run the store's migrations on the connection ``migrate`` passes in."""

from alembic import context

from torchparity.results.store_schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("torchparity migrations run through results.store_schema.migrate(engine)")
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
