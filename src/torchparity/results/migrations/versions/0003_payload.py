"""A row may carry its whole result: ``payload`` (JSON), written by ``check`` so that a
killed run resumes with every recorded case as it was judged (its ScenarioResult and
footprint entries), and the bundle is written from the store.

Revision ID: 0003
Revises: 0002

Sweep and vendor-list rows leave it ``NULL``: their flat columns are all they need.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("results")}
    if "payload" not in have:
        with op.batch_alter_table("results") as batch:
            batch.add_column(sa.Column("payload", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("payload")
