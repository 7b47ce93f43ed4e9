"""The core tools' calls: ``{prefix}_query`` (the single-shot pipeline) and ``{prefix}_execute``.

``_query`` runs the pipeline over the session's API tools; a success is offered to the recipe
learner (layer 2) when one is attached. ``_execute`` validates the operation name and its
arguments, and holds the call to the safe-by-default rule (``tools/safety.py``: the client's
model composed it), before anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.http.sender import graphql_error_text
from dynamic_tools.mcp.api_tools import ApiCaller
from dynamic_tools.mcp.entries import Result, ToolCall
from dynamic_tools.mcp.errors import StageFailed, error_result
from dynamic_tools.mcp.results import data_result
from dynamic_tools.selection.models import WorkflowRequest, WorkflowResponse
from dynamic_tools.selection.pipeline import SingleShotPipeline

QueryListener = Callable[[ToolCall, str, WorkflowResponse], Awaitable[None]]

_STAGE_CATEGORY = {
    "tool_retrieval": "not_found",
    "tool_context_generation": "validation",
    "llm_selection": "execution",
    "api_execution": "execution",
    "response_formatting": "execution",
}


async def run_query(
    pipeline: SingleShotPipeline, call: ToolCall, *, listener: QueryListener | None = None
) -> Result:
    """Answer a natural-language question with one validated API call."""
    args = call.arguments
    tool_ids = list(call.view.choices())
    if not tool_ids:
        return error_result(
            InvalidInputError(
                "no operation of this API changes nothing, and only those may be chosen by the "
                "LLM (read-only by default); allow others with X-Allow-Unsafe-Paths, or call "
                "an operation directly",
                violations=[{"path": "question", "rule": "read_only", "message": "no safe tool"}],
            )
        )
    try:
        request = WorkflowRequest(
            user_instructions=str(args.get("question", "")),
            tool_ids=tool_ids,
            format_response=bool(args.get("format_response", False)),
            sql=args.get("sql"),
        )
    except ValidationError as exc:
        return error_result(
            InvalidInputError(
                "the question is invalid",
                violations=[
                    {"path": _argument(e["loc"]), "rule": e["type"], "message": e["msg"]}
                    for e in exc.errors()
                ],
            )
        )
    response = await call_pipeline(pipeline, call, request)
    data = response.model_dump(mode="json", exclude_none=True)
    graphql_errors = (response.raw_response or {}).get("graphql_errors")
    if response.status != "error" and graphql_errors:
        response.status, response.error_stage = "error", "api_execution"
        response.error = f"{response.selected_tool} answered GraphQL errors: " + graphql_error_text(
            graphql_errors
        )
    if response.status == "error":
        stage = response.error_stage or "llm_selection"
        status = (response.raw_response or {}).get("status_code")
        failed = StageFailed(
            stage,
            response.error or "the pipeline failed",
            context={"stage": stage, "tool": response.selected_tool},
            retryable=stage == "api_execution" and status in (429, 502, 503, 504),
            suggestion="Rephrase the question with the missing details, or call an operation "
            "directly with the _execute tool.",
            command=response.selected_tool,
            response_payload=(response.raw_response or {}).get("body"),
        )
        failed.category = _STAGE_CATEGORY.get(stage, "execution")
        return error_result(failed)
    if listener is not None:
        await listener(call, request.user_instructions, response)
    shown = (
        response.sql.rows if response.sql is not None else (response.raw_response or {}).get("body")
    )
    text = response.formatted_response or json.dumps(shown, ensure_ascii=False, default=str)
    return data_result(data, text)


def _argument(loc: tuple[Any, ...]) -> str:
    """The tool argument a request field comes from."""
    field = str(loc[0]) if loc else "question"
    return {"user_instructions": "question"}.get(field, field)


async def call_pipeline(
    pipeline: SingleShotPipeline, call: ToolCall, request: WorkflowRequest
) -> WorkflowResponse:
    """Run the pipeline over the session's tools with its outbound headers."""
    return await pipeline.run(
        request, source=call.view, extra_headers=call.view.config.api_headers or None
    )


async def run_execute(caller: ApiCaller, call: ToolCall) -> Result:
    """Call one named operation directly (validated against its input schema).

    Safe by default: an operation that changes things is refused unless the session's
    ``X-Allow-Unsafe-Paths`` matches its path or name.
    """
    name = str(call.arguments.get("operation", ""))
    arguments: Any = call.arguments.get("arguments") or {}
    config = call.view.api_tools.get(name)
    if config is None:
        return error_result(
            InvalidInputError(
                f"'{name}' is not an operation of this API",
                violations=[
                    {
                        "path": "operation",
                        "rule": "enum",
                        "message": "unknown operation",
                        "expected": sorted(call.view.api_tools)[:50],
                        "actual": name,
                    }
                ],
            )
        )
    if not isinstance(arguments, dict):
        return error_result(
            InvalidInputError(
                "arguments must be an object",
                violations=[{"path": "arguments", "rule": "type", "message": "not an object"}],
            )
        )
    config_of = call.view.config
    return await caller.call(
        config, arguments, extra_headers=config_of.api_headers, composed=config_of.allow_unsafe
    )
