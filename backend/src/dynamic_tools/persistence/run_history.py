"""Run history housekeeping: delete ended runs (and their events) to keep the database small."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqlalchemy import ColumnElement, Engine, and_, delete, select

from dynamic_tools.persistence.db import (
    run_events,
    run_items,
    run_nodes,
    runs,
    utc_now,
    write_transaction,
)
from dynamic_tools.persistence.run_view import TERMINAL


async def purge_runs(
    engine: Engine,
    *,
    workflow_id: str | None,
    older_than_days: float | None,
    input_keys: list[str] | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Delete ended runs (of ``workflow_id``, or all) finished more than the given days ago.

    ``input_keys``: only runs whose params have every one of these keys. Runs that are
    pending, running or waiting for input are never removed. ``dry_run`` counts what would be
    removed and removes nothing. Returns ``removed_runs`` (or ``would_remove_runs``) and the
    count per workflow.
    """

    def work() -> dict[str, Any]:
        conditions: list[ColumnElement[bool]] = [runs.c.status.in_(sorted(TERMINAL))]
        if workflow_id is not None:
            conditions.append(runs.c.workflow_id == workflow_id)
        if older_than_days is not None:
            cutoff = utc_now() - timedelta(days=older_than_days)
            conditions.append(runs.c.finished_at < cutoff)
        condition = and_(*conditions)
        with write_transaction(engine) as conn:
            query = select(runs.c.run_id, runs.c.workflow_id, runs.c.params).where(condition)
            rows = [
                (str(run_id), str(workflow), params or {})
                for run_id, workflow, params in conn.execute(query)
            ]
            if input_keys:
                rows = [r for r in rows if isinstance(r[2], dict) and set(input_keys) <= set(r[2])]
            ids = [r[0] for r in rows]
            if not dry_run:
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    conn.execute(delete(run_events).where(run_events.c.run_id.in_(chunk)))
                    conn.execute(delete(run_nodes).where(run_nodes.c.run_id.in_(chunk)))
                    conn.execute(delete(run_items).where(run_items.c.run_id.in_(chunk)))
                    conn.execute(delete(runs).where(runs.c.run_id.in_(chunk)))
        by_workflow: dict[str, int] = {}
        for _, workflow, _ in rows:
            by_workflow[workflow] = by_workflow.get(workflow, 0) + 1
        key = "would_remove_runs" if dry_run else "removed_runs"
        return {key: len(ids), "by_workflow": dict(sorted(by_workflow.items()))}

    return await asyncio.to_thread(work)
