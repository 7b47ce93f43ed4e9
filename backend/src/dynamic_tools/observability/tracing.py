"""OpenTelemetry tracing: off by default, on only when the standard ``OTEL_*`` variables say so.

The rule (:func:`tracing_requested`), read once when the services are built:

- ``OTEL_SDK_DISABLED=true`` turns it off, whatever else is set;
- ``OTEL_TRACES_EXPORTER=none`` turns it off;
- otherwise it is on when ``OTEL_TRACES_EXPORTER`` names exporters (``otlp``, ``console``) or an
  OTLP endpoint is set (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``;
  the exporter is then ``otlp``).

Everything else comes from the SDK's own variables: the OTLP exporter (HTTP/protobuf) reads the
endpoint, headers, timeout and certificates, ``OTEL_TRACES_SAMPLER`` picks the sampler,
``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` the resource (``service.name`` defaults to
``dynamic-tools``), ``OTEL_BSP_*`` the batching, ``OTEL_PROPAGATORS`` what outbound requests
carry (W3C ``traceparent`` by default). A configuration the project cannot honour (an unknown
exporter, the gRPC protocol) is a :class:`~dynamic_tools.errors.ConfigurationError` naming the
variable. The provider made from the environment also becomes OpenTelemetry's global one, so
libraries that trace by themselves (FastAPI's request spans, the MCP SDK's outbound requests)
join the same traces.

When tracing is off, :class:`Tracing` holds no provider: :meth:`Tracing.span` yields a
non-recording span at once, :meth:`Tracing.inject` adds no header, and nothing is exported.

**A run's trace.** A durable run may outlive the process that started it, so its spans cannot
hang off a span object kept in memory. The trace id *is* the run id (a 32-hex-digit run id is
used as it is; any other is hashed), and the run span's id is derived from the run id too.
Children (node attempts, compensations) name that run span as their parent by these ids,
whichever process makes them; the run span itself is recorded when the run ends, with the
start time the run store recorded. So a run resumed after a restart, or taken over by another
replica, is still one tree. :class:`RunIds` gives the tracer those fixed ids for the one span
that needs them, and the provider's own ids otherwise.

**What started a run.** The span current when a run is started (the MCP request of a
``tools/call``, ...) is stored with the run as a ``traceparent`` (:func:`current_traceparent`),
and the run span links to it (:func:`span_link`); that span gets the run's ``dt.run_id``
(:func:`note_run`). Both ways survive a restart: the link is read from the stored run.

Attributes follow the semantic conventions where they exist (``http.request.method``,
``url.full``, ``server.address``, ``http.response.status_code``, ``error.type``,
``mcp.method.name``, ``gen_ai.tool.name``) plus ``dt.*`` ones (:data:`RUN_ID` ...). They never
carry a secret: no header values, no query strings, no argument values, and no exception
messages (only their type).
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import re
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.resources import (
    SERVICE_NAME,
    SERVICE_VERSION,
    OTELResourceDetector,
    Resource,
)
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.sdk.trace.sampling import Decision
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from dynamic_tools import __version__
from dynamic_tools.errors import ConfigurationError

RUN_ID = "dt.run_id"
WORKFLOW_ID = "dt.workflow_id"
NODE_ID = "dt.node_id"
NODE_KIND = "dt.node_kind"
TOOL = "dt.tool"
ATTEMPT = "dt.attempt"
OUTCOME = "dt.outcome"
COMPENSATION = "dt.compensation"
STAGE = "dt.stage"
ERROR_TYPE = "error.type"

SERVICE = "dynamic-tools"
INSTRUMENTATION = "dynamic_tools"
EXPORTERS = ("otlp", "console")
OTLP_PROTOCOL = "http/protobuf"

_HEX_ID = re.compile(r"^[0-9a-f]{32}$")
_FIXED_IDS: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
    "dynamic_tools_fixed_span_ids", default=None
)


# --- configuration ------------------------------------------------------------------------------
def _flag(environ: Mapping[str, str], name: str) -> str:
    return environ.get(name, "").strip().lower()


def trace_exporters(environ: Mapping[str, str]) -> list[str]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (comma-separated), lower case; [] if unset."""
    return [
        part.strip().lower()
        for part in environ.get("OTEL_TRACES_EXPORTER", "").split(",")
        if part.strip()
    ]


def tracing_requested(environ: Mapping[str, str]) -> bool:
    """Whether the ``OTEL_*`` variables turn tracing on (the rule of the module docstring)."""
    if _flag(environ, "OTEL_SDK_DISABLED") == "true":
        return False
    exporters = trace_exporters(environ)
    if "none" in exporters:
        return False
    if exporters:
        return True
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
        or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    )


