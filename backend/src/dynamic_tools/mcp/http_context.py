"""The HTTP side of an MCP request, read off the SDK's request context in this one place.

Over streamable HTTP the SDK's context (``ctx``) carries the Starlette request as
``ctx.request``: its headers (``Mcp-Session-Id``, the session headers), its ASGI scope and its
``state`` (the edge's principal and correlation id). On stdio there is no request: the process
serves one client, whose session is :data:`STDIO_SESSION`.
"""

from __future__ import annotations

import uuid
from typing import Any

STDIO_SESSION = f"stdio-{uuid.uuid4().hex}"  # one stdio process serves one client session


def http_request(ctx: Any) -> Any | None:
    """The HTTP request ``ctx`` came on; None on stdio."""
    return getattr(ctx, "request", None)


def request_headers(ctx: Any) -> Any | None:
    """The headers of the HTTP request ``ctx`` came on; None on stdio."""
    return getattr(http_request(ctx), "headers", None)


def request_state(ctx: Any) -> Any | None:
    """The ``state`` the edge set on the HTTP request ``ctx`` came on; None on stdio."""
    return getattr(http_request(ctx), "state", None)


def session_key(ctx: Any) -> str | None:
    """The session a request belongs to: its ``Mcp-Session-Id``, the process on stdio."""
    if http_request(ctx) is None:
        return STDIO_SESSION
    headers = request_headers(ctx)
    value = headers.get("mcp-session-id") if headers is not None else None
    return str(value) if value else None
