"""Fetching a document by URL (here an OpenAPI description for a catalog) with tracing on:
a client span without the query string, and the trace context on the wire."""

from __future__ import annotations

from collections.abc import Callable

from opentelemetry.trace import SpanKind

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.integration.observability.conftest import Shop
from tests.support.app_client import app_client
from tests.support.spans import SpanRecorder, attr, everything_recorded, traceparent_ids

TOKEN = "doc-token-3e9a71c0"


async def test_a_document_fetch_is_a_client_span(
    shop_settings: Callable[..., Settings], shop: Shop, spans: SpanRecorder
) -> None:
    app = create_app(shop_settings(), tracing=spans.tracing)
    async with app_client(app) as client:
        source = f"{shop.url}/openapi.json?token={TOKEN}"
        answer = await client.post("/catalogs/validate", json={"source": source})
        assert answer.status_code == 200, answer.text
    (fetch,) = [s for s in spans.spans if s.kind == SpanKind.CLIENT]
    assert fetch.name == "GET" and attr(fetch, "url.full") == f"{shop.url}/openapi.json"
    assert attr(fetch, "http.response.status_code") == 200
    (received,) = shop.requests("GET", "/openapi.json")
    assert received.query == f"token={TOKEN}"
    assert fetch.context is not None
    assert traceparent_ids(received.headers["traceparent"])[1] == fetch.context.span_id
    assert TOKEN not in everything_recorded(spans.spans)
