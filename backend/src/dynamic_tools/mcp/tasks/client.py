"""The Tasks extension for the ``mcp`` Python SDK's client (2026-07-28), which ships none.

``Client(url, extensions=[TasksExtension()])`` declares ``io.modelcontextprotocol/tasks`` on
every request, so a server may answer a ``tools/call`` with a task handle
(``resultType: "task"``). ``call_tool`` then finishes the task for the caller: it polls
``tasks/get`` at the task's ``pollIntervalMs``, answers each new input request (an elicitation
form, a sampling request) through the client's own callbacks with ``tasks/update``, and returns
the task's ``CallToolResult``. A task that fails raises :class:`mcp.shared.exceptions.MCPError`
with the task's JSON-RPC error; a cancelled one answers an ``isError`` result. The whole wait
is bounded (``timeout_s``).

A client without the callback an input request needs cannot answer it: the call raises
``MCPError`` naming the task, which stays waiting (answer it elsewhere, e.g. with
``workflow.resume``, or cancel it). Server side: :mod:`dynamic_tools.mcp.tasks.extension`.

:func:`call_task` calls a task-required tool the same way on both revisions: through the
extension on 2026-07-28, and on 2025-11-25 (``mode="legacy"``) with ``params.task`` and then
``tasks/result``, whose stream carries the task's elicitation and sampling requests to the same
callbacks.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field, TypeAdapter

from dynamic_tools.adapters.mcp_internals import send_unchecked_request

EXTENSION = "io.modelcontextprotocol/tasks"
_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)
_MIN_POLL_S, _MAX_POLL_S = 0.05, 5.0


class TaskHandle(types.Result):
    """A ``CreateTaskResult`` on 2026-07-28: the task instead of the tool's result."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """A ``tasks/get`` answer: the task, with its result, error or input requests."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskIdParams(types.RequestParams):
    """The params of ``tasks/get`` and ``tasks/cancel``."""

    task_id: str


class UpdateParams(TaskIdParams):
    """The params of ``tasks/update``."""

    input_responses: dict[str, Any]


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    """``tasks/get``; the task id also goes in the ``Mcp-Name`` header, as the extension asks."""

    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    """``tasks/update``: responses to the task's input requests."""

    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateParams
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    """``tasks/cancel``."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class TasksExtension(ClientExtension):
    """Declares the Tasks extension and finishes task handles (see the module docstring)."""

    identifier = EXTENSION

    def __init__(self, *, timeout_s: float = 3600.0) -> None:
        self.timeout_s = timeout_s

    def claims(self) -> list[ResultClaim[Any]]:
        """The task handle as an extra result of ``tools/call``."""
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.finish)]

    async def finish(self, handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        """Poll the task to its end, answering its input requests; its tool result."""
        session = ctx.session
        answered: set[str] = set()
        interval = handle.poll_interval_ms
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            task = await session.send_request(
                GetTask(params=TaskIdParams(task_id=handle.task_id)), DetailedTask
            )
            if task.status == "completed" and task.result is not None:
                return types.CallToolResult.model_validate(task.result)
            if task.status == "failed":
                error = task.error or {}
                raise MCPError(
                    int(error.get("code", -32603)),
                    str(error.get("message") or task.status_message or "the task failed"),
                    error.get("data"),
                )
            if task.status == "cancelled":
                text = task.status_message or f"task {task.task_id} was cancelled"
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=text)], is_error=True
                )
            if task.status == "input_required":
                responses = await self._answer(session, task, answered)
                if responses:
                    update = UpdateParams(task_id=task.task_id, input_responses=responses)
                    await session.send_request(UpdateTask(params=update), types.EmptyResult)
                    continue  # look again at once: the answer may have moved the task on
            interval = task.poll_interval_ms or interval
            await anyio.sleep(min(max((interval or 500) / 1000, _MIN_POLL_S), _MAX_POLL_S))
        raise MCPError(-32001, f"task {handle.task_id} did not end within {self.timeout_s:g} s")

    @staticmethod
    async def _answer(session: Any, task: DetailedTask, answered: set[str]) -> dict[str, Any]:
        """Responses to the input requests not answered yet, through the client's callbacks."""
        responses: dict[str, Any] = {}
        for key, raw in (task.input_requests or {}).items():
            if key in answered:
                continue
            request = _INPUT_REQUEST.validate_python(raw)
            context = ClientRequestContext(session=session, request_id=key)
            answer = await session.dispatch_input_request(context, request)
            if isinstance(answer, types.ErrorData):
                raise MCPError(
                    answer.code,
                    f"task {task.task_id} needs input this client cannot give ({answer.message}); "
                    "it keeps waiting: answer it elsewhere or cancel it",
                    {"task_id": task.task_id, "key": key},
                )
            answered.add(key)
            responses[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        return responses


async def call_task(
    client: Client, name: str, arguments: dict[str, Any] | None = None, *, ttl_ms: int | None = None
) -> types.CallToolResult:
    """Call a task-required tool as a task on either revision; its final ``CallToolResult``.

    On 2026-07-28 the client must have :class:`TasksExtension`. On 2025-11-25 the call carries
    ``params.task`` (``ttl_ms``: the ttl asked) and ``tasks/result`` waits for the end.
    """
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await client.call_tool(name, arguments or {})
    session = client.session
    task = {} if ttl_ms is None else {"ttl": ttl_ms}
    params = {"name": name, "arguments": arguments or {}, "task": task}
    # The SDK checks a tools/call answer as a CallToolResult, which a CreateTaskResult is not,
    # so the request goes out below that check, stamped like any other request of the session.
    raw = await send_unchecked_request(session, "tools/call", params)
    if "task" not in raw:  # the server answered at once (an error, say)
        return types.CallToolResult.model_validate(raw)
    request = types.GetTaskPayloadRequest(
        params=types.GetTaskPayloadRequestParams(task_id=str(raw["task"]["taskId"]))
    )
    return await session.send_request(request, types.CallToolResult)
