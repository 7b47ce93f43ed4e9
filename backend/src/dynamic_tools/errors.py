"""The error tree. Every layer raises these; only the edges translate them.

HTTP statuses are assigned in ``api/errors.py`` (and JSON-RPC codes in the MCP adapter), never
here and never below the routes.

```
DynamicToolsError                 root; carries ``code``, ``message``, ``context``, ``retryable``
├── InvalidInputError             bad input from a caller; names the field(s)       → 422
│   ├── ToolConfigError           a tool config violates the format (file, field)    → 422
│   ├── WorkflowInvalidError      a workflow document does not load or validate      → 422
│   ├── OpenAPIInvalidError       an OpenAPI document cannot be imported             → 422
│   ├── DocumentSourceError       a document source may not or cannot be read        → 422
│   ├── ProcessingLimitError      a document needs more time or memory than allowed  → 422
│   ├── RequestTooLargeError      a request body over the size limit                 → 413
│   ├── UnsafeCallRefusedError    a model-composed call that changes things, not
│   │                             allowed by X-Allow-Unsafe-Paths (tools/safety.py)  → 422
│   └── MarkdownWorkflowError     a markdown workflow problem: ``error_type``, ``line``,
│                                 ``suggestion`` (docs/markdown-workflows.md)        → 422
├── NotFoundError                 an unknown id (or another principal's)             → 404
├── AccessError                   who asks may not do this
│   ├── UnauthenticatedError      no credential, or one that is not valid            → 401
│   └── ForbiddenError            a valid credential without the needed ``scope``    → 403
├── ConflictError                 a stale version or an existing name                → 409
├── RateLimitedError              too many requests to one webhook (retryable)       → 429
├── ConfigurationError            the server is not set up for this (e.g. no LLM)   → 503
├── LLMError                      the LLM could not give a usable answer
│   ├── LLMUnavailableError       transport failure, 429/5xx after retries (retryable)
│   ├── LLMInvalidAnswerError     the answer failed validation after all re-asks
│   └── NoSuitableToolError       the LLM said no candidate tool fits
└── OutboundError                 an outbound HTTP call could not be made (or failed oddly)
    ├── TargetRefusedError        the built URL or its address is not allowed (SSRF guard)
    ├── RequestNotSendableError   HTTP cannot carry the request as built (a URL or a header)
    └── TransportError            connection failure or timeout (retryable)
```
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

DATABASE_UNAVAILABLE = "the database is unavailable or busy right now; try again shortly"
"""What a request is told when the database refuses connections (REST 503, MCP retryable)."""
UNEXPECTED = "an unexpected error occurred; quote the correlation id"
"""What a request is told of a bug (REST 500, MCP ``INTERNAL_ERROR``); details go to the log."""


class DynamicToolsError(Exception):
    """Root of every error the project raises on purpose."""

    code = "internal_error"
    retryable = False

    def __init__(self, message: str, *, context: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.context: dict[str, Any] = context or {}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description: code, message, context, retryable."""
        return {
            "error_code": self.code,
            "message": self.message,
            "context": self.context,
            "retryable": self.retryable,
        }

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with every field (errors cross from document worker processes)."""
        return (_restore, (type(self), self.args, self.__dict__))


def _restore(kind: type[DynamicToolsError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    error = kind.__new__(kind)
    error.args = args
    error.__dict__.update(state)
    return error


class InvalidInputError(DynamicToolsError):
    """A caller sent something that does not validate; ``violations`` names each field."""

    code = "invalid_input"

    def __init__(
        self,
        message: str,
        *,
        violations: list[dict[str, Any]] | None = None,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, context=context)
        self.violations = violations or []

    def to_dict(self) -> dict[str, Any]:
        """As the root, plus ``violations``."""
        return {**super().to_dict(), "violations": self.violations}


class ToolConfigError(InvalidInputError):
    """A tool config file or body violates the ToolConfig format."""

    code = "invalid_tool_config"


class WorkflowInvalidError(InvalidInputError):
    """A workflow document does not parse, fit the model or validate.

    Each violation has ``path``, ``rule``, ``message``, ``line``, ``expected``, ``actual`` and
    ``severity``.
    """

    code = "workflow_invalid"


class OpenAPIInvalidError(InvalidInputError):
    """An OpenAPI document does not parse, is not OpenAPI 2.0/3.x, or yields no usable tool.

    Each violation has ``path`` (a JSON pointer into the document, or the request field),
    ``rule`` and ``message``.
    """

    code = "openapi_invalid"


class DocumentSourceError(InvalidInputError):
    """A document source (path or URL) may not or cannot be read.

    Refusals: a path outside the allowed roots, a host not on the outbound allow-list, a
    redirect, a scheme other than http(s)/file, credentials in the URL, a document over the
    size limit; failures the caller can fix: no such file, an HTTP error status. The message
    and ``context`` name the path or URL; violations point at the ``source`` field.
    """

    code = "invalid_source"


class ProcessingLimitError(InvalidInputError):
    """Parsing or checking a document ran past a budget (time, memory); it was stopped.

    The violation (path: the request field) names the limit (``rule``: ``max_seconds`` or
    ``max_memory``, ``expected``: its value) and the setting that raises it; so does the
    context (``limit``, ``setting``).
    """

    code = "processing_limit"

    def __init__(self, message: str, *, field: str, rule: str, limit: float, setting: str) -> None:
        super().__init__(
            message,
            violations=[{"path": field, "rule": rule, "message": message, "expected": limit}],
            context={"field": field, "limit": limit, "setting": setting},
        )


class RequestTooLargeError(InvalidInputError):
    """A request body is over the size limit; it was not read further.

    ``context`` has ``limit`` (bytes), ``setting`` (the setting that raises it) and, when the
    client declared it, ``content_length``.
    """

    code = "request_too_large"


class UnsafeCallRefusedError(InvalidInputError):
    """A call a model composed changes things and the session does not allow it; not sent.

    ``context`` has ``header`` (``X-Allow-Unsafe-Paths``), ``allow_with`` (the patterns that
    would allow the call: its path and operation id, or its mutation fields) and ``call``.
    """

    code = "unsafe_call_refused"

    @property
    def suggestion(self) -> str:
        """The next action: the header and the patterns that would allow the call."""
        patterns = ", ".join(self.context.get("allow_with") or ())
        return (
            f"Use a read-only operation, or start the session with X-Allow-Unsafe-Paths "
            f"matching {patterns} (glob patterns, a JSON array or comma-separated)."
        )


class NotFoundError(DynamicToolsError):
    """An id that names nothing."""

    code = "not_found"


class AccessError(DynamicToolsError):
    """The request's principal may not do this (see ``access/``)."""

    code = "access_denied"


