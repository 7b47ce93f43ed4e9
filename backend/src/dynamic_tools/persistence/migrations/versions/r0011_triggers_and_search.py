"""Runs that start themselves, and a run history people can search (docs/triggers.md).

- ``runs.trigger_kind/trigger_name/trigger_time``: the schedule tick or webhook delivery that
  started a run (null for a run someone started), and indexes for the run search's filters;
- ``run_values``: each run's top-level scalar params and outputs as text, indexed, so a search
  for ``params.passenger=Ada`` does not read every run's JSON;
- ``trigger_ticks``: each schedule tick claimed once (its key makes it fire once across
  replicas); ``trigger_states``: paused or not, and the last tick dealt with;
- ``webhook_deliveries``: the delivery ids received (a redelivery returns the first run).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None

_RUN_INDEXES = {
    "ix_runs_workflow_id_created_at": ["workflow_id", "created_at"],
    "ix_runs_status_created_at": ["status", "created_at"],
    "ix_runs_trigger_name_created_at": ["trigger_name", "created_at"],
    "ix_runs_finished_at": ["finished_at"],
}


def upgrade() -> None:
    """Add the columns, indexes and tables."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("trigger_kind", sa.String(16), nullable=True))
        batch.add_column(sa.Column("trigger_name", sa.String(128), nullable=True))
        batch.add_column(sa.Column("trigger_time", sa.DateTime(timezone=True), nullable=True))
    for name, columns in _RUN_INDEXES.items():
        op.create_index(name, "runs", columns)
    op.create_table(
        "run_values",
        sa.Column(
            "run_id",
            sa.String(64),
            sa.ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_values_run_id"),
            primary_key=True,
        ),
        sa.Column("scope", sa.String(8), primary_key=True),
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("value", sa.String(256), nullable=False),
    )
    op.create_index("ix_run_values_lookup", "run_values", ["scope", "name", "value"])
    op.create_table(
        "trigger_ticks",
        sa.Column("workflow_id", sa.String(128), primary_key=True),
        sa.Column("trigger_name", sa.String(128), primary_key=True),
        sa.Column("tick_at", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(255), nullable=True),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_trigger_ticks_outcome", "trigger_ticks", ["outcome"])
    op.create_table(
        "trigger_states",
        sa.Column("workflow_id", sa.String(128), primary_key=True),
        sa.Column("trigger_name", sa.String(128), primary_key=True),
        sa.Column("paused", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_tick", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(255), nullable=True),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("workflow_id", sa.String(128), primary_key=True),
        sa.Column("hook", sa.String(128), primary_key=True),
        sa.Column("delivery_id", sa.String(255), primary_key=True),
        sa.Column("body_sha256", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    """Drop them again."""
    for table in ("webhook_deliveries", "trigger_states", "trigger_ticks", "run_values"):
        op.drop_table(table)
    for name in _RUN_INDEXES:
        op.drop_index(name, "runs")
    with op.batch_alter_table("runs") as batch:
        for column in ("trigger_time", "trigger_name", "trigger_kind"):
            batch.drop_column(column)
