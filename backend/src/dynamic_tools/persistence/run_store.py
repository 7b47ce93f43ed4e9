"""RunStore: runs and their events in the database, and the engine's EventSink.

Every event is stored as a row of ``run_events`` and applied, in the same transaction, to the
run's row (status, result, error, the yield it waits on) and to the row of the one node it is
about (``run_nodes``): its cost does not depend on how many nodes the run has. Statuses go
``pending → running ⇄ waiting_input → succeeded | failed | cancelled``; a terminal status is
never left.

Design choices:

- **A sync SQLAlchemy engine behind** :func:`asyncio.to_thread`. The same code serves SQLite
  and PostgreSQL with the drivers already needed (pysqlite, psycopg 3), Alembic migrates with
  it, and each call is one short transaction, so a thread hop costs far less than the query.
- **Events are written behind** (``persistence/event_writer.py``): :meth:`RunStore.emit`
  queues and returns; one writer thread stores what every run queued in one transaction per
  batch. Every read of the store first waits for what was queued before it (read your own
  writes); other processes see an event once its batch has committed.
- **Per-run serialisation in the database**, not in this process: the run row is read
  ``FOR UPDATE`` (PostgreSQL) or under SQLite's write lock (``BEGIN IMMEDIATE``), so parallel
  branches, threads and replicas emitting for the same run never lose an update.
- **Replays are idempotent.** A replayed (durable) run emits the same events again; an event is
  identified by ``(run_id, seq, source)`` and a duplicate is ignored. ``source`` is the node (or
  compensation) the event is about: the interpreter numbers the events of parallel children
  from the same base, so ``seq`` alone is not unique across branches.
- **Order** is the store's ``position`` (1, 2, 3 … per run, in commit order); SSE ids and
  ``after`` use it. Events the store writes itself (``run_created``, an interruption, a forced
  cancel) get ``seq = -position``.
- **Observers** (:meth:`observe`, for metrics and traces) are told of every event stored, by
  any path (the engine's events, a cancel or an interruption the store records itself), once
  its transaction has committed; a replayed duplicate is not stored, so it is not told.
- **Live streams**: :meth:`subscribe` wakes on an in-process notification when this process
  stored an event, and otherwise polls the table every ``poll_interval_s``, which is how a
  stream follows a run executing on another replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from typing import Any, TypeVar

from loguru import logger
from sqlalchemy import Engine, func, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.state import NodeState, RunOutcome
from dynamic_tools.errors import ConflictError, ConflictKind, NotFoundError
from dynamic_tools.persistence.db import (
    run_events,
    run_nodes,
    run_values,
    runs,
    utc_now,
    write_transaction,
)
from dynamic_tools.persistence.event_batch import LATER, UPDATE_NODE, append_events
from dynamic_tools.persistence.event_writer import EventWriter
from dynamic_tools.persistence.run_search import (
    Paging,
    RunFilter,
    RunStats,
    matching_ids,
    page_query,
    stats_query,
    value_rows,
)
from dynamic_tools.persistence.run_view import (
    ACTIVE,
    RunEvent,
    RunRecord,
    RunTrigger,
    StoredEvent,
    merge_outcome,
    node_from_row,
    parse_time,
    stored_node,
)

__all__ = ["RunEvent", "RunRecord", "RunStore", "RunTrigger", "StoredEvent"]

Observer = Callable[[StoredEvent], None]
T = TypeVar("T")
MAX_QUEUED = 20_000
"""Events that may wait for the writer before emitting waits too."""


ADMIN = "admin"  # access/principals.ADMIN_ID: the owner of runs from before ownership


def unknown_run(run_id: str) -> NotFoundError:
    """The answer for a run id that names no run — or another principal's run (the same)."""
    return NotFoundError(f"run '{run_id}' does not exist", context={"run_id": run_id})


MAX_MARKS = 10_000
"""How many runs' stored-up-to marks a store keeps (a run another replica ends keeps its own)."""


