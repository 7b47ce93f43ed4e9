"""MCP Tasks (2025-11-25) on durable runs.

The ``mcp`` 2.x SDK has no Tasks runtime, so this module implements it and nothing else does:

- a server middleware answers ``tools/call`` with ``params.task`` by starting the tool's work
  and returning ``CreateTaskResult`` at once (the SDK would validate a task result as a
  ``CallToolResult``, so the middleware owns that response);
- ``tasks/get``, ``tasks/result`` (blocks until the task ends; a waiting ``yield``, and any
  sampling or elicitation the task's own work needs, is delivered on its stream, tagged with
  the task), ``tasks/list`` and ``tasks/cancel``;
- ``notifications/tasks/status`` on every status change and ``notifications/progress`` per step
  when the call gave a ``progressToken`` (:mod:`dynamic_tools.mcp.tasks.push`).

A task follows a run (a ``w_*`` task's id is its run id); work that precedes the run (drafting
in ``workflow.author_and_run``) is a job in this process until the run starts. The task's row
(:mod:`dynamic_tools.persistence.task_store`) keeps its owner, its ttl and its own end, so
tasks survive restarts like runs do.

Owner: the request's principal when access control is on (``access/``: an API key, an OAuth
subject, ``admin`` for ``API_TOKEN`` — one principal's tasks across its sessions and restarts);
``stdio`` on stdio; otherwise (a one-person setup, no credential) the MCP session.
``tasks/get``, ``result``, ``list`` and ``cancel`` see the caller's own tasks only — an admin's
every task — and anyone else's task answers the same "no task" error as an unknown id. The run
a task starts belongs to the same principal.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import mcp_types as types
from loguru import logger
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import METHOD_NOT_FOUND
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dynamic_tools.access.authenticate import require
from dynamic_tools.access.policy import MCP_METHOD_SCOPES, mcp_tool_scope
from dynamic_tools.access.principals import LOCAL
from dynamic_tools.adapters.mcp_internals import on_session_close
from dynamic_tools.engine import events as ev
from dynamic_tools.errors import (
    ConflictError,
    ConflictKind,
    DynamicToolsError,
    ForbiddenError,
    InvalidInputError,
    NotFoundError,
)
from dynamic_tools.mcp.arguments import check_arguments
from dynamic_tools.mcp.channel import RELATED_TASK, CallChannel, ClientRequestTimeout, channel_for
from dynamic_tools.mcp.entries import SessionView, ToolCall
from dynamic_tools.mcp.errors import (
    TaskCancelled,
    TaskExpired,
    TaskInterrupted,
    bad_request,
    bind_call,
    error_payload,
    error_result,
    invalid_params,
    payload_result,
    unexpected_result,
    unknown_tool,
)
from dynamic_tools.mcp.http_context import http_request
from dynamic_tools.mcp.principal import current_principal, principal_of
from dynamic_tools.mcp.tasks.extension import (
    EXTENSION,
    PolledInputs,
    UpdateTaskRequestParams,
    answered_yields,
    declares_tasks,
    detailed_task,
    missing_capability,
)
from dynamic_tools.mcp.tasks.flows import TASK_TOOLS
from dynamic_tools.mcp.tasks.link import ClientLink
from dynamic_tools.mcp.tasks.push import TaskPush
from dynamic_tools.mcp.tasks.views import TERMINAL, task_view
from dynamic_tools.mcp.workflow_tools import WorkflowCalls
from dynamic_tools.persistence.db import utc_now
from dynamic_tools.persistence.run_view import RunRecord
from dynamic_tools.persistence.task_store import TaskRow, TaskStore

if TYPE_CHECKING:
    from dynamic_tools.bootstrap import Services
    from dynamic_tools.mcp.server import McpEndpoint

DEFAULT_TTL_MS = 7 * 24 * 3600 * 1000
#: how long a task that failed because its ttl ran out stays visible (then it is purged)
EXPIRED_KEPT = timedelta(minutes=10)
PAGE_SIZE = 50
PURGE_EVERY_S = 1.0
EXECUTOR = uuid.uuid4().hex  # this process: the jobs it runs are in its memory
#: events after which a task's status changes
STATUS_EVENTS = (ev.RunStarted, ev.WaitingInput, ev.Resumed, ev.RunEnded)


@dataclass
class TaskJob:
    """Work of a task before its run exists (e.g. drafting a workflow)."""

    task_id: str
    store: TaskStore
    stage: str = "starting"
    run_id: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task[None] | None = None
    starting: asyncio.Future[RunRecord] | None = None
    link: ClientLink | PolledInputs | None = None
    waiting_for: str | None = None

    async def set_stage(self, stage: str) -> None:
        """Say what the task is doing now (shown in tasks/get, one progress notification)."""
        self.stage = stage
        self.changed.set()
        await self.store.update(self.task_id, stage=stage)

    async def start_run(self, start: Awaitable[RunRecord]) -> str:
        """Start the task's run; a cancel during the start still sees (and cancels) the run."""
        self.starting = asyncio.ensure_future(start)
        run = await asyncio.shield(self.starting)
        return run.run_id

    @property
    def detail(self) -> str:
        """The stage, and what the task waits for from the client, if anything."""
        if self.waiting_for is None:
            return self.stage
        how = "tasks/update" if isinstance(self.link, PolledInputs) else "tasks/result"
        return f"{self.stage}: waiting for the client's {self.waiting_for} (answer with {how})"

    async def waiting(self, what: str | None) -> None:
        """The task waits for the client (``input_required``) for ``what``, or no more (None)."""
        self.waiting_for = what
        status = "working" if what is None else "input_required"
        await self.store.update(self.task_id, status=status, stage=self.detail)
        self.changed.set()


