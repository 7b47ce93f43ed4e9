"""``/mcp``, loaded on its first request.

The MCP SDK and the MCP layers cost about half a second and 25 MiB to import: a server that
serves only REST and the UI never pays for them, and start-up does not wait for them. The first
request to ``/mcp`` imports them (in a worker thread, so other requests go on), builds the
endpoint for the running services and starts the SDK's session manager in a task of its own,
which lives until the app shuts down; requests arriving meanwhile wait for the same load.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import importlib
from typing import TYPE_CHECKING, Any

from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from dynamic_tools.api.mcp_gate import gate
from dynamic_tools.settings import Settings

if TYPE_CHECKING:
    from dynamic_tools.bootstrap import Services
    from dynamic_tools.mcp.server import McpEndpoint

ENDPOINT_MODULE = "dynamic_tools.mcp.server"


def _without_ows(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with the whitespace around each value removed (RFC 9110, section 5.5).

    The HTTP parser (httptools) keeps trailing spaces, and the SDK compares the 2026-07-28
    ``Mcp-Name``/``Mcp-Method`` headers with the body as they come: ``Mcp-Name: add  `` would
    be refused as not matching ``add``.
    """
    if not any(v[-1:] in b" \t" or v[:1] in b" \t" for _, v in headers if v):
        return headers
    return [(k, v.strip(b" \t")) for k, v in headers]


class LazyMcp:
    """The ``/mcp`` routes of the app; ``endpoint`` is built on first use."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._endpoint: McpEndpoint | None = None
        self._services: Services | None = None
        self._asgi: Any = None
        self._loading: asyncio.Lock | None = None
        self._serving: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None

    @property
    def loaded(self) -> bool:
        """Whether the MCP endpoint exists (tests and start-up figures look at it)."""
        return self._endpoint is not None

    @property
    def serving(self) -> bool:
        """Whether the session manager runs (from the first request until shutdown)."""
        return self._serving is not None and not self._serving.done()

    @property
    def endpoint(self) -> McpEndpoint:
        """The endpoint, built now if it was not (imports, no I/O)."""
        if self._endpoint is None:
            from dynamic_tools.mcp.app import build_mcp_endpoint

            self._endpoint = build_mcp_endpoint(self._settings)
            if self._services is not None:
                self._endpoint.surface.attach(self._services)
        return self._endpoint

    def attach(self, services: Services) -> None:
        """Serve ``services`` (called from the app's lifespan once they started)."""
        self._services = services
        if self._endpoint is not None:
            self._endpoint.surface.attach(services)

    def routes(self) -> list[Route]:
        """``/mcp`` and ``/mcp/``, both answered by this object."""
        return [Route("/mcp", endpoint=self), Route("/mcp/", endpoint=self)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request, loading ``/mcp`` first if no request did yet.

        A request needing a scope its principal lacks is answered 403 first (``mcp_gate``).
        """
        asgi = self._asgi if self._asgi is not None else await self._load()
        scope["headers"] = _without_ows(scope["headers"])
        settings = self._settings
        await gate(
            scope,
            receive,
            send,
            asgi,
            default_prefix=settings.mcp_api_name,
            public_base=settings.base_url if settings.public_base_url else None,
        )

    async def _load(self) -> Any:
        if self._loading is None:
            self._loading = asyncio.Lock()
        async with self._loading:
            if self._asgi is None:
                await asyncio.to_thread(importlib.import_module, ENDPOINT_MODULE)
                from dynamic_tools.mcp.server import session_app

                asgi, manager = session_app(self.endpoint, self._settings)
                await self._run_manager(manager)
                self._asgi = asgi
                if self._settings.freeze_startup_heap:
                    gc.freeze()  # what the load built lives as long as the app, like start-up's
        return self._asgi

    async def _run_manager(self, manager: Any) -> None:
        """Start the session manager in a task that enters and leaves its task group."""
        started = asyncio.Event()
        stop = self._stop = asyncio.Event()

        async def serve() -> None:
            async with manager.run():
                started.set()
                await stop.wait()

        # A context of its own: the request's correlation id is not the manager's.
        loop = asyncio.get_running_loop()
        self._serving = loop.create_task(serve(), context=contextvars.Context())
        waiting = loop.create_task(started.wait())
        await asyncio.wait({self._serving, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if self._serving.done():
            self._serving.result()  # raises what stopped it
            raise RuntimeError("the MCP session manager stopped as it started")

    async def aclose(self) -> None:
        """Stop the session manager and the endpoint's background work, if they ran."""
        if self._serving is not None and self._stop is not None:
            self._stop.set()
            await self._serving
            self._serving = None
        self._asgi = None
        if self._endpoint is not None:
            await self._endpoint.aclose()
