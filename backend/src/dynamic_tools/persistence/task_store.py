"""TaskStore: MCP Tasks in the database — owner, ttl and the task's own end, beside its run.

A task follows a run (its ``run_id``); before it has one (a task that drafts a workflow first)
its row says what it is doing (``stage``). The row's ``status`` is ``working`` or
``input_required`` while the task is open, and ``failed`` or ``cancelled`` once the task itself
ended (a start that failed, a cancel, a client that never answered): that end is final and wins
over the run's status. Otherwise the run's status is the task's.

A task expires ``ttl_ms`` after its creation (``expires_at``); :meth:`purge_expired` deletes
expired tasks that have ended. Their runs are not touched: they stay in the run history.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, and_, delete, exists, func, insert, or_, select, true, update

from dynamic_tools.persistence.db import (
    mcp_tasks,
    run_nodes,
    runs,
    utc_now,
    write_transaction,
)
from dynamic_tools.persistence.event_batch import LATER
from dynamic_tools.persistence.run_view import TERMINAL, RunRecord

OPEN = frozenset({"working", "input_required"})
ENDED = frozenset({"failed", "cancelled"})


@dataclass(frozen=True)
class TaskRow:
    """One task as stored."""

    task_id: str
    owner: str
    tool: str
    run_id: str | None
    status: str
    stage: str
    failure: dict[str, Any] | None
    ttl_ms: int | None
    expires_at: datetime | None
    executor: str
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: Any) -> TaskRow:
        """From an ``mcp_tasks`` row."""
        return cls(**{key: row[key] for key in cls.__dataclass_fields__})

    @property
    def ended(self) -> bool:
        """Whether the task itself ended (failed or cancelled), whatever its run does."""
        return self.status in ENDED

    def expired(self, now: datetime | None = None) -> bool:
        """Whether the task's ttl has run out."""
        return self.expires_at is not None and self.expires_at <= (now or utc_now())


