"""The ASGI edge middleware: correlation ids, the API token, request metrics.

Written as plain ASGI (not ``BaseHTTPMiddleware``) so it adds almost nothing per request and
does not buffer streaming responses such as server-sent events.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from loguru import logger
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dynamic_tools.api.deps import token_matches
from dynamic_tools.api.metrics import Metrics
from dynamic_tools.logs import bind_correlation_id

OPEN_PATHS = frozenset({"/", "/healthz", "/readyz"})  # "/" only redirects to /ui/
OPEN_PREFIXES = ("/demo/", "/ui")


class EdgeMiddleware:
    """Sets ``X-Request-ID``, enforces ``API_TOKEN`` when set, and counts requests."""

    def __init__(self, app: ASGIApp, *, token: str | None, metrics: Metrics) -> None:
        self.app = app
        self.token = token
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one ASGI connection."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given_id = authorization = None
        for key, value in scope["headers"]:  # only two headers matter: skip decoding the rest
            if key == b"x-request-id":
                given_id = value.decode("latin-1")
            elif key == b"authorization":
                authorization = value.decode("latin-1")
        correlation_id = (given_id or uuid.uuid4().hex)[:64]
        scope.setdefault("state", {})["correlation_id"] = correlation_id
        bind_correlation_id(correlation_id)  # error payloads and log lines of this request
        path: str = scope["path"]
        if (
            self.token
            and path not in OPEN_PATHS
            and not path.startswith(OPEN_PREFIXES)
            and not token_matches(self.token, authorization)
        ):
            await _unauthorized(send, correlation_id)
            return
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


async def _unauthorized(send: Send, correlation_id: str) -> None:
    body: dict[str, Any] = {
        "error_code": "unauthorized",
        "message": "a valid 'Authorization: Bearer <API_TOKEN>' header is required",
        "context": {},
        "retryable": False,
        "correlation_id": correlation_id,
    }
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"www-authenticate", b"Bearer"),
                (b"x-request-id", correlation_id.encode("latin-1")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
