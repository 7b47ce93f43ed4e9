"""The scope of an MCP request, checked at the HTTP level as the MCP authorization spec asks.

A ``POST /mcp`` whose JSON-RPC request needs a scope the principal lacks (``access/policy.py``:
a ``tools/call`` by its tool, resources, prompts, ``tasks/*``) is answered **403** with
``WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…/mcp"``
before the MCP SDK sees it — so a client that authorized with too few scopes can ask for more
(step-up authorization) — and a JSON-RPC error body with the project's error payload. The MCP
handlers check the same table again (every transport), so nothing relies on this gate alone.

Admins (and a server without access control) pass at once; the body is read only for others,
within the edge's size limit, and replayed to the SDK unchanged.

Sessions are bound to their principal: the gate hands the SDK the request's principal as its
``user``, and the SDK serves an ``Mcp-Session-Id`` only to the principal that opened it —
anyone else's request naming that session is answered as an unknown session (404).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dynamic_tools.access.authenticate import www_authenticate
from dynamic_tools.access.policy import mcp_method_scope
from dynamic_tools.access.principals import Principal
from dynamic_tools.errors import ForbiddenError
from dynamic_tools.safe_parsing import TooDeep, loads_json

__all__ = ["gate"]

_MAX_DEPTH = 64
#: the JSON-RPC code the body carries beside HTTP 403 (the project's "access denied")
FORBIDDEN_CODE = -32003


async def gate(
    scope: Scope,
    receive: Receive,
    send: Send,
    app: ASGIApp,
    *,
    default_prefix: str,
    public_base: str | None = None,
) -> None:
    """Serve ``scope`` with ``app`` unless its JSON-RPC request needs a scope it lacks.

    ``public_base``: this server's URL behind a proxy (``PUBLIC_BASE_URL``), for the challenge.
    """
    principal = (scope.get("state") or {}).get("principal")
    if isinstance(principal, Principal):
        scope["user"] = _session_user(principal)
    if scope["method"] != "POST" or not isinstance(principal, Principal) or principal.is_admin:
        await app(scope, receive, send)
        return
    messages, body = await _read(receive)
    refusal = _refusal(principal, body, _prefix(scope, default_prefix))
    if refusal is None:
        await app(scope, _replaying(messages, receive), send)
        return
    error, request_id = refusal
    await _forbidden(scope, send, error, request_id, public_base)


def _session_user(principal: Principal) -> Any:
    """The SDK's user of a request: what binds an MCP session to the principal that opened it."""
    # imported here: the MCP SDK loads with /mcp's first request, never at start-up
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    token = AccessToken(
        token="",  # the credential itself is never kept here
        client_id=principal.id,
        subject=principal.id,
        scopes=sorted(s.value for s in principal.scopes),
    )
    return AuthenticatedUser(token)


def _prefix(scope: Scope, default: str) -> str:
    for key, value in scope["headers"]:
        if key == b"x-api-name":
            return value.decode("latin-1").strip() or default
    return default


async def _read(receive: Receive) -> tuple[list[Message], bytes]:
    """The request's body messages (to replay) and its bytes (the edge bounded their size)."""
    messages: list[Message] = []
    chunks: list[bytes] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return messages, b"".join(chunks)


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


def _refusal(principal: Principal, body: bytes, prefix: str) -> tuple[ForbiddenError, Any] | None:
    """The first request of ``body`` that ``principal`` may not make, with its id."""
    try:
        data = loads_json(body.decode("utf-8"), _MAX_DEPTH)
    except (UnicodeDecodeError, json.JSONDecodeError, TooDeep):
        return None  # not JSON-RPC: the SDK answers the parse error
    for request in data if isinstance(data, list) else [data]:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            continue
        params = request.get("params")
        needed = mcp_method_scope(
            request["method"], params if isinstance(params, dict) else None, prefix=prefix
        )
        if needed is not None and not principal.may(needed):
            what = request["method"]
            if what == "tools/call" and isinstance(params, dict):
                what = f"call {params.get('name')}"
            error = ForbiddenError(
                f"'{principal.name}' may not {what}: it needs the '{needed.value}' scope",
                scope=needed.value,
            )
            return error, request.get("id")
    return None


async def _forbidden(
    scope: Scope, send: Send, error: ForbiddenError, request_id: Any, public_base: str | None
) -> None:
    host = next((v for k, v in scope["headers"] if k == b"host"), b"").decode("latin-1")
    base = public_base or (f"{scope.get('scheme', 'http')}://{host}" if host else "")
    correlation_id = (scope.get("state") or {}).get("correlation_id")
    payload = {
        **error.to_dict(),
        "error_code": "INSUFFICIENT_SCOPE",
        "category": "permission",
        "suggested_action": "Ask the server's admin for a credential with the scope named in "
        "context.scope; do not retry with the same one.",
        "correlation_id": correlation_id,
    }
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": FORBIDDEN_CODE, "message": error.message, "data": payload},
        }
    ).encode()
    challenge = www_authenticate(error, base, resource_path="/mcp")
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", challenge.encode("latin-1", "replace")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
