"""Every result row says what it is evidence of: ``evidence`` (device-compute |
device-state | host-only | none, derived from the case's footprint by judge/evidence.py).

Revision ID: 0002
Revises: 0001

Rows written before it have no footprint to derive from: they keep ``NULL`` (read back as
"not recorded"), never a guessed value.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("results")}
    if "evidence" not in have:
        with op.batch_alter_table("results") as batch:
            batch.add_column(sa.Column("evidence", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("evidence")
