"""The markdown workflow tools in a session: ``load_workflow`` … ``reset_workflow``.

The format and the model: docs/markdown-workflows.md.

State is kept per workflow session in the database (:class:`MarkdownSessionStore`); by default
the workflow session is the MCP session (``Mcp-Session-Id`` over HTTP, the process on stdio),
or the ``session_id`` a client passes — within the sessions of the request's principal, so one
principal never reaches another's. Tool names in a markdown step are checked against the
tools this MCP session can call.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from dynamic_tools.markdown.service import MarkdownWorkflowService
from dynamic_tools.markdown.tool_specs import TOOL_SPECS, call_tool
from dynamic_tools.mcp.entries import Handler, Result, SessionView, ToolCall, ToolEntry
from dynamic_tools.mcp.results import data_result
from dynamic_tools.persistence.markdown_store import MarkdownSessionStore


def markdown_tool(spec: dict[str, Any]) -> types.Tool:
    """The MCP tool of one spec of :data:`TOOL_SPECS`."""
    hints = spec.get("annotations") or {}
    return types.Tool(
        name=spec["name"],
        title=spec.get("title"),
        description=spec["description"],
        input_schema=spec["inputSchema"],
        output_schema=spec.get("outputSchema"),
        annotations=types.ToolAnnotations(
            read_only_hint=hints.get("readOnlyHint"),
            destructive_hint=hints.get("destructiveHint"),
            idempotent_hint=hints.get("idempotentHint"),
            open_world_hint=hints.get("openWorldHint", False),
        ),
    )


def add_markdown_tools(
    view: SessionView, service: MarkdownWorkflowService, sessions: MarkdownSessionStore
) -> None:
    """Offer the five tools in ``view``; each principal's sessions are its own."""
    for spec in TOOL_SPECS:
        handler = _handler(service, sessions, spec["name"])
        view.add(ToolEntry(markdown_tool(spec), "markdown", handler))


def _handler(
    service: MarkdownWorkflowService, sessions: MarkdownSessionStore, name: str
) -> Handler:
    async def handle(call: ToolCall) -> Result:
        # another principal's session id is a session of its own here (no existence leak)
        owned = service.with_store(sessions.owned_by(call.channel.principal.id))
        callable_tools = {
            n for n, e in call.view.entries.items() if e.layer in ("api", "recipe", "workflow")
        }
        data = await call_tool(
            owned,
            name,
            call.arguments,
            transport_session_id=call.channel.session_id,
            callable_tools=callable_tools,
        )
        text = str(data.get("prompt") or data.get("next_action") or "")
        return data_result(data, text)

    return handle
