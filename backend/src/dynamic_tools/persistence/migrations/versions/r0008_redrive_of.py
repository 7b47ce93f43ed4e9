"""Add runs.redrive_of: the earlier run a redriven run reuses the outputs of.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add the column (null for every run that is not a redrive)."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("redrive_of", sa.String(64), nullable=True))


def downgrade() -> None:
    """Drop the column."""
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("redrive_of")
