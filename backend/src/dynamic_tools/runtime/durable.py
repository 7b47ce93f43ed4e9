"""Durable runs on DBOS Transact: the launcher, the run workflows, and a client for other processes.

One generic DBOS workflow, :func:`run_workflow`, interprets any document. The run id is the
DBOS workflow id; the inputs are the document (as JSON), the workflow id and the params, so
editing a document never changes a run in flight. Parallel branches and foreach items run as
:func:`run_child_workflow` children (``durable_steps.py`` explains the order of operations and
how a cancel reaches a running run).

Where the tools and events come from: DBOS calls the workflow functions itself (on recovery,
after a restart), so they cannot receive them as arguments. :meth:`DurableLauncher.launch`
puts the tool runner, the event sink and the registry of live runs in the module-level
``_runtime`` before DBOS starts, and :meth:`DurableLauncher.shutdown` clears it. DBOS is a
process-wide singleton, so only one launcher can be launched per process.

How the rules of ``docs/durability.md`` are kept (same numbers):

1. step order: ``durable_steps.py`` (named steps, children as child workflows with the spec's
   id, ``DBOS.asyncio_wait`` to collect them);
2. :data:`APP_VERSION` is pinned;
3. the executor id is :attr:`DurableConfig.executor_id`, required: on SQLite the fixed
   identity kept beside the journal (``journal_lock.py``; one process per journal, enforced by
   a file lock), on PostgreSQL ``EXECUTOR_ID`` (default the host name, never the port), proved
   by a session advisory lock (:class:`ExecutorPresence`);
4. failover: on SQLite the one process of a journal finishes everything unfinished in it
   (:meth:`DurableLauncher._adopt_orphans`). On PostgreSQL, every ``failover_check_s``, each
   replica looks for executors with unfinished runs whose presence lock is free and takes
   them over (:meth:`DurableLauncher.check_replicas`) while holding the dead one's lock, so
   each run moves exactly once; :meth:`DurableLauncher.take_over` serves
   ``POST /runs/recover``;
5. new runs go through the shared queue :data:`RUN_QUEUE` on PostgreSQL (``run_concurrency``
   per replica; a run waiting for input leaves it, :meth:`DurableLauncher._leave_queue`);
6. idempotency keys: ``engine/tool_calls.py``;
7. a yield waits with its own timeout, or a century;
8. both workflows have ``max_recovery_attempts=None``;
9. SQLite is put in WAL mode before launch (:func:`enable_wal`);
10. everything is stored with DBOS's portable JSON serializer;
11. :meth:`DurableLauncher.launch` is called once, from the app's lifespan; other processes
    use :class:`DurableRunClient` (a ``DBOSClient``);
12. the run store is reconciled with the journal: ``reconcile.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from dbos import (
    DBOS,
    DBOSClient,
    DBOSConfig,
    DBOSPortableJSONSerializer,
    Queue,
    SetWorkflowID,
    WorkflowHandleAsync,
    WorkflowSerializationFormat,
    WorkflowStatus,
)
from dbos import error as dbos_errors
from loguru import logger
from sqlalchemy import make_url
from sqlalchemy.pool import NullPool

from dynamic_tools.engine.children import ChildSpec
from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.local import RUN_CANCELLED
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.plan import RunPlan, compile_plan
from dynamic_tools.engine.ports import ChildCancelled, ChildFailed, EventSink, ToolRunner
from dynamic_tools.engine.state import RunOutcome
from dynamic_tools.errors import ConfigurationError, ConflictError, NotFoundError
from dynamic_tools.runtime.durable_steps import (
    CANCEL_ATTRIBUTE,
    DurableSteps,
    LiveExecution,
    LiveRuns,
    ShutdownAwareEvents,
)
from dynamic_tools.runtime.journal_lock import JournalLock
from dynamic_tools.runtime.launcher import yield_step_name
from dynamic_tools.runtime.reconcile import FINISHED as JOURNAL_FINISHED
from dynamic_tools.runtime.reconcile import JournalEntry

APP_VERSION = "dynamic-tools-interpreter-2"
"""The DBOS application version of every run (rule 2).