class RunStore:
    """Runs and run events in one database (see the module docstring for the rules)."""

    def __init__(self, engine: Engine, *, poll_interval_s: float = 1.0) -> None:
        self.engine = engine
        self.poll_interval_s = poll_interval_s
        self._listeners: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._listeners_lock = threading.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._observers: list[Observer] = []
        self.writer = EventWriter(self._write_batch, linger_s=0.02)
        self._latest: dict[str, RunRecord] = {}  # runs someone waits on: as last stored here
        self._stored_up_to: dict[str, int] = {}
        """Per run created here and not ended: the highest event ``seq`` stored (see
        :func:`~dynamic_tools.persistence.event_batch.append_events`)."""

    def observe(self, observer: Observer) -> None:
        """Tell ``observer`` of every event stored from now on, with the run after it.

        Called once the event's transaction has committed, in the thread that stored it
        (possibly a worker thread); it must be quick and must not block. An observer that
        raises is logged and never affects the store or the other observers.
        """
        self._observers.append(observer)

    def _tell(self, stored: StoredEvent | None) -> None:
        if stored is None:
            return
        for observer in self._observers:
            try:
                observer(stored)
            except Exception as exc:  # telemetry must never break a run
                logger.warning(
                    "run store observer failed on {} ({})", stored.event.type, type(exc).__name__
                )

    # --- runs ------------------------------------------------------------------------------
    async def create_run(
        self,
        *,
        workflow_id: str,
        params: dict[str, Any],
        document_version: str | None = None,
        node_ids: list[str] | None = None,
        run_id: str | None = None,
        redrive_of: str | None = None,
        owner: str = ADMIN,
        trace_link: str | None = None,
        trigger: RunTrigger | None = None,
    ) -> RunRecord:
        """Record a new ``pending`` run (nodes listed as pending) and its ``run_created`` event.

        ``redrive_of`` links a redrive to the run whose outputs it reuses; ``owner`` is the
        principal who started it; ``trace_link`` the ``traceparent`` of the span it was
        started from (its run span links to it); ``trigger`` the schedule tick or webhook
        delivery that started it. A ``run_id`` already taken is a 409 (``ConflictError``).
        """
        run_id = run_id or uuid.uuid4().hex
        return await asyncio.to_thread(
            self._create_sync,
            run_id,
            workflow_id,
            params,
            document_version,
            node_ids or [],
            redrive_of,
            owner,
            trace_link,
            trigger,
        )

    def _create_sync(
        self,
        run_id: str,
        workflow_id: str,
        params: dict[str, Any],
        version: str | None,
        node_ids: list[str],
        redrive_of: str | None = None,
        owner: str = ADMIN,
        trace_link: str | None = None,
        trigger: RunTrigger | None = None,
    ) -> RunRecord:
        now = utc_now()
        try:
            with write_transaction(self.engine) as conn:
                conn.execute(
                    insert(runs).values(
                        run_id=run_id,
                        workflow_id=workflow_id,
                        document_version=version,
                        status="pending",
                        params=params,
                        event_count=0,
                        created_at=now,
                        updated_at=now,
                        redrive_of=redrive_of,
                        owner=owner,
                        trace_link=trace_link,
                        trigger_kind=trigger.kind if trigger else None,
                        trigger_name=trigger.name if trigger else None,
                        trigger_time=trigger.time if trigger else None,
                    )
                )
                indexed = value_rows(run_id, "params", params)
                if indexed:  # the run search's index (docs/run-search.md)
                    conn.execute(insert(run_values), indexed)
                if node_ids:
                    conn.execute(
                        insert(run_nodes),
                        [
                            {
                                "run_id": run_id,
                                "node_id": node_id,
                                "ordinal": index,
                                "state": stored_node(NodeState()),
                            }
                            for index, node_id in enumerate(dict.fromkeys(node_ids))
                        ],
                    )
                created = ev.RunCreated(run_id=run_id, at=now.isoformat(), workflow_id=workflow_id)
                stored = self._append(conn, created)
        except IntegrityError:
            raise ConflictError(
                f"run '{run_id}' already exists",
                kind=ConflictKind.EXISTS,
                context={"run_id": run_id},
            ) from None
        self._tell(stored)
        marks = self._stored_up_to
        marks[run_id] = 0  # new: none of its events is stored yet
        if len(marks) > MAX_MARKS:  # runs that end elsewhere: forget the oldest (costs a read)
            marks.pop(next(iter(marks)), None)
        return self._get_sync(run_id)

    async def get_run(self, run_id: str, *, visible_to: str | None = None) -> RunRecord:
        """One run; :class:`NotFoundError` when unknown.

        ``visible_to``: a principal who sees only their own runs — another's run answers
        exactly as an unknown id (None: every run, as for admins and the engine itself).
        """
        await self.writer.flush()
        return await asyncio.to_thread(self._get_sync, run_id, True, visible_to)

    def _get_sync(
        self, run_id: str, with_nodes: bool = True, visible_to: str | None = None
    ) -> RunRecord:
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == run_id)).mappings().first()
            if row is None or (visible_to is not None and row["owner"] != visible_to):
                raise unknown_run(run_id)
            if not with_nodes:
                return RunRecord.from_row(row)
            nodes = conn.execute(
                select(run_nodes.c.node_id, run_nodes.c.state)
                .where(run_nodes.c.run_id == run_id)
                .order_by(run_nodes.c.ordinal)
            ).all()
        return RunRecord.from_row(row, {str(n): state for n, state in nodes})

    async def list_runs(
        self,
        *,
        status: str | None = None,
        workflow_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        offset: int = 0,
        owner: str | None = None,
    ) -> tuple[list[RunRecord], int]:
        """Runs matching the filters, newest first, and how many match in all (no node states).

        ``owner``: only that principal's runs.
        """
        await self.writer.flush()
        return await asyncio.to_thread(
            self._list_sync, status, workflow_id, since, until, limit, offset, owner
        )

    def _list_sync(
        self,
        status: str | None,
        workflow_id: str | None,
        since: datetime | None,
        until: datetime | None,
        limit: int,
        offset: int,
        owner: str | None = None,
    ) -> tuple[list[RunRecord], int]:
        conditions = []
        if owner is not None:
            conditions.append(runs.c.owner == owner)
        if status:
            conditions.append(runs.c.status == status)
        if workflow_id:
            conditions.append(runs.c.workflow_id == workflow_id)
        if since:
            conditions.append(runs.c.created_at >= since)
        if until:
            conditions.append(runs.c.created_at < until)
        query = (
            select(runs)
            .where(*conditions)
            .order_by(runs.c.created_at.desc(), runs.c.run_id)
            .limit(limit)
            .offset(offset)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
            total = conn.execute(select(func.count()).select_from(runs).where(*conditions))
            count = int(total.scalar_one())
        return [RunRecord.from_row(row) for row in rows], count

    async def search(
        self, run_filter: RunFilter, paging: Paging, *, count: bool = True
    ) -> tuple[list[RunRecord], str | None, int, bool]:
        """A page of the runs ``run_filter`` matches (no node states), sorted and paged.

        Returns the runs, the cursor of the next page (None on the last), and how many match
        in all — counted up to ``MAX_COUNTED`` (the last value: whether that count is exact).
        See ``persistence/run_search.py``.
        """
        await self.writer.flush()
        page = await asyncio.to_thread(self._read, page_query(run_filter, paging, count=count))
        found = [RunRecord.from_row(row) for row in page.rows]
        return found, page.next_cursor, page.total, page.total_exact

    async def stats(self, run_filter: RunFilter, bucket: int) -> RunStats:
        """Counts of the matching runs by status, by workflow and per time bucket.

        ``run_filter`` must have its created range (``run_search.stats_range`` fills it in).
        """
        await self.writer.flush()
        return await asyncio.to_thread(self._read, stats_query(run_filter, bucket))

    async def matching_ids(self, run_filter: RunFilter, limit: int) -> list[str]:
        """The ids of up to ``limit`` runs ``run_filter`` matches, newest first."""
        await self.writer.flush()
        return await asyncio.to_thread(self._read, matching_ids(run_filter, limit))

    def _read(self, work: Callable[[Connection], T]) -> T:
        with self.engine.connect() as conn:
            return work(conn)

    def unfinished_counts(self) -> list[tuple[str, str, int]]:
        """``(workflow_id, status, count)`` of the runs not ended (sync: for a metrics scrape)."""
        query = (
            select(runs.c.workflow_id, runs.c.status, func.count())
            .where(runs.c.status.in_(sorted(ACTIVE)))
            .group_by(runs.c.workflow_id, runs.c.status)
        )
        with self.engine.connect() as conn:
            return [(str(w), str(s), int(n)) for w, s, n in conn.execute(query)]

    # --- events ----------------------------------------------------------------------------
    async def emit(self, event: ev.Event) -> None:
        """EventSink: queue ``event`` to be stored and applied to its run (duplicates ignored).

        Returns at once, unless ``MAX_QUEUED`` events already wait (a database slower than
        the runs): then it waits for them, so memory stays bounded.
        """
        self.writer.put(event)
        if self.writer.pending > MAX_QUEUED:
            await self.writer.flush()

    async def flush(self) -> None:
        """Wait until every event emitted so far is stored."""
        await self.writer.flush()

    def _write_batch(self, events: list[ev.Event]) -> None:
        """The writer thread's work: a batch in one transaction, else event by event."""
        try:
            with write_transaction(self.engine) as conn:
                stored = append_events(conn, events, self._stored_up_to)
        except IntegrityError:  # a duplicate raced in by another process: isolate it
            stored = [self._emit_sync(event) for event in events]
        else:
            for item in stored:
                self._tell(item)
        with self._listeners_lock:
            for item in stored:
                if item is not None and item.event.run_id in self._listeners:
                    self._latest[item.event.run_id] = item.run
        for run_id in dict.fromkeys(item.event.run_id for item in stored if item is not None):
            self._notify(run_id)

    def _emit_sync(self, event: ev.Event) -> StoredEvent | None:
        try:
            with write_transaction(self.engine) as conn:
                stored = self._append(conn, event)
        except IntegrityError:  # a concurrent duplicate (same run, seq and source)
            return None
        self._tell(stored)
        return stored

    def _append(self, conn: Connection, event: ev.Event) -> StoredEvent | None:
        return append_events(conn, [event])[0]

    async def events(self, run_id: str, *, after: int = 0, limit: int = 1000) -> list[RunEvent]:
        """Events of a run with ``position > after``, in order; NotFoundError when unknown."""
        await self.writer.flush()
        return await asyncio.to_thread(self._events_sync, run_id, after, limit)

    def _events_sync(self, run_id: str, after: int, limit: int) -> list[RunEvent]:
        query = (
            select(run_events)
            .where(run_events.c.run_id == run_id, run_events.c.position > after)
            .order_by(run_events.c.position)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
            if not rows:
                exists = conn.execute(select(runs.c.run_id).where(runs.c.run_id == run_id))
                if exists.first() is None:
                    raise NotFoundError(
                        f"run '{run_id}' does not exist", context={"run_id": run_id}
                    )
        return [RunEvent.from_row(row) for row in rows]

    async def subscribe(
        self, run_id: str, *, after: int = 0, heartbeat_s: float = 15.0
    ) -> AsyncIterator[RunEvent | None]:
        """Events after ``after``, live, ending after the terminal event.

        Yields None when nothing happened for ``heartbeat_s`` (for keep-alive comments).
        """
        with self._listening(run_id) as wake:
            idle = 0.0
            while True:
                wake.clear()
                batch = await self.events(run_id, after=after)
                for item in batch:
                    after = item.position
                    yield item
                    if item.terminal:
                        return
                if batch:
                    idle = 0.0
                    continue
                run = await self.get_run(run_id)
                if run.terminal and run.event_count <= after:
                    return
                try:
                    await asyncio.wait_for(wake.wait(), self.poll_interval_s)
                except TimeoutError:
                    idle += self.poll_interval_s
                    if idle >= heartbeat_s:
                        idle = 0.0
                        yield None

    async def wait_until(
        self, run_id: str, predicate: Callable[[RunRecord], bool], *, timeout_s: float
    ) -> RunRecord:
        """The run once ``predicate`` holds for it, or as it is after ``timeout_s``.

        ``predicate`` sees the run without its node states (status, waiting, result, error:
        one row however large the run), checked each time an event of the run is stored.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        with self._listening(run_id) as wake:
            await self.writer.flush()
            run = await asyncio.to_thread(self._get_sync, run_id, False)
            while True:
                remaining = deadline - loop.time()
                if predicate(run) or remaining <= 0:
                    return await self.get_run(run_id)
                woken = False
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), min(remaining, self.poll_interval_s))
                    woken = True
                wake.clear()
                with self._listeners_lock:
                    latest = self._latest.get(run_id)
                if woken and latest is not None and latest.event_count >= run.event_count:
                    run = latest  # stored here just now: no need to read it back
                else:  # a timeout: another process may have written it
                    await self.writer.flush()
                    run = await asyncio.to_thread(self._get_sync, run_id, False)

    @contextlib.contextmanager
    def _listening(self, run_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever this process stores an event of ``run_id``."""
        wake = asyncio.Event()
        entry = (asyncio.get_running_loop(), wake)
        with self._listeners_lock:
            self._listeners.setdefault(run_id, set()).add(entry)
        try:
            yield wake
        finally:
            with self._listeners_lock:
                listeners = self._listeners.get(run_id, set())
                listeners.discard(entry)
                if not listeners:
                    self._listeners.pop(run_id, None)
                    self._latest.pop(run_id, None)

    def _notify(self, run_id: str) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners.get(run_id, ()))
        for loop, wake in listeners:
            if not loop.is_closed():
                loop.call_soon_threadsafe(wake.set)

    # --- state changes the store makes itself -----------------------------------------------
    async def finish(self, run_id: str, status: str, error: dict[str, Any] | None = None) -> bool:
        """End a run that is still active with ``status``; False if it had already ended."""
        if status not in ("failed", "cancelled"):
            raise ValueError(f"a run cannot be finished as '{status}'")
        return await self.settle(run_id, status, error=error)

    async def settle(
        self,
        run_id: str,
        status: str,
        *,
        result: Any = None,
        error: dict[str, Any] | None = None,
        by: str = "store",
    ) -> bool:
        """Record the end of a run that is still active; False if it had already ended.

        For ends the engine could not record itself: a cancel, an interrupted local run, or
        an outcome the journal holds but this view missed (``by="reconcile"``).
        """
        result = result if status == "succeeded" else None
        event = ev.run_ended(status, run_id=run_id, result=result, error=error, by=by)
        await self.writer.flush()

        def work() -> bool:
            with write_transaction(self.engine) as conn:
                row = conn.execute(
                    select(runs.c.status).where(runs.c.run_id == run_id).with_for_update()
                ).first()
                if row is None:
                    raise NotFoundError(
                        f"run '{run_id}' does not exist", context={"run_id": run_id}
                    )
                if row[0] not in ACTIVE:
                    return False
                stored = self._append(conn, event)
            self._tell(stored)
            return True

        changed = await asyncio.to_thread(work)
        if changed:
            self._notify(run_id)
        return changed

    async def active_runs(self) -> list[tuple[str, datetime]]:
        """``(run_id, created_at)`` of every run that has not ended, oldest first."""
        await self.writer.flush()

        def work() -> list[tuple[str, datetime]]:
            with self.engine.connect() as conn:
                query = (
                    select(runs.c.run_id, runs.c.created_at)
                    .where(runs.c.status.in_(sorted(ACTIVE)))
                    .order_by(runs.c.created_at)
                )
                return [(str(r[0]), parse_time(r[1])) for r in conn.execute(query)]

        return await asyncio.to_thread(work)

    async def interrupt_unfinished(self, message: str) -> list[str]:
        """Fail every run still active (after a restart of a non-durable launcher)."""

        def active_ids() -> list[str]:
            with self.engine.connect() as conn:
                query = select(runs.c.run_id).where(runs.c.status.in_(sorted(ACTIVE)))
                return [str(r[0]) for r in conn.execute(query)]

        interrupted = []
        for run_id in await asyncio.to_thread(active_ids):
            if await self.finish(run_id, "failed", {"message": message, "reason": "interrupted"}):
                interrupted.append(run_id)
        return interrupted

    async def record_outcome(self, run_id: str, outcome: RunOutcome) -> None:
        """Merge a finished run's final node states (inputs, child items) into its view."""

        def work() -> None:
            with write_transaction(self.engine) as conn:
                row = conn.execute(
                    select(runs.c.event_count).where(runs.c.run_id == run_id).with_for_update()
                ).first()
                if row is None:
                    return
                query = select(run_nodes.c.node_id, run_nodes.c.state).where(
                    run_nodes.c.run_id == run_id
                )
                nodes = {str(n): node_from_row(state) for n, state in conn.execute(query)}
                merged = merge_outcome(nodes, outcome)
                later = LATER + int(row[0]) + 1
                new = [n for n in merged if n not in nodes]
                changed = [n for n in merged if n in nodes and merged[n] != nodes[n]]
                if new:
                    conn.execute(
                        insert(run_nodes),
                        [
                            {
                                "run_id": run_id,
                                "node_id": n,
                                "ordinal": later + i,
                                "state": stored_node(merged[n]),
                            }
                            for i, n in enumerate(new)
                        ],
                    )
                if changed:
                    conn.execute(
                        UPDATE_NODE,
                        [
                            {"b_run": run_id, "b_node": n, "b_state": stored_node(merged[n])}
                            for n in changed
                        ],
                    )

        await self.writer.flush()
        await asyncio.to_thread(work)

    def record_outcome_soon(self, run_id: str, outcome: RunOutcome) -> None:
        """:meth:`record_outcome` in the background (for a launcher's sync done-callback)."""
        task = asyncio.get_running_loop().create_task(self.record_outcome(run_id, outcome))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Wait for background writes (queued events, final node states); stop the writer."""
        await self.writer.flush()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        await asyncio.to_thread(self.writer.close)
