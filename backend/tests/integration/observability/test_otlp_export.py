"""Tracing configured only by the standard variables: a real server process started with
``OTEL_EXPORTER_OTLP_ENDPOINT`` exports its spans over OTLP/HTTP to a collector on a
loopback port (decoded here with the OTLP protobuf types).

A subprocess, because the provider made from the environment becomes OpenTelemetry's global
one (FastAPI's request spans join the trace), which a test process must not keep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request, Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

from dynamic_tools.settings import Settings
from tests.integration.observability.conftest import CHARGE_TOKEN, CONFIRM_KEY, Shop
from tests.support.servers import free_port, serve

CLI = str(Path(sys.executable).with_name("dynamic-tools"))


class Collector:
    """What the fake OTLP collector received: spans with their resource's attributes."""

    def __init__(self) -> None:
        self.spans: list[tuple[dict[str, Any], ProtoSpan]] = []
        self.lock = threading.Lock()

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/traces")
        async def export(request: Request) -> Response:
            message = ExportTraceServiceRequest.FromString(await request.body())
            with self.lock:
                for resource_spans in message.resource_spans:
                    resource = _attributes(resource_spans.resource.attributes)
                    for scope_spans in resource_spans.scope_spans:
                        self.spans.extend((resource, s) for s in scope_spans.spans)
            body = ExportTraceServiceResponse().SerializeToString()
            return Response(body, media_type="application/x-protobuf")

        return app

    def named(self, name: str) -> list[tuple[dict[str, Any], ProtoSpan]]:
        with self.lock:
            return [(r, s) for r, s in self.spans if s.name == name]


def _attributes(items: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in items:
        kind = item.value.WhichOneof("value")
        values[item.key] = getattr(item.value, kind) if kind else None
    return values


def _until(check: Callable[[], Any], what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"never got {what}")


@pytest.fixture
def collector() -> Iterator[tuple[Collector, str]]:
    received = Collector()
    with serve(received.app()) as url:
        yield received, url


@contextmanager
def dynamic_tools_server(env: dict[str, str], log: Path) -> Iterator[str]:
    """``dynamic-tools serve`` in a process of its own; stopped with SIGTERM (spans flushed)."""
    port = free_port()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | {
        "LOG_LEVEL": "WARNING",
        "OPENAI_API_KEY": "",
        **env,
    }
    with log.open("ab") as out:
        process = subprocess.Popen(
            [CLI, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=full_env,
            stdout=out,
            stderr=out,
        )
    url = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        _until(up, "the server")
        yield url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def test_otel_variables_export_the_run_over_otlp(
    tmp_path: Path,
    shop_settings: Callable[..., Settings],
    shop: Shop,
    collector: tuple[Collector, str],
) -> None:
    received, collector_url = collector
    settings = shop_settings()
    env = {
        "DATA_DIR": str(tmp_path / "otlp-data"),
        "REGISTRY_CONFIG_PATH": str(settings.registry_config_path),
        "ALLOWED_TARGET_HOSTS": ",".join(settings.allowed_target_hosts),
        "ENABLE_DEMO_API": "false",
        "DURABLE_RUNS": "false",
        "DT_SECRET_SHOP_CHARGE_TOKEN": CHARGE_TOKEN,
        "DT_SECRET_SHOP_CONFIRM_KEY": CONFIRM_KEY,
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector_url,
        "OTEL_SERVICE_NAME": "dt-otlp-test",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    with dynamic_tools_server(env, tmp_path / "server.log") as url:
        started = httpx.post(
            f"{url}/workflows/checkout/runs", json={"params": {"order": "flaky-fail-otlp"}}
        )
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        _until(lambda: httpx.get(f"{url}/runs/{run_id}").json()["status"] == "failed", "the run")
        ((resource, root),) = _until(lambda: received.named("run checkout"), "the run span")

    assert resource["service.name"] == "dt-otlp-test"
    assert root.trace_id.hex() == run_id and root.parent_span_id == b""
    attempts = [s for _, s in received.spans if s.name == "node charge"]
    assert len(attempts) == 2 and {a.parent_span_id for a in attempts} == {root.span_id}
    client_spans = [s for _, s in received.spans if s.kind == ProtoSpan.SPAN_KIND_CLIENT]
    assert len(client_spans) == 5 and {s.trace_id for s in client_spans} == {root.trace_id}
    # FastAPI's own request span joined through the global provider set from the variables.
    server_spans = [s for _, s in received.spans if s.kind == ProtoSpan.SPAN_KIND_SERVER]
    routes = {_attributes(s.attributes).get("http.route") for s in server_spans}
    assert "/workflows/{workflow_id}/runs" in routes
    assert all("traceparent" in r.headers for r in shop.received)
    for _, span in received.spans:
        text = str(span)
        assert (
            CHARGE_TOKEN not in text and CONFIRM_KEY not in text and "flaky-fail-otlp" not in text
        )
