"""Prometheus metrics of workflow runs, from the events the run store stored.

The counters are fed by :meth:`RunMetrics.observe`, a run store observer: it sees each event
once, when it is first stored, so a run replayed after a restart is not counted again, and a
run the store ends by itself (a cancel of a run executing elsewhere, an interrupted local run)
is counted too. Counters are per process, as Prometheus expects (``rate()`` over replicas).

The gauges are read from the database at each scrape (:class:`UnfinishedRuns`), so they are
right across restarts and count the runs of every replica sharing the database.

- ``dynamic_tools_runs_started_total{workflow}`` — runs that started executing;
- ``dynamic_tools_runs_finished_total{workflow,status}`` — runs that ended (succeeded, failed,
  cancelled);
- ``dynamic_tools_runs_active{workflow}`` — gauge: runs not ended (pending, running or waiting
  for input);
- ``dynamic_tools_runs_waiting{workflow}`` — gauge: runs waiting for input (part of active);
- ``dynamic_tools_node_duration_seconds{tool,outcome}`` — histogram: call nodes from their
  first start to their end (every attempt and retry delay);
- ``dynamic_tools_node_retries_total{tool}`` — retries scheduled (one per attempt after the
  first);
- ``dynamic_tools_run_takeovers_total{executor}`` — runs this process took over from a replica
  that is gone (:func:`record_takeover`, called where a takeover is made).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from loguru import logger
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from dynamic_tools.engine import events as ev
from dynamic_tools.persistence.run_view import StoredEvent, parse_time

UnfinishedCounts = Callable[[], list[tuple[str, str, int]]]
"""``(workflow_id, status, count)`` of the runs not ended (``RunStore.unfinished_counts``)."""

NODE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600)

_takeovers: dict[str, int] = {}
_takeovers_lock = threading.Lock()


def record_takeover(executor_id: str, runs: int) -> None:
    """Count ``runs`` taken over here from the replica ``executor_id`` (process-wide)."""
    if runs <= 0:
        return
    with _takeovers_lock:
        _takeovers[executor_id] = _takeovers.get(executor_id, 0) + runs


class Takeovers(Collector):
    """``dynamic_tools_run_takeovers_total{executor}`` from :func:`record_takeover`."""

    def collect(self) -> Iterator[Metric]:
        """The counts so far."""
        family = CounterMetricFamily(
            "dynamic_tools_run_takeovers",
            "Runs taken over from a replica that is gone",
            labels=["executor"],
        )
        with _takeovers_lock:
            counts = dict(_takeovers)
        for executor, count in sorted(counts.items()):
            family.add_metric([executor], count)
        yield family


class UnfinishedRuns(Collector):
    """Gauges of runs not ended, counted in the database at each scrape."""

    def __init__(self, counts: UnfinishedCounts) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        """``dynamic_tools_runs_active`` and ``dynamic_tools_runs_waiting`` by workflow."""
        active = GaugeMetricFamily(
            "dynamic_tools_runs_active",
            "Runs not ended (pending, running or waiting for input)",
            labels=["workflow"],
        )
        waiting = GaugeMetricFamily(
            "dynamic_tools_runs_waiting", "Runs waiting for input", labels=["workflow"]
        )
        try:
            rows = self.counts()
        except Exception as exc:  # a scrape never fails for this: the gauges are left empty
            logger.warning("could not count unfinished runs ({})", type(exc).__name__)
            rows = []
        totals: dict[str, int] = {}
        waits: dict[str, int] = {}
        for workflow, status, count in rows:
            totals[workflow] = totals.get(workflow, 0) + count
            if status == "waiting_input":
                waits[workflow] = waits.get(workflow, 0) + count
        for workflow, count in sorted(totals.items()):
            active.add_metric([workflow], count)
            waiting.add_metric([workflow], waits.get(workflow, 0))
        yield active
        yield waiting


class RunMetrics:
    """The run collectors, in a registry of their own (served beside the app's on /metrics)."""

    def __init__(self, unfinished: UnfinishedCounts | None = None) -> None:
        self.registry = CollectorRegistry()
        self.started = Counter(
            "dynamic_tools_runs_started_total",
            "Workflow runs that started executing",
            ["workflow"],
            registry=self.registry,
        )
        self.finished = Counter(
            "dynamic_tools_runs_finished_total",
            "Workflow runs that ended, by status",
            ["workflow", "status"],
            registry=self.registry,
        )
        self.node_duration = Histogram(
            "dynamic_tools_node_duration_seconds",
            "Call nodes from their start to their end (every attempt and retry delay)",
            ["tool", "outcome"],
            buckets=NODE_BUCKETS,
            registry=self.registry,
        )
        self.retries = Counter(
            "dynamic_tools_node_retries_total",
            "Retries scheduled for call nodes",
            ["tool"],
            registry=self.registry,
        )
        self.triggers = Counter(
            "dynamic_tools_trigger_events_total",
            "Schedule ticks and webhook deliveries, by what became of them",
            ["workflow", "trigger", "kind", "outcome"],
            registry=self.registry,
        )
        if unfinished is not None:
            self.registry.register(UnfinishedRuns(unfinished))
        self.registry.register(Takeovers())

    def trigger_event(self, kind: str, workflow: str, trigger: str, outcome: str) -> None:
        """Count a schedule tick or webhook delivery (``execution/scheduler.py``, ``webhooks``)."""
        self.triggers.labels(workflow, trigger, kind, outcome).inc()

    def observe(self, stored: StoredEvent) -> None:
        """Count one stored event (a run store observer)."""
        event = stored.typed
        run = stored.run
        if isinstance(event, ev.RunStarted) and stored.previous_status == "pending":
            self.started.labels(run.workflow_id).inc()
        elif stored.ended_run:
            self.finished.labels(run.workflow_id, run.status).inc()
        elif isinstance(event, ev.RetryScheduled):
            if event.tool:
                self.retries.labels(event.tool).inc()
        elif isinstance(event, ev.NodeSucceeded):
            self._node_ended(stored, event.node_id, "succeeded")
        elif isinstance(event, ev.NodeFailed):
            self._node_ended(stored, event.node_id, "failed")

    def _node_ended(self, stored: StoredEvent, node_id: str, outcome: str) -> None:
        node = stored.run.nodes.get(node_id)
        if node is None:
            return
        tool, started, ended = node.tool, node.started_at, node.ended_at
        if not tool or not started or not ended:  # only a node that calls a tool has one
            return
        seconds = (parse_time(ended) - parse_time(started)).total_seconds()
        self.node_duration.labels(str(tool), outcome).observe(max(seconds, 0.0))
