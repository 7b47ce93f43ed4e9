"""``dynamic-tools mcp``: the MCP server on stdin/stdout, for desktop clients.

Logs go to stderr (stdout carries the protocol). With the demo API enabled, calls to this
server's own base URL are answered in-process by the demo travel API, so the bundled example
works without a second process.
"""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from dynamic_tools.bootstrap import build_services
from dynamic_tools.logs import configure_logging
from dynamic_tools.mcp.app import build_mcp_endpoint
from dynamic_tools.mcp.server import serve_stdio
from dynamic_tools.settings import Settings


class DemoRoutingTransport(httpx.AsyncBaseTransport):
    """Sends requests for this server's own origin to the in-process demo app; others out."""

    def __init__(self, origin: httpx.URL, demo: httpx.AsyncBaseTransport) -> None:
        self.origin = (origin.scheme, origin.host, origin.port)
        self.demo = demo
        self.outbound = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Route by origin."""
        url = request.url
        if (url.scheme, url.host, url.port) == self.origin:
            return await self.demo.handle_async_request(request)
        return await self.outbound.handle_async_request(request)

    async def aclose(self) -> None:
        """Close both transports."""
        await self.outbound.aclose()
        await self.demo.aclose()


def demo_transport(settings: Settings) -> httpx.AsyncBaseTransport | None:
    """The routing transport when the demo API is enabled, else None (plain HTTP)."""
    if not settings.enable_demo_api:
        return None
    from dynamic_tools.demo.travel_api import create_travel_router

    demo = FastAPI()
    demo.include_router(create_travel_router(), prefix="/demo/travel")
    return DemoRoutingTransport(httpx.URL(settings.base_url), httpx.ASGITransport(app=demo))


async def run_stdio(settings: Settings) -> None:
    """Start the services, serve MCP on stdio until the client disconnects, stop."""
    configure_logging(settings)
    services = build_services(settings, http_transport=demo_transport(settings))
    endpoint = build_mcp_endpoint(settings)
    try:
        await services.start()
        endpoint.surface.attach(services)
        await serve_stdio(endpoint)
    finally:
        await endpoint.aclose()
        await services.aclose()
