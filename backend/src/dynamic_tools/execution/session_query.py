"""``{prefix}_query`` inside a run: the bounded query agent over the session's API.

A workflow node ``call: travel_query`` with ``args: {question: "..."}`` runs the same agent as
MCP's ``{prefix}_query`` (``selection/query_agent.py``): the LLM calls operations of the
session's API one at a time (each validated, built in code and sent through the guard), with
the session's headers when the API is the session's own (never to the registry's tools, which
use the server's credentials). The node's output is the last successful call's response body
(so ``$hotel_booking.id`` reads the answer), or, with ``sql``, the rows that SQL returned over
the tables ``step_<i>`` and ``result``. When no call succeeded, an API error answers with its
status and body, as any call does (``on_error`` applies); a question the agent cannot answer
(no suitable operation, a budget, a repeated call) fails the node with the reason. Only
operations that change nothing are offered unless the session allows more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from dynamic_tools.engine.ports import ToolCallFailed, ToolResult
from dynamic_tools.selection.models import WorkflowRequest
from dynamic_tools.selection.query_agent import QueryAgent
from dynamic_tools.tools.registry import ToolRegistry
from dynamic_tools.tools.safety import query_choices
from dynamic_tools.tools.scope import ToolScope

__all__ = ["AgentQuery"]


class AgentQuery:
    """Answers a session run's ``{prefix}_query`` calls with the bounded query agent."""

    def __init__(self, agent: QueryAgent, registry: ToolRegistry) -> None:
        self.agent = agent
        self.registry = registry

    async def __call__(
        self, scope: ToolScope, args: Mapping[str, Any], timeout_s: float | None
    ) -> ToolResult:
        """Ask; the last API answer (or the SQL's rows), or :class:`ToolCallFailed`."""
        tool = scope.core_tools[0]
        free_query = scope.tools.get(tool)
        operations = scope.operations or self.registry.by_name()
        tools = query_choices(free_query, operations, scope.allow_unsafe)
        # The session's headers go to its own API only; over the registry, none.
        own_api = free_query is not None or bool(scope.operations)
        headers = scope.headers if own_api and scope.headers else None
        if not tools:
            raise ToolCallFailed(
                f"{tool}: no operation of this API may be chosen by the LLM (read-only by "
                "default; X-Allow-Unsafe-Paths allows more)",
                kind="refused",
            )
        try:
            request = WorkflowRequest(
                user_instructions=str(args.get("question") or ""),
                tool_ids=list(tools),
                sql=args.get("sql"),
            )
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "question"
            where = "question" if where == "user_instructions" else where
            raise ToolCallFailed(f"{tool}: {where}: {problem['msg']}", kind="refused") from None
        work = self.agent.run(
            request.user_instructions,
            tools,
            known=operations,
            allow_unsafe=scope.allow_unsafe,
            headers=headers,
            sql=request.sql,
        )
        try:
            outcome = await asyncio.wait_for(work, timeout_s)
        except TimeoutError:
            raise ToolCallFailed(f"{tool} timed out after {timeout_s} s", kind="timeout") from None
        last = next((s for s in reversed(outcome.steps) if s.status == "ok"), None)
        if outcome.stopped is not None:
            kind = "error" if outcome.stopped in ("llm", "none_suitable") else "refused"
            raise ToolCallFailed(
                f"{tool} stopped ({outcome.stopped}): {outcome.message}", kind=kind
            )
        if last is None:
            answered = next((s for s in reversed(outcome.steps) if s.body is not None), None)
            status = answered.status_code if answered is not None else None
            if answered is not None and status is not None and status >= 400:  # HTTP error
                return ToolResult(status, answered.body)
            reason = answered.message if answered is not None else "no call answered"
            raise ToolCallFailed(f"{tool}: {reason}", kind="refused")
        body = last.body if outcome.sql is None else outcome.sql.rows
        return ToolResult(int(last.status_code or 200), body)
