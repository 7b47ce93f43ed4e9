"""Move each run's node states into rows of their own (run_nodes), one per node.

An event then reads and writes the one node it is about, not the run's whole node map, so
its cost does not grow with the run's size. Existing runs' node states are copied over in
document order; the ``runs.nodes`` column goes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

_BATCH = 500


def upgrade() -> None:
    """Create run_nodes, copy every run's node map into it, drop runs.nodes."""
    op.create_table(
        "run_nodes",
        sa.Column(
            "run_id",
            sa.String(64),
            sa.ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_nodes_run_id"),
            primary_key=True,
        ),
        sa.Column("node_id", sa.String(1024), primary_key=True),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
    )
    op.create_index("ix_run_nodes_run_id_ordinal", "run_nodes", ["run_id", "ordinal"])
    bind = op.get_bind()
    runs = sa.table("runs", sa.column("run_id", sa.String), sa.column("nodes", sa.JSON()))
    run_nodes = sa.table(
        "run_nodes",
        sa.column("run_id", sa.String),
        sa.column("node_id", sa.String),
        sa.column("ordinal", sa.Integer),
        sa.column("state", sa.JSON()),
    )
    rows: list[dict[str, Any]] = []
    for run_id, nodes in bind.execute(sa.select(runs.c.run_id, runs.c.nodes)):
        if isinstance(nodes, str):
            nodes = json.loads(nodes)
        for ordinal, (node_id, state) in enumerate((nodes or {}).items()):
            rows.append({"run_id": run_id, "node_id": node_id, "ordinal": ordinal, "state": state})
            if len(rows) >= _BATCH:
                bind.execute(sa.insert(run_nodes), rows)
                rows = []
    if rows:
        bind.execute(sa.insert(run_nodes), rows)
    op.execute("ALTER TABLE runs DROP COLUMN nodes")  # SQLite >= 3.35 and PostgreSQL


def downgrade() -> None:
    """Put the node maps back into runs.nodes and drop run_nodes."""
    op.add_column("runs", sa.Column("nodes", sa.JSON(), nullable=True))
    bind = op.get_bind()
    run_nodes = sa.table(
        "run_nodes",
        sa.column("run_id", sa.String),
        sa.column("node_id", sa.String),
        sa.column("ordinal", sa.Integer),
        sa.column("state", sa.JSON()),
    )
    runs = sa.table("runs", sa.column("run_id", sa.String), sa.column("nodes", sa.JSON()))
    maps: dict[str, dict[str, Any]] = {}
    query = sa.select(run_nodes).order_by(run_nodes.c.run_id, run_nodes.c.ordinal)
    for row in bind.execute(query).mappings():
        maps.setdefault(row["run_id"], {})[row["node_id"]] = row["state"]
    for run_id, nodes in maps.items():
        bind.execute(sa.update(runs).where(runs.c.run_id == run_id).values(nodes=nodes))
    bind.execute(sa.update(runs).where(runs.c.nodes.is_(None)).values(nodes={}))
    op.drop_index("ix_run_nodes_run_id_ordinal", table_name="run_nodes")
    op.drop_table("run_nodes")
