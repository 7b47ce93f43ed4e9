"""The scheduler: each tick of each enabled schedule starts one run, across replicas and restarts.

Every replica runs the same loop (:meth:`Scheduler.run_forever`): it reads the schedules from
the workflow documents, and for each the ticks since the last one dealt with, up to now:

- a tick is **claimed** in the database (``persistence/trigger_store.py``): the first replica to
  insert it deals with it, the others find it taken; its run's id is made from the tick, so a
  claim whose process died before the run started is started later (``repair``), never twice
  (a tick stays ``claimed`` until its run exists, then it is ``started``);
- a tick older than the schedule's ``catch_up`` window (the server was down) is recorded as
  skipped; one inside it starts now;
- the **overlap** policy decides a tick that comes while the schedule's previous run is still
  active: ``skip`` records it as skipped, ``buffer_one`` keeps one to start when that run ends
  (a further one is skipped), ``allow`` starts it anyway.

Why not DBOS's own schedules: they read the wall clock in a thread per schedule (no clock a
test controls), know no overlap policy or catch-up window, and exist only in durable mode. The
claim here follows the same rule DBOS uses — one id per tick — and a durable run started by a
tick is a DBOS workflow like any other. Cron expressions are read by croniter.

The clock is a parameter: tests move it and call :meth:`fire_due` to see a minute's ticks, a
restart across a tick, or two replicas racing, without waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from loguru import logger

from dynamic_tools.access.principals import ADMIN_ID, Principal, Scope
from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.engine.triggers import ScheduleTrigger, trigger_params
from dynamic_tools.errors import ConflictError, DynamicToolsError, NotFoundError
from dynamic_tools.execution.runs import RunService
from dynamic_tools.persistence.db import utc_now
from dynamic_tools.persistence.run_store import RunRecord, RunTrigger
from dynamic_tools.persistence.run_view import iso
from dynamic_tools.persistence.trigger_store import (
    BUFFERED,
    CLAIMED,
    FAILED,
    SKIPPED,
    STARTED,
    ScheduleState,
    Tick,
    TriggerStore,
    trigger_run_id,
)

SCHEDULER = Principal(ADMIN_ID, "scheduler", "trigger", frozenset(Scope))
"""Whom a tick's run belongs to: the admin (a schedule is the document's, not a caller's)."""
MAX_MISSED_RECORDED = 10
"""Ticks missed beyond the catch-up window recorded as skipped (the latest; the rest counted)."""
MAX_MISSED_COUNTED = 10_000
MAX_DUE_PER_PASS = 100
"""Ticks inside the catch-up window started in one pass (a second-interval after downtime)."""
REPAIR_AFTER_S = 30.0


TriggerCounter = Callable[[str, str, str, str], None]
"""Told of each tick or delivery: ``(kind, workflow_id, trigger name, outcome)`` (metrics)."""


@dataclass(frozen=True)
class ScheduleRef:
    """One schedule of one workflow."""

    workflow_id: str
    schedule: ScheduleTrigger


@dataclass
class PassReport:
    """What one pass did: ticks by outcome (for logs and tests)."""

    started: list[str] = field(default_factory=list)
    skipped: int = 0
    buffered: int = 0
    failed: int = 0


