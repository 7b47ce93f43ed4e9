"""MCP error payloads: suggestions per conflict kind, correlation ids, text-only errors."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from dynamic_tools.errors import ConflictError, ConflictKind, InvalidInputError, NotFoundError
from dynamic_tools.logs import bind_correlation_id
from dynamic_tools.mcp.errors import (
    CONFLICT_SUGGESTIONS,
    bind_call,
    error_payload,
    error_result,
    for_tool,
    payload_result,
    suggestion_for,
)


def test_every_conflict_kind_has_its_own_suggestion() -> None:
    suggestions = {kind: suggestion_for(ConflictError("x", kind=kind)) for kind in ConflictKind}
    assert set(CONFLICT_SUGGESTIONS) == set(ConflictKind)
    assert len(set(suggestions.values())) == len(suggestions)
    assert "workflow.get" in suggestions[ConflictKind.VERSION]
    assert suggestions[ConflictKind.RUN_ENDED].startswith("Nothing to do")
    assert "overwrite" in suggestions[ConflictKind.CATALOG_EXISTS]
    assert "alive" in suggestions[ConflictKind.EXECUTOR_ALIVE]
    assert suggestion_for(ConflictError("x")) == CONFLICT_SUGGESTIONS[ConflictKind.CONFLICT]


def test_a_conflict_kind_is_one_of_the_enum_and_keeps_its_wire_value() -> None:
    error = ConflictError("x", kind="run_ended")  # type: ignore[arg-type]
    assert error.kind is ConflictKind.RUN_ENDED and json.dumps(error.kind) == '"run_ended"'
    with pytest.raises(ValueError, match="unheard_of"):
        ConflictError("x", kind="unheard_of")  # type: ignore[arg-type]


async def test_the_correlation_id_is_the_request_s() -> None:
    bind_correlation_id("req-42")
    assert error_payload(NotFoundError("gone"))["correlation_id"] == "req-42"
    result = payload_result({"error_code": "X", "message": "m", "correlation_id": None})
    assert result.structured_content is not None
    assert result.structured_content["correlation_id"] == "req-42"


def test_an_error_of_a_tool_with_an_output_schema_is_text_only() -> None:
    result = error_result(NotFoundError("gone"))
    typed = types.Tool(name="t", input_schema={"type": "object"}, output_schema={"type": "object"})
    untyped = types.Tool(name="u", input_schema={"type": "object"})
    assert for_tool(result, typed).structured_content is None
    assert for_tool(result, typed).content == result.content
    assert for_tool(result, untyped) is result


async def test_the_context_names_what_the_call_acted_on_and_where() -> None:
    bind_call("workflow.cancel", {"operation_id": "run-9", "workflow_id": "trip", "n": 1})
    located = InvalidInputError(
        "bad",
        violations=[
            {"path": "a", "message": "no rule given"},
            {"path": "b", "rule": "syntax", "message": "m", "line": 4, "column": 7},
        ],
        context={"workflow_id": "said-by-the-raiser"},
    )
    payload = error_payload(located)
    assert payload["context"] == {
        "workflow_id": "said-by-the-raiser",  # the raiser's word wins
        "tool": "workflow.cancel",
        "run_id": "run-9",  # operation_id is another name for it
        "line": 4,
        "column": 7,
    }
    assert [v["rule"] for v in payload["violations"]] == ["invalid", "syntax"]
    assert located.context == {"workflow_id": "said-by-the-raiser"}  # the error is not changed
