"""A raw JSON-RPC client for streamable HTTP (2025-11-25), for what the SDK client lacks: Tasks.

Each request is a POST; the answer comes as JSON or as a server-sent event stream, on which the
server may also send requests of its own (``elicitation/create``) that ``on_request`` answers.
:meth:`RawMcp.listen` opens the session's GET stream and keeps what arrives on it in
``received`` (notifications the server sends outside any request, e.g. for tasks).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

PROTOCOL = "2025-11-25"
OnRequest = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class RawMcp:
    """One MCP session over raw HTTP."""

    def __init__(
        self,
        base_url: str,
        *,
        capabilities: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.url = f"{base_url}/mcp"
        self.http = httpx.AsyncClient(timeout=60, headers=headers or {})
        self.capabilities = capabilities or {}
        self.session_id: str | None = None
        self.extra_headers: dict[str, str] = {}  # sent with every request (e.g. X-Request-ID)
        self.last_headers: dict[str, str] = {}  # the headers of the last request's response
        self.last_response: httpx.Response | None = None  # the last request's response
        self.server_capabilities: dict[str, Any] = {}
        self.received: list[dict[str, Any]] = []
        self._listener: asyncio.Task[None] | None = None
        self._next_id = 0

    async def __aenter__(self) -> RawMcp:
        result = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": self.capabilities,
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        )
        self.server_capabilities = result["result"]["capabilities"]
        await self.notify("notifications/initialized")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
                await self._listener
        if self.session_id:
            await self.http.delete(self.url, headers=self._headers())
        await self.http.aclose()

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        return {**headers, **self.extra_headers}

    async def listen(self) -> None:
        """Open the GET stream; its messages land in ``received`` until the session ends."""
        opened = asyncio.Event()

        async def read() -> None:
            headers = {**self._headers(), "Accept": "text/event-stream"}
            async with self.http.stream("GET", self.url, headers=headers) as response:
                assert response.status_code == 200, response.status_code
                opened.set()
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        self.received.append(json.loads(line[5:].strip()))

        self._listener = asyncio.create_task(read())
        await asyncio.wait_for(opened.wait(), 10)

    def notifications(self, method: str) -> list[dict[str, Any]]:
        """The params of the ``method`` notifications received on the GET stream so far."""
        return [m.get("params", {}) for m in self.received if m.get("method") == method]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})}
        response = await self.http.post(self.url, json=message, headers=self._headers())
        assert response.status_code in (200, 202), response.text

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        on_request: OnRequest | None = None,
    ) -> dict[str, Any]:
        """Send a request; the whole JSON-RPC response (``result`` or ``error``)."""
        self._next_id += 1
        request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        async with self.http.stream(
            "POST", self.url, json=message, headers=self._headers()
        ) as response:
            self.last_headers = dict(response.headers)
            self.last_response = response
            if "mcp-session-id" in response.headers:
                self.session_id = response.headers["mcp-session-id"]
            kind = response.headers.get("content-type", "")
            if kind.startswith("application/json"):
                return dict(json.loads(await response.aread()))
            async for line in response.aiter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue  # an empty data field: the stream's priming event (resumability)
                data = json.loads(line[5:].strip())
                if data.get("id") == request_id and ("result" in data or "error" in data):
                    return dict(data)
                if "method" in data and "id" in data and on_request is not None:
                    answer = await on_request(data)
                    reply = {"jsonrpc": "2.0", "id": data["id"], "result": answer}
                    posted = await self.http.post(self.url, json=reply, headers=self._headers())
                    assert posted.status_code in (200, 202), posted.text
        raise AssertionError(f"no response to {method}")


MODERN = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


class RawModern:
    """Stateless 2026-07-28 requests over raw HTTP: each carries the revision, the client's
    info and its capabilities in ``_meta`` (``tasks=True`` declares the Tasks extension)."""

    def __init__(
        self,
        base_url: str,
        *,
        tasks: bool = True,
        capabilities: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.url = f"{base_url}/mcp"
        self.http = httpx.AsyncClient(timeout=60, headers=headers or {})
        self.capabilities = dict(capabilities or {})
        if tasks:
            self.capabilities["extensions"] = {TASKS_EXTENSION: {}}
        self._next_id = 0

    async def __aenter__(self) -> RawModern:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; the whole JSON-RPC response (``result`` or ``error``)."""
        self._next_id += 1
        body = dict(params or {})
        body["_meta"] = {
            **(body.get("_meta") or {}),
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "raw-modern", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        }
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": body}
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method,
        }
        name = body.get("name") if method == "tools/call" else body.get("taskId")
        if isinstance(name, str):
            headers["Mcp-Name"] = name
        async with self.http.stream("POST", self.url, json=message, headers=headers) as response:
            kind = response.headers.get("content-type", "")
            if kind.startswith("application/json"):
                return dict(json.loads(await response.aread()))
            async for line in response.aiter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                data = json.loads(line[5:].strip())
                if data.get("id") == self._next_id and ("result" in data or "error" in data):
                    return dict(data)
        raise AssertionError(f"no response to {method}")
