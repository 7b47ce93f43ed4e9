"""MCP Tasks on 2026-07-28: the ``io.modelcontextprotocol/tasks`` extension (server side).

2026-07-28 moved Tasks out of the core protocol into this extension (docs/mcp-tasks.md). The
``mcp`` SDK ships neither side of it, so this module implements the server's part against the
extension's schema, over the same durable runs, task rows and owner scoping as the 2025-11-25
runtime (:mod:`dynamic_tools.mcp.tasks.runtime`, which routes the requests here by revision):

- **Negotiation.** ``server/discover`` advertises ``capabilities.extensions
  ["io.modelcontextprotocol/tasks"] = {}``; a client declares the extension in each request's
  ``_meta["io.modelcontextprotocol/clientCapabilities"].extensions``.
- **Creation is the server's choice.** A ``tools/call`` of a task-required tool
  (``workflow.execute``, ``workflow.author_and_run``, ``workflow.repair_and_rerun``) from a
  client that declared the extension answers a ``CreateTaskResult``: ``resultType: "task"``
  and the task's fields. A client that did not declare it gets ``-32021`` (missing required
  client capability) naming the extension. Other tools answer inline as before.
- **``tasks/get``** answers the task in full (``DetailedTask``): ``working``;
  ``input_required`` with ``inputRequests`` (an elicitation form per waiting ``yield``, keyed
  ``<node>@<when it started>`` so a key never names two requests; the drafting job's sampling
  and elicitation requests); ``completed`` with ``result`` (the ``CallToolResult``, also when the
  run failed: that is a tool error, ``isError: true``); ``failed`` with ``error`` (a JSON-RPC
  error: the ttl ran out while the run waited, the client never answered, the process preparing
  the task stopped); ``cancelled``. ``_meta["dynamic-tools/run"]`` carries the run id, the steps
  done and in all and the current step, as on 2025-11-25.
- **``tasks/update``** delivers ``inputResponses``: an accepted form resumes the yield it
  answers (an answer the yield does not accept is a ``-32602`` error naming the field, and the
  request stays outstanding), a declined one cancels the run (as declining the 2025-11-25
  elicitation does), a dismissed one leaves it waiting; keys not outstanding are ignored.
- **``tasks/cancel``** acknowledges with an empty result and cancels the task and its run.
- There is no ``tasks/list`` and no ``tasks/result`` on 2026-07-28 (``-32601``); a client that
  did not declare the extension gets ``-32021`` from ``tasks/get``, ``update`` and ``cancel``.
  Status notifications (``notifications/tasks`` over ``subscriptions/listen``) are optional in
  the extension and not sent: clients poll ``tasks/get`` at ``pollIntervalMs``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR
from pydantic import ConfigDict, Field

from dynamic_tools.mcp.channel import ClientRequestTimeout
from dynamic_tools.mcp.errors import TaskCapabilityRequired, error_payload, record_error
from dynamic_tools.mcp.tasks.views import task_view
from dynamic_tools.mcp.workflow_tools import elicitation_schema, run_result
from dynamic_tools.persistence.run_view import RunRecord
from dynamic_tools.persistence.task_store import TaskRow

EXTENSION = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
MISSING_CAPABILITY = -32021
#: a task that ended this way is ``failed`` with a JSON-RPC error; any other end is a result
PROTOCOL_FAILURES = frozenset({"TASK_EXPIRED", "TASK_INTERRUPTED", "CLIENT_REQUEST_TIMEOUT"})

Waiting = Callable[[str | None], Any]  # what the task waits for (None: no more)


class UpdateTaskRequestParams(types.RequestParams):
    """``tasks/update``: the task, and responses to its outstanding input requests."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    input_responses: dict[str, Any] = Field(default_factory=dict)


def declares_tasks(ctx: Any) -> bool:
    """Whether the request's client declared the extension (in this request's ``_meta``)."""
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), Mapping) else {}
    declared = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, Mapping) else None
    if isinstance(declared, Mapping):
        extensions = declared.get("extensions")
        return isinstance(extensions, Mapping) and EXTENSION in extensions
    caps = getattr(ctx.session, "client_capabilities", None)
    extensions = getattr(caps, "extensions", None) or {}
    return EXTENSION in extensions


def missing_capability(what: str, *, tool: str | None = None) -> MCPError:
    """``-32021``: ``what`` needs the client to declare the Tasks extension."""
    message = (
        f"{what} needs the {EXTENSION} extension: declare it in the request's client "
        "capabilities (_meta['io.modelcontextprotocol/clientCapabilities'].extensions)"
    )
    error = TaskCapabilityRequired(
        message,
        context={"tool": tool} if tool else {},
        suggestion="Use an MCP client with the Tasks extension (docs/mcp-tasks.md shows one for "
        "the Python SDK), or call w_<workflow_id> / workflow.run, which answer without a task.",
    )
    payload = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}, **error_payload(error)}
    record_error(payload, where="request")
    return MCPError(MISSING_CAPABILITY, "Missing required client capability", payload)