TaskStarter = Callable[[ToolCall], Awaitable[str]]  # → the run id
JobStarter = Callable[[ToolCall, TaskJob], Awaitable[str]]  # drafting, then → the run id


def _allowed(ctx: Any, method: str) -> None:
    """Refuse a ``tasks/*`` request whose principal lacks the scope the table gives it."""
    try:
        require(principal_of(ctx), MCP_METHOD_SCOPES[method], method)
    except ForbiddenError as exc:
        raise invalid_params(exc) from None


#: the runtime acts on a task's run only after checking the task is the caller's
ADMIN_OF_TASKS = LOCAL


class TaskRuntime:
    """Creates and serves tasks for the endpoint's tools (see the module docstring)."""

    def __init__(self, endpoint: McpEndpoint) -> None:
        self.endpoint = endpoint
        self.jobs: dict[str, TaskJob] = {}
        self._pushers: set[asyncio.Task[None]] = set()
        self._stores: dict[int, TaskStore] = {}
        self._purged_at = 0.0

    # --- wiring ----------------------------------------------------------------------------
    def install(self) -> None:
        """Register the middleware and the four ``tasks/*`` handlers on the SDK server."""
        server = self.endpoint.server
        server.middleware.append(self._middleware)
        server.add_request_handler("tasks/get", types.GetTaskRequestParams, self._get)
        server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, self._result)
        server.add_request_handler("tasks/list", types.PaginatedRequestParams, self._list)
        server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, self._cancel)
        server.add_request_handler("tasks/update", UpdateTaskRequestParams, self._update)
        server.extensions[EXTENSION] = {}  # 2026-07-28: advertised in server/discover

    @staticmethod
    def capability() -> types.ServerTasksCapability:
        """The server's tasks capability: list, cancel, task-augmented ``tools/call``."""
        return types.ServerTasksCapability.model_validate(
            {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        )

    @property
    def _services(self) -> Services:
        return self.endpoint.surface.services

    @property
    def store(self) -> TaskStore:
        """The task table of the running services' database."""
        engine = self._services.database
        return self._stores.setdefault(id(engine), TaskStore(engine))

    @property
    def _calls(self) -> WorkflowCalls:
        return WorkflowCalls(self._services.runs, self._services.run_store)

    @property
    def _timeout_s(self) -> float:
        return self._services.settings.mcp_client_request_timeout_s

    def owner_of(self, ctx: Any) -> str:
        """Who the request speaks for (see the module docstring)."""
        request = http_request(ctx)
        if request is None:
            return "stdio"
        principal = principal_of(ctx)
        if principal.kind != LOCAL.kind:  # access control is on: the principal, any session
            return principal.id
        if _modern(ctx):  # stateless requests of the one user a server without access has
            return LOCAL.id
        session_id = request.headers.get("mcp-session-id")
        if not session_id:
            raise bad_request(
                "MCP Tasks need a session: send initialize, then the Mcp-Session-Id it returns",
                "Mcp-Session-Id",
                "required",
            )
        return f"session:{session_id}"

    # --- creation --------------------------------------------------------------------------
    async def _middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, Mapping):
            return await call_next(ctx)
        if not _modern(ctx):
            if params.get("task") is not None:
                return await self._create(ctx, params, self._ttl(params.get("task")))
            return await call_next(ctx)
        # 2026-07-28: the server decides; the task-required tools always become tasks
        if params.get("name") not in TASK_TOOLS:  # every other call: no view to build here
            return await call_next(ctx)
        view = await self.endpoint.view_for(ctx)
        entry = view.entry(str(params["name"]))
        execution = entry.tool.execution if entry is not None else None
        if entry is None or execution is None or execution.task_support != "required":
            return await call_next(ctx)
        if not declares_tasks(ctx):
            name = entry.tool.name
            raise missing_capability(f"'{name}' runs as a task: it", tool=name)
        created = await self._create(ctx, params, self._ttl({}), view=view)
        return {"resultType": "task", **created}

    def _ttl(self, task: Any) -> int:
        if not isinstance(task, Mapping):
            raise bad_request(
                'params.task must be an object such as {"ttl": 60000}', "params.task", "type"
            )
        most = self._services.settings.mcp_task_max_ttl_s * 1000
        raw = task.get("ttl")
        if raw is None:
            return min(DEFAULT_TTL_MS, most)
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0 or raw != int(raw):
            raise bad_request(
                "params.task.ttl must be a whole number of milliseconds, 0 or more "
                f"(got {raw!r:.40})",
                "params.task.ttl",
                "minimum",
            )
        return min(int(raw), most)

    async def _create(
        self, ctx: Any, params: Mapping[str, Any], ttl: int, *, view: SessionView | None = None
    ) -> dict[str, Any]:
        """Start the task of a ``tools/call``; its ``CreateTaskResult`` in the revision asked."""
        name = str(params.get("name", ""))
        owner = self.owner_of(ctx)
        view = view or await self.endpoint.view_for(ctx)
        entry = view.entry(name)
        if entry is None:
            raise unknown_tool(name)
        bind_call(entry.tool.name, params.get("arguments"))
        try:  # the HTTP gate answered 403 already; this holds for every transport
            require(principal_of(ctx), mcp_tool_scope(entry.tool.name, prefix=view.prefix), name)
        except ForbiddenError as exc:
            raise invalid_params(exc) from None
        if entry.start_task is None and entry.start_job is None:
            raise bad_request(
                f"tool '{name}' does not support task execution (execution.taskSupport is "
                "forbidden); call it without params.task",
                "params.task",
                "task_support",
                tool=name,
            )
        call_params = types.CallToolRequestParams.model_validate(dict(params))
        await self._purge()
        task: dict[str, Any] = {"owner": owner, "tool": name, "ttl_ms": ttl, "executor": EXECUTOR}
        token = (params.get("_meta") or {}).get("progressToken")
        try:
            arguments = check_arguments(entry.tool, params.get("arguments"), more=entry.check)
        except InvalidInputError as exc:  # a failed task saying which argument is wrong
            return await self._failed_start(ctx, token, task, error_result(exc))
        if entry.start_job is not None:
            job = TaskJob(f"task-{uuid.uuid4().hex}", self.store)
            link = PolledInputs if _modern(ctx) else ClientLink
            job.link = link(job.task_id, self._timeout_s, job.waiting)
            self.jobs[job.task_id] = job  # before its row exists: never taken for an orphan
            try:
                row = await self.store.create(task_id=job.task_id, **task)
            except BaseException:
                self.jobs.pop(job.task_id, None)
                raise
            call = ToolCall(view, dict(arguments), self._job_channel(ctx, job))
            job.worker = asyncio.create_task(self._run_job(entry.start_job, call, job))
            self._push(ctx, token, row.task_id)
            return self._created(ctx, row, None)
        assert entry.start_task is not None
        channel = channel_for(ctx, call_params, timeout_s=self._timeout_s)
        try:
            run_id = await entry.start_task(ToolCall(view, dict(arguments), channel))
        except DynamicToolsError as exc:  # the work could not start (e.g. invalid inputs)
            return await self._failed_start(ctx, token, task, error_result(exc))
        row = await self.store.create(task_id=run_id, run_id=run_id, stage="running", **task)
        run = await self._services.run_store.get_run(run_id)
        self._push(ctx, token, run_id)
        return self._created(ctx, row, run)

    def _created(self, ctx: Any, row: TaskRow, run: RunRecord | None) -> dict[str, Any]:
        """The created task as the request's revision gives it."""
        if _modern(ctx):
            return self._detailed(row, run)
        return {"task": created(self._view(row, run))}

    async def _failed_start(
        self, ctx: Any, token: Any, task: dict[str, Any], failure: types.CallToolResult
    ) -> dict[str, Any]:
        """A task whose work could not start: created ``working``, failed at once (pushed)."""
        row = await self.store.create(task_id=f"task-{uuid.uuid4().hex}", **task)
        await self.store.end(row.task_id, "failed", failure=_dump(failure), stage="not started")
        self._push(ctx, token, row.task_id)
        if _modern(ctx):
            ended = await self.store.get(row.task_id)
            return self._detailed(ended or row, None)
        return {"task": task_view(row, None)}

    def _job_channel(self, ctx: Any, job: TaskJob) -> CallChannel:
        """The job's channel: its client requests go through the task's tasks/result streams."""
        caps = ctx.session.client_capabilities
        link = job.link
        assert link is not None

        async def no_progress(_done: float, _total: float | None, _message: str | None) -> None:
            return None  # the task's pusher reports the job's stages

        return CallChannel(
            protocol_version=ctx.protocol_version,
            progress=no_progress,
            principal=principal_of(ctx),
            elicit=link.elicit if caps is not None and caps.elicitation is not None else None,
            sample=link.sample if caps is not None and caps.sampling is not None else None,
            task_id=job.task_id,
        )

    async def _run_job(self, start: JobStarter, call: ToolCall, job: TaskJob) -> None:
        failure: types.CallToolResult | None = None
        try:
            try:
                job.run_id = await start(call, job)
            except DynamicToolsError as exc:  # a client timeout included
                failure = error_result(exc)
            except Exception as exc:  # a bug: report it as a failed task, details in the log
                failure = unexpected_result(exc, tool="task")
            if failure is not None:
                stage = f"failed while {job.stage}"
                await self.store.end(job.task_id, "failed", failure=_dump(failure), stage=stage)
            else:
                await self.store.update(job.task_id, run_id=job.run_id, stage="running")
        finally:
            job.done.set()
            job.changed.set()
            self.jobs.pop(job.task_id, None)

    # --- notifications ---------------------------------------------------------------------
    @property
    def pushing(self) -> int:
        """How many tasks push notifications to a session now."""
        return len(self._pushers)

    def _push(self, ctx: Any, token: Any, task_id: str) -> None:
        """Push the task's status changes and progress to its session until it ends.

        Not on 2026-07-28: its stateless requests have no session stream; clients poll.
        """
        if _modern(ctx):
            return
        push = TaskPush(ctx.session, task_id, token if isinstance(token, str | int) else None)
        pusher = asyncio.create_task(self._push_changes(task_id, push))
        self._pushers.add(pusher)
        pusher.add_done_callback(self._pushers.discard)
        on_session_close(ctx.session, pusher.cancel)  # stop when the session closes

    async def _push_changes(self, task_id: str, push: TaskPush) -> None:
        try:
            job = self.jobs.get(task_id)
            if job is not None:
                await self._push_job(job, push)
            row = await self.store.get(task_id)
            if row is None or row.run_id is None or row.ended:
                if row is not None:
                    await push.task_changed(task_view(row, None))
                return
            await self._push_run(row, push)
        except Exception as exc:  # best effort: polling tasks/get still tells everything
            logger.opt(exception=exc).debug("task {} notifications stopped", task_id)

    async def _push_job(self, job: TaskJob, push: TaskPush) -> None:
        told = None
        while True:
            job.changed.clear()
            if job.stage not in (told, "starting") and not job.done.is_set():
                told = job.stage
                await push.progress(job.stage)
            row = await self.store.get(job.task_id)
            if row is not None and row.run_id is None:
                await push.task_changed(task_view(row, None, job.detail))
            if job.done.is_set() or row is None or row.ended:
                return
            await job.changed.wait()

    async def _push_run(self, row: TaskRow, push: TaskPush) -> None:
        store = self._services.run_store
        assert row.run_id is not None
        run = await store.get_run(row.run_id)
        top_level = {n for n in run.nodes if "/" not in n}  # the graph's steps
        total = float(push.count + len(top_level)) if push.progress_token is not None else None
        waiting: set[str] = set()  # the yields waiting as of the event at hand (from the first)
        async for event in store.subscribe(row.run_id, after=0):
            if event is None:
                continue
            typed = event.event
            ended = isinstance(typed, ev.NodeEvent) and typed.ENDS_NODE
            if ended and isinstance(typed, ev.NodeEvent) and typed.node_id in top_level:
                await push.progress(f"{typed.node_id}: {ended}", total)
            if isinstance(typed, ev.WaitingInput):
                waiting.add(typed.node_id)
            elif isinstance(typed, ev.Resumed):
                waiting.discard(typed.node_id)
            if isinstance(typed, STATUS_EVENTS):
                # The status this event leads to, even when the run has moved on since: each
                # change is told in order (a run that resumes and ends at once still shows
                # ``working`` between ``input_required`` and ``completed``).
                status = None if isinstance(typed, ev.RunEnded) else "working"
                await self._tell(row.task_id, push, "input_required" if waiting else status)
        await self._tell(row.task_id, push)

    async def _tell(self, task_id: str, push: TaskPush, status: str | None = None) -> None:
        row = await self.store.get(task_id)
        if row is not None:
            runs = await self._runs_of([row])
            view = task_view(row, runs.get(row.run_id or ""))
            if status is not None and not row.ended:
                view = {**view, "status": status}
            await push.task_changed(view)

    # --- reading ---------------------------------------------------------------------------
    async def _runs_of(self, rows: list[TaskRow]) -> dict[str, RunRecord]:
        """The tasks' runs with their steps, after the events this process queued are stored."""
        await self._services.run_store.flush()
        return await self.store.runs_of(rows)

    async def _purge(self) -> None:
        """Delete expired, ended tasks (at most once a second)."""
        now = time.monotonic()
        if now - self._purged_at >= PURGE_EVERY_S:
            self._purged_at = now
            await self.store.purge_expired()

    async def _settle(self, rows: list[TaskRow]) -> list[tuple[TaskRow, RunRecord | None]]:
        """The rows still alive, with their runs.

        Expired ended tasks, and tasks whose run was purged, are deleted; a job that died with
        its process fails.
        """
        runs = await self._runs_of(rows)
        now = utc_now()
        alive: list[tuple[TaskRow, RunRecord | None]] = []
        for row in rows:
            run = runs.get(row.run_id) if row.run_id else None
            if row.run_id and run is None:  # the run's history was purged
                await self.store.delete(row.task_id)
                continue
            if row.run_id is None and not row.ended and self._orphaned(row, now):
                failure = _dump(payload_result(_interrupted(row)))
                stage = f"interrupted while {row.stage}"
                ended_here = await self.store.end(
                    row.task_id, "failed", failure=failure, stage=stage, unless_started=True
                )
                if ended_here:
                    row = replace(row, status="failed", failure=failure, stage=stage)
                else:  # its job moved on (started the run, or ended) after the row was read
                    fresh = await self.store.get(row.task_id)
                    if fresh is None:
                        continue
                    row = fresh
                    run = (await self._runs_of([row])).get(row.run_id or "")
            if (
                not row.ended
                and run is not None
                and run.status == "waiting_input"
                and row.expired(now)
            ):  # nobody answered in its lifetime: the task fails, and is kept a while to say so
                await self._expire(row, run)
                fresh = await self.store.get(row.task_id)
                if fresh is None:
                    continue
                row, run = fresh, (await self._runs_of([fresh])).get(row.run_id or "")
            ended = row.ended or (run is not None and run.terminal)
            if ended and row.expired(now):
                await self.store.delete(row.task_id)
                continue
            alive.append((row, run))
        return alive

    def _orphaned(self, row: TaskRow, now: datetime) -> bool:
        """A job row this process does not run, whose process is gone."""
        if row.task_id in self.jobs:
            return False
        if row.executor == EXECUTOR or not self._services.settings.uses_postgres:
            return True  # SQLite: one server process, so the job's process has stopped
        quiet = max(3 * self._timeout_s, 600.0)  # a replica updates a live job's row sooner
        return now - row.updated_at > timedelta(seconds=quiet)

    def _sees_all(self, ctx: Any) -> bool:
        """An admin of a server with access control sees every principal's tasks."""
        if http_request(ctx) is None:
            return False
        principal = principal_of(ctx)
        return principal.is_admin and principal.kind != LOCAL.kind

    async def _load(self, ctx: Any, task_id: str) -> tuple[TaskRow, RunRecord | None]:
        row = await self.store.get(task_id)
        if row is None or (row.owner != self.owner_of(ctx) and not self._sees_all(ctx)):
            raise _no_task(task_id)
        settled = await self._settle([row])
        if not settled:
            raise _no_task(task_id)
        return settled[0]

    def _view(self, row: TaskRow, run: RunRecord | None) -> dict[str, Any]:
        job = self.jobs.get(row.task_id)
        return task_view(row, run, job.detail if job is not None and run is None else None)

    def _detailed(self, row: TaskRow, run: RunRecord | None) -> dict[str, Any]:
        """The task as 2026-07-28 gives it (result, error or input requests inlined)."""
        job = self.jobs.get(row.task_id)
        stage = job.detail if job is not None and run is None else None
        inputs = job.link if job is not None and isinstance(job.link, PolledInputs) else None
        return detailed_task(row, run, stage, inputs)

    @staticmethod
    def _revision_allows(ctx: Any, method: str) -> None:
        """On 2026-07-28, ``tasks/*`` is the extension's: declared, and no list or result."""
        if not _modern(ctx):
            if method == "tasks/update":
                raise MCPError(METHOD_NOT_FOUND, "Method not found", method)
            return
        if method in ("tasks/list", "tasks/result"):
            raise MCPError(METHOD_NOT_FOUND, "Method not found", method)
        if not declares_tasks(ctx):
            raise missing_capability(method)

    async def _get(self, ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        self._revision_allows(ctx, "tasks/get")
        _allowed(ctx, "tasks/get")
        row, run = await self._load(ctx, params.task_id)
        if _modern(ctx):
            return self._detailed(row, run)
        return self._view(row, run)

    async def _update(self, ctx: Any, params: UpdateTaskRequestParams) -> dict[str, Any]:
        """``tasks/update`` (2026-07-28): answers to the task's outstanding input requests."""
        self._revision_allows(ctx, "tasks/update")
        _allowed(ctx, "tasks/update")
        row, run = await self._load(ctx, params.task_id)
        job = self.jobs.get(row.task_id)
        if job is not None and isinstance(job.link, PolledInputs):
            job.link.answer(params.input_responses)
        if run is None or run.status != "waiting_input" or row.ended:
            return {}
        principal = principal_of(ctx)
        for node_id, response in answered_yields(run, params.input_responses):
            action = response.get("action") if isinstance(response, Mapping) else None
            try:
                if action == "accept":
                    content = response.get("content") or {}
                    if not isinstance(content, Mapping):
                        raise InvalidInputError(
                            "an accepted answer's content must be an object",
                            violations=[{"path": "content", "rule": "type", "message": "object"}],
                        )
                    await self._services.runs.resume(
                        run.run_id, dict(content), node_id, principal=principal
                    )
                elif action == "decline":  # as declining the 2025-11-25 elicitation: cancelled
                    await self._services.runs.cancel(run.run_id, principal=principal)
            except InvalidInputError as exc:  # the yield did not take it: it still waits
                raise invalid_params(exc) from None
            except (ConflictError, NotFoundError):
                continue  # answered or ended meanwhile: not outstanding any more
        return {}

    async def _list(self, ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
        self._revision_allows(ctx, "tasks/list")
        _allowed(ctx, "tasks/list")
        cursor = params.cursor
        if cursor is not None and not cursor.isdigit():
            raise bad_request(
                f"cursor '{cursor[:40]}' is not one this server gave", "cursor", "cursor"
            )
        offset = min(int(cursor or 0), 2**53)  # past every task; the database stops at 2**63
        owner = None if self._sees_all(ctx) else self.owner_of(ctx)
        await self._purge()
        rows, total = await self.store.page(owner, offset=offset, limit=PAGE_SIZE)
        tasks = [self._view(row, run) for row, run in await self._settle(rows)]
        data: dict[str, Any] = {"tasks": tasks}
        if offset + len(rows) < total:
            data["nextCursor"] = str(offset + len(rows))
        return data

    async def _cancel(self, ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
        self._revision_allows(ctx, "tasks/cancel")
        _allowed(ctx, "tasks/cancel")
        task_id = params.task_id
        row, run = await self._load(ctx, task_id)
        status = self._view(row, run)["status"]
        if _modern(ctx) and status in TERMINAL:
            return {}  # 2026-07-28: an acknowledgement; the task ended as it ended
        if status in TERMINAL:
            raise invalid_params(
                ConflictError(
                    f"Cannot cancel task '{task_id}': it has already ended ({status})",
                    kind=ConflictKind.RUN_ENDED,
                    context={"task_id": task_id, "status": status},
                )
            )
        run_id = row.run_id
        job = self.jobs.get(task_id)
        if job is not None:
            run_id = await self._stop_job(job) or run_id
        await self.store.end(task_id, "cancelled", stage="cancelled", run_id=run_id)
        if run_id is not None:
            with contextlib.suppress(ConflictError, NotFoundError):  # it ended meanwhile
                await self._services.runs.cancel(run_id, principal=ADMIN_OF_TASKS)
        if job is not None:
            job.changed.set()
        if _modern(ctx):
            return {}
        row, run = await self._load(ctx, task_id)
        return self._view(row, run)

    async def task_state(self, task_id: str) -> str | None:
        """A task that has no run: ``drafting`` or ``ended``; None for another id (or a run's).

        Another principal's task is "another id" (the current request's principal decides).
        """
        if not await self._visible(task_id):
            return None
        job = self.jobs.get(task_id)
        if job is not None and job.run_id is None and not job.done.is_set():
            return "drafting"
        row = await self.store.get(task_id)
        if row is None or row.run_id is not None:
            return None
        return "ended" if row.ended or job is None else "drafting"

    async def cancel_job(self, task_id: str) -> bool:
        """Cancel a task whose run has not started (``workflow.cancel`` by ``operation_id``).

        False when there is no such task or it already has a run (cancel the run instead);
        :class:`ConflictError` (``run_ended``) when the task has ended.
        """
        state = await self.task_state(task_id)
        if state is None:
            return False
        job = self.jobs.get(task_id)
        if state == "ended" or job is None:
            raise ConflictError(
                f"task '{task_id}' has already ended ({job.stage if job else 'ended'})",
                kind=ConflictKind.RUN_ENDED,
                context={"task_id": task_id, "stage": job.stage if job else "ended"},
            )
        run_id = await self._stop_job(job)
        await self.store.end(task_id, "cancelled", stage="cancelled", run_id=run_id)
        if run_id is not None:
            with contextlib.suppress(ConflictError, NotFoundError):  # it ended meanwhile
                await self._services.runs.cancel(run_id, principal=ADMIN_OF_TASKS)
        job.changed.set()
        return True

    async def _visible(self, task_id: str) -> bool:
        """Whether the current request's principal may see task ``task_id``.

        With access control, a principal sees its own tasks (an admin every task); without it,
        every request is the one user's.
        """
        principal = current_principal()
        if principal.is_admin:
            return True
        row = await self.store.get(task_id)
        return row is not None and row.owner == principal.id

    @staticmethod
    async def _stop_job(job: TaskJob) -> str | None:
        """Stop a job; the run it had started (or was starting), if any."""
        if job.worker is not None and not job.worker.done():
            job.worker.cancel()
            with contextlib.suppress(BaseException):
                await job.worker
        if job.run_id is None and job.starting is not None:
            with contextlib.suppress(Exception):  # a start that failed left no run
                job.run_id = (await job.starting).run_id
        return job.run_id

    async def _result(self, ctx: Any, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        self._revision_allows(ctx, "tasks/result")
        _allowed(ctx, "tasks/result")
        task_id = params.task_id
        row, _ = await self._load(ctx, task_id)
        job = self.jobs.get(task_id)
        if job is not None:
            assert isinstance(job.link, ClientLink)
            channel = channel_for(ctx, None, related_task=task_id, timeout_s=self._timeout_s)
            with job.link.attach(channel):  # the job's own client requests can come this way
                await job.done.wait()
            row, _ = await self._load(ctx, task_id)
        row = await self._wait_for_run(ctx, row)
        if row.failure is not None:
            return _related(row.failure, task_id)
        if row.run_id is None:
            return _related(_dump(payload_result(_cancelled(row))), task_id)
        channel = channel_for(ctx, None, related_task=task_id, timeout_s=self._timeout_s)
        try:
            result = await self._follow_to_end(row, channel)
        except ClientRequestTimeout as exc:  # nobody answered the run's question: it fails
            return _related(await self._fail_on_timeout(row, exc), task_id)
        final = await self.store.get(task_id)
        if final is not None and final.failure is not None:
            return _related(final.failure, task_id)
        run = await self._services.run_store.get_run(row.run_id)
        if not run.terminal and isinstance(result, types.CallToolResult):
            # the ttl ran out while the run still waited: the task ends, it is not a result
            return _related(await self._expire(row, run), task_id)
        return _related(_dump(result), task_id)

    async def _follow_to_end(
        self, row: TaskRow, channel: CallChannel
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The run's result once it ended (tasks/result blocks until the task is terminal).

        A yield this stream could not get answered (no elicitation, or the form dismissed) is
        waited out: the run may be answered elsewhere (workflow.resume, the REST API) or
        cancelled. The wait ends at the task's expiry at the latest (the caller then ends the
        task as expired).
        """
        assert row.run_id is not None
        store = self._services.run_store
        deadline = row.expires_at or (utc_now() + timedelta(days=1))
        while True:  # each round ends with the run over, or its yield answered elsewhere
            result = await self._calls.follow(row.run_id, channel, after=0)
            run = await store.get_run(row.run_id)
            left = (deadline - utc_now()).total_seconds()
            if run.terminal or left <= 0 or not isinstance(result, types.CallToolResult):
                return result
            changed = await store.wait_until(
                row.run_id, _moved_on(dict(run.waiting)), timeout_s=left
            )
            if not _moved_on(dict(run.waiting))(changed):
                return result

    async def _wait_for_run(self, ctx: Any, row: TaskRow) -> TaskRow:
        """A row whose job runs in another replica: wait (bounded) until it has a run or ended."""
        quiet = max(3 * self._timeout_s, 600.0)
        for _ in range(int(quiet / 0.5) + 1):
            if row.run_id is not None or row.ended:
                return row
            await asyncio.sleep(0.5)
            row, _ = await self._load(ctx, row.task_id)
        raise invalid_params(
            ConflictError(
                f"task '{row.task_id}' has no run yet; poll tasks/get",
                kind=ConflictKind.NOT_WAITING,
                context={"task_id": row.task_id},
            )
        )

    async def _fail_on_timeout(self, row: TaskRow, exc: ClientRequestTimeout) -> dict[str, Any]:
        return await self._fail(row, exc, "client timeout")

    async def _expire(self, row: TaskRow, run: RunRecord) -> dict[str, Any]:
        """End a task whose ttl ran out while its run waited for input: failed, run stopped.

        Neither revision has an ``expired`` status: the task is ``failed`` with a
        ``task_expired`` error saying where the run waited (a result on 2025-11-25, the task's
        JSON-RPC error on 2026-07-28); its run fails too, so both tell the same story. Noticed by
        ``tasks/result`` and by any look at the task (``tasks/get``, ``tasks/list``); the failed
        task is then kept for :data:`EXPIRED_KEPT` so its client can read why.
        """
        prompt = run.waiting_prompt() or {}
        node = prompt.get("node_id")
        where = f" at '{node}' ({prompt.get('message', '')})" if node else ""
        error = TaskExpired(
            f"the task's ttl ({row.ttl_ms} ms) ran out while its run waited for input{where}; "
            "the run was stopped",
            context={"task_id": row.task_id, "run_id": run.run_id, "node_id": node},
            suggestion=f"Call {row.tool} as a task again (with a longer params.task.ttl on "
            "2025-11-25), and answer its question in time (its elicitation, tasks/update, or "
            "workflow.resume).",
            correlation=row.task_id,
        )
        return await self._fail(row, error, "expired", kept_until=utc_now() + EXPIRED_KEPT)

    async def _fail(
        self,
        row: TaskRow,
        exc: DynamicToolsError,
        stage: str,
        *,
        kept_until: datetime | None = None,
    ) -> dict[str, Any]:
        """End the task and its run as failed with ``exc``; the failure the task keeps."""
        failure = _dump(error_result(exc))
        ended = await self.store.end(
            row.task_id, "failed", failure=failure, stage=stage, expires_at=kept_until
        )
        if ended:
            assert row.run_id is not None
            with contextlib.suppress(ConflictError, NotFoundError):
                await self._services.runs.fail(
                    row.run_id, {"message": exc.message, "error_code": exc.code.upper()}
                )
        final = await self.store.get(row.task_id)
        return final.failure if final is not None and final.failure else failure


def _modern(ctx: Any) -> bool:
    """A 2026-07-28 request (Tasks through the extension, :mod:`.extension`)."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _moved_on(asked: dict[str, Any]) -> Callable[[RunRecord], bool]:
    """Whether a run ended or no longer waits for the yields it waited for."""
    return lambda run: run.terminal or run.waiting != asked


def _no_task(task_id: str) -> MCPError:
    """The one answer for an unknown, expired or someone else's task."""
    return invalid_params(
        NotFoundError(
            f"no task '{task_id[:80]}': unknown, expired (its ttl ran out) or not created by this "
            "client; tasks/list shows yours",
            context={"task_id": task_id[:80]},
        )
    )


def _interrupted(row: TaskRow) -> dict[str, Any]:
    return error_payload(
        TaskInterrupted(
            f"the server process preparing this task stopped while {row.stage}; its workflow "
            "run never started",
            context={"task_id": row.task_id, "tool": row.tool},
            retryable=True,
            suggestion=f"Call {row.tool} as a task again.",
            correlation=row.task_id,
        )
    )


def _cancelled(row: TaskRow) -> dict[str, Any]:
    return error_payload(
        TaskCancelled(
            "the task was cancelled before its workflow run started",
            context={"task_id": row.task_id, "tool": row.tool},
            suggestion=f"Call {row.tool} as a task again if the user still wants it.",
            correlation=row.task_id,
        )
    )


def _related(data: dict[str, Any], task_id: str) -> dict[str, Any]:
    meta = dict(data.get("_meta") or {})
    meta[RELATED_TASK] = {"taskId": task_id}
    return {**data, "_meta": meta}


def _dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return data


def created(view: dict[str, Any]) -> dict[str, Any]:
    """A task as ``CreateTaskResult`` gives it: ``working``, as every task begins.

    A fast run may already wait for input or have ended when the result is built; the client
    learns that from the status notification and ``tasks/get``, as for any later change.
    """
    if view["status"] == "working":
        return view
    return {**view, "status": "working", "statusMessage": "the task was created"}
