"""The durable launcher: runs on DBOS Transact that survive kill -9, restarts and dead replicas.

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
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import sqlalchemy as sa
from dbos import (
    DBOS,
    Queue,
    SetWorkflowID,
    WorkflowHandleAsync,
)
from dbos import error as dbos_errors
from loguru import logger
from sqlalchemy import make_url

from dynamic_tools.engine.journal import to_json
from dynamic_tools.engine.plan import RunPlan
from dynamic_tools.engine.ports import EventSink, ToolRunner
from dynamic_tools.engine.redrive import Redrive
from dynamic_tools.engine.state import RunOutcome
from dynamic_tools.errors import ConfigurationError, ConflictError, NotFoundError
from dynamic_tools.execution import durable_workflows
from dynamic_tools.execution.durable_config import (
    FINISHED,
    FLAGGED_SQL,
    LEAVE_QUEUE_SQL,
    LOCK_HELD_SQL,
    PENDING_OWNERS_SQL,
    RUN_QUEUE,
    WAIT_POLL_S,
    DurableConfig,
    dbos_config,
    enable_wal,
    epoch_ms,
    outcome_from_dict,
    quoted,
)
from dynamic_tools.execution.durable_steps import (
    CANCEL_ATTRIBUTE,
    LiveRuns,
)
from dynamic_tools.execution.durable_workflows import run_workflow, statuses_to_ids, yield_owner
from dynamic_tools.execution.fan_out import ItemJournal
from dynamic_tools.execution.journal_lock import JournalLock
from dynamic_tools.execution.launcher import ExecutorView, yield_step_name
from dynamic_tools.execution.local_wake import wake_local_waiter
from dynamic_tools.execution.pg_waiters import install_waiter_poll, poll_waiters
from dynamic_tools.execution.presence import ExecutorPresence
from dynamic_tools.execution.queue_slots import QueueSlots
from dynamic_tools.execution.reconcile import JournalEntry
from dynamic_tools.execution.sqlite_listener import install_batched_listener


class DurableLauncher:
    """Runs as DBOS workflows: they survive a crash; a paused run can be answered from anywhere.

    After a crash, a replica resumes the runs of its own executor id when it launches again;
    the runs of a replica that is gone for good need :meth:`take_over`. Keeps the
    :class:`~dynamic_tools.execution.launcher.RunLauncher` contract. Call :meth:`launch` once
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
        items: ItemJournal | None = None,
    ) -> None:
        self.config = config
        self.tools = tools
        self.events = events
        self.items = items
        self.on_finished = on_finished
        self.durable = True
        self.live = LiveRuns()
        self._handles: dict[str, WorkflowHandleAsync[dict[str, Any]]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._waiters: asyncio.Task[None] | None = None
        self._launched = False
        self._presence: ExecutorPresence | None = None
        self._journal_lock: JournalLock | None = None
        self._queue: Queue | None = None
        self._journal_db: sa.Engine | None = None  # liveness, queue and cancel questions
        self._slots = QueueSlots()
        self.on_takeover: Callable[[str, list[str]], None] | None = None
        """Told after each takeover (the executor taken over, the workflows re-queued)."""

    # --- lifecycle ----------------------------------------------------------------------------
    async def launch(self) -> None:
        """Start DBOS in this process; runs left unfinished by this executor resume now."""
        if durable_workflows.runtime_installed():
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
        durable_workflows.install_runtime(
            durable_workflows.WorkflowRuntime(
                self.tools, self.events, self.live, self.on_finished, self.items
            )
        )
        waiters = None
        try:
            if self.config.is_sqlite:
                install_batched_listener()  # one query per poll, not one per paused run
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
                self._slots.install()
                self.live.on_waiting = self._leave_queue
                waiters = install_waiter_poll()  # one query a minute, not one per paused run
        except BaseException:
            durable_workflows.clear_runtime()
            DBOS.destroy()
            self._release_presence()
            raise
        self._launched = True
        self._poller = asyncio.create_task(self._poll_cancel_requests(), name="durable-cancels")
        if not self.config.is_sqlite and self.config.failover_check_s > 0:
            self._watcher = asyncio.create_task(self._watch_replicas(), name="durable-failover")
        if waiters is not None:
            self._waiters = asyncio.create_task(poll_waiters(waiters), name="durable-waiters")

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
        if not self._launched:
            return
        self._launched = False
        self.live.shutting_down = True
        tasks = self.live.tasks()
        tasks.extend(t for t in (self._poller, self._watcher, self._waiters) if t is not None)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        DBOS.destroy()
        durable_workflows.clear_runtime()
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
    async def start(
        self,
        *,
        run_id: str,
        plan: RunPlan,
        params: dict[str, Any],
        redrive: Redrive | None = None,
    ) -> None:
        """Start the run (returns once it is recorded and started)."""
        self._require_launched()
        if await DBOS.get_workflow_status_async(run_id) is not None:
            raise ConflictError(f"run '{run_id}' already exists", context={"run_id": run_id})
        body = plan.document.model_dump(mode="json", by_alias=True)
        workflow_id = plan.workflow_id
        # A redrive's reused outputs travel as the workflow's argument (journaled with it).
        reuse = to_json(redrive) if redrive else None
        with SetWorkflowID(run_id):
            if self._queue is None:  # SQLite: this process is the only executor
                handle = await DBOS.start_workflow_async(
                    run_workflow, body, workflow_id, params, reuse
                )
            else:  # PostgreSQL: the first replica with room takes it
                handle = await self._queue.enqueue_async(
                    run_workflow, body, workflow_id, params, reuse
                )
        self._handles[run_id] = handle
        task = getattr(handle, "task", None)
        if isinstance(task, asyncio.Future):  # forget it once done; wait() then asks the database
            task.add_done_callback(lambda _: self._handles.pop(run_id, None))

    async def resume(self, run_id: str, node_id: str, values: dict[str, Any]) -> None:
        """Send the answer of the yield ``node_id`` (kept until the yield reads it)."""
        self._require_launched()
        target = await yield_owner(run_id, node_id, self._existing)
        topic = yield_step_name(node_id)
        await DBOS.send_async(target, values, topic=topic)
        wake_local_waiter(target, topic)  # a yield waiting here moves on now, not at the next poll

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
        taken over like any other; :class:`QueueSlots` makes DBOS's in-memory count agree.
        When the answer comes, it finishes outside the limit.
        """
        await asyncio.to_thread(
            self._journal_execute, LEAVE_QUEUE_SQL, {"id": run_id, "q": RUN_QUEUE}
        )
        self._slots.left(run_id)

    def _journal_execute(self, statement: str, params: dict[str, Any]) -> list[Any]:
        """Run one statement on the journal's database (a small pool of our own)."""
        if self._journal_db is None:
            if self.config.is_sqlite:
                self._journal_db = sa.create_engine(self.config.database_url)
            else:
                url = make_url(self.config.database_url).set(drivername="postgresql+psycopg")
                self._journal_db = sa.create_engine(url, pool_size=2, max_overflow=2)
        tables = "" if self.config.is_sqlite else f"{quoted(self.config.schema)}."
        sql = sa.text(statement.format(tables=tables))
        with self._journal_db.begin() as connection:
            result = connection.execute(sql, params)
            return list(result) if result.returns_rows else []

    def _is_alive(self, executor_id: str) -> bool:
        """Whether a process runs as ``executor_id`` (its presence lock is held)."""
        if executor_id == self.config.executor_id:
            return True
        if self.config.is_sqlite:
            return False  # one process per journal: this one
        name = ExecutorPresence(self.config, executor_id).name
        rows = self._journal_execute(LOCK_HELD_SQL, {"name": name})
        return bool(rows and rows[0][0])

    def _unfinished_owners(self) -> list[str]:
        rows = self._journal_execute(PENDING_OWNERS_SQL, {"me": self.config.executor_id})
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
                updated_at=epoch_ms(status.updated_at),
                output=status.output if isinstance(status.output, dict) else None,
                error=None if status.error is None else str(status.error),
            )
        return entries

    async def executor_of(self, run_id: str) -> ExecutorView | None:
        """Who holds the run now: executor id, since when, alive, and a sentence saying so."""
        self._require_launched()
        status = await DBOS.get_workflow_status_async(run_id)
        if status is None:
            return None
        executor = status.executor_id
        since = epoch_ms(status.updated_at)
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
        return ExecutorView(id=executor, state=state, alive=alive, since=since, detail=detail)

    async def _existing(self, ids: list[str]) -> set[str]:
        statuses = await DBOS.list_workflows_async(
            workflow_ids=ids, load_input=False, load_output=False
        )
        return statuses_to_ids(statuses)

    async def _poll_cancel_requests(self) -> None:
        """Deliver cancel requests made by other processes to the runs executing here.

        A request recorded on a run's root workflow cancels the run; one recorded on a child
        workflow (a parallel whose other branch failed, in another process) stops that child.
        """
        while True:
            await asyncio.sleep(self.config.cancel_poll_s)
            if not self.live.any_live():
                continue
            try:
                flagged = await asyncio.to_thread(self._cancel_requested)
            except Exception as exc:  # the database may be briefly unreachable
                logger.warning("could not check for cancel requests: {}", exc)
                continue
            if not flagged:
                continue
            runs = set(self.live.unrequested())
            executions = set(self.live.uninterrupted())
            for workflow_id in flagged:
                if workflow_id in runs:
                    self.live.request_cancel(workflow_id)
                elif workflow_id in executions:
                    self.live.interrupt([workflow_id])

    def _cancel_requested(self) -> list[str]:
        """The unfinished workflows whose cancel was requested, wherever they run.

        One query, whatever the number of runs here: it returns only the workflows whose
        attributes name a cancel request (few, and only until they end), which the caller
        matches with what runs here. A thousand paused runs cost nothing more.
        """
        found: list[str] = []
        rows = self._journal_execute(FLAGGED_SQL, {"flag": f'%"{CANCEL_ATTRIBUTE}"%'})
        for workflow_id, attributes in rows:
            if isinstance(attributes, str):
                attributes = json.loads(attributes)
            if isinstance(attributes, dict) and attributes.get(CANCEL_ATTRIBUTE):
                found.append(str(workflow_id))
        return found
