"""The ASGI edge middleware: correlation ids, who asks, body size limits, audit, metrics.

Who asks: the ``Authorization`` header becomes a principal (``access/authenticate.py``) put in
the request's state for routes (their scope is checked by ``api/deps.authorize``) and for the
MCP endpoint (each tool's scope is checked there). A missing or bad credential is answered 401
here, before anything else runs, with the ``WWW-Authenticate`` challenge MCP clients follow to
the protected resource metadata. Open: health checks, the metadata itself, the UI's files.

Audit: once a route that authors or destroys (``access/policy.audited``) has answered, its
principal, action, target (the ids in its path), outcome and correlation id are recorded.

Written as plain ASGI (not ``BaseHTTPMiddleware``) so it adds almost nothing per request and
does not buffer streaming responses such as server-sent events.

Body size: every request body is bounded before a route reads it — ``MAX_REQUEST_BYTES``, or
``MAX_TOOL_REQUEST_BYTES`` for ``POST /tools`` and ``PUT /tools/{name}``. A declared
``Content-Length`` over the limit is answered 413 at once, unread. A body without one
(chunked) is read here, counting the bytes as they stream, and answered 413 as soon as it
passes the limit; under it, it is handed to the app as received. The 413 body is the
project's error shape (``request_too_large``) naming the limit and the setting.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from typing import Any

from loguru import logger
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dynamic_tools.access.authenticate import (
    METADATA_PATH,
    Authenticator,
    require,
    www_authenticate,
)
from dynamic_tools.access.policy import HOOKS_PREFIX, UnknownAction, audited, route_scope
from dynamic_tools.access.principals import Principal
from dynamic_tools.api.docs_pages import ASSETS_PATH
from dynamic_tools.api.errors import status_for
from dynamic_tools.api.metrics import Metrics
from dynamic_tools.errors import (
    AccessError,
    DynamicToolsError,
    ForbiddenError,
    RequestTooLargeError,
    UnauthenticatedError,
)
from dynamic_tools.logs import bind_correlation_id

OPEN_PATHS = frozenset({"/", "/healthz", "/readyz"})  # "/" only redirects to /ui/
# The UI's files hold no data (its API calls carry a credential). The demo API is not open: with
# access control it is off unless asked for, and then it needs a credential like every route.
OPEN_PREFIXES = ("/ui", METADATA_PATH, ASSETS_PATH + "/")  # Swagger UI's and ReDoc's files too

_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


_REQUEST_IDS = itertools.count(1)
_PROCESS_PART = os.urandom(8).hex()


def _new_process_part() -> None:
    global _PROCESS_PART
    _PROCESS_PART = os.urandom(8).hex()


os.register_at_fork(after_in_child=_new_process_part)  # workers forked from one parent differ


def _next_request_id() -> str:
    """A request id unique to this request (32 hex digits, as a UUID's).

    A random part drawn once per process and a counter, where ``uuid4`` would read the
    system's random source on every request.
    """
    return f"{_PROCESS_PART}{next(_REQUEST_IDS):016x}"


class EdgeMiddleware:
    """Sets ``X-Request-ID``, authenticates, enforces body limits, audits, counts requests."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: Metrics,
        token: str | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_tool_body_bytes: int = 256 * 1024,
        max_hook_body_bytes: int = 1_000_000,
    ) -> None:
        self.app = app
        self.metrics = metrics
        # before the app's services exist (an app served without its lifespan), API_TOKEN alone
        self.fallback = Authenticator(api_token=token, keys=None)
        self.max_body_bytes = max_body_bytes
        self.max_tool_body_bytes = max_tool_body_bytes
        self.max_hook_body_bytes = max_hook_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one ASGI connection."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given_id = authorization = declared = None
        for key, value in scope["headers"]:  # only three headers matter: skip decoding the rest
            if key == b"x-request-id":
                given_id = value.decode("latin-1")
            elif key == b"authorization":
                authorization = value.decode("latin-1")
            elif key == b"content-length":
                declared = value
        correlation_id = (given_id or _next_request_id())[:64]
        scope.setdefault("state", {})["correlation_id"] = correlation_id
        bind_correlation_id(correlation_id)  # error payloads and log lines of this request
        path: str = scope["path"]
        principal: Principal | None = None  # None: an open path
        if path not in OPEN_PATHS and not path.startswith((*OPEN_PREFIXES, HOOKS_PREFIX)):
            try:
                principal = await self._principal(scope, authorization)
            except UnauthenticatedError as exc:
                await _refuse(send, correlation_id, exc, scope)
                return
            except DynamicToolsError as exc:  # the issuer could not be asked (502/503)
                logger.warning("a credential could not be checked: {}", exc.message)
                await _send_error(send, correlation_id, status_for(exc), exc.to_dict())
                return
        if principal is not None:
            scope["state"]["principal"] = principal
            refusal = _static_route_refusal(principal, scope["method"], path)
            if refusal is not None:  # FastAPI's own pages (/docs, /openapi.json): no dependency
                await _refuse(send, correlation_id, refusal, scope)
                return
        limit, setting = self._limit(scope["method"], path)
        if declared is not None and declared.isdigit():  # servers refuse a malformed one
            if int(declared) > limit:
                await _too_large(send, correlation_id, limit, setting, int(declared))
                return
            receive = _counting(receive, limit)
        else:
            buffered = await _read_capped(receive, limit)
            if buffered is None:
                await _too_large(send, correlation_id, limit, setting, None)
                return
            receive = _replaying(buffered, receive)
        started = time.perf_counter()
        status_holder: dict[str, int] = {}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", correlation_id.encode("latin-1")),
                ]
            await send(message)

        try:
            with logger.contextualize(correlation_id=correlation_id):
                await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", "unmatched")
            method = scope["method"]
            status = str(status_holder.get("status", 500))
            self.metrics.requests.labels(method, label, status).inc()
            self.metrics.latency.labels(method, label).observe(time.perf_counter() - started)
        if principal is not None and method in _WRITES and route is not None:
            await _audit(scope, principal, method, label, int(status), correlation_id)

    async def _principal(self, scope: Scope, authorization: str | None) -> Principal:
        """The request's principal, by the app's authenticator (or API_TOKEN alone before it)."""
        services = getattr(scope["app"].state, "services", None)
        authenticator = services.authenticator if services is not None else self.fallback
        principal: Principal = await authenticator.principal(authorization)
        return principal

    def _limit(self, method: str, path: str) -> tuple[int, str]:
        """The body limit of a request, and the setting that sets it."""
        if (method == "POST" and path.rstrip("/") == "/tools") or (
            method == "PUT" and path.startswith("/tools/")
        ):
            return self.max_tool_body_bytes, "MAX_TOOL_REQUEST_BYTES"
        if path.startswith(HOOKS_PREFIX):
            return self.max_hook_body_bytes, "WEBHOOK_MAX_BODY_BYTES"
        return self.max_body_bytes, "MAX_REQUEST_BYTES"


