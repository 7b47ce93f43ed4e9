"""Run history housekeeping: delete ended runs (and their events) to keep the database small."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import ColumnElement, Engine, and_, delete, select

from dynamic_tools.persistence.db import run_events, runs, utc_now, write_transaction
from dynamic_tools.persistence.run_view import TERMINAL


async def purge_runs(
    engine: Engine, *, workflow_id: str | None, older_than_days: float | None
) -> int:
    """Delete ended runs (of ``workflow_id``, or all) finished more than the given days ago.

    Runs that are pending, running or waiting for input are never removed. Returns how many
    runs were deleted.
    """

    def work() -> int:
        conditions: list[ColumnElement[bool]] = [runs.c.status.in_(sorted(TERMINAL))]
        if workflow_id is not None:
            conditions.append(runs.c.workflow_id == workflow_id)
        if older_than_days is not None:
            cutoff = utc_now() - timedelta(days=older_than_days)
            conditions.append(runs.c.finished_at < cutoff)
        condition = and_(*conditions)
        with write_transaction(engine) as conn:
            ids = [row[0] for row in conn.execute(select(runs.c.run_id).where(condition))]
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                conn.execute(delete(run_events).where(run_events.c.run_id.in_(chunk)))
                conn.execute(delete(runs).where(runs.c.run_id.in_(chunk)))
        return len(ids)

    return await asyncio.to_thread(work)
