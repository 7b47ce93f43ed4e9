"""Add run_scopes: what a run started by an MCP session may call beyond the registry.

The session's operations and core-tool prefix as JSON, its outbound headers sealed, so a run
resumed by another process calls what it was validated against.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create run_scopes."""
    op.create_table(
        "run_scopes",
        sa.Column(
            "run_id",
            sa.String(64),
            sa.ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_scopes_run_id"),
            primary_key=True,
        ),
        sa.Column("scope", sa.JSON(), nullable=False),
        sa.Column("sealed_headers", sa.Text(), nullable=True),
    )


def downgrade() -> None:
    """Drop run_scopes."""
    op.drop_table("run_scopes")
