"""MCP Tasks (2025-11-25) on durable runs: a task is a run.

The ``mcp`` 2.x SDK has no Tasks runtime, so this module implements it and nothing else does:

- a server middleware answers ``tools/call`` with ``params.task`` by starting the tool's work
  and returning ``CreateTaskResult`` at once (the SDK would validate a task result as a
  ``CallToolResult``, so the middleware owns that response);
- ``tasks/get``, ``tasks/result`` (blocks until the run ends; a waiting ``yield`` is delivered
  as an ``elicitation/create`` tagged with the task), ``tasks/list`` and ``tasks/cancel``;
- status: ``pending``/``running`` → ``working``, ``waiting_input`` → ``input_required``,
  ``succeeded`` → ``completed``, ``failed`` → ``failed``, ``cancelled`` → ``cancelled``; the
  status message and ``_meta`` carry the run id, current step, progress state and a summary
  (seed 003 §10.4).

Task ids are run ids, so tasks survive restarts like runs do. Work that precedes a run (drafting
in ``workflow.author_and_run``) is an in-process job until its run starts.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dynamic_tools.errors import DynamicToolsError, NotFoundError
from dynamic_tools.mcp.channel import RELATED_TASK, channel_for
from dynamic_tools.mcp.entries import ToolCall
from dynamic_tools.mcp.errors import INVALID_PARAMS, error_result, unexpected_result, unknown_tool
from dynamic_tools.mcp.workflow_tools import WorkflowCalls
from dynamic_tools.persistence.run_view import RunRecord, iso

if TYPE_CHECKING:
    from dynamic_tools.mcp.server import McpEndpoint

RUN_META = "dynamic-tools/run"
DEFAULT_TTL_MS = 7 * 24 * 3600 * 1000
POLL_INTERVAL_MS = 500
STATUS = {
    "pending": "working",
    "running": "working",
    "waiting_input": "input_required",
    "succeeded": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
}
PROGRESS = {"succeeded": "succeeded", "failed": "failed", "cancelled": "canceled"}


@dataclass
class TaskJob:
    """Work of a task before its run exists (e.g. drafting a workflow)."""

    task_id: str
    created_at: str
    ttl: int
    stage: str = "starting"
    run_id: str | None = None
    failure: types.CallToolResult | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task[None] | None = None


TaskStarter = Callable[[ToolCall], Awaitable[str]]  # → the run id
JobStarter = Callable[[ToolCall, TaskJob], Awaitable[str]]  # drafting, then → the run id


class TaskRuntime:
    """Creates and serves tasks for the endpoint's tools (see the module docstring)."""

    def __init__(self, endpoint: McpEndpoint) -> None:
        self.endpoint = endpoint
        self.jobs: dict[str, TaskJob] = {}

    # --- wiring ----------------------------------------------------------------------------
    def install(self) -> None:
        """Register the middleware and the four ``tasks/*`` handlers on the SDK server."""
        server = self.endpoint.server
        server.middleware.append(self._middleware)
        server.add_request_handler("tasks/get", types.GetTaskRequestParams, self._get)
        server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, self._result)
        server.add_request_handler("tasks/list", types.PaginatedRequestParams, self._list)
        server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, self._cancel)

    @staticmethod
    def capability() -> types.ServerTasksCapability:
        """The server's tasks capability: list, cancel, task-augmented ``tools/call``."""
        return types.ServerTasksCapability.model_validate(
            {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        )

    @property
    def _calls(self) -> WorkflowCalls:
        surface = self.endpoint.surface
        return WorkflowCalls(surface.services.runs, surface.services.run_store)

    # --- creation --------------------------------------------------------------------------
    async def _middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        params = ctx.params
        if (
            ctx.method == "tools/call"
            and isinstance(params, Mapping)
            and params.get("task") is not None
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        ):
            return await self._create(ctx, params)
        return await call_next(ctx)

    async def _create(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        name = str(params.get("name", ""))
        task = params.get("task") or {}
        ttl = (
            int(task.get("ttl") or DEFAULT_TTL_MS) if isinstance(task, Mapping) else DEFAULT_TTL_MS
        )
        view = await self.endpoint.view_for(ctx)
        entry = view.entries.get(name)
        if entry is None:
            raise unknown_tool(name)
        if entry.start_task is None and entry.start_job is None:
            raise MCPError(
                INVALID_PARAMS,
                f"tool '{name}' does not support task execution (execution.taskSupport is "
                "forbidden); call it without params.task",
            )
        call_params = types.CallToolRequestParams.model_validate(dict(params))
        call = ToolCall(view, dict(params.get("arguments") or {}), channel_for(ctx, call_params))
        now = _now()
        if entry.start_job is not None:
            job = TaskJob(task_id=f"task-{uuid.uuid4().hex}", created_at=now, ttl=ttl)
            self.jobs[job.task_id] = job
            job.worker = asyncio.create_task(self._run_job(entry.start_job, call, job))
            return {"task": self._job_task(job)}
        assert entry.start_task is not None
        try:
            run_id = await entry.start_task(call)
        except DynamicToolsError as exc:
            # The work could not start (e.g. invalid inputs): a failed task with the §10 error.
            job = TaskJob(task_id=f"task-{uuid.uuid4().hex}", created_at=now, ttl=ttl)
            job.failure, job.stage = error_result(exc), "failed"
            job.done.set()
            self.jobs[job.task_id] = job
            return {"task": self._job_task(job)}
        run = await self.endpoint.surface.services.run_store.get_run(run_id)
        return {"task": run_task(run, ttl)}

    async def _run_job(self, start: JobStarter, call: ToolCall, job: TaskJob) -> None:
        try:
            job.run_id = await start(call, job)
        except DynamicToolsError as exc:
            job.failure, job.stage = error_result(exc), "failed"
        except Exception as exc:  # a bug: report it as a failed task, details in the log
            job.failure, job.stage = unexpected_result(exc, tool="task"), "failed"
        finally:
            job.done.set()

    # --- reading ---------------------------------------------------------------------------
    async def _task(self, task_id: str) -> tuple[dict[str, Any], RunRecord | None]:
        job = self.jobs.get(task_id)
        run_id = job.run_id if job is not None else task_id
        if run_id is not None:
            try:
                run = await self.endpoint.surface.services.run_store.get_run(run_id)
            except NotFoundError:
                if job is None:
                    raise MCPError(INVALID_PARAMS, f"no task '{task_id}'") from None
            else:
                task = run_task(run, job.ttl if job else DEFAULT_TTL_MS)
                if job is not None:
                    task = {**task, "taskId": job.task_id, "createdAt": job.created_at}
                return task, run
        assert job is not None
        return self._job_task(job), None

    def _job_task(self, job: TaskJob) -> dict[str, Any]:
        status = {"failed": "failed", "cancelled": "cancelled"}.get(job.stage, "working")
        task = types.Task(
            task_id=job.task_id,
            status=status,
            status_message=job.stage,
            created_at=job.created_at,
            last_updated_at=_now(),
            ttl=job.ttl,
            poll_interval=POLL_INTERVAL_MS,
        )
        details = {"run_id": None, "current_step": job.stage, "summary": job.stage}
        return _wire(task, {**details, "progress_state": "running"})

    async def _get(self, ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        task, _ = await self._task(params.task_id)
        return task

    async def _list(self, ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
        offset = int(params.cursor) if params.cursor and params.cursor.isdigit() else 0
        offset = min(offset, 2**53)  # past every run; the database's integers stop at 2**63
        runs, total = await self.endpoint.surface.services.run_store.list_runs(
            limit=50, offset=offset
        )
        tasks = [run_task(run, DEFAULT_TTL_MS) for run in runs]
        if offset == 0:
            pending = [j for j in self.jobs.values() if j.run_id is None]
            tasks = [self._job_task(j) for j in pending] + tasks
        data: dict[str, Any] = {"tasks": tasks}
        if offset + len(runs) < total:
            data["nextCursor"] = str(offset + len(runs))
        return data

    async def _cancel(self, ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
        task, run = await self._task(params.task_id)
        if task["status"] in ("completed", "failed", "cancelled"):
            raise MCPError(
                INVALID_PARAMS, f"task '{params.task_id}' has already ended ({task['status']})"
            )
        job = self.jobs.get(params.task_id)
        if run is not None:
            await self.endpoint.surface.services.runs.cancel(run.run_id)
        elif job is not None and job.worker is not None:
            job.worker.cancel()
            job.failure, job.stage = None, "cancelled"
        task, _ = await self._task(params.task_id)
        return task

    async def _result(self, ctx: Any, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        task_id = params.task_id
        job = self.jobs.get(task_id)
        if job is not None:
            await job.done.wait()
            if job.failure is not None:
                return _related(_dump(job.failure), task_id)
        _, run = await self._task(task_id)
        if run is None:
            raise MCPError(INVALID_PARAMS, f"task '{task_id}' has no result")
        channel = channel_for(ctx, None, related_task=task_id)
        result = await self._calls.follow(run.run_id, channel, after=0)
        return _related(_dump(result), task_id)


def run_task(run: RunRecord, ttl: int) -> dict[str, Any]:
    """The task view of a run, with the §10.4 status details."""
    current = _current_step(run)
    done = sum(1 for n in run.nodes.values() if n.get("status") in ("succeeded", "skipped"))
    total = len(run.nodes)
    summary = {
        "waiting_input": f"waiting for input at '{current}': "
        + str((run.waiting_prompt() or {}).get("message", "")),
        "succeeded": "the run succeeded",
        "failed": "the run failed: " + str((run.error or {}).get("message", "")),
        "cancelled": "the run was cancelled",
    }.get(run.status, f"step {current or '-'} running; {done}/{total} steps done")
    task = types.Task(
        task_id=run.run_id,
        status=STATUS.get(run.status, "working"),
        status_message=summary,
        created_at=iso(run.created_at) or _now(),
        last_updated_at=iso(run.updated_at) or _now(),
        ttl=ttl,
        poll_interval=POLL_INTERVAL_MS,
    )
    details = {
        "run_id": run.run_id,
        "workflow_id": run.workflow_id,
        "current_step": current,
        "progress_state": PROGRESS.get(run.status, "running" if run.started_at else "pending"),
        "steps_done": done,
        "steps_total": total,
        "summary": summary,
    }
    return _wire(task, details)


def _current_step(run: RunRecord) -> str | None:
    prompt = run.waiting_prompt()
    if prompt:
        return str(prompt["node_id"])
    running = [n for n, s in run.nodes.items() if s.get("status") == "running"]
    if running:
        return running[-1]
    failed = [n for n, s in run.nodes.items() if s.get("status") == "failed"]
    return failed[0] if failed else None


def _related(data: dict[str, Any], task_id: str) -> dict[str, Any]:
    meta = dict(data.get("_meta") or {})
    meta[RELATED_TASK] = {"taskId": task_id}
    return {**data, "_meta": meta}


def _dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return data


def _wire(task: types.Task, details: dict[str, Any]) -> dict[str, Any]:
    """A task on the wire (``ttl`` always present) with the run's details in ``_meta``."""
    data = _dump(task)
    data.setdefault("ttl", None)
    data["_meta"] = {RUN_META: details}
    return data


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
