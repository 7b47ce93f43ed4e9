"""An MCP request and the run it starts: the request span is the caller's child (trace context
in ``_meta`` or the HTTP ``traceparent`` header, both protocol revisions), carries the run's
``dt.run_id``, and the run span links to it; the run's node and HTTP spans stay in the run's
trace. The link is stored with the run, so it holds for a run that ends after a restart.

The official MCP SDK client talks to a live server; the run calls the shop over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

from dynamic_tools.api.app import create_app
from dynamic_tools.observability.tracing import run_span_id
from dynamic_tools.settings import Settings
from tests.integration.observability.conftest import Shop
from tests.support.mcp_client import LEGACY, MODERN, call, mcp_client
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import poll
from tests.support.servers import serve
from tests.support.spans import SpanRecorder, attr, traceparent_ids

CLIENT_TRACE = 0x0AF7651916CD43DD8448EB211C80319C
CLIENT_SPAN = 0xB7AD6B7169203331
TRACEPARENT = f"00-{CLIENT_TRACE:032x}-{CLIENT_SPAN:016x}-01"
MODES = [LEGACY, MODERN]


@pytest.fixture
def server(shop_settings: Callable[..., Settings], spans: SpanRecorder) -> Iterator[str]:
    settings = shop_settings()
    with serve(create_app(settings, tracing=spans.tracing), port=settings.port) as url:
        yield url


def _request_span(spans: SpanRecorder, name: str) -> ReadableSpan:
    (found,) = [s for s in spans.named(name) if s.kind == SpanKind.SERVER]
    return found


def _assert_run_linked(spans: SpanRecorder, request: ReadableSpan, run_id: str) -> ReadableSpan:
    """The request span names the run; the run span links to the request span."""
    assert attr(request, "dt.run_id") == run_id
    spans.wait_for(lambda s: any(x.name == "run checkout" for x in s), "the run span")
    run = spans.one("run checkout")
    assert run.context is not None and request.context is not None
    assert run.context.trace_id == int(run_id, 16) and run.context.span_id == run_span_id(run_id)
    (link,) = run.links
    assert (link.context.trace_id, link.context.span_id) == (
        request.context.trace_id,
        request.context.span_id,
    )
    assert link.attributes is not None and link.attributes.get("dt.link") == "started_by"
    return run


def _assert_run_tree(spans: SpanRecorder, shop: Shop, run: ReadableSpan) -> None:
    """Node spans under the run span, HTTP spans under them, all in the run's trace."""
    assert run.context is not None
    nodes = [s for s in spans.children(run) if s.name.startswith("node ")]
    assert {attr(s, "dt.node_id") for s in nodes} == {"hold", "charge", "confirm"}
    node_ids = {s.context.span_id for s in nodes if s.context}
    http = [s for s in spans.spans if s.kind == SpanKind.CLIENT and s.name == "POST"]
    assert len(http) == 3
    assert all(s.parent is not None and s.parent.span_id in node_ids for s in http)
    in_run = {s.context.trace_id for s in [*nodes, *http] if s.context}
    assert in_run == {run.context.trace_id}
    for received in shop.received:  # what went on the wire names the run's trace too
        assert traceparent_ids(received.headers["traceparent"])[0] == run.context.trace_id


@pytest.mark.parametrize("mode", MODES)
async def test_trace_context_in_meta_parents_the_request_and_links_the_run(
    server: str, shop: Shop, spans: SpanRecorder, mode: str
) -> None:
    async with mcp_client(server, mode=mode) as client:
        result = await client.call_tool(
            "w_checkout", {"order": "ok-meta"}, meta={"traceparent": TRACEPARENT}
        )
    assert not result.is_error and result.structured_content is not None
    run_id = result.structured_content["run_id"]
    assert result.structured_content["status"] == "succeeded"

    request = _request_span(spans, "tools/call w_checkout")
    assert request.context is not None and request.context.trace_id == CLIENT_TRACE
    assert request.parent is not None and request.parent.span_id == CLIENT_SPAN
    assert attr(request, "mcp.protocol.version") == ("2025-11-25" if mode == LEGACY else MODERN)
    run = _assert_run_linked(spans, request, run_id)
    _assert_run_tree(spans, shop, run)


