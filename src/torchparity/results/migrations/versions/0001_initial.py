"""The first schema: meta (key, value) and results, one row per case.

Revision ID: 0001
Revises: none

A SQLite store written before migrations existed already has both tables (same columns):
they are kept as they are and only the version is recorded.
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = set(sa.inspect(op.get_bind()).get_table_names())
    if "meta" not in have:
        op.create_table(
            "meta",
            sa.Column("key", sa.Text, primary_key=True),
            sa.Column("value", sa.Text, nullable=False),
        )
    if "results" not in have:
        op.create_table(
            "results",
            sa.Column("api", sa.Text, nullable=False),
            sa.Column("variant", sa.Text, nullable=False),
            sa.Column("sample_set", sa.Text, nullable=False),
            sa.Column("dtype", sa.Text, nullable=False),
            sa.Column("status", sa.Text, nullable=False),
            sa.Column("cause", sa.Text),
            sa.Column("detail", sa.Text, nullable=False, server_default=""),
            sa.Column("metric", sa.Text),
            sa.Column("counts", sa.Text),
            sa.Column("claimed", sa.Integer),
            sa.Column("claimed_backward", sa.Integer),
            sa.Column("kind", sa.Text),
            sa.Column("seconds", sa.Float),
            sa.Column("emulated", sa.Integer, nullable=False, server_default="0"),
            sa.Column("created", sa.Float, nullable=False),
            sa.Column("note", sa.Text),
            sa.PrimaryKeyConstraint("api", "variant", "sample_set", "dtype", name="results_pkey"),
        )


def downgrade() -> None:
    op.drop_table("results")
    op.drop_table("meta")
