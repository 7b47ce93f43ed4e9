"""Spans of workflow runs, made around the engine (which knows nothing of tracing).

The tree of a run, in the trace whose id is the run id (``tracing.py`` explains why); the
run span links to the span the run was started from (stored with the run as ``trace_link``):

    run <workflow>                    the run: dt.run_id, dt.workflow_id, dt.outcome
    ├── node <node_id>                one attempt of a call: dt.node_id, dt.tool, dt.attempt,
    │   └── POST                      dt.outcome; the HTTP call under it (``http/sender.py``)
    ├── node <node_id>                the next attempt of the same node (dt.attempt 2, ...)
    ├── node <node_id>                a node of another kind (branch, yield, parallel ...,
    │                                 or a sql_query call): dt.node_kind, from its recorded
    │                                 start to its end
    └── compensate <node_id>          a compensation call (saga or compensate node)
        └── DELETE

Three hooks make it, each where the information is:

- :meth:`RunTracing.tools` wraps the ToolRunner: every tool call is live in this process, so
  the attempt (or compensation) span is open around it and the HTTP span nests under it. Its
  node id comes from the idempotency key the engine gives (``<run>:<node>`` for a call,
  ``<run>:saga:<node>`` and ``<run>:<compensate node>:<i>`` for compensations).
- :meth:`RunTracing.events` wraps the EventSink: it sees every event, replayed ones
  included, and keeps the attempt number each node is at (``retry_scheduled``), so a retry
  re-executed after a restart is still numbered right.
- :meth:`RunTracing.observe` is a run store observer: it sees each event once, when first
  stored, with the run's recorded state, and records the run span (at the run's end, from
  its recorded start) and the spans of non-call nodes (from their recorded times). A run
  that spans a restart or a takeover therefore keeps one root and its real start time; an
  attempt interrupted by a crash has no span, and its re-execution has one.

``dt.outcome`` of an attempt is what the call gave: ``succeeded`` (2xx/3xx), ``failed`` (an
HTTP error status, in ``http.response.status_code``), ``timeout``, ``transport``,
``refused`` or ``cancelled``. Nothing of the arguments, the answer or an error message is
recorded. Span names write foreach item indexes as ``*`` (``node loop/*``); ``dt.node_id``
has the exact id.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Mapping
from typing import Any

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.ports import EventSink, ToolCallFailed, ToolResult, ToolRunner
from dynamic_tools.observability.tracing import (
    ATTEMPT,
    COMPENSATION,
    NODE_ID,
    NODE_KIND,
    OUTCOME,
    RUN_ID,
    TOOL,
    WORKFLOW_ID,
    Tracing,
    mark_error,
    span_link,
)
from dynamic_tools.persistence.run_view import StoredEvent, parse_time

_SAGA = "saga:"
_ITEM = re.compile(r"/\d+(?=/|$)")

IN_MEMORY_TOOLS = frozenset({"sql_query"})
"""Built-ins the engine runs itself (no tool runner call): their node gets a node span."""


def span_path(node_id: str) -> str:
    """A node id for a span name, foreach item indexes as ``*`` (``loop/3/x`` → ``loop/*/x``).

    Span names must stay few; the exact id is the ``dt.node_id`` attribute.
    """
    return _ITEM.sub("/*", node_id)


class RunTracing:
    """Makes the spans of runs from tool calls, events and stored events (see module doc)."""

    def __init__(self, tracing: Tracing) -> None:
        self.tracing = tracing
        self._attempts: dict[str, int] = {}  # "<run>:<node>" -> the attempt it is at (>1)
        self._workflows: dict[str, str] = {}  # run id -> workflow id
        self._lock = threading.Lock()  # observe() runs in the store's worker threads

    def tools(self, runner: ToolRunner) -> ToolRunner:
        """``runner`` with a span around every call."""
        return TracedTools(runner, self)

    def events(self, sink: EventSink) -> EventSink:
        """``sink`` watched for attempt numbers."""
        return WatchedEvents(sink, self)

    # --- what the events tell ------------------------------------------------------------------
    def seen(self, event: ev.Event) -> None:
        """Note what a call span needs from an event (replayed events included)."""
        with self._lock:
            if isinstance(event, ev.RetryScheduled):
                self._attempts[f"{event.run_id}:{event.node_id}"] = event.attempt
            elif isinstance(event, ev.RunStarted):
                self._workflows[event.run_id] = event.workflow_id

    def attempt(self, key: str) -> int:
        """The attempt the call with idempotency key ``key`` is."""
        with self._lock:
            return self._attempts.get(key, 1)

    def workflow(self, run_id: str) -> str | None:
        """The workflow of a run executing here, when known."""
        with self._lock:
            return self._workflows.get(run_id)

    def _forget(self, run_id: str) -> None:
        prefix = f"{run_id}:"
        with self._lock:
            self._workflows.pop(run_id, None)
            for key in [k for k in self._attempts if k.startswith(prefix)]:
                del self._attempts[key]

    # --- spans from stored events --------------------------------------------------------------
    def observe(self, stored: StoredEvent) -> None:
        """Record the run span when the run ends, and the span of a non-call node that ended."""
        if stored.ended_run:
            self._record_run(stored)
            self._forget(stored.run.run_id)
        elif isinstance(stored.typed, ev.NodeSucceeded | ev.NodeFailed):
            self._record_node(stored)

    def _record_run(self, stored: StoredEvent) -> None:
        run = stored.run
        if run.finished_at is None:
            return
        error = None
        if run.status == "failed":
            failed_node = (run.error or {}).get("node_id")
            error = f"node {failed_node} failed" if failed_node else "the run failed"
        self.tracing.record_run_span(
            run.run_id,
            f"run {run.workflow_id}",
            start=run.started_at or run.created_at,
            end=run.finished_at,
            attributes={RUN_ID: run.run_id, WORKFLOW_ID: run.workflow_id, OUTCOME: run.status},
            error=error,
            links=[link] if (link := span_link(run.trace_link)) else None,
        )

    def _record_node(self, stored: StoredEvent) -> None:
        run = stored.run
        node_id = stored.typed.source
        node = run.nodes.get(node_id)
        if node is None:
            return
        kind, tool = node.kind, node.tool
        in_memory = tool is not None and tool in IN_MEMORY_TOOLS
        if kind is None or (tool is not None and not in_memory):
            return  # a node calling a tool: its spans are its attempts (around the tool runner)
        if not node.started_at or not node.ended_at:
            return
        outcome = str(node.status)
        attributes = {
            RUN_ID: run.run_id,
            WORKFLOW_ID: run.workflow_id,
            NODE_ID: node_id,
            NODE_KIND: str(kind),
            ATTEMPT: 1,
            OUTCOME: outcome,
        }
        if in_memory:
            attributes[TOOL] = str(node.tool)
        self.tracing.record_span(
            f"node {span_path(node_id)}",
            context=self.tracing.run_context(run.run_id),
            start=parse_time(node.started_at),
            end=parse_time(node.ended_at),
            attributes=attributes,
            error="failed" if outcome == "failed" else None,
        )


class WatchedEvents:
    """An EventSink that lets :class:`RunTracing` see every event before forwarding it."""

    def __init__(self, sink: EventSink, runs: RunTracing) -> None:
        self.sink = sink
        self.runs = runs

    async def emit(self, event: ev.Event) -> None:
        """Note, then forward."""
        self.runs.seen(event)
        await self.sink.emit(event)


class TracedTools:
    """A ToolRunner with an attempt (or compensation) span around every call."""

    def __init__(self, runner: ToolRunner, runs: RunTracing) -> None:
        self.runner = runner
        self.runs = runs

    def knows(self, tool: str) -> bool:
        """As the wrapped runner."""
        return self.runner.knows(tool)

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        """Call through, inside a span named after the node the call is for."""
        tracing = self.runs.tracing
        run_id, _, step = idempotency_key.partition(":")
        if not step:  # not a call of the engine's (no run id in the key): nothing to hang it on
            return await self.runner.call(
                tool, args, idempotency_key=idempotency_key, timeout_s=timeout_s
            )
        attributes: dict[str, Any] = {RUN_ID: run_id, TOOL: tool}
        workflow = self.runs.workflow(run_id)
        if workflow:
            attributes[WORKFLOW_ID] = workflow
        if ":" in step:  # "saga:<node>" or "<compensate node>:<index>"
            node_id = step[len(_SAGA) :] if step.startswith(_SAGA) else step.rpartition(":")[0]
            name = f"compensate {span_path(node_id)}"
            attributes.update({NODE_ID: node_id, COMPENSATION: step})
        else:
            name = f"node {span_path(step)}"
            attributes.update({NODE_ID: step, ATTEMPT: self.runs.attempt(idempotency_key)})
        with tracing.span(name, attributes=attributes, context=tracing.run_context(run_id)) as span:
            try:
                result = await self.runner.call(
                    tool, args, idempotency_key=idempotency_key, timeout_s=timeout_s
                )
            except ToolCallFailed as exc:
                span.set_attribute(OUTCOME, exc.kind)
                mark_error(span, exc.kind)
                raise
            except (asyncio.CancelledError, TimeoutError) as exc:
                outcome = "timeout" if isinstance(exc, TimeoutError) else "cancelled"
                span.set_attribute(OUTCOME, outcome)
                mark_error(span, outcome)
                raise
            span.set_attribute("http.response.status_code", result.status_code)
            if result.ok:
                span.set_attribute(OUTCOME, "succeeded")
            else:
                span.set_attribute(OUTCOME, "failed")
                mark_error(span, str(result.status_code))
            return result