class PolledInputs:
    """The client requests of a task's own work, as ``inputRequests`` answered by tasks/update.

    Used by a drafting job (``workflow.author_and_run``): its sampling and elicitation requests
    wait here, each under a key never used twice, until ``tasks/update`` answers them or
    ``MCP_CLIENT_REQUEST_TIMEOUT_S`` passes (:class:`ClientRequestTimeout` fails the task).
    """

    def __init__(self, task_id: str, timeout_s: float, waiting: Waiting) -> None:
        self.task_id = task_id
        self.timeout_s = timeout_s
        self.waiting = waiting
        self.pending: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]] = {}
        self._keys = itertools.count(1)

    def requests(self) -> dict[str, Any]:
        """The outstanding requests by key (``inputRequests``)."""
        return {key: request for key, (request, _) in self.pending.items()}

    def answer(self, responses: Mapping[str, Any]) -> None:
        """Deliver the responses to outstanding requests; other keys are ignored."""
        for key, response in responses.items():
            entry = self.pending.get(key)
            if entry is not None and not entry[1].done():
                entry[1].set_result(response)

    async def elicit(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        """An elicitation form answered through ``tasks/update``."""
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        answer = await self._ask("elicitation", request)
        return types.ElicitResult.model_validate(answer)

    async def sample(self, prompt: str) -> str:
        """A completion from the client's model, answered through ``tasks/update``."""
        message = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text=prompt)
        )
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(messages=[message], max_tokens=8000)
        )
        answer = await self._ask("sampling", request)
        content = answer.get("content") if isinstance(answer, Mapping) else None
        return str(content.get("text", "")) if isinstance(content, Mapping) else ""

    async def _ask(self, what: str, request: Any) -> Any:
        key = f"{what}-{next(self._keys)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        self.pending[key] = (wire, future)
        await self.waiting(what)
        try:
            with anyio.fail_after(self.timeout_s):
                return await future
        except TimeoutError:
            raise ClientRequestTimeout(what, self.timeout_s, task_id=self.task_id) from None
        finally:
            self.pending.pop(key, None)
            await self.waiting(None)


def yield_key(run: RunRecord, node_id: str) -> str:
    """The ``inputRequests`` key of the yield ``node_id`` waits on (a new key per visit)."""
    node = run.nodes.get(node_id)
    started = (node.started_at if node else None) or ""
    return f"{node_id}@{started}"


def yield_requests(run: RunRecord) -> dict[str, Any]:
    """An elicitation form for every yield the run waits on, by key."""
    requests: dict[str, Any] = {}
    for node_id, prompt in (run.waiting or {}).items():
        message = str(prompt.get("message") or "The workflow needs your input.")
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=message, requested_schema=elicitation_schema(prompt.get("expects") or {})
            )
        )
        requests[yield_key(run, node_id)] = request.model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
    return requests


def answered_yields(run: RunRecord, responses: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The waiting yields the responses answer: ``(node_id, response)``; other keys ignored."""
    by_key = {yield_key(run, node_id): node_id for node_id in (run.waiting or {})}
    return [(by_key[key], answer) for key, answer in responses.items() if key in by_key]


def detailed_task(
    row: TaskRow, run: RunRecord | None, stage: str | None, inputs: PolledInputs | None
) -> dict[str, Any]:
    """The task as ``tasks/get`` answers it on 2026-07-28 (``DetailedTask``)."""
    legacy = task_view(row, run, stage)
    task: dict[str, Any] = {
        "taskId": legacy["taskId"],
        "status": legacy["status"],
        "statusMessage": legacy.get("statusMessage"),
        "createdAt": legacy["createdAt"],
        "lastUpdatedAt": legacy["lastUpdatedAt"],
        "ttlMs": legacy.get("ttl"),
        "pollIntervalMs": legacy.get("pollInterval"),
        "_meta": legacy["_meta"],
    }
    if row.ended and row.status == "failed":
        failure = row.failure or {}
        payload = failure.get("structuredContent")
        code = payload.get("error_code") if isinstance(payload, Mapping) else None
        if code in PROTOCOL_FAILURES:  # the task itself failed: a JSON-RPC error
            assert isinstance(payload, Mapping)
            message = str(payload.get("message"))
            error = {"code": INTERNAL_ERROR, "message": message, "data": payload}
            task.update(status="failed", error=error)
        else:  # its work answered an error: a tool result with isError
            task.update(status="completed", result=failure)
    elif row.ended:
        task["status"] = "cancelled"
    elif run is not None and run.status in ("succeeded", "failed"):
        task.update(status="completed", result=_dump(run_result(run)))
    elif run is not None and run.status == "waiting_input":
        task.update(status="input_required", inputRequests=yield_requests(run))
    elif run is None and inputs is not None and inputs.pending:
        task.update(status="input_required", inputRequests=inputs.requests())
    elif task["status"] == "input_required":  # another process's job waits: poll again
        task["status"] = "working"
    return {k: v for k, v in task.items() if v is not None or k == "ttlMs"}


def _dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return data
