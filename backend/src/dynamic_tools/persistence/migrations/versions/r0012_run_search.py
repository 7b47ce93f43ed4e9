"""The run search (docs/run-search.md): the values of runs from before it, and a counting index.

- ``run_values`` is filled for the runs already there: each run's top-level scalar params, and
  the top-level scalar outputs of a run that ended with a result (new runs get theirs from the
  run store as they start and end). Values are text as ``persistence/run_search.py`` writes
  them: strings as they are, numbers as JSON writes them, booleans ``true``/``false``, the
  first 256 characters;
- ``ix_runs_created_at_status_workflow_id_owner``: counts by status and workflow over a time
  range (``GET /runs/stats``) read this index alone.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None

_INDEX = "ix_runs_created_at_status_workflow_id_owner"
_CHUNK = 1000


def _text(value: Any) -> str | None:
    """A scalar as the index holds it (the rule of ``run_search.value_text`` at 0012)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = json.dumps(value)
    elif isinstance(value, str):
        text = value
    else:
        return None
    text = text[:256]
    if "\x00" in text:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return text


def _rows(run_id: str, scope: str, values: Any) -> list[dict[str, str]]:
    if isinstance(values, str):  # a JSON column read back as text
        try:
            values = json.loads(values)
        except ValueError:
            return []
    if not isinstance(values, dict):
        return []
    rows = []
    for name, value in values.items():
        text = _text(value)
        named = isinstance(name, str) and 0 < len(name) <= 128 and _text(name) == name
        if text is not None and named:
            rows.append({"run_id": run_id, "scope": scope, "name": name, "value": text})
    return rows


def upgrade() -> None:
    """Index the runs there are; add the counting index."""
    op.create_index(_INDEX, "runs", ["created_at", "status", "workflow_id", "owner"])
    bind = op.get_bind()
    runs = sa.table(
        "runs",
        sa.column("run_id", sa.String),
        sa.column("params", sa.JSON),
        sa.column("result", sa.JSON),
    )
    values = sa.table(
        "run_values",
        sa.column("run_id", sa.String),
        sa.column("scope", sa.String),
        sa.column("name", sa.String),
        sa.column("value", sa.String),
    )
    bind.execute(sa.delete(values))
    last = ""
    while True:
        chunk = bind.execute(
            sa.select(runs.c.run_id, runs.c.params, runs.c.result)
            .where(runs.c.run_id > last)
            .order_by(runs.c.run_id)
            .limit(_CHUNK)
        ).all()
        if not chunk:
            break
        rows: list[dict[str, str]] = []
        for run_id, params, result in chunk:
            rows += _rows(run_id, "params", params)
            rows += _rows(run_id, "output", result)
        if rows:
            bind.execute(sa.insert(values), rows)
        last = chunk[-1][0]


def downgrade() -> None:
    """Drop the counting index and empty ``run_values`` (0011 leaves it empty)."""
    op.drop_index(_INDEX, "runs")
    op.execute("DELETE FROM run_values")
