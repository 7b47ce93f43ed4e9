"""The official ``mcp`` SDK client against a live server, with headers and a protocol mode."""

from __future__ import annotations

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
    data = dict(result.structured_content or {})
    data["is_error"] = result.is_error
    return data
