"""Prometheus metrics of one app: request counts and latencies, pipeline outcomes.

Each app gets its own ``CollectorRegistry`` so several apps (tests, replicas in one process)
never clash.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram


@dataclass
class Metrics:
    """The collectors of one app."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.requests = Counter(
            "dynamic_tools_http_requests_total",
            "HTTP requests served",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "dynamic_tools_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route"],
            registry=self.registry,
        )
        self.pipeline_runs = Counter(
            "dynamic_tools_pipeline_runs_total",
            "Single-shot pipeline runs by outcome",
            ["status", "error_stage"],
            registry=self.registry,
        )
        self.llm_tokens = Counter(
            "dynamic_tools_llm_tokens_total",
            "LLM tokens used",
            ["kind"],
            registry=self.registry,
        )
