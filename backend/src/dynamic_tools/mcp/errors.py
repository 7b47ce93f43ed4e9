"""Error mapping at the MCP edge: the one place that assigns JSON-RPC codes and tool errors.

A failing tool answers an ``isError`` result carrying the structured error payload, so a
model can act on it::

    {"error_code", "category", "message", "context", "retryable", "suggested_action",
     "correlation_id", "violations"?, "step_id"?, "command"?, "response_payload"?}

The payload is the result's text (a first line ``CODE: message``, then the JSON) and, for tools
without an ``outputSchema``, also its ``structuredContent``. A tool that declares an
``outputSchema`` gets no ``structuredContent`` on an error (:func:`for_tool`): clients check
``structuredContent`` against the schema even when ``isError`` is true (the TypeScript SDK
client, the MCP Inspector) and would hide the error behind a schema failure.

``correlation_id`` is the id of the request being served (:func:`dynamic_tools.logs.
correlation_id`): the ``X-Request-ID`` of the HTTP request (sent back in that header), a fresh
id per request on stdio. Every error is written to the log once, with that id bound.

Protocol faults (an unknown or filtered-out tool, malformed params) are JSON-RPC errors
(``-32602``) raised as :class:`mcp.shared.exceptions.MCPError`. Secrets are scrubbed from
every payload.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from loguru import logger
from mcp.shared.exceptions import MCPError
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from dynamic_tools.errors import (
    DATABASE_UNAVAILABLE,
    UNEXPECTED,
    AccessError,
    ConfigurationError,
    ConflictError,
    ConflictKind,
    DynamicToolsError,
    InvalidInputError,
    LLMError,
    NotFoundError,
    OutboundError,
    RateLimitedError,
)
from dynamic_tools.logs import correlation_id
from dynamic_tools.plain_messages import plain_payload
from dynamic_tools.redaction import redactor

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002

#: the tool call being served: its tool and arguments (see :func:`bind_call`)
_CALL: ContextVar[tuple[str, dict[str, Any]] | None] = ContextVar("mcp_call", default=None)
#: the call's arguments that name what it acts on, by the context key they fill
_NAMED_BY = {"workflow_id": ("workflow_id",), "run_id": ("run_id", "operation_id")}

_CATEGORIES: list[tuple[type[DynamicToolsError], str]] = [
    (InvalidInputError, "validation"),
    (NotFoundError, "not_found"),
    (AccessError, "permission"),
    (ConflictError, "conflict"),
    (ConfigurationError, "internal"),
    (RateLimitedError, "execution"),
    (LLMError, "execution"),
    (OutboundError, "execution"),
]

_SUGGESTIONS = {
    "validation": "Fix the fields listed in violations and call the tool again.",
    "not_found": "List what exists (tools/list, workflow.list or resources/list) and use one of "
    "those ids.",
    "conflict": "Read the message (it names what conflicts), change that, then call again.",
    "permission": "Ask the server's admin for a credential with the scope named in "
    "context.scope; do not retry with the same one.",
    "execution": "Read the message and the step's response_payload; retry if retryable is true, "
    "otherwise change the inputs.",
    "internal": "Report the correlation_id to the server's operators.",
}

# One next action per kind of conflict (see ConflictError).
CONFLICT_SUGGESTIONS: dict[ConflictKind, str] = {
    ConflictKind.VERSION: (
        "Read the current version (workflow.get) and retry with it as expected_version (or "
        "overwrite=true to replace what is there)."
    ),
    ConflictKind.EXISTS: (
        "Choose another name, or remove the existing one first if the user wants it replaced."
    ),
    ConflictKind.CATALOG_EXISTS: (
        "Choose another catalog name, or pass overwrite=true to replace the existing "
        "catalog (or remove it with catalog.remove if the user asks)."
    ),
    ConflictKind.NAME_CLASH: (
        "Import with a prefix so the tool names differ, or remove the other definition "
        "named in context.conflicts."
    ),
    ConflictKind.IN_USE: "Change or remove the workflows listed in context.used_by first.",
    ConflictKind.RUN_ENDED: (
        "Nothing to do: the run has already ended. Start a new run if the user still wants it."
    ),
    ConflictKind.NOT_WAITING: (
        "Read the run (its status and waiting input); answer only a yield it is waiting for."
    ),
    ConflictKind.EXECUTOR_ALIVE: (
        "Nothing to take over: that executor is alive and runs its runs. Stop it for good "
        "first, or wait until it is gone."
    ),
    ConflictKind.NOT_DURABLE: ("Nothing to recover: runs on this server are not durable."),
    ConflictKind.NOT_REDRIVABLE: (
        "Only a failed or cancelled run can be re-run from where it stopped: start a new "
        "run with workflow.run instead."
    ),
    ConflictKind.DOCUMENT_CHANGED: (
        "The workflow changed since that run: start a new run, or redrive with "
        "allow_changed_document=true if the user accepts reusing the recorded outputs."
    ),
    ConflictKind.REDRIVE_REFUSED: (
        "Start a new run with workflow.run: the node named in context cannot give its "
        "recorded output to a redrive."
    ),
    ConflictKind.UNSAFE_EDIT: (
        "Edit the file itself: read it with workflow.get, change it, and save it with "
        "expected_version."
    ),
    ConflictKind.DELIVERY_REUSED: (
        "Send a new delivery with a new webhook-id: an id names one delivery and its body."
    ),
    ConflictKind.TRIGGER_DISABLED: (
        "The workflow document turns this trigger off (enabled: false): turn it on with "
        "workflow.save first."
    ),
    ConflictKind.CONFLICT: _SUGGESTIONS["conflict"],
}


class ToolError(DynamicToolsError):
    """An error a tool answers beyond the domain's errors.

    An API's error answer, a task or a run that ended badly, a pipeline stage that failed. Its
    class gives ``code`` and ``category``; the instance gives ``retryable``, the suggested
    next action, the correlation id when it is not the request's (a task's id), and extra
    payload fields (``command``, ``response_payload``, ``run_id``...). Raised or returned by
    handlers, it becomes a tool result in :func:`error_result`, like every project error:
    no handler builds a payload itself.
    """

    category = "execution"

    def __init__(
        self,
        message: str,
        *,
        context: dict[str, Any] | None = None,
        retryable: bool = False,
        suggestion: str | None = None,
        correlation: str | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message, context=context)
        self.retryable = retryable
        self.suggestion = suggestion
        self.correlation = correlation
        self.extra = extra


class ApiErrorAnswer(ToolError):
    """The API answered with an error status (4xx or 5xx)."""

    code = "api_error"


class OutputSchemaMismatch(ToolError):
    """The API answered, but not in the tool's declared output schema."""

    code = "output_schema_mismatch"