def _counting(receive: Receive, limit: int) -> Receive:
    """``receive`` that ends the body (as a disconnect) if more than ``limit`` bytes arrive.

    Servers enforce a declared ``Content-Length``; this guards against one that does not.
    """
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                return {"type": "http.disconnect"}
        return message

    return wrapped


async def _read_capped(receive: Receive, limit: int) -> list[Message] | None:
    """The messages of a body without ``Content-Length``, or None once it passes ``limit``."""
    messages: list[Message] = []
    seen = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        seen += len(message.get("body", b""))
        if seen > limit:
            return None
        if not message.get("more_body", False):
            return messages


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """``receive`` that gives ``messages`` first, then the live ones (disconnects)."""
    pending = list(messages)

    async def wrapped() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return wrapped


async def _too_large(
    send: Send, correlation_id: str, limit: int, setting: str, size: int | None
) -> None:
    declared = f" (Content-Length {size})" if size is not None else ""
    message = (
        f"the request body is over the {limit:,}-byte limit{declared}; the server setting "
        f"{setting} sets it"
    )
    context: dict[str, Any] = {"limit": limit, "setting": setting}
    if size is not None:
        context["content_length"] = size
    error = RequestTooLargeError(
        message,
        violations=[{"path": "body", "rule": "max_bytes", "message": message, "expected": limit}],
        context=context,
    )
    await _send_error(send, correlation_id, status_for(error), error.to_dict())


async def _send_error(send: Send, correlation_id: str, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps({**body, "correlation_id": correlation_id}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
                (b"x-request-id", correlation_id.encode("latin-1")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


_DOCUMENT_PAGES = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})


def _static_route_refusal(principal: Principal, method: str, path: str) -> ForbiddenError | None:
    """The refusal of FastAPI's document pages when the principal lacks their scope.

    Routes of the app are checked by ``api/deps.authorize``; these pages are not routes of
    ours (no dependency runs for them), so their scope from the same table is checked here.
    """
    if path not in _DOCUMENT_PAGES or method not in ("GET", "HEAD"):
        return None
    try:
        require(principal, route_scope("GET", path), f"GET {path}")
    except ForbiddenError as exc:
        return exc
    return None


async def _audit(
    scope: Scope, principal: Principal, method: str, template: str, status: int, correlation: str
) -> None:
    """Record an authoring or destructive route's outcome (``access/audit.py``)."""
    action = f"{method} {template}"
    try:
        needed = route_scope(method, template)
    except UnknownAction:
        return
    if not audited(action, needed):
        return
    params = scope.get("path_params") or {}
    named = scope["state"].get("audit_target")  # what a creating route says it made
    target = named or ", ".join(f"{k}={v}" for k, v in params.items()) or template
    if status < 400:
        outcome = "ok"
    elif status in (401, 403):
        outcome = "denied"
    else:
        outcome = f"failed ({status})"
    services = getattr(scope["app"].state, "services", None)
    if services is None:  # an app served without its lifespan keeps no records
        return
    try:
        await services.audit.record(
            principal=principal.id,
            action=action,
            target=target,
            outcome=outcome,
            correlation_id=correlation,
        )
    except Exception as exc:  # the answer is sent: a failed audit write is logged, loudly
        logger.error("audit entry not written for {} ({})", action, type(exc).__name__)


async def _refuse(send: Send, correlation_id: str, error: AccessError, scope: Scope) -> None:
    """401 or 403 with the project's error body and the RFC 6750 challenge."""
    host = next((v for k, v in scope["headers"] if k == b"host"), b"").decode("latin-1")
    base = f"{scope.get('scheme', 'http')}://{host}" if host else ""
    services = getattr(scope["app"].state, "services", None)
    if services is not None and services.settings.public_base_url:  # behind a proxy: its URL
        base = services.settings.base_url
    mcp = "/mcp" if scope["path"].rstrip("/") == "/mcp" else ""
    challenge = www_authenticate(error, base, resource_path=mcp)
    body: dict[str, Any] = {**error.to_dict(), "correlation_id": correlation_id}
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status_for(error),
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"www-authenticate", challenge.encode("latin-1", "replace")),
                (b"x-request-id", correlation_id.encode("latin-1")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
