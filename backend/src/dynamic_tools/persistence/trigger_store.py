"""TriggerStore: schedule ticks, schedule states and webhook deliveries (docs/triggers.md).

A tick is **claimed** by inserting its row: ``(workflow_id, trigger_name, tick_at)`` is the
primary key, so whichever replica inserts first deals with the tick and every other one (or a
restarted process reaching the same tick) finds it taken. A claim is ``claimed`` until its run
exists, then ``started``; the run gets an id made from the tick, so a claim whose process died
before starting its run is repaired (started by a later pass) without ever starting it twice —
and a run deleted later by a history purge is not started again. A webhook delivery is claimed
the same way by its delivery id.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, and_, insert, select, update
from sqlalchemy.exc import IntegrityError

from dynamic_tools.persistence.db import (
    runs,
    trigger_states,
    trigger_ticks,
    utc_now,
    webhook_deliveries,
    write_transaction,
)
from dynamic_tools.persistence.run_view import ACTIVE, iso

CLAIMED, STARTED, SKIPPED, BUFFERED, FAILED = "claimed", "started", "skipped", "buffered", "failed"
FILTERED = "filtered"
"""A tick or delivery is ``claimed`` while its run is being started, ``started`` once it is."""


def trigger_run_id(workflow_id: str, kind: str, name: str, key: str) -> str:
    """The run id of a tick or a delivery: the same on every replica and after a restart."""
    digest = hashlib.sha256(f"{kind}\0{workflow_id}\0{name}\0{key}".encode()).hexdigest()
    return digest[:32]


@dataclass(frozen=True)
class ScheduleState:
    """A schedule's state beside its document."""

    paused: bool = False
    last_tick: datetime | None = None
    updated_at: datetime | None = None
    updated_by: str | None = None


@dataclass(frozen=True)
class Tick:
    """One tick of a schedule and what became of it."""

    tick_at: datetime
    outcome: str
    reason: str | None
    run_id: str | None

    def to_dict(self) -> dict[str, Any]:
        """As the API shows it."""
        return {
            "time": iso(self.tick_at),
            "outcome": self.outcome,
            "reason": self.reason,
            "run_id": self.run_id,
        }


@dataclass(frozen=True)
class Delivery:
    """A webhook delivery already received: its body's digest and the run it started."""

    body_sha256: str
    run_id: str | None
    outcome: str


