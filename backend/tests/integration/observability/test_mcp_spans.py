"""MCP requests with tracing on: a SERVER span per request (method, tool, request id) on the
services' tracing, the client's ``_meta`` trace context as parent, the API call's HTTP span
under it, errors by code, and neither arguments nor secrets recorded. A real MCP client
talks to a live server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind, StatusCode

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.integration.observability.conftest import Shop
from tests.support.mcp_client import MODERN, mcp_client
from tests.support.servers import serve
from tests.support.spans import SpanRecorder, attr, everything_recorded, traceparent_ids

CLIENT_TRACE = 0x4BF92F3577B34DA6A3CE929D0E0E4736
CLIENT_SPAN = 0x00F067AA0BA902B7
ORDER = "order-mcp-91d3-private"


@pytest.fixture
def server(shop_settings: Callable[..., Settings], spans: SpanRecorder) -> Iterator[str]:
    settings = shop_settings()
    with serve(create_app(settings, tracing=spans.tracing), port=settings.port) as url:
        yield url


async def test_each_request_is_a_server_span_with_the_call_under_it(
    server: str, shop: Shop, spans: SpanRecorder
) -> None:
    meta = {"traceparent": f"00-{CLIENT_TRACE:032x}-{CLIENT_SPAN:016x}-01"}
    async with mcp_client(server) as client:
        listed = await client.list_tools()
        assert "hold_seat" in {t.name for t in listed.tools}
        result = await client.call_tool("hold_seat", {"order": ORDER}, meta=meta)
        assert not result.is_error

    initialize = spans.one("initialize")
    assert initialize.kind == SpanKind.SERVER
    assert attr(initialize, "mcp.method.name") == "initialize"
    listing = spans.one("tools/list")
    assert attr(listing, "dt.outcome") == "succeeded"

    call = spans.one("tools/call hold_seat")
    assert call.kind == SpanKind.SERVER
    assert attr(call, "mcp.method.name") == "tools/call"
    assert attr(call, "gen_ai.operation.name") == "execute_tool"
    assert attr(call, "gen_ai.tool.name") == "hold_seat"
    assert attr(call, "mcp.protocol.version") == "2025-11-25"
    assert attr(call, "jsonrpc.request.id") is not None
    assert attr(call, "dt.outcome") == "succeeded"
    # The client's trace context (in _meta) is the parent.
    assert call.parent is not None and call.parent.span_id == CLIENT_SPAN
    assert call.context is not None and call.context.trace_id == CLIENT_TRACE

    (http,) = [s for s in spans.children(call) if s.kind == SpanKind.CLIENT]
    assert attr(http, "url.full") == f"{shop.url}/holds" and attr(http, "dt.tool") == "hold_seat"
    (received,) = shop.requests("POST", "/holds")
    assert http.context is not None
    assert traceparent_ids(received.headers["traceparent"]) == (CLIENT_TRACE, http.context.span_id)
    assert ORDER not in everything_recorded(spans.spans)


async def test_errors_are_marked_by_code(server: str, spans: SpanRecorder) -> None:
    async with mcp_client(server, mode=MODERN) as client:
        bad = await client.call_tool("hold_seat", {})  # "order" is required
        assert bad.is_error
        with pytest.raises(MCPError, match="nope"):
            await client.call_tool("nope", {})

    failed = spans.one("tools/call hold_seat")
    assert attr(failed, "error.type") == "tool_error" and attr(failed, "dt.outcome") == "failed"
    assert failed.status.status_code == StatusCode.ERROR
    assert attr(failed, "mcp.protocol.version") == MODERN
    unknown = spans.one("tools/call nope")
    assert attr(unknown, "error.type") == "-32602"
    assert unknown.status.status_code == StatusCode.ERROR