class UnauthenticatedError(AccessError):
    """No credential, or one that is not valid (``invalid_token``: one was given)."""

    code = "unauthorized"

    def __init__(
        self, message: str, *, invalid_token: bool = False, context: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, context=context)
        self.invalid_token = invalid_token


class ForbiddenError(AccessError):
    """A valid credential that lacks ``scope``."""

    code = "insufficient_scope"

    def __init__(self, message: str, *, scope: str, context: dict[str, Any] | None = None) -> None:
        super().__init__(message, context={"scope": scope, **(context or {})})
        self.scope = scope


class ConflictKind(StrEnum):
    """How an operation conflicts with the current state (the wire value is the member's value).

    Each edge suggests its own next action for each (``mcp/errors.py``).
    """

    #: a write against a stale (or missing) expected version
    VERSION = "version"
    #: a create over an existing name (workflow, tool, file, run)
    EXISTS = "exists"
    #: an import over an existing catalog without ``overwrite``
    CATALOG_EXISTS = "catalog_exists"
    #: a catalog would register a tool name another file or catalog has
    NAME_CLASH = "name_clash"
    #: a delete of something others still use (a workflow other workflows call)
    IN_USE = "in_use"
    #: a cancel (or failure) of a run that has already ended
    RUN_ENDED = "run_ended"
    #: an answer for a run that is not waiting for that input
    NOT_WAITING = "not_waiting"
    #: a take-over of the runs of a replica that is still alive
    EXECUTOR_ALIVE = "executor_alive"
    #: a recovery on a server whose runs are not durable
    NOT_DURABLE = "not_durable"
    #: a redrive of a run that neither failed nor was cancelled
    NOT_REDRIVABLE = "not_redrivable"
    #: a redrive of a run whose workflow document changed since
    DOCUMENT_CHANGED = "document_changed"
    #: a redrive that a node that succeeded cannot take part in
    REDRIVE_REFUSED = "redrive_refused"
    #: a document that cannot be rewritten safely (edit the file itself)
    UNSAFE_EDIT = "unsafe_edit"
    #: a webhook delivery id already received with another body
    DELIVERY_REUSED = "delivery_reused"
    #: a delivery to a webhook its document has turned off (enabled: false)
    TRIGGER_DISABLED = "trigger_disabled"
    #: anything else (the message says what)
    CONFLICT = "conflict"


