"""``{prefix}_query`` inside a run: the single-shot pipeline over the session's API.

A workflow node ``call: travel_query`` with ``args: {question: "..."}`` asks the LLM to pick one
operation of the session's API and its arguments; the request is built and sent as for
``POST /workflow``, with the session's headers when the API is the session's own (never to
the registry's tools, which use the server's credentials). The node's output is the API's
response body (so ``$hotel_booking.id`` reads the answer), or, with ``sql``, the rows that SQL
returned. An API error answers with its status and body, as any call does (``on_error``
applies); a question the pipeline cannot turn into a valid call fails the node with the
pipeline's reason. Only operations that change nothing are offered unless the session allows
more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from dynamic_tools.engine.ports import ToolCallFailed, ToolResult
from dynamic_tools.http.sender import graphql_error_text
from dynamic_tools.selection.models import WorkflowRequest
from dynamic_tools.selection.pipeline import SingleShotPipeline
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.registry import ToolRegistry, pick_tools
from dynamic_tools.tools.safety import query_choices
from dynamic_tools.tools.scope import ToolScope

__all__ = ["PipelineQuery"]


class _ScopeTools:
    """The tools offered to the model, as the pipeline's tool source."""

    def __init__(self, tools: dict[str, ToolConfig]) -> None:
        self.tools = tools

    def get_multiple(self, names: list[str]) -> tuple[list[ToolConfig], list[str]]:
        return pick_tools(self.tools, names)


class PipelineQuery:
    """Answers a session run's ``{prefix}_query`` calls with the pipeline."""

    def __init__(self, pipeline: SingleShotPipeline, registry: ToolRegistry) -> None:
        self.pipeline = pipeline
        self.registry = registry

    async def __call__(
        self, scope: ToolScope, args: Mapping[str, Any], timeout_s: float | None
    ) -> ToolResult:
        """Ask; the API's answer, or :class:`ToolCallFailed` naming the failing stage."""
        tool = scope.core_tools[0]
        free_query = scope.tools.get(tool)
        operations = scope.operations or self.registry.by_name()
        tools = query_choices(free_query, operations, scope.allow_unsafe)
        # The session's headers go to its own API only; over the registry, none.
        own_api = free_query is not None or bool(scope.operations)
        headers = scope.headers if own_api and scope.headers else None
        names = list(tools)
        if not names:
            raise ToolCallFailed(
                f"{tool}: no operation of this API may be chosen by the LLM (read-only by "
                "default; X-Allow-Unsafe-Paths allows more)",
                kind="refused",
            )
        try:
            request = WorkflowRequest(
                user_instructions=str(args.get("question") or ""),
                tool_ids=names,
                sql=args.get("sql"),
            )
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "question"
            where = "question" if where == "user_instructions" else where
            raise ToolCallFailed(f"{tool}: {where}: {problem['msg']}", kind="refused") from None
        source = _ScopeTools(tools)
        work = self.pipeline.run(request, source=source, extra_headers=headers)
        try:
            response = await asyncio.wait_for(work, timeout_s)
        except TimeoutError:
            raise ToolCallFailed(f"{tool} timed out after {timeout_s} s", kind="timeout") from None
        raw = response.raw_response or {}
        if response.status == "error":
            status = raw.get("status_code")
            if response.error_stage == "api_execution" and isinstance(status, int):
                return ToolResult(status, raw.get("body"), dict(raw.get("headers") or {}))
            raise ToolCallFailed(
                f"{tool} failed at {response.error_stage}: {response.error}",
                kind="refused" if response.error_stage != "llm_selection" else "error",
            )
        if raw.get("graphql_errors"):
            raise ToolCallFailed(
                f"{tool}: the API answered GraphQL errors: "
                + graphql_error_text(raw["graphql_errors"]),
                kind="refused",
            )
        body = raw.get("body") if response.sql is None else response.sql.rows
        return ToolResult(int(raw.get("status_code") or 200), body)