DBOS recovers only the runs of the version it runs, so this is a constant, not the package
version. Bump it ONLY when the order in which operations are issued changes (the interpreter,
``engine/tool_calls.py`` or ``durable_steps.py``): runs paused under the old version are then
stranded until a process of the old version finishes them.
"""

RUN_QUEUE = "dynamic-tools-runs"
"""The shared queue of new runs on PostgreSQL (any replica with room executes them)."""

_LEAVE_QUEUE = (
    "UPDATE {schema}.workflow_status SET queue_name = NULL "
    "WHERE workflow_uuid = :id AND queue_name = :q AND status = 'PENDING'"
)
_LOCK_HELD = (  # is a session advisory lock on hashtextextended(:name, 0) held? (takes nothing)
    "WITH k AS (SELECT hashtextextended(:name, 0) AS key) "
    "SELECT EXISTS (SELECT 1 FROM pg_locks, k WHERE locktype = 'advisory' AND granted "
    "AND objsubid = 1 AND classid::text::bigint = ((k.key >> 32) & 4294967295) "
    "AND objid::text::bigint = (k.key & 4294967295))"
)
_PENDING_OWNERS = (
    "SELECT DISTINCT executor_id FROM {schema}.workflow_status "
    "WHERE status = 'PENDING' AND executor_id IS NOT NULL AND executor_id <> :me"
)

RUN_WORKFLOW = "dynamic_tools.run"
CHILD_WORKFLOW = "dynamic_tools.run_child"
FINISHED = tuple(sorted(JOURNAL_FINISHED))
WAIT_POLL_S = 0.2


@dataclass(frozen=True)
class DurableConfig:
    """Where runs are stored and who runs them.

    Attributes:
        database_url: The DBOS system database: ``sqlite:///path/runs.sqlite`` (one process)
            or ``postgresql://user@host:5432/db`` (any number of replicas).
        executor_id: This replica's id: unique among replicas and stable across its restarts
            (a replica recovers the runs of its own id).
        app_name: The DBOS application name (lowercase letters, digits, ``-``, ``_``).
        schema: The PostgreSQL schema of DBOS's tables (ignored for SQLite).
        cancel_poll_s: How often this process looks for cancel requests made by another
            process for the runs it executes. Requests made here take effect at once.
        notification_poll_s: How often DBOS polls for messages on SQLite (PostgreSQL is told
            by LISTEN/NOTIFY): the delay before a yield sees its answer.
        log_level: DBOS's own log level.
        run_concurrency: PostgreSQL: how many runs of the shared queue one replica executes at
            once (a run waiting for input gives its slot back).
        queue_poll_s: PostgreSQL: how often a replica looks for queued runs.
        failover_check_s: PostgreSQL: how often a replica looks for dead replicas whose runs
            it should take over (0: never; ``POST /runs/recover`` still works).
        serving: What this process serves (its URL), named by the journal lock's message.
    """

    database_url: str
    executor_id: str
    app_name: str = "dynamic-tools"
    schema: str = "dbos"
    cancel_poll_s: float = 1.0
    notification_poll_s: float = 1.0
    log_level: str = "WARNING"
    run_concurrency: int = 10
    queue_poll_s: float = 0.2
    failover_check_s: float = 5.0
    serving: str = ""

    def __post_init__(self) -> None:
        if not self.executor_id.strip():
            raise ConfigurationError("durable runs need an executor id (one per replica)")
        if self.cancel_poll_s <= 0 or self.notification_poll_s <= 0 or self.queue_poll_s <= 0:
            raise ConfigurationError("poll intervals must be positive")
        if self.run_concurrency < 1 or self.failover_check_s < 0:
            raise ConfigurationError("run_concurrency must be >= 1, failover_check_s >= 0")

    @property
    def journal_path(self) -> Path:
        """The SQLite journal file (only for a SQLite system database)."""
        path = make_url(self.database_url).database
        if not self.is_sqlite or not path or path == ":memory:":
            raise ConfigurationError(f"durable runs need a SQLite file, not '{self.database_url}'")
        return Path(path)

    @property
    def is_sqlite(self) -> bool:
        """Whether the system database is a SQLite file."""
        return self.database_url.startswith("sqlite")


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """The database URL of a SQLite file."""
    return f"sqlite:///{os.fspath(path)}"


def enable_wal(database_url: str) -> None:
    """Put a SQLite database in WAL mode (persistent; 3-4x faster steps, rule 7)."""
    path = make_url(database_url).database
    if not path or path == ":memory:":
        raise ConfigurationError(f"durable runs need a SQLite file, not '{database_url}'")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise ConfigurationError(f"could not put '{path}' in WAL mode (got {mode})")


def dbos_config(config: DurableConfig) -> DBOSConfig:
    """The DBOS configuration for ``config``."""
    dbos: DBOSConfig = {
        "name": config.app_name,
        "system_database_url": config.database_url,
        "application_version": APP_VERSION,
        "executor_id": config.executor_id,
        "serializer": DBOSPortableJSONSerializer(),
        "log_level": config.log_level,
        "notification_listener_polling_interval_sec": config.notification_poll_s,
    }
    if not config.is_sqlite:
        dbos["dbos_system_schema"] = config.schema
    return dbos


def _epoch_ms(value: Any) -> str | None:
    if value is None:
        return None
    try:
        moment = datetime.fromtimestamp(int(value) / 1000, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return moment.isoformat().replace("+00:00", "Z")


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def outcome_from_dict(data: dict[str, Any]) -> RunOutcome:
    """Inverse of :meth:`RunOutcome.to_dict`."""
    return RunOutcome.from_dict(data)


# --- liveness of replicas (PostgreSQL) ------------------------------------------------------
PRESENCE_WAIT_S = 15.0
"""How long a launching replica waits for its presence lock (a killed predecessor's session
ends as soon as PostgreSQL sees its connection close)."""


class ExecutorPresence:
    """Proof that a replica is alive: a PostgreSQL session advisory lock on its executor id.

    The replica takes the lock when it launches and holds it, on a connection of its own,
    until it shuts down; when its process dies (kill -9, a lost host) PostgreSQL ends the
    session and the lock is free. So "the lock can be taken" means "no process runs with that
    executor id", which :meth:`DurableLauncher.take_over` requires (docs/durability.md, rule
    4), and a second process started with a live replica's id refuses to launch (rule 3). The lock's
    name includes the application and the DBOS schema, so separate installations sharing one
    database do not see each other. SQLite needs none of this (one process per file).
    """

    def __init__(self, config: DurableConfig, executor_id: str | None = None) -> None:
        self.config = config
        self.executor_id = executor_id or config.executor_id
        self._engine: sa.Engine | None = None
        self._connection: sa.Connection | None = None

    @property
    def name(self) -> str:
        """The lock's name (hashed to the 64-bit key PostgreSQL locks on)."""
        return f"dynamic-tools:{self.config.app_name}:{self.config.schema}:{self.executor_id}"

    def _connect(self) -> sa.Connection:
        url = make_url(self.config.database_url).set(drivername="postgresql+psycopg")
        self._engine = sa.create_engine(url, poolclass=NullPool)
        return self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def try_acquire(self) -> bool:
        """Take the lock if it is free (keeping the connection); False if someone holds it."""
        if self._connection is None:
            self._connection = self._connect()
        taken = self._connection.execute(
            sa.text("SELECT pg_try_advisory_lock(hashtextextended(:name, 0))"),
            {"name": self.name},
        ).scalar()
        return bool(taken)

    def acquire(self, wait_s: float = PRESENCE_WAIT_S, poll_s: float = 0.2) -> None:
        """Take the lock, waiting up to ``wait_s``; ConflictError if it stays taken."""
        deadline = time.monotonic() + wait_s
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                self.release()
                raise ConflictError(
                    f"another process is running with executor id '{self.executor_id}' on "
                    "this database; every replica needs its own id (EXECUTOR_ID)",
                    context={"executor_id": self.executor_id},
                )
            time.sleep(poll_s)

    def release(self) -> None:
        """Give the lock back (closing the session)."""
        connection, engine = self._connection, self._engine
        self._connection = self._engine = None
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()
        if engine is not None:
            engine.dispose()