def span_exporters(environ: Mapping[str, str]) -> list[SpanExporter]:
    """The exporters the variables ask for (``otlp`` when only an endpoint is set)."""
    names = trace_exporters(environ) or ["otlp"]
    exporters: list[SpanExporter] = []
    for name in names:
        if name == "otlp":
            protocol = (
                environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or OTLP_PROTOCOL
            ).strip()
            if protocol != OTLP_PROTOCOL:
                raise ConfigurationError(
                    f"OTEL_EXPORTER_OTLP_PROTOCOL '{protocol}' is not supported: traces are "
                    f"exported over OTLP {OTLP_PROTOCOL} (point the endpoint at port 4318)",
                    context={"variable": "OTEL_EXPORTER_OTLP_PROTOCOL", "value": protocol},
                )
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporters.append(OTLPSpanExporter())
        elif name == "console":  # stderr: stdout carries the MCP protocol under `mcp` (stdio)
            exporters.append(ConsoleSpanExporter(out=sys.stderr))
        else:
            raise ConfigurationError(
                f"OTEL_TRACES_EXPORTER '{name}' is not supported; use one of "
                f"{', '.join(EXPORTERS)} or none",
                context={"variable": "OTEL_TRACES_EXPORTER", "value": name},
            )
    return exporters


def service_resource() -> Resource:
    """The resource: ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``, else our name."""
    attributes: dict[str, str] = {SERVICE_VERSION: __version__}
    if SERVICE_NAME not in OTELResourceDetector().detect().attributes:
        attributes[SERVICE_NAME] = SERVICE
    return Resource.create(attributes)


# --- ids of a run's trace -----------------------------------------------------------------------
def run_trace_id(run_id: str) -> int:
    """The trace id of a run: the run id itself when it is 32 hex digits, else a hash of it."""
    if _HEX_ID.match(run_id) and int(run_id, 16):
        return int(run_id, 16)
    digest = hashlib.sha256(f"dt.run.trace:{run_id}".encode()).digest()
    return int.from_bytes(digest[:16], "big") or 1


def run_span_id(run_id: str) -> int:
    """The span id of a run's span, derived from the run id."""
    digest = hashlib.sha256(f"dt.run.span:{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") or 1


class RunIds(IdGenerator):
    """The provider's ids, except for a run span, whose ids are fixed by its run id."""

    def __init__(self, ids: IdGenerator | None = None) -> None:
        self.ids = ids or RandomIdGenerator()

    def generate_span_id(self) -> int:
        """The fixed span id while a run span is made, else the provider's."""
        fixed = _FIXED_IDS.get()
        return fixed[1] if fixed else self.ids.generate_span_id()

    def generate_trace_id(self) -> int:
        """The fixed trace id while a run span is made, else the provider's."""
        fixed = _FIXED_IDS.get()
        return fixed[0] if fixed else self.ids.generate_trace_id()

    def is_trace_id_random(self) -> bool:
        """Derived ids are not claimed random (W3C random flag)."""
        return _FIXED_IDS.get() is None and self.ids.is_trace_id_random()


# --- what started a run ---------------------------------------------------------------------------
_W3C = TraceContextTextMapPropagator()
STARTED_BY = "dt.link"


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span, None when there is no valid one.

    Read from OpenTelemetry's context, so whichever provider made the span (ours, or a
    library's on the global one) it names the caller of a run.
    """
    carrier: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:
        _W3C.inject(carrier)
    return carrier.get("traceparent")


def span_link(traceparent: str | None) -> Link | None:
    """A link to the span a stored ``traceparent`` names (None when absent or malformed)."""
    if not traceparent:
        return None
    context = trace.get_current_span(_W3C.extract({"traceparent": traceparent}))
    span_context = context.get_span_context()
    if not span_context.is_valid:
        return None
    return Link(span_context, {STARTED_BY: "started_by"})


def note_run(run_id: str) -> None:
    """Put ``dt.run_id`` on the current span (the request that started or resumed a run)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute(RUN_ID, run_id)


