"""Error mapping at the MCP edge: the one place that assigns JSON-RPC codes and tool errors.

A failing tool answers an ``isError`` result whose ``structuredContent`` is the seed 003 §10
payload, so a model can act on it::

    {"error_code", "category", "message", "context", "retryable", "suggested_action",
     "correlation_id", "violations"?, "step_id"?, "command"?, "response_payload"?}

Protocol faults (an unknown or filtered-out tool, malformed params) are JSON-RPC errors
(``-32602``) raised as :class:`mcp.shared.exceptions.MCPError`. Secrets are scrubbed from
every payload.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import mcp_types as types
from loguru import logger
from mcp.shared.exceptions import MCPError

from dynamic_tools.errors import (
    ConfigurationError,
    ConflictError,
    DynamicToolsError,
    InvalidInputError,
    LLMError,
    NotFoundError,
    OutboundError,
)
from dynamic_tools.logs import redactor

INVALID_PARAMS = -32602

_CATEGORIES: list[tuple[type[DynamicToolsError], str]] = [
    (InvalidInputError, "validation"),
    (NotFoundError, "not_found"),
    (ConflictError, "conflict"),
    (ConfigurationError, "internal"),
    (LLMError, "execution"),
    (OutboundError, "execution"),
]

_SUGGESTIONS = {
    "validation": "Fix the fields listed in violations and call the tool again.",
    "not_found": "List what exists (tools/list, workflow.list or resources/list) and use one of "
    "those ids.",
    "conflict": "Read the current version (workflow.get) and retry with it as expected_version.",
    "execution": "Read the message and the step's response_payload; retry if retryable is true, "
    "otherwise change the inputs.",
    "internal": "Report the correlation_id to the server's operators.",
}


def category_of(exc: DynamicToolsError) -> str:
    """The seed 003 §10 category of a project error."""
    for kind, category in _CATEGORIES:
        if isinstance(exc, kind):
            return category
    return "internal"


def error_payload(
    exc: DynamicToolsError,
    *,
    suggested_action: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The §10 payload of a project error (secrets scrubbed)."""
    payload = exc.to_dict()
    category = category_of(exc)
    payload["error_code"] = str(payload["error_code"]).upper()
    payload["category"] = category
    payload["suggested_action"] = (
        suggested_action or getattr(exc, "suggestion", None) or _SUGGESTIONS[category]
    )
    payload["correlation_id"] = uuid.uuid4().hex
    payload.update({k: v for k, v in extra.items() if v is not None})
    scrubbed: dict[str, Any] = redactor.scrub_any(payload)
    return scrubbed


def payload_result(payload: dict[str, Any]) -> types.CallToolResult:
    """An ``isError`` tool result carrying ``payload`` as structured and text content."""
    text = f"{payload['error_code']}: {payload['message']}\n" + json.dumps(
        payload, ensure_ascii=False, default=str
    )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=payload,
        is_error=True,
    )


def error_result(exc: DynamicToolsError, **extra: Any) -> types.CallToolResult:
    """An ``isError`` tool result for a project error."""
    return payload_result(error_payload(exc, **extra))


def unexpected_result(exc: BaseException, *, tool: str) -> types.CallToolResult:
    """An ``isError`` result for a bug: a correlation id and nothing else; details to the log."""
    correlation_id = uuid.uuid4().hex
    logger.opt(exception=exc).bind(correlation_id=correlation_id).error(
        "unexpected error in MCP tool {}", tool
    )
    return payload_result(
        {
            "error_code": "INTERNAL_ERROR",
            "category": "internal",
            "message": "an unexpected error occurred; quote the correlation id",
            "context": {"tool": tool},
            "retryable": False,
            "suggested_action": _SUGGESTIONS["internal"],
            "correlation_id": correlation_id,
        }
    )


def unknown_tool(name: str) -> MCPError:
    """The JSON-RPC error for a tool this session does not offer (unknown or filtered out)."""
    return MCPError(
        INVALID_PARAMS,
        f"Unknown tool: '{name}' is not offered in this session (see tools/list)",
        {"error_code": "UNKNOWN_TOOL", "tool": name},
    )


def invalid_params(exc: DynamicToolsError) -> MCPError:
    """A JSON-RPC invalid-params error carrying the §10 payload (e.g. bad session headers)."""
    return MCPError(INVALID_PARAMS, str(redactor.scrub(exc.message)), error_payload(exc))
