"""Create recipes (MCP layer 2: calls learned from successful _query answers).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create the table."""
    op.create_table(
        "recipes",
        sa.Column("recipe_id", sa.String(64), primary_key=True),
        sa.Column("scope", sa.String(64), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("tool", sa.String(128), nullable=False),
        sa.Column("fixed", sa.JSON(), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("schema_hash", sa.String(64), nullable=False),
        sa.Column("question", sa.String(2000), nullable=False),
        sa.Column("uses", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("scope", "name", name="uq_recipes_scope_name"),
    )


def downgrade() -> None:
    """Drop the table."""
    op.drop_table("recipes")
