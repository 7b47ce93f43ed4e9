"""The core tools' calls: ``{prefix}_query`` (the bounded agent) and ``{prefix}_execute``.

``_query`` runs the query agent (``selection/query_agent.py``) over the operations the session
lets the model choose; an answer is offered to the recipe learner (layer 2) when one is
attached. ``_execute`` validates the operation name and its arguments, and holds the call to
the safe-by-default rule (``tools/safety.py``: the client's model composed it), before anything
is sent.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from loguru import logger
from pydantic import ValidationError

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.api_tools import ApiCaller
from dynamic_tools.mcp.entries import Result, ToolCall
from dynamic_tools.mcp.errors import QueryStopped, StageFailed, error_result
from dynamic_tools.mcp.recipe_sequences import ReplayFailed, match_question
from dynamic_tools.mcp.results import data_result
from dynamic_tools.selection.models import WorkflowRequest
from dynamic_tools.selection.query_agent import QueryAgent, QueryOutcome

QueryListener = Callable[[ToolCall, str, QueryOutcome], Awaitable[None]]

_STAGE_CATEGORY = {
    "llm_selection": "execution",
    "api_execution": "execution",
    "result_sql": "validation",
}


async def run_query(
    agent: QueryAgent, call: ToolCall, *, listener: QueryListener | None = None
) -> Result:
    """Answer a natural-language question with a bounded loop of validated read calls.

    The result lists the ``steps`` (tool, arguments, status, rows), the model's ``answer``,
    and, as before, ``selected_tool``/``arguments``/``raw_response`` of the last successful
    call and ``sql`` when SQL ran. A budget or a repeated call stops the loop:
    ``QUERY_STOPPED`` with the steps made.
    """
    args = call.arguments
    view = call.view
    tools = view.choices()
    if not tools:
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
            tool_ids=list(tools),
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
    for recipe in view.question_recipes:
        values = match_question(recipe.pattern, request.user_instructions, recipe.parameters)
        if values is None:
            continue
        try:
            replayed: QueryOutcome = await recipe.run(call, values, request.sql)
        except ReplayFailed as failed:
            logger.info("recipe {} not replayed: {}", recipe.name, failed.message)
            continue
        return await query_result(call, request, replayed, recipe=recipe.name)
    outcome = await agent.run(
        request.user_instructions,
        tools,
        known=view.api_tools,
        allow_unsafe=view.config.allow_unsafe,
        headers=view.config.api_headers or None,
        sql=request.sql,
    )
    return await query_result(call, request, outcome, listener)


async def query_result(
    call: ToolCall,
    request: WorkflowRequest,
    outcome: QueryOutcome,
    listener: QueryListener | None = None,
    *,
    recipe: str | None = None,
) -> Result:
    """The tool result of a loop's outcome (or of a recipe's replay, named by ``recipe``)."""
    steps = [s.to_dict() for s in outcome.steps]
    last = next((s for s in reversed(outcome.steps) if s.status == "ok"), None)
    answered = next((s for s in reversed(outcome.steps) if s.body is not None), None)
    if outcome.stopped in ("none_suitable", "llm", "sql"):
        stage = "result_sql" if outcome.stopped == "sql" else "llm_selection"
        failed = StageFailed(
            stage,
            outcome.message or "the query failed",
            context={"stage": stage, "steps": len(steps)},
            suggestion="Rephrase the question with the missing details, or call an operation "
            "directly with the _execute tool.",
            steps=steps,
        )
        failed.category = _STAGE_CATEGORY.get(stage, "execution")
        return error_result(failed)
    if outcome.stopped is not None:
        return error_result(
            QueryStopped(
                outcome.message or "the query stopped",
                context={"reason": outcome.stopped, "steps": len(steps)},
                suggestion="Ask a narrower question, or call the operations the steps show "
                "directly.",
                steps=steps,
                usage=outcome.usage.model_dump(),
            )
        )
    if last is None and answered is not None and answered.status == "api_error":
        status = answered.status_code
        failed = StageFailed(
            "api_execution",
            answered.message or "the API answered an error",
            context={"stage": "api_execution", "tool": answered.tool},
            retryable=status in (429, 502, 503, 504),
            suggestion="Rephrase the question with the missing details, or call an operation "
            "directly with the _execute tool.",
            command=answered.tool,
            response_payload=answered.body,
            steps=steps,
        )
        failed.category = "execution"
        return error_result(failed)
    data: dict[str, Any] = {"status": "success", "answer": outcome.answer, "steps": steps}
    if recipe is not None:
        data["recipe"] = recipe
    if last is not None:
        data["selected_tool"] = last.tool
        data["arguments"] = last.arguments
        data["raw_response"] = {"status_code": last.status_code, "body": last.body}
    if outcome.sql is not None:
        data["sql"] = outcome.sql.model_dump(mode="json")
    if request.format_response and outcome.answer:
        data["formatted_response"] = outcome.answer
    data["usage"] = outcome.usage.model_dump()
    data["warnings"] = outcome.warnings
    data["timings_ms"] = {"total": outcome.elapsed_ms}
    data = {k: v for k, v in data.items() if v is not None}
    if listener is not None and last is not None:
        await listener(call, request.user_instructions, outcome)
    shown = outcome.sql.rows if outcome.sql is not None else (last.body if last else None)
    text = data.get("formatted_response") or json.dumps(shown, ensure_ascii=False, default=str)
    return data_result(data, text)


def _argument(loc: tuple[Any, ...]) -> str:
    """The tool argument a request field comes from."""
    field = str(loc[0]) if loc else "question"
    return {"user_instructions": "question"}.get(field, field)


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