class ConflictError(DynamicToolsError):
    """The operation conflicts with the current state; ``kind`` (:class:`ConflictKind`) says how."""

    code = "conflict"

    def __init__(
        self,
        message: str,
        *,
        kind: ConflictKind = ConflictKind.CONFLICT,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, context=context)
        self.kind = ConflictKind(kind)


class RateLimitedError(DynamicToolsError):
    """Too many requests to one thing (a webhook) in a short time; ``retry_after_s`` says when."""

    code = "rate_limited"
    retryable = True

    def __init__(
        self, message: str, *, retry_after_s: float, context: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, context={**(context or {}), "retry_after_s": retry_after_s})
        self.retry_after_s = retry_after_s


class ConfigurationError(DynamicToolsError):
    """The server lacks a setting this operation needs; the message names the setting."""

    code = "not_configured"


class LLMError(DynamicToolsError):
    """The LLM could not give a usable answer."""

    code = "llm_error"
    #: requests made to the endpoint before this error (retries included), for ``usage``
    llm_calls = 1


class LLMUnavailableError(LLMError):
    """The LLM endpoint failed (transport, 429, 5xx) after the client's own retries."""

    code = "llm_unavailable"
    retryable = True


class LLMInvalidAnswerError(LLMError):
    """The LLM's answer failed validation, even after re-asking with the error."""

    code = "llm_invalid_answer"


class NoSuitableToolError(LLMError):
    """The LLM chose "none suitable" for the instructions."""

    code = "no_suitable_tool"


class OutboundError(DynamicToolsError):
    """An outbound HTTP call could not be made."""

    code = "outbound_error"


class TargetRefusedError(OutboundError):
    """The request's target is not allowed (scheme, host, address, path prefix, redirect)."""

    code = "target_refused"


class RequestNotSendableError(OutboundError):
    """The request cannot be put on the wire as built (an invalid URL, a header value).

    Sending it again would fail the same way: never retried.
    """

    code = "request_not_sendable"


class TransportError(OutboundError):
    """Connecting, sending or receiving failed, or timed out (``timed_out``)."""

    code = "transport_error"
    retryable = True

    def __init__(
        self, message: str, *, context: dict[str, Any] | None = None, timed_out: bool = False
    ) -> None:
        super().__init__(message, context=context)
        self.timed_out = timed_out


class MarkdownWorkflowError(InvalidInputError):
    """A markdown workflow could not be loaded, or a step call does not fit the session's state.

    ``error_type`` is one of the types of docs/markdown-workflows.md (``file_not_found``,
    ``invalid_format``,
    ``empty_workflow``, ``missing_tool_spec``, ``variable_missing``, ``step_out_of_order``,
    ``no_workflow_loaded``) or one of two additions (``unknown_tool``: a step names a tool the
    session cannot call; ``invalid_request``: the arguments of a call do not fit). It is also the
    error's ``code``. ``line`` is the 1-based line of the markdown document the error is about
    (None when no line applies); ``suggestion`` tells the model what to do next.
    """

    code = "markdown_workflow_error"

    def __init__(
        self,
        error_type: str,
        message: str,
        *,
        suggestion: str,
        line: int | None = None,
        violations: list[dict[str, Any]] | None = None,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, violations=violations, context=context)
        self.code = error_type
        self.error_type = error_type
        self.suggestion = suggestion
        self.line = line

    def to_dict(self) -> dict[str, Any]:
        """As :class:`InvalidInputError`, plus ``error_type``, ``line`` and ``suggestion``."""
        return {
            **super().to_dict(),
            "error_type": self.error_type,
            "line": self.line,
            "suggestion": self.suggestion,
        }


__all__ = [
    "DATABASE_UNAVAILABLE",
    "UNEXPECTED",
    "ConfigurationError",
    "ConflictError",
    "ConflictKind",
    "DocumentSourceError",
    "DynamicToolsError",
    "InvalidInputError",
    "LLMError",
    "LLMInvalidAnswerError",
    "LLMUnavailableError",
    "MarkdownWorkflowError",
    "NoSuitableToolError",
    "NotFoundError",
    "OpenAPIInvalidError",
    "OutboundError",
    "ProcessingLimitError",
    "RequestNotSendableError",
    "RequestTooLargeError",
    "TargetRefusedError",
    "ToolConfigError",
    "TransportError",
    "WorkflowInvalidError",
]
