"""Successful tool results, and handlers for tools that are one operation returning data."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

from dynamic_tools.errors import DynamicToolsError
from dynamic_tools.mcp.entries import Result, ToolCall
from dynamic_tools.mcp.errors import error_result

Operation = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def data_result(data: Any, text: str | None = None) -> types.CallToolResult:
    """``data`` as structured content, repeated as text (JSON unless ``text`` is given)."""
    shown = text if text is not None else json.dumps(data, default=str, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=shown)], structured_content=data
    )


def object_schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """An input schema: these properties, no others."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def operation_handler(
    operation: Operation, *, changes_tools: bool
) -> Callable[[ToolCall], Awaitable[Result]]:
    """A tool handler: run ``operation`` on the arguments; project errors become error results.

    ``changes_tools`` announces ``tools/list_changed`` after a success (saves, imports …).
    """

    async def handle(call: ToolCall) -> Result:
        try:
            data = await operation(call.arguments)
        except DynamicToolsError as exc:
            return error_result(exc)
        if changes_tools:
            await call.channel.tools_changed()
        return data_result(data)

    return handle
