"""Scheduler stacks on a shared database, with a clock the test moves (docs/triggers.md).

A :class:`Replica` is what one server process holds: its own engine (connection pool) on the
database, run store, in-process launcher, workflow repository and scheduler. Two replicas on
one database race for ticks as two processes would; dropping one and making another is a
restart. Tools answer from the engine's mock runner: what is tested is which ticks start runs,
not the calls the runs make.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.engine.local import MockTools
from dynamic_tools.execution.launcher import LocalLauncher
from dynamic_tools.execution.runs import RunService
from dynamic_tools.execution.scheduler import Scheduler
from dynamic_tools.persistence.db import make_engine, migrate, runs, trigger_ticks
from dynamic_tools.persistence.run_store import RunStore
from dynamic_tools.persistence.trigger_store import TriggerStore
from tests.support.postgres import fresh_schema

T0 = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
"""A Friday, on a whole hour: every test's clock starts here."""


@dataclass
class Clock:
    """A clock the test sets and moves."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@dataclass
class Replica:
    """One process's share: store, launcher, repository, scheduler."""

    engine: Engine
    store: RunStore
    scheduler: Scheduler
    runs: RunService
    tools: MockTools
    counted: list[tuple[str, str, str, str]] = field(default_factory=list)
    stopped: bool = field(default=False)

    async def stop(self) -> None:
        """End as a process does: its local runs are cancelled, its store closed."""
        if not self.stopped:
            self.stopped = True
            await self.runs.launcher.shutdown()
            await self.store.aclose()
            self.engine.dispose()


def make_replica(url: str, schema: str | None, workflows_dir: Path, clock: Clock) -> Replica:
    """A replica on the database at ``url`` (``schema`` on PostgreSQL)."""
    engine = make_engine(url, schema=schema)
    migrate(engine)
    store = RunStore(engine, poll_interval_s=0.05)
    tools = MockTools({"get_price": lambda args: {"sku": args.get("sku"), "price": 3}})
    launcher = LocalLauncher(tools=tools, events=store)
    repository = WorkflowRepository(workflows_dir, known_tools=lambda: frozenset({"get_price"}))
    repository.reload()
    service = RunService(repository, store, launcher)
    counted: list[tuple[str, str, str, str]] = []
    scheduler = Scheduler(
        repository,
        service,
        TriggerStore(engine),
        clock=clock,
        count=lambda *event: counted.append(event),
    )
    return Replica(engine, store, scheduler, service, tools, counted)


@contextmanager
def shared_database(kind: str, tmp_path: Path) -> Iterator[tuple[str, str | None]]:
    """``(url, schema)`` of an empty database several replicas can open (dropped after)."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.sqlite'}", None
        return
    with fresh_schema("dt_sched") as found:
        yield found


def runs_by_tick(engine: Engine, workflow_id: str) -> dict[datetime, list[str]]:
    """The runs a schedule started, by the tick that started them."""
    query = select(runs.c.run_id, runs.c.trigger_time).where(
        runs.c.workflow_id == workflow_id, runs.c.trigger_kind == "schedule"
    )
    found: dict[datetime, list[str]] = {}
    with engine.connect() as conn:
        for run_id, tick in conn.execute(query):
            found.setdefault(tick.astimezone(UTC), []).append(run_id)
    return found


def ticks(engine: Engine, workflow_id: str) -> list[dict[str, Any]]:
    """Every tick recorded for a workflow's schedules, oldest first."""
    query = (
        select(trigger_ticks)
        .where(trigger_ticks.c.workflow_id == workflow_id)
        .order_by(trigger_ticks.c.tick_at)
    )
    with engine.connect() as conn:
        return [dict(row) for row in conn.execute(query).mappings()]
