"""Telemetry: OpenTelemetry traces (off by default) and Prometheus metrics of workflow runs.

- ``tracing`` — the :class:`~dynamic_tools.observability.tracing.Tracing` handle the adapters
  make spans with (pipeline stages, outbound HTTP calls, MCP requests), its configuration from
  the standard ``OTEL_*`` variables, and the trace of a run (its id is the run id).
- ``run_tracing`` — spans of workflow runs, node attempts and compensations, from the engine's
  events and tool calls (the engine itself knows nothing of this).
- ``run_metrics`` — Prometheus collectors of runs, fed by the run store's stored events.

This package imports no edge (API, MCP, CLI) and no runtime; they import it.
"""