def _nanos(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


# --- the handle -----------------------------------------------------------------------------------
class Tracing:
    """Where this process's spans go: a tracer provider, or nowhere (the default).

    Args:
        provider: An SDK ``TracerProvider`` (tests pass one with an in-memory exporter), or
            None for tracing off.
        owned: Whether :meth:`shutdown` shuts the provider down (one made from the
            environment), or leaves it to whoever made it.
    """

    def __init__(
        self, provider: sdk_trace.TracerProvider | None = None, *, owned: bool = False
    ) -> None:
        self.provider = provider
        self.owned = owned
        self.enabled = False
        self.tracer: trace.Tracer = trace.NoOpTracer()
        if provider is not None:
            tracer = provider.get_tracer(INSTRUMENTATION, __version__)
            if isinstance(tracer, sdk_trace.Tracer):  # not when OTEL_SDK_DISABLED=true
                tracer.id_generator = RunIds(tracer.id_generator)
                self.tracer = tracer
                self.enabled = True

    @classmethod
    def off(cls) -> Tracing:
        """No tracing."""
        return cls()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Tracing:
        """Tracing as the ``OTEL_*`` variables say (off unless they turn it on)."""
        environ = os.environ if environ is None else environ
        if not tracing_requested(environ):
            return cls.off()
        exporters = span_exporters(environ)
        provider = sdk_trace.TracerProvider(resource=service_resource(), shutdown_on_exit=False)
        for exporter in exporters:
            provider.add_span_processor(BatchSpanProcessor(exporter))
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            trace.set_tracer_provider(provider)  # FastAPI's and the MCP SDK's spans join in
        return cls(provider, owned=True)

    # --- spans -----------------------------------------------------------------------------
    @contextmanager
    def span(
        self,
        name: str,
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Mapping[str, Any] | None = None,
        context: Context | None = None,
    ) -> Iterator[Span]:
        """A span current for the block (a child of ``context``, else of the current span).

        An exception leaving the block marks the span as an error with the exception's type
        only (``error.type``); its message is never recorded, as it may quote a value.
        """
        if not self.enabled:
            yield trace.INVALID_SPAN
            return
        with self.tracer.start_as_current_span(
            name,
            context=context,
            kind=kind,
            attributes=dict(attributes or {}),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except BaseException as exc:
                if ERROR_TYPE not in (getattr(span, "attributes", None) or {}):
                    mark_error(span, type(exc).__qualname__)  # unless the block said why
                raise

    def run_context(self, run_id: str) -> Context:
        """A context whose current span is the run span of ``run_id`` (by its derived ids)."""
        trace_id = run_trace_id(run_id)
        parent = SpanContext(
            trace_id=trace_id,
            span_id=run_span_id(run_id),
            is_remote=True,
            trace_flags=self._flags(trace_id),
        )
        return trace.set_span_in_context(NonRecordingSpan(parent), Context())

    def record_run_span(
        self,
        run_id: str,
        name: str,
        *,
        start: datetime,
        end: datetime,
        attributes: Mapping[str, Any],
        error: str | None = None,
        links: list[Link] | None = None,
    ) -> None:
        """Record the root span of a run, with the ids derived from ``run_id``.

        ``links`` name the spans it relates to (the request that started it).
        """
        if not self.enabled:
            return
        token = _FIXED_IDS.set((run_trace_id(run_id), run_span_id(run_id)))
        try:
            span = self.tracer.start_span(
                name,
                context=Context(),
                attributes=dict(attributes),
                links=links,
                start_time=_nanos(start),
            )
        finally:
            _FIXED_IDS.reset(token)
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=max(_nanos(end), _nanos(start)))

    def record_span(
        self,
        name: str,
        *,
        context: Context,
        start: datetime,
        end: datetime,
        attributes: Mapping[str, Any],
        error: str | None = None,
    ) -> None:
        """Record a span that has already happened (times from recorded events)."""
        if not self.enabled:
            return
        span = self.tracer.start_span(
            name, context=context, attributes=dict(attributes), start_time=_nanos(start)
        )
        if error is not None:
            mark_error(span, error)
        span.end(end_time=max(_nanos(end), _nanos(start)))

    def _flags(self, trace_id: int) -> TraceFlags:
        """Whether the sampler keeps a run's trace (deterministic on the trace id)."""
        if not isinstance(self.tracer, sdk_trace.Tracer):
            return TraceFlags(TraceFlags.DEFAULT)
        decision = self.tracer.sampler.should_sample(Context(), trace_id, "run").decision
        sampled = decision is Decision.RECORD_AND_SAMPLE
        return TraceFlags(TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT)

    # --- propagation and lifecycle ----------------------------------------------------------
    def inject(self, headers: MutableMapping[str, str]) -> None:
        """Add the current trace context (``traceparent``) to outbound headers, when on."""
        if self.enabled:
            propagate.inject(headers)

    def shutdown(self) -> None:
        """Flush and stop the provider if this handle made it."""
        if self.owned and self.provider is not None:
            self.provider.shutdown()


def mark_error(span: Span, error_type: str) -> None:
    """Mark ``span`` as failed with a low-cardinality ``error.type`` (never a message)."""
    span.set_attribute(ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, error_type))


__all__ = [
    "ATTEMPT",
    "NODE_ID",
    "OUTCOME",
    "RUN_ID",
    "TOOL",
    "WORKFLOW_ID",
    "RunIds",
    "Tracing",
    "current_traceparent",
    "mark_error",
    "note_run",
    "run_span_id",
    "run_trace_id",
    "span_link",
    "tracing_requested",
]
