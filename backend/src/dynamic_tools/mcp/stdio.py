"""``dynamic-tools mcp``: the MCP server on stdin/stdout, for desktop clients.

Logs go to stderr (stdout carries the protocol). With the demo API enabled, calls to this
server's own base URL are answered in-process by the demo travel API, so the bundled example
works without a second process.
"""

from __future__ import annotations

import httpx

from dynamic_tools.bootstrap import DEMO_API_PREFIX, build_services
from dynamic_tools.logs import configure_logging
from dynamic_tools.mcp.app import build_mcp_endpoint
from dynamic_tools.mcp.server import serve_stdio
from dynamic_tools.settings import Settings


def demo_transport(settings: Settings) -> httpx.AsyncBaseTransport | None:
    """The routing transport when the demo API is enabled, else None (plain HTTP)."""
    if not settings.demo_api_enabled:
        return None
    from dynamic_tools.demo.access import in_process_transport
    from dynamic_tools.demo.travel_api import create_travel_router

    return in_process_transport(settings.base_url, create_travel_router(), DEMO_API_PREFIX)


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