class TaskStore:
    """Tasks by owner; one short transaction per call, off the event loop."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def create(
        self,
        *,
        task_id: str,
        owner: str,
        tool: str,
        ttl_ms: int | None,
        executor: str,
        run_id: str | None = None,
        status: str = "working",
        stage: str = "starting",
        failure: dict[str, Any] | None = None,
    ) -> TaskRow:
        """Record a new task."""

        def work() -> TaskRow:
            now = utc_now()
            expires = None if ttl_ms is None else now + timedelta(milliseconds=ttl_ms)
            values = {
                "task_id": task_id,
                "owner": owner,
                "tool": tool,
                "run_id": run_id,
                "status": status,
                "stage": stage[:255],
                "failure": failure,
                "ttl_ms": ttl_ms,
                "expires_at": expires,
                "executor": executor,
                "created_at": now,
                "updated_at": now,
            }
            with write_transaction(self.engine) as conn:
                conn.execute(insert(mcp_tasks).values(**values))
            return TaskRow(**values)  # type: ignore[arg-type]

        return await asyncio.to_thread(work)

    async def get(self, task_id: str) -> TaskRow | None:
        """One task, or None."""

        def work() -> TaskRow | None:
            query = select(mcp_tasks).where(mcp_tasks.c.task_id == task_id)
            with self.engine.connect() as conn:
                row = conn.execute(query).mappings().first()
            return None if row is None else TaskRow.from_row(row)

        return await asyncio.to_thread(work)

    async def page(
        self, owner: str | None, *, offset: int, limit: int
    ) -> tuple[list[TaskRow], int]:
        """The owner's tasks (None: everyone's), newest first, and how many there are in all."""

        def work() -> tuple[list[TaskRow], int]:
            mine = true() if owner is None else mcp_tasks.c.owner == owner
            query = (
                select(mcp_tasks)
                .where(mine)
                .order_by(mcp_tasks.c.created_at.desc(), mcp_tasks.c.task_id)
                .offset(offset)
                .limit(limit)
            )
            count = select(func.count()).select_from(mcp_tasks).where(mine)
            with self.engine.connect() as conn:
                rows = [TaskRow.from_row(r) for r in conn.execute(query).mappings()]
                total = int(conn.execute(count).scalar_one())
            return rows, total

        return await asyncio.to_thread(work)

    async def runs_of(self, rows: list[TaskRow]) -> dict[str, RunRecord]:
        """The runs the given tasks follow, by run id (runs that no longer exist are absent).

        Each comes with its graph's nodes (not the children of foreach items or branches, so a
        task's snapshot costs the same whatever a loop's length): what its steps done, total
        and current step are made from.
        """
        ids = sorted({r.run_id for r in rows if r.run_id})

        def work() -> dict[str, RunRecord]:
            if not ids:
                return {}
            steps: dict[str, dict[str, dict[str, Any]]] = {run_id: {} for run_id in ids}
            graph_nodes = (
                select(run_nodes.c.run_id, run_nodes.c.node_id, run_nodes.c.state)
                .where(run_nodes.c.run_id.in_(ids), run_nodes.c.ordinal < LATER)
                .order_by(run_nodes.c.run_id, run_nodes.c.ordinal)
            )
            with self.engine.connect() as conn:
                found = list(conn.execute(select(runs).where(runs.c.run_id.in_(ids))).mappings())
                for run_id, node_id, state in conn.execute(graph_nodes):
                    steps[str(run_id)][str(node_id)] = dict(state or {})
            return {row["run_id"]: RunRecord.from_row(row, steps[row["run_id"]]) for row in found}

        return await asyncio.to_thread(work)

    async def update(self, task_id: str, **values: Any) -> None:
        """Change an open task (stage, run, status between working and input_required)."""
        if "stage" in values:
            values["stage"] = str(values["stage"])[:255]

        def work() -> None:
            with write_transaction(self.engine) as conn:
                conn.execute(
                    update(mcp_tasks)
                    .where(mcp_tasks.c.task_id == task_id, mcp_tasks.c.status.in_(OPEN))
                    .values(**values, updated_at=utc_now())
                )

        await asyncio.to_thread(work)

    async def end(
        self,
        task_id: str,
        status: str,
        *,
        failure: dict[str, Any] | None = None,
        stage: str | None = None,
        run_id: str | None = None,
        unless_started: bool = False,
        expires_at: datetime | None = None,
    ) -> bool:
        """End an open task as ``failed`` or ``cancelled``; False if it had already ended.

        ``unless_started``: only while it has no run yet (its job may have started one since
        the row was read); False otherwise. ``expires_at``: keep the ended task until then.
        """
        if status not in ENDED:
            raise ValueError(f"a task cannot end as '{status}'")
        values: dict[str, Any] = {"status": status, "failure": failure, "updated_at": utc_now()}
        values["stage"] = (stage or status)[:255]
        if run_id is not None:
            values["run_id"] = run_id
        if expires_at is not None:
            values["expires_at"] = expires_at

        def work() -> bool:
            query = update(mcp_tasks).where(
                mcp_tasks.c.task_id == task_id, mcp_tasks.c.status.in_(OPEN)
            )
            if unless_started:
                query = query.where(mcp_tasks.c.run_id.is_(None))
            with write_transaction(self.engine) as conn:
                changed = conn.execute(query.values(**values))
            return bool(changed.rowcount)

        return await asyncio.to_thread(work)

    async def delete(self, task_id: str) -> None:
        """Forget a task (its run, if any, stays)."""

        def work() -> None:
            with write_transaction(self.engine) as conn:
                conn.execute(delete(mcp_tasks).where(mcp_tasks.c.task_id == task_id))

        await asyncio.to_thread(work)

    async def purge_expired(self, now: datetime | None = None) -> int:
        """Delete the tasks whose ttl ran out and that have ended; how many were deleted.

        A task has ended when it failed or was cancelled itself, when its run is terminal, or
        when its run no longer exists (its history was purged). Runs are never deleted here.
        """
        cutoff = now or utc_now()
        run_ended = select(runs.c.run_id).where(runs.c.status.in_(sorted(TERMINAL)))
        run_gone = ~exists(select(runs.c.run_id).where(runs.c.run_id == mcp_tasks.c.run_id))
        ended = or_(
            mcp_tasks.c.status.in_(sorted(ENDED)),
            mcp_tasks.c.run_id.in_(run_ended),
            and_(mcp_tasks.c.run_id.is_not(None), run_gone),
        )
        statement = delete(mcp_tasks).where(mcp_tasks.c.expires_at <= cutoff, ended)

        def work() -> int:
            with write_transaction(self.engine) as conn:
                return int(conn.execute(statement).rowcount or 0)

        return await asyncio.to_thread(work)
