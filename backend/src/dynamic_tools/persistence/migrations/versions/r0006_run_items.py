"""Add run_items: how each finished item of a durable fan-out in flight ended.

A fan-out whose items are each one repeatable step runs them in its parent's workflow and
journals each item's outcome here, so a run recovered in the middle starts only the rest.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create run_items."""
    op.create_table(
        "run_items",
        sa.Column(
            "run_id",
            sa.String(64),
            sa.ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_items_run_id"),
            primary_key=True,
        ),
        sa.Column("fan_out", sa.String(1024), primary_key=True),
        sa.Column("item", sa.Integer, primary_key=True),
        sa.Column("outcome", sa.JSON(), nullable=False),
    )


def downgrade() -> None:
    """Drop run_items."""
    op.drop_table("run_items")