class StageFailed(ToolError):
    """A stage of the single-shot pipeline failed (``{stage}_failed``)."""

    def __init__(self, stage: str, message: str, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.code = f"{stage}_failed"


class QueryStopped(ToolError):
    """``{prefix}_query`` stopped before an answer: a budget, or a call the model repeated.

    ``context.reason`` says which (``step_budget``, ``token_budget``, ``time_budget``,
    ``repeated_call``); ``steps`` lists the calls made.
    """

    code = "query_stopped"


class TaskCapabilityRequired(ToolError):
    """A task-only tool was called without task support."""

    code = "task_capability_required"


class TaskInterrupted(ToolError):
    """The process preparing a task stopped before its run started."""

    code = "task_interrupted"


class TaskExpired(ToolError):
    """A task's ttl ran out while its run still waited for input."""

    code = "task_expired"


class TaskCancelled(ToolError):
    """A task was cancelled before its run started."""

    code = "task_cancelled"


class WorkflowFailed(ToolError):
    """A workflow run a tool waited for failed."""

    code = "workflow_failed"


class WorkflowCancelled(ToolError):
    """A workflow run a tool waited for was cancelled."""

    code = "workflow_cancelled"


def category_of(exc: DynamicToolsError) -> str:
    """The error payload's category of a project error."""
    if isinstance(exc, ToolError):
        return exc.category
    for kind, category in _CATEGORIES:
        if isinstance(exc, kind):
            return category
    return "internal"


def suggestion_for(exc: DynamicToolsError) -> str:
    """The single next action the error payload suggests for ``exc``."""
    suggestion = getattr(exc, "suggestion", None)
    if suggestion:
        return str(suggestion)
    if isinstance(exc, ConflictError):
        return CONFLICT_SUGGESTIONS[exc.kind]
    return _SUGGESTIONS[category_of(exc)]


def bind_call(tool: str, arguments: Any) -> None:
    """Remember the tool call being served, so every error of it names what it acted on.

    Bound per request (and copied into the tasks a call starts, as context variables are), it
    gives :func:`error_payload` the tool, the workflow id and the run id the call named.
    """
    _CALL.set((tool, dict(arguments) if isinstance(arguments, dict) else {}))


def _context(exc: DynamicToolsError) -> dict[str, Any]:
    """The error's context, completed from the call and the violations (docs/mcp-conformance.md).

    What the raiser said wins; the call adds its ``tool``, ``workflow_id`` and ``run_id``, and
    the first violation with a position adds its ``line`` and ``column``.
    """
    context = dict(exc.context)
    call = _CALL.get()
    if call is not None:
        tool, arguments = call
        context.setdefault("tool", tool)
        for key, names in _NAMED_BY.items():
            given = next((arguments[n] for n in names if isinstance(arguments.get(n), str)), None)
            if given and key not in context:
                context[key] = given
    located = next((v for v in _violations(exc) if v.get("line") is not None), None)
    if located is not None and "line" not in context:
        context["line"] = located["line"]
        if located.get("column") is not None:
            context["column"] = located["column"]
    line = getattr(exc, "line", None)  # a markdown error's line
    if isinstance(line, int) and "line" not in context:
        context["line"] = line
    return context


def _violations(exc: DynamicToolsError) -> list[dict[str, Any]]:
    found = getattr(exc, "violations", None)
    return [v for v in found if isinstance(v, dict)] if isinstance(found, list) else []


def error_payload(
    exc: DynamicToolsError,
    *,
    suggested_action: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The error payload of a project error (secrets scrubbed).

    ``context`` is completed from the call being served (:func:`bind_call`) and the violations;
    every violation has a ``rule`` (``invalid`` when its raiser named none).
    """
    payload = plain_payload(exc.to_dict())  # the words a REST answer gives too
    payload["context"] = _context(exc)
    if "violations" in payload:
        payload["violations"] = [
            v if v.get("rule") else {**v, "rule": "invalid"}
            for v in payload["violations"]
            if isinstance(v, dict)
        ]
    payload["error_code"] = str(payload["error_code"]).upper()
    payload["category"] = category_of(exc)
    payload["suggested_action"] = suggested_action or suggestion_for(exc)
    payload["correlation_id"] = getattr(exc, "correlation", None) or correlation_id()
    payload.update(getattr(exc, "extra", {}))  # a ToolError's fields, None ones too
    payload.update({k: v for k, v in extra.items() if v is not None})
    scrubbed: dict[str, Any] = redactor.scrub_any(payload)
    return scrubbed


def record_error(payload: dict[str, Any], *, where: str = "tool result") -> None:
    """Write one log line for an error answered to a client, its correlation id bound."""
    category = str(payload.get("category", "internal"))
    level = {"internal": "ERROR", "execution": "WARNING"}.get(category, "INFO")
    logger.bind(
        correlation_id=payload.get("correlation_id"),
        error_code=payload.get("error_code"),
        category=category,
        context=payload.get("context"),
    ).log(level, "MCP {} error {}: {}", where, payload.get("error_code"), payload.get("message"))


def payload_result(payload: dict[str, Any], *, logged: bool = False) -> types.CallToolResult:
    """An ``isError`` tool result carrying ``payload`` as text and structured content.

    A payload without a correlation id gets the request's. The error is logged once here
    (``logged`` when the caller already did).
    """
    if not payload.get("correlation_id"):
        payload = {**payload, "correlation_id": correlation_id()}
    if not logged:
        record_error(payload)
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


_UNAVAILABLE = (
    "DATABASE_UNAVAILABLE",
    "execution",
    DATABASE_UNAVAILABLE,
    "Call the tool again in a few seconds.",
)


def unexpected_result(exc: BaseException, *, tool: str) -> types.CallToolResult:
    """An ``isError`` result for a bug: a correlation id and nothing else; details to the log.

    A database that refuses connections (or a pool run dry) is not a bug: the call can be
    made again, as the REST API's 503 ``database_unavailable`` says.
    """
    unavailable = isinstance(exc, OperationalError | PoolTimeoutError)
    code, category, message, action = (
        _UNAVAILABLE if unavailable else ("INTERNAL_ERROR", "internal", UNEXPECTED, None)
    )
    payload = {
        "error_code": code,
        "category": category,
        "message": message,
        "context": {"tool": tool},
        "retryable": unavailable,
        "suggested_action": action or _SUGGESTIONS["internal"],
        "correlation_id": correlation_id(),
    }
    log = logger.bind(correlation_id=payload["correlation_id"], error_code=code, category=category)
    if unavailable:
        log.warning("database unavailable in MCP tool {}: {}", tool, exc)
    else:
        log.opt(exception=exc).error("unexpected error in MCP tool {}", tool)
    return payload_result(payload, logged=True)


def for_tool(result: Any, tool: types.Tool) -> Any:
    """``result`` as the client of ``tool`` should get it.

    An error result of a tool with an ``outputSchema`` loses its ``structuredContent`` (the
    payload stays in the text): the error shape does not match the schema, and clients that
    check structured content against it even on errors would report a schema failure instead
    of the error.
    """
    if (
        isinstance(result, types.CallToolResult)
        and result.is_error
        and tool.output_schema is not None
        and result.structured_content is not None
    ):
        return result.model_copy(update={"structured_content": None})
    return result


def unknown_tool(name: str) -> MCPError:
    """The JSON-RPC error for a tool this session does not offer (unknown or filtered out)."""
    payload = {
        "error_code": "UNKNOWN_TOOL",
        "category": "not_found",
        "message": f"'{name}' is not offered in this session (see tools/list)",
        "context": {"tool": name},
        "retryable": False,
        "suggested_action": "List the tools this session offers (tools/list) and call one of "
        "those; a tool may be hidden by the session's headers or your credential's scopes.",
        "tool": name,
        "correlation_id": correlation_id(),
    }
    record_error(payload, where="request")
    return MCPError(
        INVALID_PARAMS,
        f"Unknown tool: '{name}' is not offered in this session (see tools/list)",
        payload,
    )


def invalid_params(exc: DynamicToolsError) -> MCPError:
    """A JSON-RPC invalid-params error carrying the error payload (e.g. bad session headers)."""
    payload = error_payload(exc)
    record_error(payload, where="request")
    return MCPError(INVALID_PARAMS, str(redactor.scrub(exc.message)), payload)


def bad_request(message: str, field: str, rule: str, **context: Any) -> MCPError:
    """The JSON-RPC invalid-params error of a request field that is wrong (a cursor, a ttl)."""
    violation = {"path": field, "rule": rule, "message": message}
    return invalid_params(InvalidInputError(message, violations=[violation], context=context))


def resource_not_found(exc: DynamicToolsError, uri: str, *, modern: bool) -> MCPError:
    """The JSON-RPC error of a resource read that failed, the error payload plus the ``uri``.

    -32002 on 2025-11-25; -32602 on 2026-07-28, which retired -32002 (SEP-2164).
    """
    payload = {**error_payload(exc), "uri": uri}
    record_error(payload, where="resource read")
    code = INVALID_PARAMS if modern else RESOURCE_NOT_FOUND
    return MCPError(code, str(redactor.scrub(exc.message)), payload)


def protocol_params_error(method: str, params: Any, message: str) -> MCPError:
    """The SDK's own ``-32602`` (params that do not match the protocol schema), with a payload.

    The SDK answers such requests with a bare message and no ``data``; this gives them the
    payload every other error has, naming the method (and the tool of a ``tools/call``).
    """
    tool = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
    context: dict[str, Any] = {"method": method}
    if isinstance(tool, str):
        context["tool"] = tool
    exc = InvalidInputError(
        f"the {method} request's params do not match the protocol's schema ({message})",
        violations=[{"path": "params", "rule": "schema", "message": message}],
        context=context,
    )
    payload = error_payload(
        exc,
        suggested_action=f"Send {method} with params as the MCP specification defines them "
        "(field names and types).",
    )
    record_error(payload, where="request")
    return MCPError(INVALID_PARAMS, message, payload)
