"""The tracing switch (standard OTEL_* variables only), run ids as trace ids, and the span
helper's rules (no exception message recorded; nothing at all when off)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.trace import StatusCode

from dynamic_tools.errors import ConfigurationError
from dynamic_tools.observability.tracing import (
    RunIds,
    Tracing,
    current_traceparent,
    note_run,
    run_span_id,
    run_trace_id,
    service_resource,
    span_exporters,
    span_link,
    tracing_requested,
)
from tests.support.spans import SpanRecorder, attr

ENDPOINT = "http://127.0.0.1:4318"


@pytest.mark.parametrize(
    ("environ", "on"),
    [
        ({}, False),
        ({"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{ENDPOINT}/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, False),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, False),
        ({"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "console"}, False),
        ({"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, True),
    ],
)
def test_tracing_is_on_only_when_the_standard_variables_say_so(
    environ: dict[str, str], on: bool
) -> None:
    assert tracing_requested(environ) is on
    if not on:
        assert Tracing.from_env(environ).enabled is False


def test_off_by_default_with_this_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    tracing = Tracing.from_env()
    assert tracing.enabled is False and tracing.provider is None
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def test_exporters_the_project_cannot_honour_are_named() -> None:
    with pytest.raises(ConfigurationError, match="OTEL_EXPORTER_OTLP_PROTOCOL 'grpc'") as grpc:
        span_exporters(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
        )
    assert grpc.value.context == {"variable": "OTEL_EXPORTER_OTLP_PROTOCOL", "value": "grpc"}
    with pytest.raises(ConfigurationError, match="OTEL_TRACES_EXPORTER 'zipkin'"):
        span_exporters({"OTEL_TRACES_EXPORTER": "console,zipkin"})
    exporters = span_exporters({"OTEL_TRACES_EXPORTER": "console"})
    assert [type(e) for e in exporters] == [ConsoleSpanExporter]
    both = span_exporters(
        {
            "OTEL_TRACES_EXPORTER": "otlp, console",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        }
    )
    assert [type(e).__name__ for e in both] == ["OTLPSpanExporter", "ConsoleSpanExporter"]


def test_the_service_name_defaults_to_ours_and_yields_to_the_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    assert service_resource().attributes["service.name"] == "dynamic-tools"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,team=a")
    assert service_resource().attributes["service.name"] == "from-attributes"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "billing-tools")
    resource = service_resource().attributes
    assert resource["service.name"] == "billing-tools" and resource["team"] == "a"


def test_a_run_id_is_its_trace_id() -> None:
    run_id = "0af7651916cd43dd8448eb211c80319c"
    assert run_trace_id(run_id) == int(run_id, 16)
    assert f"{run_trace_id(run_id):032x}" == run_id
    other = run_trace_id("run-7")  # not 32 hex digits: a stable 128-bit hash
    assert other == run_trace_id("run-7") and 0 < other < 2**128 and other != run_trace_id("run-8")
    assert run_trace_id("0" * 32) != 0  # the invalid all-zero id is never used
    assert run_span_id(run_id) == run_span_id(run_id) and 0 < run_span_id(run_id) < 2**64
    assert run_span_id(run_id) != run_span_id("1af7651916cd43dd8448eb211c80319c")


def test_run_ids_are_fixed_only_for_the_run_span() -> None:
    recorder = SpanRecorder()
    tracing = recorder.tracing
    assert isinstance(tracing.tracer.id_generator, RunIds)  # type: ignore[attr-defined]
    with tracing.span("one") as first, tracing.span("two") as second:
        assert first.get_span_context().trace_id == second.get_span_context().trace_id
    with tracing.span("other") as third:
        assert third.get_span_context().trace_id != first.get_span_context().trace_id
    run_id = "0af7651916cd43dd8448eb211c80319c"
    context = tracing.run_context(run_id)
    parent = trace.get_current_span(context).get_span_context()
    assert parent.trace_id == int(run_id, 16) and parent.span_id == run_span_id(run_id)
    assert parent.trace_flags.sampled
    recorder.shutdown()


def test_an_exception_marks_the_span_with_its_type_never_its_message() -> None:
    recorder = SpanRecorder()
    with pytest.raises(ValueError), recorder.tracing.span("failing"):
        raise ValueError("the password is hunter2")
    span = recorder.one("failing")
    assert attr(span, "error.type") == "ValueError"
    assert span.status.status_code == StatusCode.ERROR
    assert "hunter2" not in str(span.to_json())
    recorder.shutdown()


def test_off_records_nothing_and_injects_nothing() -> None:
    tracing = Tracing.off()
    with tracing.span("x", attributes={"a": 1}) as span:
        assert span is trace.INVALID_SPAN and not span.is_recording()
        headers: dict[str, str] = {}
        tracing.inject(headers)
        assert headers == {}
    assert tracing.run_context("0af7651916cd43dd8448eb211c80319c") is not None
    tracing.shutdown()  # nothing to stop


def test_the_span_a_run_starts_from_is_kept_as_a_traceparent_and_linked_back() -> None:
    recorder = SpanRecorder()
    assert current_traceparent() is None  # no span: nothing to link to
    note_run("r-0")  # and nothing to note it on (no error)
    with recorder.tracing.span("tools/call w_x") as request:
        started_from = current_traceparent()
        note_run("r-1")
    assert started_from is not None
    recorder.tracing.record_run_span(
        "r-1",
        "run x",
        start=datetime(2026, 1, 1, tzinfo=UTC),
        end=datetime(2026, 1, 1, 0, 1, tzinfo=UTC),
        attributes={},
        links=[link] if (link := span_link(started_from)) else None,
    )
    assert attr(recorder.one("tools/call w_x"), "dt.run_id") == "r-1"
    (linked,) = recorder.one("run x").links
    assert linked.context.span_id == request.get_span_context().span_id
    assert linked.context.trace_id == request.get_span_context().trace_id
    recorder.shutdown()


@pytest.mark.parametrize("stored", [None, "", "garbage", "00-" + "0" * 32 + "-" + "0" * 16 + "-01"])
def test_a_missing_or_malformed_stored_traceparent_gives_no_link(stored: str | None) -> None:
    assert span_link(stored) is None