class Scheduler:
    """Fires the schedules of the workflow documents (see the module docstring)."""

    def __init__(
        self,
        workflows: WorkflowRepository,
        runs: RunService,
        triggers: TriggerStore,
        *,
        clock: Callable[[], datetime] = utc_now,
        poll_s: float = 5.0,
        count: TriggerCounter | None = None,
    ) -> None:
        self.workflows = workflows
        self.runs = runs
        self.triggers = triggers
        self.clock = clock
        self.poll_s = poll_s
        self.count = count or (lambda kind, workflow, trigger, outcome: None)

    # --- what exists -----------------------------------------------------------------------
    def schedules(self, workflow_id: str | None = None) -> list[ScheduleRef]:
        """The schedules the documents declare (of one workflow, or all)."""
        found: list[ScheduleRef] = []
        for wid, workflow in self.workflows.definitions().items():
            if workflow_id is not None and wid != workflow_id:
                continue
            found.extend(
                ScheduleRef(wid, t) for t in workflow.triggers if isinstance(t, ScheduleTrigger)
            )
        return found

    def schedule(self, workflow_id: str, name: str) -> ScheduleRef:
        """One schedule; 404 naming the schedules the workflow has when there is none."""
        workflow = self.workflows.workflow(workflow_id)  # 404 for an unknown workflow
        for ref in self.schedules(workflow_id):
            if ref.schedule.name == name:
                return ref
        names = [t.name for t in workflow.triggers if isinstance(t, ScheduleTrigger)]
        raise NotFoundError(
            f"workflow '{workflow_id}' has no schedule '{name}'"
            + (f" (its schedules: {', '.join(names)})" if names else " (it declares none)"),
            context={"workflow_id": workflow_id, "schedule": name},
        )

    # --- one pass ------------------------------------------------------------------------------
    async def fire_due(self, now: datetime | None = None) -> PassReport:
        """Deal with every tick due by ``now`` (default: the clock) once; what was done."""
        now = now or self.clock()
        report = PassReport()
        states = await self.triggers.states()
        buffered = await self.triggers.buffered()
        for ref in self.schedules():
            if not ref.schedule.enabled:
                continue
            state = states.get((ref.workflow_id, ref.schedule.name), ScheduleState())
            try:
                waiting = buffered.get((ref.workflow_id, ref.schedule.name))
                await self._deal(ref, state, now, report, waiting)
            except Exception as exc:  # one schedule's trouble never stops the others
                logger.warning(
                    "schedule {}/{} failed a pass: {}", ref.workflow_id, ref.schedule.name, exc
                )
        await self._repair(report)
        return report

    async def _deal(
        self,
        ref: ScheduleRef,
        state: ScheduleState,
        now: datetime,
        report: PassReport,
        waiting: Tick | None = None,
    ) -> None:
        workflow_id, schedule = ref.workflow_id, ref.schedule
        if state.paused:
            return
        if state.last_tick is None:  # first seen: count from now, fire nothing old
            await self.triggers.advance(workflow_id, schedule.name, now)
            return
        if waiting is not None:
            await self._release_buffered(ref, waiting, report)
        window_start = now - timedelta(seconds=schedule.catch_up_s)
        missed: list[datetime] = []
        missed_count = 0
        due: list[datetime] = []
        for tick in schedule.ticks_after(state.last_tick):
            if tick > now or len(due) >= MAX_DUE_PER_PASS or missed_count >= MAX_MISSED_COUNTED:
                break
            if tick < window_start:
                missed_count += 1
                missed = [*missed[-(MAX_MISSED_RECORDED - 1) :], tick]
            else:
                due.append(tick)
        reason = (
            f"missed: not fired within the catch-up window ({missed_count} ticks; the servers "
            "were down, or the schedule was turned off in its document)"
        )
        for tick in missed:
            if await self.triggers.claim(workflow_id, schedule.name, tick, SKIPPED, reason=reason):
                report.skipped += 1
                self.count("schedule", workflow_id, schedule.name, "missed")
        for tick in due:
            await self._fire(ref, tick, report)
        last: datetime | None = (due or missed)[-1] if (due or missed) else None
        if missed_count >= MAX_MISSED_COUNTED:
            last = window_start  # the rest of the gap is past the window too
        if last is not None:
            await self.triggers.advance(workflow_id, schedule.name, last)

    async def _fire(self, ref: ScheduleRef, tick: datetime, report: PassReport) -> None:
        workflow_id, schedule = ref.workflow_id, ref.schedule
        name = schedule.name
        active = (
            []
            if schedule.overlap == "allow"
            else await self.triggers.active_runs(workflow_id, name)
        )
        run_id = trigger_run_id(workflow_id, "schedule", name, tick.isoformat())
        if not active:
            if await self.triggers.claim(workflow_id, name, tick, CLAIMED, run_id=run_id):
                await self._start(ref, tick, run_id, report)
            return
        overlap = f"overlap: run {active[0]} was still active"
        if schedule.overlap == "buffer_one":
            waiting = await self.triggers.ticks(workflow_id, name, outcome=BUFFERED, limit=1)
            if not waiting:
                if await self.triggers.claim(
                    workflow_id, name, tick, BUFFERED, reason=overlap, run_id=run_id
                ):
                    report.buffered += 1
                    self.count("schedule", workflow_id, name, BUFFERED)
                return
            overlap += f", and tick {waiting[0].tick_at.isoformat()} already waits"
        if await self.triggers.claim(workflow_id, name, tick, SKIPPED, reason=overlap):
            report.skipped += 1
            self.count("schedule", workflow_id, name, "overlap")

    async def _release_buffered(self, ref: ScheduleRef, tick: Tick, report: PassReport) -> None:
        """Start the buffered tick once the run it waited for has ended."""
        workflow_id, name = ref.workflow_id, ref.schedule.name
        if await self.triggers.active_runs(workflow_id, name):
            return
        run_id = tick.run_id or trigger_run_id(
            workflow_id, "schedule", name, tick.tick_at.isoformat()
        )
        if await self.triggers.settle(
            workflow_id, name, tick.tick_at, CLAIMED, was=BUFFERED, run_id=run_id
        ):
            await self._start(ref, tick.tick_at, run_id, report)

    async def _start(
        self, ref: ScheduleRef, tick: datetime, run_id: str, report: PassReport
    ) -> RunRecord | None:
        """Start the run of a claimed tick; a tick whose run cannot start is recorded failed."""
        workflow_id, schedule = ref.workflow_id, ref.schedule
        trigger = RunTrigger("schedule", schedule.name, tick)
        run: RunRecord | None = None
        try:
            params = trigger_params(schedule, _trigger_names(trigger))
            prepared = self.runs.workflows.prepare_run(workflow_id, params)
            run = await self.runs.start_prepared(
                prepared, principal=SCHEDULER, run_id=run_id, trigger=trigger
            )
        except ConflictError:
            pass  # its run exists: another replica (or an earlier pass) started it
        except DynamicToolsError as exc:
            await self.triggers.settle(
                workflow_id, schedule.name, tick, FAILED, was=CLAIMED, reason=exc.message
            )
            report.failed += 1
            self.count("schedule", workflow_id, schedule.name, FAILED)
            logger.warning("schedule {}/{} tick {}: {}", workflow_id, schedule.name, tick, exc)
            return None
        await self.triggers.settle(
            workflow_id, schedule.name, tick, STARTED, was=CLAIMED, run_id=run_id
        )
        if run is not None:
            report.started.append(run.run_id)
            self.count("schedule", workflow_id, schedule.name, STARTED)
        return run

    async def _repair(self, report: PassReport) -> None:
        """Start the runs of ticks claimed by a process that died before starting them."""
        for workflow_id, name, tick in await self.triggers.orphaned(REPAIR_AFTER_S):
            with contextlib.suppress(NotFoundError):
                ref = self.schedule(workflow_id, name)
                await self._start(ref, tick.tick_at, tick.run_id or "", report)

    # --- actions -----------------------------------------------------------------------------
    async def run_now(self, workflow_id: str, name: str, *, principal: Principal) -> RunRecord:
        """Start a run of the schedule at once, as its next tick would (the caller owns it)."""
        ref = self.schedule(workflow_id, name)
        trigger = RunTrigger("schedule", name, self.clock())
        params = trigger_params(ref.schedule, _trigger_names(trigger))
        prepared = self.runs.workflows.prepare_run(workflow_id, params)
        return await self.runs.start_prepared(prepared, principal=principal, trigger=trigger)

    async def set_paused(
        self, workflow_id: str, name: str, paused: bool, *, principal: Principal
    ) -> dict[str, Any]:
        """Pause or resume a schedule (a resumed one does not catch up what it missed).

        Returns the schedule as :meth:`describe` shows it, after the change.
        """
        self.schedule(workflow_id, name)
        await self.triggers.set_paused(workflow_id, name, paused, by=principal.id, now=self.clock())
        return next(s for s in await self.describe(workflow_id) if s["name"] == name)

    async def describe(self, workflow_id: str, *, next_count: int = 5) -> list[dict[str, Any]]:
        """Each schedule of a workflow: its definition, state, next fire times, last ticks."""
        self.workflows.workflow(workflow_id)  # 404 for an unknown workflow
        states = await self.triggers.states(workflow_id)
        now = self.clock()
        out = []
        for ref in self.schedules(workflow_id):
            schedule = ref.schedule
            state = states.get((workflow_id, schedule.name), ScheduleState())
            ticks = await self.triggers.ticks(workflow_id, schedule.name, limit=10)
            firing = schedule.enabled and not state.paused
            out.append(
                {
                    "name": schedule.name,
                    "cron": schedule.cron,
                    "every": None if schedule.every is None else str(schedule.every),
                    "timezone": schedule.timezone,
                    "overlap": schedule.overlap,
                    "catch_up": str(schedule.catch_up),
                    "enabled": schedule.enabled,
                    "paused": state.paused,
                    "paused_by": state.updated_by if state.paused else None,
                    "params": schedule.params,
                    "next_fire_times": [iso(t) for t in schedule.next_ticks(now, next_count)]
                    if firing
                    else [],
                    "last_ticks": [t.to_dict() for t in ticks],
                }
            )
        return out

    # --- the loop ------------------------------------------------------------------------------
    async def run_forever(self, stop: asyncio.Event) -> None:
        """Pass after pass until ``stop`` is set: wake at the next tick, or every ``poll_s``."""
        while not stop.is_set():
            try:
                await self.fire_due()
            except Exception as exc:  # e.g. the database is briefly unreachable
                logger.warning("scheduler pass failed: {}", exc)
            try:
                sleep_s = self._sleep_s()
            except Exception as exc:  # a document that cannot say when it fires next
                logger.warning("scheduler could not compute its next tick: {}", exc)
                sleep_s = self.poll_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=sleep_s)

    def _sleep_s(self) -> float:
        now = self.clock()
        upcoming = [
            t
            for ref in self.schedules()
            if ref.schedule.enabled
            for t in ref.schedule.next_ticks(now, 1)
        ]
        until_next = min(((t - now).total_seconds() for t in upcoming), default=self.poll_s)
        return min(max(until_next + 0.01, 0.05), self.poll_s)


def _trigger_names(trigger: RunTrigger) -> dict[str, Any]:
    """What ``$trigger`` holds in a schedule's params."""
    return {"kind": trigger.kind, "name": trigger.name, "time": iso(trigger.time)}


__all__ = ["SCHEDULER", "PassReport", "ScheduleRef", "Scheduler", "Tick"]
