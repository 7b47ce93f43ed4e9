"""Access control: API keys, the audit log, and the owner of runs, markdown sessions, recipes.

Runs, markdown sessions and recipes made before ownership existed belong to the admin
(``admin``, the API_TOKEN holder and one-person setups).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None

_OWNED = ("runs", "markdown_sessions", "recipes")


def upgrade() -> None:
    """Add the owner columns and index, the api_keys and audit_log tables."""
    for table in _OWNED:
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("owner", sa.String(255), nullable=False, server_default="admin")
            )
    op.create_index("ix_runs_owner_created_at", "runs", ["owner", "created_at"])
    op.create_table(
        "api_keys",
        sa.Column("key_id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("salt", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(128), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_api_keys_name", "api_keys", ["name"])
    op.create_table(
        "audit_log",
        sa.Column("entry_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("principal", sa.String(255), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.String(1024), nullable=False),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("correlation_id", sa.String(64), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=True),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])
    op.create_index("ix_audit_log_principal_at", "audit_log", ["principal", "at"])
    op.create_index("ix_audit_log_action_at", "audit_log", ["action", "at"])


def downgrade() -> None:
    """Drop them again."""
    op.drop_table("audit_log")
    op.drop_table("api_keys")
    op.drop_index("ix_runs_owner_created_at", "runs")
    for table in _OWNED:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("owner")
