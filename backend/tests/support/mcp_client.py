"""The official ``mcp`` SDK client against a live server, with headers and a protocol mode."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

MODERN = "2026-07-28"
LEGACY = "legacy"  # 2025-11-25 with initialize and a session


def mcp_client(
    base_url: str, *, headers: dict[str, str] | None = None, mode: str = LEGACY, **options: Any
) -> Client:
    """A client for ``{base_url}/mcp`` sending ``headers`` on every request."""
    http = httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(60.0, read=120.0))
    transport = streamable_http_client(f"{base_url}/mcp", http_client=http)
    return Client(transport, mode=mode, **options)


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool; its structured answer, errors included and marked with ``is_error``."""
    result = await client.call_tool(name, arguments)
    data = dict(result.structured_content or error_payload(result) or {})
    data["is_error"] = result.is_error
    return data


def error_payload(result: Any) -> dict[str, Any] | None:
    """The error payload of an ``isError`` result, read from its text when it has no structured
    content (tools with an outputSchema): the line ``CODE: message``, then the JSON."""
    if not result.is_error or not result.content:
        return None
    text = getattr(result.content[0], "text", "")
    first, _, rest = text.partition("\n")
    payload = json.loads(rest)
    assert isinstance(payload, dict) and first.startswith(payload["error_code"]), text
    return payload


async def confirmed_call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    """A destructive tool called the two-step way: the preview's token, then the call with it.

    Any other first answer (an error, a result of a client that was asked) comes back as is.
    """
    first = await call(client, name, **arguments)
    token = first.get("confirmation_token")
    if first["is_error"] or token is None:
        return first
    return await call(client, name, **arguments, confirmation_token=token)