# --- what the workflows run with (set by DurableLauncher.launch) ------------------------------
@dataclass
class _Runtime:
    tools: ToolRunner
    events: EventSink
    live: LiveRuns
    on_finished: Callable[[str, RunOutcome], None] | None


_runtime: _Runtime | None = None


def _current() -> _Runtime:
    if _runtime is None:  # pragma: no cover - DBOS only runs workflows after launch()
        raise ConfigurationError("no durable launcher is launched in this process")
    return _runtime


@functools.lru_cache(maxsize=64)
def _plan_of(document_json: str, workflow_id: str) -> RunPlan:
    """The plan of a journaled document, compiled once per process (children reuse it).

    The document was validated when its run was prepared; tools are not checked again, so a
    run replayed after a tool was removed fails at that call, not before it starts.
    """
    return compile_plan(WorkflowDocument.model_validate_json(document_json), workflow_id)


def _interpreter(
    document: dict[str, Any],
    workflow_id: str,
    run_id: str,
    execution: LiveExecution,
    runtime: _Runtime,
) -> Interpreter:
    steps = DurableSteps(execution, runtime.live, functools.partial(_start_child, document, run_id))
    return Interpreter(
        _plan_of(json.dumps(document, sort_keys=True), workflow_id),
        run_id=run_id,
        tools=runtime.tools,
        steps=steps,
        events=ShutdownAwareEvents(runtime.events, runtime.live),
    )


