"""The HTTP side of an MCP request, read in one place (mcp/http_context.py)."""

from __future__ import annotations

from types import SimpleNamespace

from starlette.datastructures import Headers

from dynamic_tools.mcp.http_context import (
    STDIO_SESSION,
    http_request,
    request_headers,
    request_state,
    session_key,
)


def _http(headers: dict[str, str]) -> SimpleNamespace:
    request = SimpleNamespace(headers=Headers(headers), state=SimpleNamespace(correlation_id="c1"))
    return SimpleNamespace(request=request)


def test_over_http_the_request_its_headers_state_and_session() -> None:
    ctx = _http({"Mcp-Session-Id": "s-1", "X-Target-URL": "https://api.example.com"})
    assert http_request(ctx) is ctx.request
    assert request_headers(ctx)["x-target-url"] == "https://api.example.com"
    assert request_state(ctx).correlation_id == "c1"
    assert session_key(ctx) == "s-1"


def test_an_http_request_without_a_session_id_has_no_session() -> None:
    assert session_key(_http({})) is None


def test_on_stdio_there_is_no_request_and_the_process_is_the_session() -> None:
    ctx = SimpleNamespace(request=None)
    assert http_request(ctx) is None and request_headers(ctx) is None
    assert request_state(ctx) is None
    assert session_key(ctx) == STDIO_SESSION and STDIO_SESSION.startswith("stdio-")
    assert session_key(object()) == STDIO_SESSION  # a context without the attribute at all
