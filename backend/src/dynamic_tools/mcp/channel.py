"""The channel back to the client during one tool call: progress, elicitation, sampling.

:func:`channel_for` builds it from the SDK's request context. Server-initiated requests
(elicitation, sampling) exist only on 2025-11-25 connections that have a back channel and a
client that declared the capability; on 2026-07-28 a yield becomes an ``InputRequiredResult``
instead (``input_responses`` / ``request_state`` carry the client's retry).

Every elicitation and sampling request is bounded by ``timeout_s``
(``MCP_CLIENT_REQUEST_TIMEOUT_S``): a client that does not answer in time gets
:class:`ClientRequestTimeout`, never an endless wait.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.jsonrpc import REQUEST_TIMEOUT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dynamic_tools.access.principals import Principal
from dynamic_tools.mcp.errors import ToolError
from dynamic_tools.mcp.http_context import session_key
from dynamic_tools.mcp.principal import principal_of

RELATED_TASK = "io.modelcontextprotocol/related-task"
DEFAULT_TIMEOUT_S = 300.0  # MCP_CLIENT_REQUEST_TIMEOUT_S's default

Progress = Callable[[float, float | None, str | None], Awaitable[None]]
Elicit = Callable[[str, dict[str, Any]], Awaitable[types.ElicitResult]]


async def _nothing() -> None:
    return None


class ClientRequestTimeout(ToolError):
    """The client did not answer an elicitation or sampling request in time."""

    code = "client_request_timeout"

    def __init__(self, what: str, timeout_s: float, *, task_id: str | None = None) -> None:
        super().__init__(
            f"the client did not answer the {what} request within {timeout_s:g} s "
            "(MCP_CLIENT_REQUEST_TIMEOUT_S)",
            context={"task_id": task_id} if task_id else {},
            retryable=True,
            suggestion=f"Answer {what} requests while the task runs (call tasks/result when "
            "the task is input_required), then start the task again.",
            correlation=task_id,
        )
        self.what = what
        self.timeout_s = timeout_s


@dataclass
class CallChannel:
    """What a tool call can do back towards the client."""

    protocol_version: str
    progress: Progress
    principal: Principal  # who the call speaks for (mcp/principal.py): runs are theirs
    elicit: Elicit | None = None  # None: no elicitation on this session
    input_responses: dict[str, Any] | None = None
    request_state: str | None = None
    tools_changed: Callable[[], Awaitable[None]] = _nothing
    session_id: str | None = None  # the MCP session (None on stateless requests)
    sample: Callable[[str], Awaitable[str]] | None = None  # client LLM (MCP sampling), if any
    task_id: str | None = None  # the MCP task this call serves (its requests are tagged)
    elicits: bool = False  # the client declared elicitation (on 2026-07-28: in this request)

    @property
    def modern(self) -> bool:
        """A 2026-07-28 (stateless) request: yields become ``InputRequiredResult``."""
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS


def channel_for(
    ctx: Any,
    params: types.CallToolRequestParams | None,
    *,
    related_task: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> CallChannel:
    """The channel of the request ``ctx``; ``related_task`` tags elicitations with a task.

    Elicitation and sampling requests go out on the request's own stream and raise
    :class:`ClientRequestTimeout` after ``timeout_s`` without an answer.
    """
    session = ctx.session
    caps = session.client_capabilities
    legacy = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
    back_channel = legacy and session.can_send_request and caps is not None

    meta = {RELATED_TASK: {"taskId": related_task}} if related_task else None
    related = ServerMessageMetadata(related_request_id=ctx.request_id)

    async def elicit(message: str, schema: dict[str, Any]) -> types.ElicitResult:
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=message, requested_schema=schema, meta=meta
            )
        )
        result: types.ElicitResult = await _bounded(
            "elicitation",
            timeout_s,
            related_task,
            session.send_request(request, types.ElicitResult, timeout_s, related),
        )
        return result

    async def sample(prompt: str) -> str:
        message = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text=prompt)
        )
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(messages=[message], max_tokens=8000, meta=meta)
        )
        result: types.CreateMessageResult = await _bounded(
            "sampling",
            timeout_s,
            related_task,
            session.send_request(request, types.CreateMessageResult, timeout_s, related),
        )
        return str(getattr(result.content, "text", ""))

    async def tools_changed() -> None:
        if legacy:
            await session.send_tool_list_changed()

    responses = params.input_responses if params is not None else None
    return CallChannel(
        protocol_version=ctx.protocol_version,
        progress=session.report_progress,
        principal=principal_of(ctx),
        elicit=elicit if back_channel and caps.elicitation is not None else None,
        sample=sample if back_channel and caps.sampling is not None else None,
        tools_changed=tools_changed,
        session_id=session_key(ctx),
        input_responses=dict(responses) if responses else None,
        request_state=params.request_state if params is not None else None,
        task_id=related_task,
        elicits=caps is not None and caps.elicitation is not None,
    )


async def _bounded(what: str, timeout_s: float, task_id: str | None, sent: Awaitable[Any]) -> Any:
    """The answer to a request sent with a timeout; the SDK's timeout error made clear."""
    try:
        return await sent
    except MCPError as exc:
        if exc.code == REQUEST_TIMEOUT:
            raise ClientRequestTimeout(what, timeout_s, task_id=task_id) from None
        raise