async def _start_child(
    document: dict[str, Any], run_id: str, spec: ChildSpec
) -> WorkflowHandleAsync[dict[str, Any]]:
    with SetWorkflowID(spec.id):
        return await DBOS.start_workflow_async(
            run_child_workflow, document, run_id, spec.to_dict(), spec.seq_base
        )


@DBOS.workflow(
    name=RUN_WORKFLOW,
    max_recovery_attempts=None,
    serialization_type=WorkflowSerializationFormat.PORTABLE,
)
async def run_workflow(
    document: dict[str, Any], workflow_id: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Run ``workflow_id`` of ``document``; the DBOS workflow id is the run id.

    Returns the run's outcome (:meth:`RunOutcome.to_dict`): a failed or cancelled run is a
    successful DBOS workflow.
    """
    runtime = _current()
    run_id = str(DBOS.workflow_id)
    with runtime.live.execution(run_id, run_id) as execution:
        interpreter = _interpreter(document, workflow_id, run_id, execution, runtime)
        try:
            outcome = await interpreter.run(params)
        except asyncio.CancelledError:
            if not execution.delivered:  # shutting down: leave the run to the next process
                raise
            outcome = RunOutcome(
                "cancelled",
                error={"message": "the run was cancelled"},
                nodes=interpreter.nodes,
            )
    if runtime.on_finished is not None:  # at least once: again if the process dies right here
        try:
            runtime.on_finished(run_id, outcome)
        except Exception as exc:  # the run's outcome is recorded regardless
            logger.warning("on_finished failed for run {}: {}", run_id, exc)
    return outcome.to_dict()


@DBOS.workflow(
    name=CHILD_WORKFLOW,
    max_recovery_attempts=None,
    serialization_type=WorkflowSerializationFormat.PORTABLE,
)
async def run_child_workflow(
    document: dict[str, Any], run_id: str, spec: dict[str, Any], seq_base: int
) -> dict[str, Any]:
    """Run one parallel branch or foreach item of ``run_id`` (``Interpreter.run_child``).

    The result is journaled as JSON: ``ok``, ``error``, ``cancelled`` and ``value`` (the
    :meth:`ChildResult.to_dict` of what the child registered).
    """
    runtime = _current()
    child = ChildSpec.from_dict({**spec, "seq_base": seq_base})
    with runtime.live.execution(run_id, str(DBOS.workflow_id)) as execution:
        interpreter = _interpreter(document, child.workflow_id, run_id, execution, runtime)
        try:
            result = await interpreter.run_child(child)
            return {"ok": True, "value": result.to_dict()}
        except ChildCancelled as exc:
            if not execution.delivered:
                raise
            # What the child registered (its compensations) goes back to the parent.
            payload = exc.payload.to_dict()
            return {"ok": False, "cancelled": True, "error": RUN_CANCELLED, "value": payload}
        except asyncio.CancelledError:
            if not execution.delivered:
                raise
            return {"ok": False, "cancelled": True, "error": RUN_CANCELLED, "value": None}
        except ChildFailed as exc:  # a failed child is an outcome, as in LocalSteps
            return {"ok": False, "error": exc.message, "value": exc.payload.to_dict()}
        except Exception as exc:  # the child crashed outside the interpreter's handling
            return {"ok": False, "error": str(exc) or type(exc).__name__, "value": None}


# --- routing answers ---------------------------------------------------------------------------
Existing = Callable[[list[str]], Awaitable[set[str]]]


async def yield_owner(run_id: str, node_id: str, existing: Existing) -> str:
    """The workflow that waits for the yield ``node_id`` of ``run_id``.

    A yield inside a parallel branch or a foreach item waits in that child workflow, whose id
    (``{run_id}/{node}/{branch-or-index}``) prefixes the yield's own path: the deepest such
    workflow that exists is the one waiting.
    """
    parts = node_id.split("/")
    candidates = [run_id] + [f"{run_id}/{'/'.join(parts[:i])}" for i in range(1, len(parts))]
    found = await existing(candidates)
    if run_id not in found:
        raise NotFoundError(f"run '{run_id}' does not exist", context={"run_id": run_id})
    return max((c for c in candidates if c in found), key=len)


def _statuses_to_ids(statuses: list[WorkflowStatus]) -> set[str]:
    return {s.workflow_id for s in statuses}


class DurableLauncher:
    """Runs as DBOS workflows: they survive a crash; a paused run can be answered from anywhere.

    After a crash, a replica resumes the runs of its own executor id when it launches again;
    the runs of a replica that is gone for good need :meth:`take_over`. Keeps the
    :class:`~dynamic_tools.runtime.launcher.RunLauncher` contract. Call :meth:`launch` once
    per process (the app's lifespan) from the event loop that serves the app, and
    :meth:`shutdown` at the end.
    """

    def __init__(
        self,
        config: DurableConfig,
        *,
        tools: ToolRunner,
        events: EventSink,
        on_finished: Callable[[str, RunOutcome], None] | None = None,
    ) -> None:
        self.config = config
        self.tools = tools
        self.events = events
        self.on_finished = on_finished
        self.durable = True
        self.live = LiveRuns()
        self._handles: dict[str, WorkflowHandleAsync[dict[str, Any]]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._launched = False
        self._presence: ExecutorPresence | None = None
        self._journal_lock: JournalLock | None = None
        self._queue: Queue | None = None
        self._journal_db: sa.Engine | None = None  # PostgreSQL: liveness and queue questions
        self.on_takeover: Callable[[str, list[str]], None] | None = None
        """Told after each takeover (the executor taken over, the workflows re-queued)."""

    # --- lifecycle ----------------------------------------------------------------------------
    async def launch(self) -> None:
        """Start DBOS in this process; runs left unfinished by this executor resume now."""
        global _runtime
        if _runtime is not None:
            raise ConflictError("a durable launcher is already launched in this process")
        if self.config.is_sqlite:  # one process per journal (it names the other one if not)
            lock = JournalLock(
                self.config.journal_path,
                holder={"serving": self.config.serving, "executor_id": self.config.executor_id},
            )
            await asyncio.to_thread(lock.acquire)
            self._journal_lock = lock
            try:
                enable_wal(self.config.database_url)
            except BaseException:
                self._release_presence()
                raise
        else:  # prove no other process runs with this executor id (and keep proving it)
            presence = ExecutorPresence(self.config)
            await asyncio.to_thread(presence.acquire)
            self._presence = presence
        _runtime = _Runtime(self.tools, self.events, self.live, self.on_finished)
        try:
            DBOS(config=dbos_config(self.config))
            DBOS.launch()  # in the running loop: DBOS runs recovered workflows on it
            if self.config.is_sqlite:
                await self._adopt_orphans()
            else:
                self._queue = await DBOS.register_queue_async(
                    RUN_QUEUE,
                    worker_concurrency=self.config.run_concurrency,
                    polling_interval_sec=self.config.queue_poll_s,
                    on_conflict="always_update",
                )
                self.live.on_waiting = self._leave_queue
        except BaseException:
            _runtime = None
            DBOS.destroy()
            self._release_presence()
            raise
        self._launched = True
        self._poller = asyncio.create_task(self._poll_cancel_requests(), name="durable-cancels")
        if not self.config.is_sqlite and self.config.failover_check_s > 0:
            self._watcher = asyncio.create_task(self._watch_replicas(), name="durable-failover")

    async def _adopt_orphans(self) -> list[str]:
        """SQLite: resume the unfinished runs that an earlier identity left in this journal.

        This process holds the journal's lock, so nobody else executes anything in it: runs
        recorded under another executor id (an older version's ``host-port`` id, a changed
        ``EXECUTOR_ID``) are this process's to finish.
        """
        pending = await DBOS.list_workflows_async(
            status="PENDING", load_input=False, load_output=False
        )
        orphans = [s.workflow_id for s in pending if s.executor_id != self.config.executor_id]
        for workflow_id in orphans:
            await DBOS.resume_workflow_async(workflow_id)
        if orphans:
            logger.warning(
                "resumed {} unfinished workflows left by an earlier executor id", len(orphans)
            )
        return orphans

    async def shutdown(self) -> None:
        """Stop executing runs without recording anything, then stop DBOS.

        Runs in flight stay pending in the database and resume when an executor with the same
        id launches again.
        """
        global _runtime
        if not self._launched:
            return
        self._launched = False
        self.live.shutting_down = True
        tasks = self.live.tasks()
        tasks.extend(t for t in (self._poller, self._watcher) if t is not None)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        DBOS.destroy()
        _runtime = None
        self._release_presence()
        # DBOS made its (now stopped) thread pool this loop's default executor: give the loop a
        # fresh one, so asyncio.to_thread works again (e.g. for a later launch in this loop).
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(thread_name_prefix="asyncio")
        )

    def _release_presence(self) -> None:
        if self._presence is not None:
            self._presence.release()
            self._presence = None
        if self._journal_db is not None:
            self._journal_db.dispose()
            self._journal_db = None
        if self._journal_lock is not None:
            self._journal_lock.release()
            self._journal_lock = None

    def _require_launched(self) -> None:
        if not self._launched:
            raise ConfigurationError("the durable launcher is not launched")

    # --- RunLauncher --------------------------------------------------------------------------
    async def start(self, *, run_id: str, plan: RunPlan, params: dict[str, Any]) -> None:
        """Start the run (returns once it is recorded and started)."""
        self._require_launched()
        if await DBOS.get_workflow_status_async(run_id) is not None:
            raise ConflictError(f"run '{run_id}' already exists", context={"run_id": run_id})
        body = plan.document.model_dump(mode="json", by_alias=True)
        workflow_id = plan.workflow_id
        with SetWorkflowID(run_id):
            if self._queue is None:  # SQLite: this process is the only executor
                handle = await DBOS.start_workflow_async(run_workflow, body, workflow_id, params)
            else:  # PostgreSQL: the first replica with room takes it
                handle = await self._queue.enqueue_async(run_workflow, body, workflow_id, params)
        self._handles[run_id] = handle
        task = getattr(handle, "task", None)
        if isinstance(task, asyncio.Future):  # forget it once done; wait() then asks the database
            task.add_done_callback(lambda _: self._handles.pop(run_id, None))

    async def resume(self, run_id: str, node_id: str, values: dict[str, Any]) -> None:
        """Send the answer of the yield ``node_id`` (kept until the yield reads it)."""
        self._require_launched()
        target = await yield_owner(run_id, node_id, self._existing)
        await DBOS.send_async(target, values, topic=yield_step_name(node_id))

    async def cancel(self, run_id: str) -> None:
        """Cancel the run: its step in flight stops, its compensations run, it ends cancelled.

        The request is recorded first, so a run that is not executing now (its process is
        down) is cancelled when it resumes. Returns once the run has ended when it executes in
        this process, at once otherwise.
        """
        self._require_launched()
        status = await DBOS.get_workflow_status_async(run_id)
        if status is None:
            raise NotFoundError(f"run '{run_id}' does not exist", context={"run_id": run_id})
        if status.status in FINISHED:
            return
        await DBOS.update_workflow_attributes_async(run_id, {CANCEL_ATTRIBUTE: True}, merge=True)
        if self.live.is_live(run_id):
            self.live.request_cancel(run_id)
            await self.wait(run_id)

    # --- more -----------------------------------------------------------------------------------
    async def wait(self, run_id: str) -> RunOutcome:
        """The outcome of a run, once it has ended (wherever it runs)."""
        self._require_launched()
        handle = self._handles.get(run_id)
        if handle is None:
            try:
                handle = await DBOS.retrieve_workflow_async(run_id)
            except dbos_errors.DBOSNonExistentWorkflowError:
                raise NotFoundError(
                    f"run '{run_id}' does not exist", context={"run_id": run_id}
                ) from None
        try:
            result = await handle.get_result(polling_interval_sec=WAIT_POLL_S)
        except Exception as exc:
            return RunOutcome("failed", error={"message": f"the run crashed: {exc}"})
        return outcome_from_dict(result)

    async def take_over(self, executor_id: str) -> list[str]:
        """Resume here the unfinished runs of another executor (rule 4); returns their ids.

        Only for a replica that is gone for good. On PostgreSQL that is checked: the dead
        replica's presence lock (:class:`ExecutorPresence`) must be free, and it is held
        while the runs are re-queued, so the replica cannot come back half-way (it waits at
        launch, then finds nothing of its own to recover). A live replica answers
        :class:`ConflictError`. On SQLite (one process per file) the caller must know the
        other process is gone. DBOS re-queues the workflows (child workflows included); any
        live executor of the same version picks them up, usually this one.
        """
        self._require_launched()
        if not executor_id.strip():
            raise ConflictError("name the executor whose runs to take over")
        if executor_id == self.config.executor_id:
            raise ConflictError(
                "an executor cannot take over its own runs (it resumes them when it launches)",
                context={"executor_id": executor_id},
            )
        presence = None
        if not self.config.is_sqlite:
            presence = ExecutorPresence(self.config, executor_id)
            if not await asyncio.to_thread(presence.try_acquire):
                await asyncio.to_thread(presence.release)
                raise ConflictError(
                    f"executor '{executor_id}' is alive (it holds its presence lock): only "
                    "the runs of a replica that is gone can be taken over",
                    context={"executor_id": executor_id},
                )
        try:
            pending = await DBOS.list_workflows_async(
                executor_id=executor_id, status="PENDING", load_input=False, load_output=False
            )
            ids = [s.workflow_id for s in pending]
            for workflow_id in ids:
                # A run goes back to the shared queue (any replica with room); a child of a
                # run (``run/node/i``) to DBOS's own queue, outside the runs' limit, so a
                # parent never waits for a slot its own children cannot get.
                queue = RUN_QUEUE if self._queue is not None and "/" not in workflow_id else None
                await DBOS.resume_workflow_async(workflow_id, queue_name=queue)
        finally:
            if presence is not None:
                await asyncio.to_thread(presence.release)
        if ids:
            logger.warning("took over {} workflows of executor {}", len(ids), executor_id)
            if self.on_takeover is not None:
                self.on_takeover(executor_id, ids)
        return ids

    # --- replicas (PostgreSQL) ------------------------------------------------------------------
    async def _leave_queue(self, run_id: str) -> None:
        """A run waiting for input gives its queue slot back (it may wait for days).

        DBOS counts a replica's queued runs that are still ``PENDING`` against its
        ``worker_concurrency``; a run that waits for a person must not hold a slot meanwhile.
        Clearing its queue makes it an ordinary workflow of this executor: recovered by it, or
        taken over like any other. When the answer comes, it finishes outside the limit.
        """
        await asyncio.to_thread(self._journal_execute, _LEAVE_QUEUE, {"id": run_id, "q": RUN_QUEUE})

    def _journal_execute(self, statement: str, params: dict[str, Any]) -> list[Any]:
        """Run one statement on the journal's PostgreSQL database (a small pool of our own)."""
        if self._journal_db is None:
            url = make_url(self.config.database_url).set(drivername="postgresql+psycopg")
            self._journal_db = sa.create_engine(url, pool_size=2, max_overflow=2)
        sql = statement.format(schema=_quoted(self.config.schema))
        with self._journal_db.begin() as connection:
            result = connection.execute(sa.text(sql), params)
            return list(result) if result.returns_rows else []

    def _is_alive(self, executor_id: str) -> bool:
        """Whether a process runs as ``executor_id`` (its presence lock is held)."""
        if executor_id == self.config.executor_id:
            return True
        if self.config.is_sqlite:
            return False  # one process per journal: this one
        name = ExecutorPresence(self.config, executor_id).name
        rows = self._journal_execute(_LOCK_HELD, {"name": name})
        return bool(rows and rows[0][0])

    def _unfinished_owners(self) -> list[str]:
        rows = self._journal_execute(_PENDING_OWNERS, {"me": self.config.executor_id})
        return [str(r[0]) for r in rows if r[0]]

    async def check_replicas(self) -> dict[str, list[str]]:
        """Take over the runs of every dead replica (one pass); returns what was taken over.

        A replica is dead when its presence lock is free. Survivors race for the dead one's
        lock in :meth:`take_over`; the one that gets it re-queues the runs while holding it,
        the others find it held (or, afterwards, nothing left): each run moves exactly once.
        """
        taken: dict[str, list[str]] = {}
        for executor_id in await asyncio.to_thread(self._unfinished_owners):
            if await asyncio.to_thread(self._is_alive, executor_id):
                continue
            try:
                ids = await self.take_over(executor_id)
            except ConflictError:  # another survivor holds the lock right now
                continue
            if ids:
                taken[executor_id] = ids
        return taken

    async def _watch_replicas(self) -> None:
        """Every ``failover_check_s``: take over the runs of replicas that died."""
        while True:
            await asyncio.sleep(self.config.failover_check_s)
            try:
                await self.check_replicas()
            except Exception as exc:  # the database may be briefly unreachable
                if isinstance(exc, asyncio.CancelledError):  # pragma: no cover
                    raise
                logger.warning("failover check failed: {}", exc)

    async def journal_entries(self, run_ids: list[str]) -> dict[str, JournalEntry]:
        """What the journal says of these runs (absent ids have no journal entry)."""
        self._require_launched()
        statuses = await DBOS.list_workflows_async(
            workflow_ids=run_ids, load_input=False, load_output=True
        )
        entries = {}
        for status in statuses:
            entries[status.workflow_id] = JournalEntry(
                status=str(status.status),
                executor_id=status.executor_id,
                updated_at=_epoch_ms(status.updated_at),
                output=status.output if isinstance(status.output, dict) else None,
                error=None if status.error is None else str(status.error),
            )
        return entries

    async def executor_of(self, run_id: str) -> dict[str, Any] | None:
        """Who holds the run now: executor id, since when, alive, and a sentence saying so."""
        self._require_launched()
        status = await DBOS.get_workflow_status_async(run_id)
        if status is None:
            return None
        executor = status.executor_id
        since = _epoch_ms(status.updated_at)
        alive: bool | None = None
        if status.status == "ENQUEUED":
            state = "queued"
            detail = "queued: the first replica with room will execute it"
        elif status.status in FINISHED:
            state = "finished"
            detail = f"finished on executor '{executor}'"
        else:
            alive = await asyncio.to_thread(self._is_alive, executor or "")
            here = executor == self.config.executor_id
            if alive:
                state = "executing"
                detail = f"held by executor '{executor}'" + (" (this process)" if here else "")
            else:
                state = "orphaned"
                if self.config.is_sqlite or self.config.failover_check_s <= 0:
                    then = "POST /runs/recover?executor=" + str(executor)
                else:
                    then = f"a live replica takes it over within {self.config.failover_check_s:g} s"
                detail = f"held by executor '{executor}', which is gone; {then}"
        return {
            "id": executor,
            "state": state,
            "alive": alive,
            "since": since,
            "detail": detail,
        }

    async def _existing(self, ids: list[str]) -> set[str]:
        statuses = await DBOS.list_workflows_async(
            workflow_ids=ids, load_input=False, load_output=False
        )
        return _statuses_to_ids(statuses)

    async def _poll_cancel_requests(self) -> None:
        """Deliver cancel requests made by other processes to the runs executing here.

        A request recorded on a run's root workflow cancels the run; one recorded on a child
        workflow (a parallel whose other branch failed, in another process) stops that child.
        """
        while True:
            await asyncio.sleep(self.config.cancel_poll_s)
            runs = set(self.live.unrequested())
            ids = sorted(runs | set(self.live.uninterrupted()))
            if not ids:
                continue
            try:
                # (filtering by attributes in SQL is not supported on SQLite)
                statuses = await DBOS.list_workflows_async(
                    workflow_ids=ids, load_input=False, load_output=False
                )
            except Exception as exc:  # the database may be briefly unreachable
                logger.warning("could not check for cancel requests: {}", exc)
                continue
            for status in statuses:
                if not (status.attributes or {}).get(CANCEL_ATTRIBUTE):
                    continue
                if status.workflow_id in runs:
                    self.live.request_cancel(status.workflow_id)
                else:
                    self.live.interrupt([status.workflow_id])


class DurableRunClient:
    """Answers, cancels and waits for durable runs from a process that did not launch DBOS.

    For the CLI and tests (rule 9): it talks to the system database through a ``DBOSClient``
    and never calls ``DBOS.launch()``. Close it with :meth:`close`.
    """

    def __init__(self, config: DurableConfig) -> None:
        self.config = config
        self._client = DBOSClient(
            system_database_url=config.database_url,
            dbos_system_schema=None if config.is_sqlite else config.schema,
            serializer=DBOSPortableJSONSerializer(),
            application_name=config.app_name,
        )

    async def resume(self, run_id: str, node_id: str, values: dict[str, Any]) -> None:
        """Send the answer of the yield ``node_id``; delivered even if no process runs now."""
        target = await yield_owner(run_id, node_id, self._existing)
        await self._client.send_async(target, values, topic=yield_step_name(node_id))

    async def cancel(self, run_id: str) -> None:
        """Record a cancel request; the process executing the run (now or later) acts on it."""
        status = await self.status(run_id)
        if status is None:
            raise NotFoundError(f"run '{run_id}' does not exist", context={"run_id": run_id})
        if status in FINISHED:
            return
        await self._client.update_workflow_attributes_async(
            run_id, {CANCEL_ATTRIBUTE: True}, merge=True
        )

    async def wait(self, run_id: str) -> RunOutcome:
        """The outcome of a run, once it has ended."""
        handle: WorkflowHandleAsync[dict[str, Any]]
        try:
            handle = await self._client.retrieve_workflow_async(run_id)
        except dbos_errors.DBOSNonExistentWorkflowError:
            raise NotFoundError(
                f"run '{run_id}' does not exist", context={"run_id": run_id}
            ) from None
        return outcome_from_dict(await handle.get_result(polling_interval_sec=WAIT_POLL_S))

    async def status(self, run_id: str) -> str | None:
        """DBOS's status of the run's workflow (``PENDING``, ``SUCCESS``...), None if unknown."""
        statuses = await self._client.list_workflows_async(
            workflow_ids=[run_id], load_input=False, load_output=False
        )
        return statuses[0].status if statuses else None

    async def _existing(self, ids: list[str]) -> set[str]:
        statuses = await self._client.list_workflows_async(
            workflow_ids=ids, load_input=False, load_output=False
        )
        return _statuses_to_ids(statuses)

    def close(self) -> None:
        """Release the database connections."""
        self._client.destroy()


__all__ = [
    "APP_VERSION",
    "DurableConfig",
    "DurableLauncher",
    "DurableRunClient",
    "ExecutorPresence",
    "JournalEntry",
    "enable_wal",
    "outcome_from_dict",
    "run_child_workflow",
    "run_workflow",
    "sqlite_url",
]