class TriggerStore:
    """Ticks, states and deliveries in the run store's database (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- schedule states ----------------------------------------------------------------------
    async def states(self, workflow_id: str | None = None) -> dict[tuple[str, str], ScheduleState]:
        """The states kept, by ``(workflow_id, trigger_name)`` (of one workflow, or all)."""

        def work() -> dict[tuple[str, str], ScheduleState]:
            query = select(trigger_states)
            if workflow_id is not None:
                query = query.where(trigger_states.c.workflow_id == workflow_id)
            with self.engine.connect() as conn:
                rows = conn.execute(query).mappings().all()
            return {
                (row["workflow_id"], row["trigger_name"]): ScheduleState(
                    paused=bool(row["paused"]),
                    last_tick=row["last_tick"],
                    updated_at=row["updated_at"],
                    updated_by=row["updated_by"],
                )
                for row in rows
            }

        return await asyncio.to_thread(work)

    async def set_paused(
        self, workflow_id: str, name: str, paused: bool, *, by: str, now: datetime
    ) -> None:
        """Pause or resume a schedule; a resumed schedule counts its ticks from ``now``."""

        def work() -> None:
            values: dict[str, Any] = {"paused": int(paused), "updated_at": now, "updated_by": by}
            if not paused:
                values["last_tick"] = now  # ticks while paused are not caught up
            self._upsert(workflow_id, name, values)

        await asyncio.to_thread(work)

    async def advance(self, workflow_id: str, name: str, tick: datetime) -> None:
        """Record ``tick`` as the last one dealt with (never moving back)."""

        def work() -> None:
            with write_transaction(self.engine) as conn:
                row = conn.execute(
                    select(trigger_states.c.last_tick)
                    .where(_state_key(workflow_id, name))
                    .with_for_update()
                ).first()
                if row is None:
                    values = {"last_tick": tick, "updated_at": utc_now(), "paused": 0}
                    try:
                        with conn.begin_nested():
                            conn.execute(
                                insert(trigger_states).values(
                                    workflow_id=workflow_id, trigger_name=name, **values
                                )
                            )
                    except IntegrityError:
                        pass  # another replica made it: it moves forward on its next pass
                    return
                if row[0] is None or row[0] < tick:
                    conn.execute(
                        update(trigger_states)
                        .where(_state_key(workflow_id, name))
                        .values(last_tick=tick)
                    )

        await asyncio.to_thread(work)

    def _upsert(self, workflow_id: str, name: str, values: dict[str, Any]) -> None:
        with write_transaction(self.engine) as conn:
            changed = conn.execute(
                update(trigger_states).where(_state_key(workflow_id, name)).values(**values)
            ).rowcount
            if not changed:
                conn.execute(
                    insert(trigger_states).values(
                        workflow_id=workflow_id, trigger_name=name, **values
                    )
                )

    # --- ticks ----------------------------------------------------------------------------------
    async def claim(
        self,
        workflow_id: str,
        name: str,
        tick: datetime,
        outcome: str,
        *,
        reason: str | None = None,
        run_id: str | None = None,
    ) -> bool:
        """Record what ``tick`` became; False when another process (or pass) already had it."""

        def work() -> bool:
            try:
                with write_transaction(self.engine) as conn:
                    conn.execute(
                        insert(trigger_ticks).values(
                            workflow_id=workflow_id,
                            trigger_name=name,
                            tick_at=tick,
                            outcome=outcome,
                            reason=reason[:255] if reason else None,
                            run_id=run_id,
                            recorded_at=utc_now(),
                        )
                    )
            except IntegrityError:
                return False
            return True

        return await asyncio.to_thread(work)

    async def settle(
        self,
        workflow_id: str,
        name: str,
        tick: datetime,
        outcome: str,
        *,
        was: str,
        reason: str | None = None,
        run_id: str | None = None,
    ) -> bool:
        """Move a tick from outcome ``was`` to ``outcome``; False when it was not ``was``.

        A buffered tick is started by whichever replica settles it first.
        """

        def work() -> bool:
            with write_transaction(self.engine) as conn:
                changed = conn.execute(
                    update(trigger_ticks)
                    .where(_tick_key(workflow_id, name, tick), trigger_ticks.c.outcome == was)
                    .values(
                        outcome=outcome,
                        reason=reason[:255] if reason else None,
                        run_id=run_id,
                        recorded_at=utc_now(),
                    )
                ).rowcount
            return bool(changed)

        return await asyncio.to_thread(work)

    async def ticks(
        self, workflow_id: str, name: str, *, outcome: str | None = None, limit: int = 20
    ) -> list[Tick]:
        """The latest ticks of a schedule, newest first (of one outcome, or all)."""

        def work() -> list[Tick]:
            query = select(trigger_ticks).where(
                trigger_ticks.c.workflow_id == workflow_id, trigger_ticks.c.trigger_name == name
            )
            if outcome is not None:
                query = query.where(trigger_ticks.c.outcome == outcome)
            query = query.order_by(trigger_ticks.c.tick_at.desc()).limit(limit)
            with self.engine.connect() as conn:
                return [_tick(row) for row in conn.execute(query).mappings()]

        return await asyncio.to_thread(work)

    async def buffered(self) -> dict[tuple[str, str], Tick]:
        """The buffered tick of each schedule that has one, by ``(workflow_id, trigger_name)``."""

        def work() -> dict[tuple[str, str], Tick]:
            query = select(trigger_ticks).where(trigger_ticks.c.outcome == BUFFERED)
            with self.engine.connect() as conn:
                return {
                    (row["workflow_id"], row["trigger_name"]): _tick(row)
                    for row in conn.execute(query).mappings()
                }

        return await asyncio.to_thread(work)

    async def orphaned(self, older_than_s: float) -> list[tuple[str, str, Tick]]:
        """Ticks claimed longer than ``older_than_s`` ago whose run was never recorded started."""

        def work() -> list[tuple[str, str, Tick]]:
            cutoff = utc_now() - timedelta(seconds=older_than_s)
            query = (
                select(trigger_ticks)
                .where(trigger_ticks.c.outcome == CLAIMED, trigger_ticks.c.recorded_at < cutoff)
                .limit(100)
            )
            with self.engine.connect() as conn:
                return [
                    (row["workflow_id"], row["trigger_name"], _tick(row))
                    for row in conn.execute(query).mappings()
                ]

        return await asyncio.to_thread(work)

    async def active_runs(self, workflow_id: str, name: str) -> list[str]:
        """The runs a trigger started that have not ended (the overlap policy's question)."""

        def work() -> list[str]:
            query = select(runs.c.run_id).where(
                runs.c.workflow_id == workflow_id,
                runs.c.trigger_name == name,
                runs.c.status.in_(sorted(ACTIVE)),
            )
            with self.engine.connect() as conn:
                return [str(r[0]) for r in conn.execute(query)]

        return await asyncio.to_thread(work)

    # --- webhook deliveries -------------------------------------------------------------------
    async def deliveries(
        self, workflow_id: str, hook: str, limit: int = 10
    ) -> list[dict[str, Any]]:
        """The latest deliveries of a webhook, newest first."""

        def work() -> list[dict[str, Any]]:
            query = (
                select(webhook_deliveries)
                .where(
                    webhook_deliveries.c.workflow_id == workflow_id,
                    webhook_deliveries.c.hook == hook,
                )
                .order_by(webhook_deliveries.c.received_at.desc())
                .limit(limit)
            )
            with self.engine.connect() as conn:
                return [
                    {
                        "delivery_id": row["delivery_id"],
                        "received_at": iso(row["received_at"]),
                        "run_id": row["run_id"],
                        "outcome": row["outcome"],
                    }
                    for row in conn.execute(query).mappings()
                ]

        return await asyncio.to_thread(work)

    async def receive(
        self,
        workflow_id: str,
        hook: str,
        delivery_id: str,
        body_sha256: str,
        run_id: str | None,
        outcome: str,
    ) -> Delivery | None:
        """Record a delivery; the one already recorded under its id when it is a redelivery."""

        def work() -> Delivery | None:
            try:
                with write_transaction(self.engine) as conn:
                    conn.execute(
                        insert(webhook_deliveries).values(
                            workflow_id=workflow_id,
                            hook=hook,
                            delivery_id=delivery_id,
                            body_sha256=body_sha256,
                            run_id=run_id,
                            outcome=outcome,
                            received_at=utc_now(),
                        )
                    )
            except IntegrityError:
                query = select(
                    webhook_deliveries.c.body_sha256,
                    webhook_deliveries.c.run_id,
                    webhook_deliveries.c.outcome,
                ).where(_delivery_key(workflow_id, hook, delivery_id))
                with self.engine.connect() as conn:
                    row = conn.execute(query).first()
                return Delivery(str(row[0]), row[1], str(row[2])) if row is not None else None
            return None

        return await asyncio.to_thread(work)

    async def delivered(self, workflow_id: str, hook: str, delivery_id: str) -> None:
        """Record that a claimed delivery's run exists."""

        def work() -> None:
            with write_transaction(self.engine) as conn:
                conn.execute(
                    update(webhook_deliveries)
                    .where(
                        _delivery_key(workflow_id, hook, delivery_id),
                        webhook_deliveries.c.outcome == CLAIMED,
                    )
                    .values(outcome=STARTED)
                )

        await asyncio.to_thread(work)


def _state_key(workflow_id: str, name: str) -> Any:
    return and_(trigger_states.c.workflow_id == workflow_id, trigger_states.c.trigger_name == name)


def _delivery_key(workflow_id: str, hook: str, delivery_id: str) -> Any:
    return and_(
        webhook_deliveries.c.workflow_id == workflow_id,
        webhook_deliveries.c.hook == hook,
        webhook_deliveries.c.delivery_id == delivery_id,
    )


def _tick_key(workflow_id: str, name: str, tick: datetime) -> Any:
    return and_(
        trigger_ticks.c.workflow_id == workflow_id,
        trigger_ticks.c.trigger_name == name,
        trigger_ticks.c.tick_at == tick,
    )


def _tick(row: Any) -> Tick:
    return Tick(row["tick_at"], row["outcome"], row["reason"], row["run_id"])


__all__ = [
    "BUFFERED",
    "CLAIMED",
    "FAILED",
    "FILTERED",
    "SKIPPED",
    "STARTED",
    "Delivery",
    "ScheduleState",
    "Tick",
    "TriggerStore",
    "trigger_run_id",
]
