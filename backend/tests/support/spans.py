"""Spans for tests: a real SDK provider with the in-memory exporter, and ways to read a tree."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dynamic_tools.observability.tracing import Tracing


class SpanRecorder:
    """A tracing handle whose spans end up in memory, set up here (never from the env)."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracing = Tracing(self.provider)

    @property
    def spans(self) -> list[ReadableSpan]:
        """Every span finished so far."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        """The finished spans called ``name``, in the order they ended."""
        return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        """The one finished span called ``name``."""
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans]
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """The spans whose parent is ``parent``."""
        assert parent.context is not None
        return [
            s
            for s in self.spans
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]

    def wait_for(self, ready: Callable[[list[ReadableSpan]], bool], what: str) -> None:
        """Wait (bounded) until ``ready`` holds for the finished spans."""
        deadline = time.monotonic() + 15
        while not ready(self.spans):
            assert time.monotonic() < deadline, f"never got {what}: {[s.name for s in self.spans]}"
            time.sleep(0.02)

    def shutdown(self) -> None:
        """Stop the provider."""
        self.provider.shutdown()


def attr(span: ReadableSpan, name: str) -> Any:
    """One attribute of a span."""
    assert span.attributes is not None
    return span.attributes.get(name)


def everything_recorded(spans: Iterable[ReadableSpan]) -> str:
    """Every name, attribute, status and event text of ``spans``, for secret checks."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.extend(f"{k}={v}" for k, v in (span.attributes or {}).items())
        parts.append(str(span.status.description or ""))
        for event in span.events:
            parts.append(event.name)
            parts.extend(f"{k}={v}" for k, v in (event.attributes or {}).items())
    return "\n".join(parts)


def traceparent_ids(header: str) -> tuple[int, int]:
    """The trace id and parent span id of a W3C ``traceparent`` header."""
    version, trace_id, span_id, flags = header.split("-")
    assert version == "00" and len(flags) == 2
    return int(trace_id, 16), int(span_id, 16)
