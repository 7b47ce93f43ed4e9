"""Create runs and run_events.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON()


def upgrade() -> None:
    """Create the tables."""
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("workflow_id", sa.String(128), nullable=False),
        sa.Column("document_version", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("params", _json(), nullable=False),
        sa.Column("result", _json(), nullable=True),
        sa.Column("error", _json(), nullable=True),
        sa.Column("nodes", _json(), nullable=False),
        sa.Column("waiting", _json(), nullable=True),
        sa.Column("event_count", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_runs_workflow_id", "runs", ["workflow_id"])
    op.create_index("ix_runs_status", "runs", ["status"])
    op.create_index("ix_runs_created_at", "runs", ["created_at"])
    op.create_table(
        "run_events",
        sa.Column(
            "run_id",
            sa.String(64),
            sa.ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_events_run_id"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("source", sa.String(1024), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("data", _json(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "seq", "source", name="uq_run_events_run_seq_source"),
    )


def downgrade() -> None:
    """Drop the tables."""
    op.drop_table("run_events")
    op.drop_index("ix_runs_created_at", "runs")
    op.drop_index("ix_runs_status", "runs")
    op.drop_index("ix_runs_workflow_id", "runs")
    op.drop_table("runs")
