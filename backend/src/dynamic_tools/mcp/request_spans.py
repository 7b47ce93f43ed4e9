"""A span per MCP request, on the services' tracing (replacing the SDK's global-tracer one).

The SDK's own ``OpenTelemetryMiddleware`` traces through OpenTelemetry's global provider; this
one uses the :class:`~dynamic_tools.observability.tracing.Tracing` the services were built
with, so it is off exactly when the rest is, and tests can give it a provider of their own.
It follows the MCP semantic conventions: a SERVER span named ``{method} {tool}`` with
``mcp.method.name``, ``mcp.protocol.version``, ``jsonrpc.request.id`` and, for a tool call,
``gen_ai.operation.name`` and ``gen_ai.tool.name``. Its parent is the caller's trace context:
the ``traceparent`` (and ``tracestate``) a client put in ``params._meta`` (2026-07-28 carries
it there; 2025-11-25 clients may too), else the HTTP request's ``traceparent`` header (either
revision) unless an HTTP server span is already current. A run the request starts or resumes
puts its ``dt.run_id`` on the span, and the run span links back to it
(``observability/tracing.py``). Neither the arguments nor the session id (a
credential of sorts) are recorded. A JSON-RPC error sets ``error.type`` to its code; a tool
result with ``isError`` sets it to ``tool_error``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind
from pydantic import ValidationError

from dynamic_tools.mcp.http_context import request_headers
from dynamic_tools.observability.tracing import OUTCOME, Tracing, mark_error

INVALID_PARAMS = "-32602"


class RequestSpans:
    """Context-tier MCP middleware: one SERVER span around each inbound request."""

    def __init__(self, tracing: Callable[[], Tracing]) -> None:
        self.tracing = tracing

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Trace a request (notifications pass through untraced)."""
        tracing = self.tracing()
        if not tracing.enabled or ctx.request_id is None:
            return await call_next(ctx)
        name = ctx.params.get("name") if ctx.params else None
        target = name if isinstance(name, str) else None
        attributes: dict[str, Any] = {
            "mcp.method.name": ctx.method,
            "mcp.protocol.version": ctx.protocol_version,
            "jsonrpc.request.id": str(ctx.request_id),
        }
        if ctx.method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
            if target is not None:
                attributes["gen_ai.tool.name"] = target
        elif ctx.method == "prompts/get" and target is not None:
            attributes["gen_ai.prompt.name"] = target
        span_name = f"{ctx.method} {target}" if target else ctx.method
        with tracing.span(
            span_name, kind=SpanKind.SERVER, attributes=attributes, context=_caller(ctx)
        ) as span:
            try:
                result = await call_next(ctx)
            except MCPError as exc:
                mark_error(span, str(exc.error.code))
                raise
            except ValidationError:
                mark_error(span, INVALID_PARAMS)
                raise
            failed = isinstance(result, CallToolResult) and result.is_error
            failed = failed or (isinstance(result, Mapping) and result.get("isError") is True)
            if failed:
                mark_error(span, "tool_error")
            span.set_attribute(OUTCOME, "failed" if failed else "succeeded")
            return result


def _caller(ctx: ServerRequestContext[Any, Any]) -> Context | None:
    """The caller's trace context: ``_meta`` first, then the HTTP headers (None: neither).

    When a span is already current (an instrumented HTTP server's, which continued the header
    itself), it stays the parent rather than the header it came from.
    """
    found = _parent(ctx.meta)
    if found is None and not trace.get_current_span().get_span_context().is_valid:
        headers = request_headers(ctx)  # a Starlette request's over HTTP
        if isinstance(headers, Mapping):
            found = _parent({k: headers[k] for k in _TRACE_HEADERS if k in headers})
    return found


_TRACE_HEADERS = ("traceparent", "tracestate")


def _parent(meta: Mapping[str, Any] | None) -> Context | None:
    """The trace context of a carrier (``_meta`` or headers); None when it has no valid one."""
    if not meta:
        return None
    try:
        context = propagate.extract(dict(meta))
    except (TypeError, ValueError):
        return None
    if not trace.get_current_span(context).get_span_context().is_valid:
        return None
    return context