@pytest.mark.parametrize("mode", MODES)
async def test_a_traceparent_header_parents_the_request_in_either_revision(
    server: str, shop: Shop, spans: SpanRecorder, mode: str
) -> None:
    headers = {"traceparent": TRACEPARENT}
    async with mcp_client(server, headers=headers, mode=mode) as client:
        data = await call(client, "w_checkout", order="ok-header")
    assert not data["is_error"] and data["status"] == "succeeded"

    request = _request_span(spans, "tools/call w_checkout")
    assert request.context is not None and request.context.trace_id == CLIENT_TRACE
    assert request.parent is not None and request.parent.span_id == CLIENT_SPAN
    run = _assert_run_linked(spans, request, data["run_id"])
    _assert_run_tree(spans, shop, run)


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_sends_its_current_trace_context_in_meta(
    server: str, shop: Shop, spans: SpanRecorder, mode: str
) -> None:
    """No explicit ``_meta``: the SDK client injects the caller's current context itself."""
    caller = SpanContext(
        CLIENT_TRACE, CLIENT_SPAN, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
    )
    async with mcp_client(server, mode=mode) as client:
        with trace.use_span(NonRecordingSpan(caller)):
            data = await call(client, "w_checkout", order="ok-sdk")
    assert not data["is_error"]

    request = _request_span(spans, "tools/call w_checkout")
    assert request.context is not None and request.context.trace_id == CLIENT_TRACE
    assert request.parent is not None  # the caller's span (or the SDK's own send span)
    _assert_run_linked(spans, request, data["run_id"])


async def test_a_request_without_trace_context_is_still_linked_to_its_run(
    server: str, shop: Shop, spans: SpanRecorder
) -> None:
    async with mcp_client(server, mode=MODERN) as client:
        data = await call(client, "w_checkout", order="ok-plain")
    assert not data["is_error"]

    request = _request_span(spans, "tools/call w_checkout")
    assert request.parent is None and request.context is not None
    assert request.context.trace_id != int(data["run_id"], 16)  # a trace of its own
    run = _assert_run_linked(spans, request, data["run_id"])
    _assert_run_tree(spans, shop, run)


async def test_the_link_survives_a_restart(
    shop_settings: Callable[..., Settings], shop: Shop, spans: SpanRecorder
) -> None:
    """A durable run started over MCP waits for input; the next server process resumes it over
    MCP: the run span (recorded by that process) links to the first process's request span, and
    the resuming request carries the run id too."""
    settings = shop_settings(durable_runs=True, executor_id="otel-mcp-replica-1")
    headers = {"traceparent": TRACEPARENT}
    with serve(create_app(settings, tracing=spans.tracing), port=settings.port) as url:
        async with mcp_client(url, headers=headers) as client:  # no elicitation: it waits
            waiting = await call(client, "w_approve", order="ok-restart")
    assert waiting["status"] == "waiting_input", waiting
    run_id = waiting["run_id"]
    start = _request_span(spans, "tools/call w_approve")
    assert attr(start, "dt.run_id") == run_id and not spans.named("run approve")

    with serve(create_app(settings, tracing=spans.tracing), port=settings.port) as url:
        async with mcp_client(url, mode=MODERN) as client:
            done = await call(client, "workflow.resume", run_id=run_id, values={"approved": True})
        assert done["status"] == "succeeded", done
        spans.wait_for(lambda s: any(x.name == "run approve" for x in s), "the run span")
    resume = _request_span(spans, "tools/call workflow.resume")
    assert attr(resume, "dt.run_id") == run_id
    run = spans.one("run approve")
    (link,) = run.links
    assert start.context is not None and start.context.trace_id == CLIENT_TRACE
    assert (link.context.trace_id, link.context.span_id) == (
        start.context.trace_id,
        start.context.span_id,
    )


async def test_a_task_augmented_call_links_its_run_too(
    server: str, shop: Shop, spans: SpanRecorder
) -> None:
    """2025-11-25 Tasks (raw JSON-RPC): the run the task follows links to the creating call."""
    params = {
        "name": "w_checkout",
        "arguments": {"order": "ok-task"},
        "task": {"ttl": 60000},
        "_meta": {"traceparent": TRACEPARENT},
    }
    async with RawMcp(server) as mcp:
        created = await mcp.request("tools/call", params)
        task_id = created["result"]["task"]["taskId"]
        done = await poll(mcp, task_id, {"completed", "failed"})
    assert done["status"] == "completed", done
    run_id = done["_meta"]["dynamic-tools/run"]["run_id"]
    request = _request_span(spans, "tools/call w_checkout")
    assert request.parent is not None and request.parent.span_id == CLIENT_SPAN
    _assert_run_tree(spans, shop, _assert_run_linked(spans, request, run_id))
