"""The two error mappings, as tables: every project error class → its HTTP status (REST) and
its MCP error code and category. A new error class must be added here, or this fails."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import dynamic_tools.errors as errors_module
import dynamic_tools.mcp.errors as mcp_errors
from dynamic_tools.api.errors import status_for
from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.sql_query import SqlQueryError
from dynamic_tools.errors import DynamicToolsError
from dynamic_tools.http.invoker import ArgumentsRejected
from dynamic_tools.mcp.channel import ClientRequestTimeout
from dynamic_tools.mcp.errors import StageFailed, category_of, error_payload

#: class -> (HTTP status, MCP error_code, MCP category)
TABLE: dict[str, tuple[int, str, str]] = {
    "DynamicToolsError": (500, "INTERNAL_ERROR", "internal"),
    "InvalidInputError": (422, "INVALID_INPUT", "validation"),
    "ToolConfigError": (422, "INVALID_TOOL_CONFIG", "validation"),
    "WorkflowInvalidError": (422, "WORKFLOW_INVALID", "validation"),
    "OpenAPIInvalidError": (422, "OPENAPI_INVALID", "validation"),
    "DocumentSourceError": (422, "INVALID_SOURCE", "validation"),
    "ProcessingLimitError": (422, "PROCESSING_LIMIT", "validation"),
    "RequestTooLargeError": (413, "REQUEST_TOO_LARGE", "validation"),
    "UnsafeCallRefusedError": (422, "UNSAFE_CALL_REFUSED", "validation"),
    "NotFoundError": (404, "NOT_FOUND", "not_found"),
    "AccessError": (403, "ACCESS_DENIED", "permission"),
    "UnauthenticatedError": (401, "UNAUTHORIZED", "permission"),
    "ForbiddenError": (403, "INSUFFICIENT_SCOPE", "permission"),
    "ConflictError": (409, "CONFLICT", "conflict"),
    "RateLimitedError": (429, "RATE_LIMITED", "execution"),
    "ConfigurationError": (503, "NOT_CONFIGURED", "internal"),
    "LLMError": (500, "LLM_ERROR", "execution"),
    "LLMUnavailableError": (503, "LLM_UNAVAILABLE", "execution"),
    "LLMInvalidAnswerError": (500, "LLM_INVALID_ANSWER", "execution"),
    "NoSuitableToolError": (500, "NO_SUITABLE_TOOL", "execution"),
    "OutboundError": (502, "OUTBOUND_ERROR", "execution"),
    "TargetRefusedError": (502, "TARGET_REFUSED", "execution"),
    "RequestNotSendableError": (502, "REQUEST_NOT_SENDABLE", "execution"),
    "TransportError": (502, "TRANSPORT_ERROR", "execution"),
    "MarkdownWorkflowError": (422, "STEP_OUT_OF_ORDER", "validation"),
    "ExpressionError": (422, "INVALID_EXPRESSION", "validation"),
    "UnresolvedReferenceError": (500, "UNRESOLVED_REFERENCE", "internal"),
    "SqlQueryError": (422, "SQL_QUERY_FAILED", "validation"),
    "ArgumentsRejected": (422, "INVALID_INPUT", "validation"),
    # errors only tools answer (mcp/errors.py); over REST they never occur, 500 if they did
    "ToolError": (500, "INTERNAL_ERROR", "execution"),
    "ApiErrorAnswer": (500, "API_ERROR", "execution"),
    "OutputSchemaMismatch": (500, "OUTPUT_SCHEMA_MISMATCH", "execution"),
    "StageFailed": (500, "X_FAILED", "execution"),
    "QueryStopped": (500, "QUERY_STOPPED", "execution"),
    "TaskCapabilityRequired": (500, "TASK_CAPABILITY_REQUIRED", "execution"),
    "TaskInterrupted": (500, "TASK_INTERRUPTED", "execution"),
    "TaskExpired": (500, "TASK_EXPIRED", "execution"),
    "TaskCancelled": (500, "TASK_CANCELLED", "execution"),
    "WorkflowFailed": (500, "WORKFLOW_FAILED", "execution"),
    "WorkflowCancelled": (500, "WORKFLOW_CANCELLED", "execution"),
    "ClientRequestTimeout": (500, "CLIENT_REQUEST_TIMEOUT", "execution"),
}
OUTSIDE = {c.__name__: c for c in (ExpressionError, UnresolvedReferenceError, SqlQueryError)}


def classes() -> dict[str, type[DynamicToolsError]]:
    found = {
        name: cls
        for name, cls in inspect.getmembers(errors_module, inspect.isclass)
        if issubclass(cls, DynamicToolsError)
    }
    tool_errors = {
        name: cls
        for name, cls in inspect.getmembers(mcp_errors, inspect.isclass)
        if issubclass(cls, DynamicToolsError) and cls.__module__ == mcp_errors.__name__
    }
    return {
        **found,
        **OUTSIDE,
        **tool_errors,
        "ArgumentsRejected": ArgumentsRejected,
        "ClientRequestTimeout": ClientRequestTimeout,
    }


def instance(cls: type[DynamicToolsError]) -> DynamicToolsError:
    if cls is ArgumentsRejected:
        return ArgumentsRejected("t", [])
    if cls is StageFailed:
        return StageFailed("x", "boom")
    if cls is errors_module.RateLimitedError:
        return cls("too many", retry_after_s=2.0)
    if cls is ClientRequestTimeout:
        return ClientRequestTimeout("elicitation", 1.0)
    if cls is errors_module.MarkdownWorkflowError:  # its code is its error type
        return cls("step_out_of_order", "boom", suggestion="call step 1 first")
    for args in (("boom",), ()):
        try:
            return cls(*args)
        except TypeError:
            continue
    signature = inspect.signature(cls)
    kwargs: dict[str, Any] = {
        name: "x"
        for name, p in signature.parameters.items()
        if p.default is inspect.Parameter.empty and p.kind is p.KEYWORD_ONLY
    }
    positional = [
        "x"
        for p in signature.parameters.values()
        if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    return cls(*positional, **kwargs)


def test_the_table_covers_every_error_class() -> None:
    assert set(classes()) == set(TABLE)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_error_maps_to_its_status_code_and_category(name: str) -> None:
    status, code, category = TABLE[name]
    error = instance(classes()[name])
    assert status_for(error) == status
    payload = error_payload(error)
    assert (payload["error_code"], category_of(error)) == (code, category)
    assert payload["category"] == category and payload["suggested_action"]


def test_a_database_refusing_connections_is_a_retryable_tool_error_not_a_bug() -> None:
    from sqlalchemy.exc import OperationalError

    from dynamic_tools.mcp.errors import unexpected_result

    refused = OperationalError("SELECT 1", {}, Exception("127.0.0.1:5432 too many clients already"))
    result = unexpected_result(refused, tool="workflow.list")
    payload = result.structured_content
    assert payload is not None and result.is_error is True
    assert payload["error_code"] == "DATABASE_UNAVAILABLE"
    assert payload["retryable"] is True
    assert "127.0.0.1" not in result.content[0].text
