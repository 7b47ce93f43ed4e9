"""Who reaches the demo API, and how the server's own tools reach it.

- :func:`from_loopback`: the demo's controls that change how it behaves (``_faults``,
  ``_reset``) answer only callers on this machine.
- :class:`DemoRoutingTransport`: the server's outbound calls to its own origin are answered by
  the demo in-process, never over the network. ``dynamic-tools mcp`` uses it (no HTTP server
  runs there), and so does the HTTP server when access control is configured: ``/demo/*``
  then needs the token from outside like every route, while the tools of the travel example,
  whose base URL is this server, still reach it (they carry no token — they are this server).
"""

from __future__ import annotations

import ipaddress

import httpx
from fastapi import APIRouter, FastAPI

__all__ = ["DemoRoutingTransport", "from_loopback", "in_process_transport"]


def from_loopback(host: str | None) -> bool:
    """Whether a caller's address (as the server saw it) is a loopback address.

    A name or no address at all is not: only an address this machine can vouch for counts.
    ``::ffff:127.0.0.1`` (IPv4 on an IPv6 socket) is loopback.
    """
    try:
        address = ipaddress.ip_address((host or "").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


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


def in_process_transport(base_url: str, router: APIRouter, prefix: str) -> DemoRoutingTransport:
    """A routing transport answering ``base_url``'s origin with ``router`` under ``prefix``.

    Give it the router the server mounts, so both see the same bookings, counters and faults.
    Only the demo's routes are there: any other path of this origin answers 404 in-process
    (and the SSRF guard refuses it before that).
    """
    demo = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    demo.include_router(router, prefix=prefix)
    return DemoRoutingTransport(httpx.URL(base_url), httpx.ASGITransport(app=demo))
