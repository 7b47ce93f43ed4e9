"""Sending a prepared request: the SSRF guard, no redirects, a deadline, size caps, redaction.

An HTTP error status is a normal result (the API answered). Only a refusal by the guard, a
request HTTP cannot carry, a transport failure or a timeout raise — whatever the HTTP stack
raised, as a project error (``http/failures.py``). Error messages name the method, host and
path, never the query string (secrets may travel there), and any secret value is scrubbed.

Limits on every call:

- a **deadline** on the whole exchange (connect, headers and body together): an API that
  trickles one byte every few seconds never trips a per-read timeout, but stops here. The
  deadline is ``TOOL_CALL_DEADLINE_S``, a tool's own ``api.deadline_s``, or the caller's
  ``timeout_s`` (a node's timeout) when that is lower;
- the body **decoded with a limit** whatever its content encoding (``http/decoding.py``) and
  **recorded within a budget** measured on its stored form (``http/stored_body.py``);
- the **body** as its tool's ``api.content_type`` says: JSON, form fields or multipart parts
  (``http/form_bodies.py``, encoded when the request was built);
- **redaction** (``redaction.py``): the values of the call's secrets and of the session's
  headers are masked in the answer's headers and body — an API that echoes its request does not
  put a credential into anything recorded or shown.

With tracing on, every call is a client span (``http.request.method``, ``url.full`` without
query string or user info, ``server.address``, ``server.port``, ``http.response.status_code``,
``error.type``, ``dt.tool``) and the request carries its trace context (``traceparent``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from opentelemetry.trace import Span, SpanKind

from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.engine.tool_calls import api_message, status_message
from dynamic_tools.errors import OutboundError, TargetRefusedError, TransportError
from dynamic_tools.http.decoding import ACCEPT_ENCODING, UndecodableBody, read_response
from dynamic_tools.http.failures import outbound_failure
from dynamic_tools.http.form_bodies import urlencoded
from dynamic_tools.http.outbound_headers import outbound_headers
from dynamic_tools.http.request_builder import PreparedRequest
from dynamic_tools.http.stored_body import stored_body
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.observability.tracing import TOOL, Tracing, mark_error
from dynamic_tools.redaction import Redactor, header_secrets, redactor
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH
from dynamic_tools.tools.models import FORM, JSON, MULTIPART

MAX_RESPONSE_DEPTH = MAX_VALUE_DEPTH  # a JSON response nested deeper is kept as text
DEFAULT_DEADLINE_S = 60.0  # TOOL_CALL_DEADLINE_S

USER_AGENT = "dynamic-tools/0.1"
_DROPPED_RESPONSE_HEADERS = frozenset({"set-cookie", "set-cookie2"})


@dataclass(frozen=True)
class HttpResult(ToolResult):
    """What the API answered: an engine :class:`ToolResult`, plus what the sender noticed.

    A tool runner hands it to the engine as it is (no copy into another shape).
    """

    truncated: bool = False
    warnings: list[str] = field(default_factory=list)
    #: a GraphQL answer's ``errors`` (``{message, path}`` each); a GraphQL call that answers
    #: errors failed, whatever its HTTP status
    graphql_errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """An HTTP error status, or GraphQL errors."""
        return self.status_code >= 400 or bool(self.graphql_errors)

    def failure_message(self) -> str:
        """What went wrong, for an error message.

        The status with the API's own words (``HTTP 404 Not Found: no flight 'FL-9' (field
        flight_id)``), or GraphQL's messages with their paths.
        """
        if not self.graphql_errors:
            return status_message(self.status_code, self.body)
        return "GraphQL errors: " + graphql_error_text(self.graphql_errors)

    def api_message(self) -> str | None:
        """The API's own short message about a failed answer (None when it succeeded)."""
        if not self.failed:
            return None
        if self.graphql_errors:
            return graphql_error_text(self.graphql_errors)
        return api_message(self.status_code, self.body)

    def to_dict(self) -> dict[str, Any]:
        """The ``raw_response`` shape of the single-shot pipeline design, with headers."""
        data: dict[str, Any] = {
            "status_code": self.status_code,
            "headers": self.headers,
            "body": self.body,
            "execution_time_ms": round(self.elapsed_ms, 3),
        }
        if self.truncated:
            data["truncated"] = True
        if self.graphql_errors:
            data["graphql_errors"] = self.graphql_errors
        return data


