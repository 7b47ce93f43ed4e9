"""Create mcp_tasks (MCP Tasks: owner, ttl and the task's own end, beside its run).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create the table and its indexes."""
    op.create_table(
        "mcp_tasks",
        sa.Column("task_id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("tool", sa.String(128), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("stage", sa.String(255), nullable=False),
        sa.Column("failure", sa.JSON(), nullable=True),
        sa.Column("ttl_ms", sa.BigInteger, nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("executor", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_mcp_tasks_owner_created_at", "mcp_tasks", ["owner", "created_at"])
    op.create_index("ix_mcp_tasks_expires_at", "mcp_tasks", ["expires_at"])
    op.create_index("ix_mcp_tasks_run_id", "mcp_tasks", ["run_id"])


def downgrade() -> None:
    """Drop the table."""
    op.drop_table("mcp_tasks")
