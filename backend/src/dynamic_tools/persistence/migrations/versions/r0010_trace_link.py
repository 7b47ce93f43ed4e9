"""Add runs.trace_link: the W3C ``traceparent`` of the span a run was started from.

A run's spans are in a trace of their own (its id is the run id); the run span links to the
span that started it (an MCP request, ...). The run span is recorded when the run ends, maybe
in another process after a restart, so the link is stored with the run.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add the column (null for runs started outside any span, and for older runs)."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("trace_link", sa.String(64), nullable=True))


def downgrade() -> None:
    """Drop the column."""
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("trace_link")