def graphql_error_text(errors: list[dict[str, Any]]) -> str:
    """``Flight not found (at flight); …``: the first three messages with their paths."""
    shown = []
    for error in errors[:3]:
        path = ".".join(str(p) for p in error.get("path") or [])
        shown.append(f"{error['message']} (at {path})" if path else str(error["message"]))
    more = len(errors) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


class HttpSender:
    """Sends :class:`PreparedRequest` objects through one shared ``httpx.AsyncClient``."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        guard: TargetGuard,
        *,
        max_response_bytes: int,
        deadline_s: float = DEFAULT_DEADLINE_S,
        tracing: Tracing | None = None,
    ) -> None:
        self.client = client
        self.guard = guard
        self.max_response_bytes = max_response_bytes
        self.deadline_s = deadline_s
        self.tracing = tracing or Tracing.off()

    def deadline(self, request: PreparedRequest, timeout_s: float | None = None) -> float:
        """Seconds the whole call may take: the tool's or the server's, lowered by ``timeout_s``."""
        deadline = request.deadline_s or self.deadline_s
        return min(deadline, timeout_s) if timeout_s else deadline

    async def send(
        self,
        request: PreparedRequest,
        *,
        extra_headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> HttpResult:
        """Send ``request``; raise only when it could not be sent or received.

        ``timeout_s`` (a node's timeout) bounds each phase and lowers the call's deadline.

        Raises:
            TargetRefusedError: the SSRF guard refused the target.
            RequestNotSendableError: HTTP cannot carry the request (URL, header value).
            TransportError: connecting, sending or receiving failed, timed out, or did not
                finish within the deadline (``timed_out``).
            OutboundError: anything else the HTTP stack raised (named by its type).
        """
        where = self._where(request)
        what = f"{request.method} {where['url']}"
        try:
            url = httpx.URL(request.url)
        except Exception as exc:  # an invalid host or port: never sent
            raise outbound_failure(exc, what=what, context=where) from None
        if not self.tracing.enabled:
            return await self._send(request, url, extra_headers, timeout_s, None)
        with self.tracing.span(
            request.method, kind=SpanKind.CLIENT, attributes=_span_attributes(request, url)
        ) as span:
            return await self._send(request, url, extra_headers, timeout_s, span)

    async def _send(
        self,
        request: PreparedRequest,
        url: httpx.URL,
        extra_headers: dict[str, str] | None,
        timeout_s: float | None,
        span: Span | None,
    ) -> HttpResult:
        where = self._where(request)
        what = f"{request.method} {where['url']}"
        try:
            await self.guard.check(url.scheme, url.host, url.port, url.raw_path.decode("ascii"))
        except TargetRefusedError:
            if span is not None:
                mark_error(span, "refused")
            raise
        headers = outbound_headers(request, extra_headers, user_agent=USER_AGENT)
        if not any(name.lower() == "accept-encoding" for name in headers):
            headers["Accept-Encoding"] = ACCEPT_ENCODING  # what read_response decodes, bounded
        if request.body is not None and request.content_type != JSON:
            # the body's own type (a multipart boundary httpx writes): no header may replace it
            headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
            if request.content_type == FORM:
                headers["Content-Type"] = FORM
        self.tracing.inject(headers)
        scrubber = redactor.with_values([*request.secret_values, *header_secrets(extra_headers)])
        deadline = self.deadline(request, timeout_s)
        started = time.perf_counter()
        timer = asyncio.timeout(deadline)
        try:
            async with timer:
                outbound = self.client.build_request(
                    request.method,
                    url,
                    params=_query_params(request),
                    headers=headers,
                    timeout=timeout_s if timeout_s else self.client.timeout,
                    **_body(request),
                )
                response = await self.client.send(outbound, follow_redirects=False, stream=True)
                try:
                    content, cut = await read_response(response, self.max_response_bytes)
                finally:
                    await response.aclose()
        except Exception as exc:  # every failure of the HTTP stack, by kind (http.failures)
            expired = deadline if timer.expired() else None
            failure = self._failure(exc, what, where, scrubber, expired)
            if span is not None:
                timed_out = isinstance(failure, TransportError) and failure.timed_out
                mark_error(span, "timeout" if timed_out else type(exc).__qualname__)
            raise failure from None
        elapsed_ms = (time.perf_counter() - started) * 1000
        if span is not None:
            span.set_attribute("http.response.status_code", response.status_code)
            if response.status_code >= 400:
                mark_error(span, str(response.status_code))
        content_type = response.headers.get("content-type", "")
        body = stored_body(
            content,
            content_type,
            cut=cut,
            budget=self.max_response_bytes,
            max_depth=MAX_RESPONSE_DEPTH,
        )
        shown_headers = {
            k: v for k, v in response.headers.items() if k.lower() not in _DROPPED_RESPONSE_HEADERS
        }
        value = body.value
        return HttpResult(
            status_code=response.status_code,
            headers=scrubber.scrub_any(shown_headers),
            body=scrubber.scrub(value, cut=body.truncated)
            if isinstance(value, str)
            else scrubber.scrub_any(value),
            elapsed_ms=elapsed_ms,
            truncated=body.truncated,
        )

    @staticmethod
    def _failure(
        exc: Exception,
        what: str,
        where: dict[str, str],
        scrubber: Redactor,
        expired: float | None,
    ) -> OutboundError:
        """The project error for a failed exchange, its message scrubbed.

        ``expired``: the deadline (seconds) when the exchange was stopped by it.
        """
        if expired is not None:
            deadline = expired
            return TransportError(
                f"{what} did not finish within its {deadline:g} s deadline "
                "(TOOL_CALL_DEADLINE_S, or the tool's api.deadline_s)",
                context={**where, "deadline_s": str(deadline)},
                timed_out=True,
            )
        if isinstance(exc, UndecodableBody):
            return TransportError(
                scrubber.scrub(f"{what}: the answer cannot be read ({exc})"),
                context={**where, "exception": "UndecodableBody"},
            )
        failure = outbound_failure(exc, what=what, context=where)
        failure.message = scrubber.scrub(failure.message)
        failure.args = (failure.message,)
        return failure

    @staticmethod
    def _where(request: PreparedRequest) -> dict[str, str]:
        """Tool, method, host, path and the URL without its query (secrets may travel there)."""
        parts = urlsplit(request.url)
        try:
            host = parts.hostname or ""
        except ValueError:
            host = ""
        shown = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"
        return {
            "tool": request.tool,
            "method": request.method,
            "host": host,
            "path": parts.path,
            "url": shown,
        }


def _span_attributes(request: PreparedRequest, url: httpx.URL) -> dict[str, str | int]:
    """Semantic-convention attributes of a call: no query string, user info or header."""
    full = f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}{url.path}"
    for secret in request.secret_values:
        full = full.replace(secret, "***")
    return {
        "http.request.method": request.method,
        "url.full": redactor.scrub(full),
        "server.address": url.host,
        "server.port": url.port or (443 if url.scheme == "https" else 80),
        TOOL: request.tool,
    }


def _body(request: PreparedRequest) -> dict[str, Any]:
    """Httpx's arguments for the body: JSON, form bytes with their type, or multipart parts."""
    if request.body is None:
        return {}
    if request.content_type == FORM:
        return {"content": urlencoded(list(request.form))}
    if request.content_type == MULTIPART:
        return {"files": [part.httpx_file() for part in request.parts]}
    return {"json": request.body}


def _query_params(request: PreparedRequest) -> list[tuple[str, str | int | float | bool | None]]:
    return list(request.query)


__all__ = ["HttpResult", "HttpSender", "TargetRefusedError"]
