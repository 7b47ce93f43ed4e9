"""Create markdown_sessions (markdown workflow sessions driven by the client LLM).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create the table."""
    op.create_table(
        "markdown_sessions",
        sa.Column("session_id", sa.String(255), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("title", sa.String(512), nullable=True),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_markdown_sessions_updated_at", "markdown_sessions", ["updated_at"])


def downgrade() -> None:
    """Drop the table."""
    op.drop_index("ix_markdown_sessions_updated_at", "markdown_sessions")
    op.drop_table("markdown_sessions")
