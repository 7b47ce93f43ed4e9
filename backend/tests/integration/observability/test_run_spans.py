"""The span tree of workflow runs: run → node attempts (retries apart) → HTTP calls, the saga's
compensation, trace context on the wire, no secret anywhere; one tree across a restart; and
nothing at all when tracing is off (the default).

Runs execute for real: the engine calls the shop server over HTTP on a loopback port.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from dynamic_tools.api.app import create_app
from dynamic_tools.observability.tracing import run_span_id
from dynamic_tools.persistence.run_view import parse_time
from dynamic_tools.settings import Settings
from tests.integration.observability.conftest import (
    CHARGE_TOKEN,
    CONFIRM_KEY,
    Shop,
    start_run,
    wait_for_run,
)
from tests.support.app_client import app_client
from tests.support.servers import serve
from tests.support.spans import SpanRecorder, attr, everything_recorded, traceparent_ids

ORDER = "flaky-fail-order-7c2e-private"  # an argument value: must not be recorded either


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


async def test_a_run_with_a_retry_and_a_compensation_is_one_span_tree(
    shop_settings: Callable[..., Settings], shop: Shop, spans: SpanRecorder
) -> None:
    app = create_app(shop_settings(), tracing=spans.tracing)
    async with app_client(app) as client:
        run_id = await start_run(client, "checkout", order=ORDER)
        run = await wait_for_run(client, run_id)
    assert run["status"] == "failed" and run["nodes"]["charge"]["attempts"] == 2
    spans.wait_for(lambda s: any(x.name == "run checkout" for x in s), "the run span")

    # The run span is the root; its trace id is the run id, its span id derived from it.
    root = spans.one("run checkout")
    assert root.parent is None and root.kind == SpanKind.INTERNAL
    assert root.context is not None and root.context.trace_id == int(run_id, 16)
    assert root.context.span_id == run_span_id(run_id)
    assert attr(root, "dt.run_id") == run_id and attr(root, "dt.workflow_id") == "checkout"
    assert attr(root, "dt.outcome") == "failed" and root.status.status_code == StatusCode.ERROR
    assert root.start_time == int(parse_time(run["started_at"]).timestamp() * 1e9)
    assert {s.context.trace_id for s in spans.spans if s.context} == {int(run_id, 16)}

    # Node attempts are children of the run span; the retried node has two attempt spans.
    attempts = {
        (attr(s, "dt.node_id"), attr(s, "dt.attempt")): s
        for s in spans.children(root)
        if s.name.startswith("node ")
    }
    assert set(attempts) == {("hold", 1), ("charge", 1), ("charge", 2), ("confirm", 1)}
    outcomes = {key: attr(s, "dt.outcome") for key, s in attempts.items()}
    assert outcomes == {
        ("hold", 1): "succeeded",
        ("charge", 1): "failed",
        ("charge", 2): "succeeded",
        ("confirm", 1): "failed",
    }
    first, second = attempts[("charge", 1)], attempts[("charge", 2)]
    assert attr(first, "dt.tool") == attr(second, "dt.tool") == "charge_card"
    assert attr(first, "http.response.status_code") == 503
    assert attr(first, "error.type") == "503" and first.status.status_code == StatusCode.ERROR
    assert second.status.status_code == StatusCode.UNSET
    assert first.end_time is not None and first.end_time <= second.start_time
    assert all(attr(s, "dt.run_id") == run_id for s in attempts.values())
    assert all(attr(s, "dt.workflow_id") == "checkout" for s in attempts.values())

    # The saga released the hold: a compensation span, also a child of the run.
    compensation = spans.one("compensate hold")
    assert _parent_id(compensation) == _span_id(root)
    assert attr(compensation, "dt.tool") == "release_seat"
    assert attr(compensation, "dt.compensation") == "saga:hold"
    assert attr(compensation, "dt.outcome") == "succeeded"

    # Each call made one HTTP client span under its attempt (or compensation).
    http = [s for s in spans.spans if s.kind == SpanKind.CLIENT]
    assert len(http) == 5
    expected = {
        _span_id(attempts[("hold", 1)]): ("POST", "/holds", 201),
        _span_id(first): ("POST", "/charges", 503),
        _span_id(second): ("POST", "/charges", 201),
        _span_id(attempts[("confirm", 1)]): ("POST", "/confirmations", 500),
        _span_id(compensation): ("DELETE", "/holds/H-1", 200),
    }
    for span in http:
        method, path, status = expected[_parent_id(span) or 0]
        assert span.name == method and attr(span, "http.request.method") == method
        assert attr(span, "url.full") == f"{shop.url}{path}"  # no query string
        assert attr(span, "http.response.status_code") == status
        assert attr(span, "server.address") == "127.0.0.1"

    # The shop received the trace context: the trace is the run, the parent the HTTP span.
    http_ids = {_span_id(s) for s in http}
    assert len(shop.received) == 5
    for request in shop.received:
        trace_id, parent = traceparent_ids(request.headers["traceparent"])
        assert trace_id == int(run_id, 16) and parent in http_ids
    assert shop.requests("POST", "/holds")[0].query == "channel=web"

    # The secrets were sent, and are nowhere in the spans; nor is an argument value.
    assert shop.requests("POST", "/charges")[0].headers["authorization"] == f"Bearer {CHARGE_TOKEN}"
    assert shop.requests("POST", "/confirmations")[0].query == f"key={CONFIRM_KEY}"
    recorded = everything_recorded(spans.spans)
    for secret in (CHARGE_TOKEN, CONFIRM_KEY, ORDER, "channel=web"):
        assert secret not in recorded


async def test_a_run_is_one_tree_across_a_restart(
    shop_settings: Callable[..., Settings], shop: Shop, spans: SpanRecorder
) -> None:
    """A durable run paused at a yield, resumed by the next server process: one trace, one
    root with the start the first process recorded, attempts from both under it."""
    settings = shop_settings(durable_runs=True, executor_id="otel-replica-1")
    with serve(create_app(settings, tracing=spans.tracing), port=settings.port) as url:
        run_id = httpx.post(
            f"{url}/workflows/approve/runs", json={"params": {"order": "ok-1"}}
        ).json()["run_id"]
        waiting = _poll(url, run_id, lambda r: r["status"] == "waiting_input")
    assert not spans.named("run approve")  # the run has not ended: no root span yet
    assert [attr(s, "dt.node_id") for s in spans.named("node hold")] == ["hold"]
    restarted_at = time.time_ns()
    with serve(create_app(settings, tracing=spans.tracing), port=settings.port) as url:
        answer = httpx.post(f"{url}/runs/{run_id}/resume", json={"values": {"approved": True}})
        assert answer.status_code in (200, 202), answer.text
        done = _poll(url, run_id, lambda r: r["status"] == "succeeded")
        spans.wait_for(lambda s: any(x.name == "run approve" for x in s), "the run span")
    root = spans.one("run approve")
    assert root.context is not None and root.context.trace_id == int(run_id, 16)
    assert root.start_time == int(parse_time(waiting["started_at"]).timestamp() * 1e9)
    assert root.start_time < restarted_at < (root.end_time or 0)
    assert attr(root, "dt.outcome") == "succeeded"
    hold, charge, ask = spans.one("node hold"), spans.one("node charge"), spans.one("node ask")
    assert hold.end_time is not None and hold.end_time < restarted_at < charge.start_time
    for child in (hold, charge, ask):
        assert _parent_id(child) == _span_id(root)
        assert child.context is not None and child.context.trace_id == root.context.trace_id
    assert attr(ask, "dt.node_kind") == "yield" and attr(ask, "dt.outcome") == "succeeded"
    assert ask.start_time < restarted_at < (ask.end_time or 0)  # waited across the restart
    assert done["nodes"]["charge"]["status"] == "succeeded"


def _poll(url: str, run_id: str, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}").json()
        if ready(run):
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.05)


async def test_tracing_is_off_by_default(
    shop_settings: Callable[..., Settings], shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No OTEL_* variable: no provider anywhere, no span, no traceparent on the wire."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    app = create_app(shop_settings())
    async with app_client(app) as client:
        run_id = await start_run(client, "checkout", order=ORDER)
        run = await wait_for_run(client, run_id)
        services = app.state.services
    assert run["status"] == "failed" and run["nodes"]["charge"]["attempts"] == 2
    assert services.tracing.enabled is False and services.tracing.provider is None
    assert services.sender.tracing.enabled is False
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert len(shop.received) == 5
    assert all("traceparent" not in r.headers for r in shop.received)
