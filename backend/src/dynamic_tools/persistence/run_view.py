"""The run view: how engine events change a run's row, and the records the store returns.

Events (the classes of ``engine/events.py``, by their ``type``) and what they change:

- ``run_created`` (the store) → ``pending``; ``run_started`` → ``running``;
- ``node_started`` / ``node_succeeded`` / ``node_failed`` / ``node_skipped`` /
  ``node_not_run`` → the node's status, kind, tool (of a call), times, output, error
  (``fallback`` goes to the node's detail);
- ``node_input`` → the running node's input (an item's state starts with it);
- ``attempt_failed`` / ``retry_scheduled`` → the node's attempts and retry detail;
- ``waiting_input`` → the node and the run wait; the yield's message and expects are kept;
- ``resumed`` → the node runs again with the answer; the run is ``running`` once no yield waits;
- ``compensated`` → listed in the compensated node's detail;
- ``run_succeeded`` / ``run_failed`` / ``run_cancelled`` → terminal status, result, error.

An optional ``input`` on any node event is kept as the node's input. A terminal run keeps its
status whatever comes after.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.journal import from_json, to_json
from dynamic_tools.engine.nodes.steps import STEP_KIND_NAMES
from dynamic_tools.engine.state import NodeState, NodeStatus, RunOutcome
from dynamic_tools.persistence.db import utc_now

TERMINAL = frozenset(ev.TERMINAL_STATUS)
ACTIVE = frozenset({"pending", "running", "waiting_input"})


def parse_time(value: Any) -> datetime:
    """An event's ``at`` (ISO 8601 text or a datetime) as an aware datetime; now if missing."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return utc_now()
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=utc_now().tzinfo)
    return utc_now()


def iso(value: datetime | None) -> str | None:
    """ISO 8601 text with milliseconds, or None."""
    return value.isoformat(timespec="milliseconds") if value else None


def _millis(start: datetime | str | None, end: datetime | str | None) -> float | None:
    if start is None or end is None:
        return None
    return round((parse_time(end) - parse_time(start)).total_seconds() * 1000, 3)


def stored_node(state: NodeState) -> dict[str, Any]:
    """A node's state as its ``run_nodes`` row keeps it (the journal's JSON of the record)."""
    stored: dict[str, Any] = to_json(state)
    return stored


def node_from_row(stored: Mapping[str, Any] | NodeState | None) -> NodeState:
    """The node state a ``run_nodes`` row keeps (a fresh one for an empty row)."""
    if isinstance(stored, NodeState):
        return stored
    return from_json(NodeState, dict(stored or {}))


def touched_node(event: ev.Event) -> str | None:
    """The node whose state ``event`` changes (a compensation changes its target's), if any."""
    match event:
        case ev.NodeEvent(node_id=node_id) if node_id:
            return str(node_id)
        case ev.Compensated():
            return event.target
    return None


def apply_event(
    row: Mapping[str, Any], event: ev.Event, at: datetime, node: NodeState | None = None
) -> tuple[dict[str, Any], NodeState | None]:
    """What ``event`` changes: the run's columns, and the state of the node it touches.

    ``row`` is the run's current row; ``node`` the current state of :func:`touched_node`
    (None when that node has none yet). Only that one node is read and written, so applying
    an event costs the same in a run of ten nodes and in one of a thousand.
    """
    status = str(row["status"])
    waiting: dict[str, Any] = dict(row.get("waiting") or {})
    changes: dict[str, Any] = {}
    state: NodeState | None = None
    match event:
        case ev.RunStarted() if status in ACTIVE:
            changes.update(status="running", started_at=row.get("started_at") or at)
        case ev.NodeEvent(node_id=node_id) if node_id:
            state = _copy(node)
            _apply_node_event(state, event, at)
            if isinstance(event, ev.WaitingInput):
                waiting[node_id] = dict(state.detail)
                if status in ACTIVE:
                    changes["status"] = "waiting_input"
            elif isinstance(event, ev.Resumed):
                waiting.pop(node_id, None)
                if status == "waiting_input" and not waiting:
                    changes["status"] = "running"
        case ev.Compensated():
            step = {
                "name": event.name,
                "call": event.call,
                "ok": event.ok,
                "status_code": event.status_code,
                "error": event.error,
            }
            state = _copy(node)
            state.detail["compensations"] = [*state.detail.get("compensations", []), step]
        case ev.RunEnded() if status in ACTIVE:
            changes.update(
                status=event.STATUS, result=event.result, error=event.error, finished_at=at
            )
            waiting = {}
    changes["waiting"] = waiting or None
    return changes, state


def _copy(node: NodeState | None) -> NodeState:
    """A node state to change (the stored one is never changed in place)."""
    if node is None:
        return NodeState()
    return replace(node, detail=copy.deepcopy(node.detail))


def _apply_node_event(node: NodeState, event: ev.NodeEvent, at: datetime) -> None:
    """What one node event changes in the node's state."""
    match event:
        case ev.NodeStarted():
            node.status = "running"
            node.kind = event.kind
            node.started_at, node.ended_at, node.error = iso(at), None, None
            if event.tool:
                node.tool = event.tool
            if event.kind in STEP_KIND_NAMES:
                node.attempts = max(node.attempts, 1)
        case ev.NodeSucceeded():
            node.status, node.input, node.output = "succeeded", event.input, event.output
            node.ended_at = iso(at)
            if event.reused_from:  # a redrive took it from the earlier run
                node.detail["reused_from"] = event.reused_from
        case ev.NodeFailed():
            node.status, node.input, node.error = "failed", event.input, event.error
            node.ended_at = iso(at)
            if event.detail is not None:  # a call's tool, status and body
                node.detail.update(event.detail)
            if event.fallback:
                node.detail["fallback"] = event.fallback
        case ev.NodeSkipped():
            node.status, node.error = "skipped", event.reason
        case ev.NodeNotRun():
            node.status, node.error = "not_run", event.reason
        case ev.NodeInput():
            node.input = event.input
            if node.status == "pending":  # an item or a branch step: it has started
                node.status = "running"
                node.started_at = node.started_at or iso(at)
        case ev.AttemptFailed() | ev.RetryScheduled():
            node.attempts = max(node.attempts, event.attempt)
            if isinstance(event, ev.AttemptFailed):
                node.detail.update(last_error=event.error, status_code=event.status_code)
            else:
                node.detail.update(
                    next_attempt=event.attempt,
                    next_attempt_at=event.next_attempt_at,
                    delay_s=event.delay_s,
                )
            node.detail["max_attempts"] = event.max_attempts
        case ev.WaitingInput():
            node.status = "waiting_input"
            node.detail = {"message": event.message, "expects": event.expects or {}}
        case ev.Resumed():
            node.status = "running"
            node.detail["answer"] = event.values


def merge_outcome(nodes: Mapping[str, NodeState], outcome: RunOutcome) -> dict[str, NodeState]:
    """Node states completed with a finished run's final states (inputs, foreach items).

    A final state's fields replace the view's where they are set (``kind`` and ``tool`` come
    only with events); the details are merged.
    """
    merged = dict(nodes)
    for node_id, final in outcome.nodes.items():
        current = _copy(merged.get(node_id))
        for name in ("status", "input", "output", "error", "attempts", "started_at", "ended_at"):
            value = getattr(final, name)
            if value is not None:
                setattr(current, name, copy.deepcopy(value))
        current.detail = {**current.detail, **copy.deepcopy(final.detail)}
        merged[node_id] = current
    return merged


def _shown_status(status: NodeStatus, run_ended: bool) -> NodeStatus:
    """A node still pending in a run that has ended was never reached: ``not_run``."""
    return "not_run" if run_ended and status == "pending" else status


def error_summary(error: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A run's error in short: ``message``, ``node_id``, ``status_code``, ``api_message``.

    The status code and the API's own words are the failed call's, when a call caused the
    failure (directly, or through the fallback that raised the error).
    """
    if not error:
        return None
    found = error.get("cause")
    cause: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return {
        "message": error.get("message"),
        "node_id": error.get("node_id"),
        "status_code": error.get("status_code") or cause.get("status_code"),
        "api_message": error.get("api_message") or cause.get("api_message"),
    }


@dataclass(frozen=True)
class StepProgress:
    """Where a run is: its graph's steps done, their number, and the step at hand."""

    done: int
    total: int
    current: str | None


#: a step counts as done once it succeeded or was skipped (a branch not taken)
DONE_STEP = frozenset({"succeeded", "skipped"})


def step_progress(run: RunRecord) -> StepProgress:
    """The run's top-level steps done and in all, and its current step (loaded with its nodes).

    Steps are the graph's nodes: a child's id (a foreach item, a parallel branch) holds a ``/``
    after its parent's, which a graph node's identifier never does. The current step is the one
    the run waits at, else the step running (the last started of several), else the one it
    failed at; once the run has ended otherwise, the last step that ended.
    """
    steps = {n: s for n, s in run.nodes.items() if "/" not in n}
    done = sum(1 for s in steps.values() if s.status in DONE_STEP)
    return StepProgress(done=done, total=len(steps), current=_current(run, steps))


def _current(run: RunRecord, steps: Mapping[str, NodeState]) -> str | None:
    prompt = run.waiting_prompt()
    if prompt:
        return str(prompt["node_id"])
    running = [n for n, s in steps.items() if s.status in ("running", "waiting_input")]
    if running:
        return max(running, key=lambda n: str(steps[n].started_at or ""))
    failed = [n for n, s in steps.items() if s.status == "failed"]
    if failed:
        return failed[0]
    ended = [n for n, s in steps.items() if s.ended_at]
    if run.terminal and ended:
        return max(ended, key=lambda n: str(steps[n].ended_at))
    return None


@dataclass(frozen=True)
class RunEvent:
    """One stored event; ``position`` orders a run's events (SSE id, ``after``)."""

    run_id: str
    position: int
    seq: int
    type: str
    at: datetime
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def event(self) -> ev.Event:
        """The typed event (envelope and payload)."""
        envelope = {"run_id": self.run_id, "seq": self.seq, "type": self.type, "at": iso(self.at)}
        return ev.event_from_dict({**self.data, **envelope})

    @property
    def terminal(self) -> bool:
        """Whether the event ends the run."""
        return isinstance(self.event, ev.RunEnded)

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> RunEvent:
        """From a ``run_events`` row."""
        return cls(
            run_id=row["run_id"],
            position=row["position"],
            seq=row["seq"],
            type=row["type"],
            at=row["at"],
            data=dict(row["data"] or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        """The event as the engine emitted it, plus ``position``."""
        return {
            **self.data,
            "run_id": self.run_id,
            "seq": self.seq,
            "position": self.position,
            "type": self.type,
            "at": iso(self.at),
        }


@dataclass(frozen=True)
class RunTrigger:
    """What started a run that started itself: a schedule's tick or a webhook's delivery."""

    kind: str  # "schedule" | "webhook"
    name: str
    time: datetime


@dataclass(frozen=True)
class RunRecord:
    """One run as stored: status, params, per-node state, outcome, times."""

    run_id: str
    workflow_id: str
    document_version: str | None
    status: str
    params: dict[str, Any]
    result: Any
    error: dict[str, Any] | None
    nodes: dict[str, NodeState]
    waiting: dict[str, dict[str, Any]]
    event_count: int
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    redrive_of: str | None = None
    #: the principal who started the run (runs from before ownership: the admin)
    owner: str = "admin"
    #: the W3C traceparent of the span the run was started from (its run span links to it)
    trace_link: str | None = None
    #: what started the run when it started itself: ``{kind, name, time}`` (docs/triggers.md)
    trigger: dict[str, Any] | None = None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any], nodes: Mapping[str, Any] | None = None) -> RunRecord:
        """From a ``runs`` row and its ``run_nodes`` states (in their order)."""
        return cls(
            run_id=row["run_id"],
            workflow_id=row["workflow_id"],
            document_version=row["document_version"],
            status=row["status"],
            params=dict(row["params"] or {}),
            result=row["result"],
            error=row["error"],
            nodes={n: node_from_row(state) for n, state in (nodes or {}).items()},
            waiting=dict(row["waiting"] or {}),
            event_count=int(row["event_count"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            redrive_of=row.get("redrive_of"),
            owner=row.get("owner") or "admin",
            trace_link=row.get("trace_link"),
            trigger=_trigger_of(row),
        )

    @property
    def terminal(self) -> bool:
        """Whether the run has ended."""
        return self.status in TERMINAL

    @property
    def duration_ms(self) -> float | None:
        """From start (or creation) to the end; None while the run is active."""
        return _millis(self.started_at or self.created_at, self.finished_at)

    def waiting_prompt(self) -> dict[str, Any] | None:
        """The yield the run waits on: ``node_id``, ``message``, ``expects`` (None if none)."""
        if self.status != "waiting_input" or not self.waiting:
            return None
        node_id, prompt = next(iter(self.waiting.items()))
        return {"node_id": node_id, **prompt}

    def summary(self) -> dict[str, Any]:
        """The list form: ids, status, times, duration, and why it failed (in words)."""
        return {
            "run_id": self.run_id,
            "workflow_id": self.workflow_id,
            "status": self.status,
            "created_at": iso(self.created_at),
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
            "duration_ms": self.duration_ms,
            "error": error_summary(self.error),
            "redrive_of": self.redrive_of,
            "owner": self.owner,
            "trigger": self.trigger,
        }

    def shown_nodes(self) -> dict[str, NodeState]:
        """The nodes as shown: with their durations, and ``not_run`` for a node never reached."""
        ended = self.terminal
        return {
            node_id: replace(
                node,
                status=_shown_status(node.status, ended),
                duration_ms=_millis(node.started_at, node.ended_at),
            )
            for node_id, node in self.nodes.items()
        }

    def view(self) -> dict[str, Any]:
        """The full view: params, per-node state with timings, result, error, waiting."""
        nodes = self.shown_nodes()
        return {
            **self.summary(),
            "document_version": self.document_version,
            "params": self.params,
            "nodes": nodes,
            "result": self.result,
            "error": self.error,
            "waiting": self.waiting_prompt(),
            "updated_at": iso(self.updated_at),
            "event_count": self.event_count,
        }


def _trigger_of(row: Mapping[Any, Any]) -> dict[str, Any] | None:
    kind = row.get("trigger_kind")
    if not kind:
        return None
    return {"kind": kind, "name": row.get("trigger_name"), "time": iso(row.get("trigger_time"))}


@dataclass(frozen=True)
class StoredEvent:
    """An event just stored (never a replayed duplicate), with the run as it is after it.

    What the store's observers receive (:meth:`RunStore.observe`): telemetry counts and traces
    from these, so a run replayed after a restart is not counted twice.
    """

    event: RunEvent
    run: RunRecord
    previous_status: str
    """``run.nodes`` holds the one node the event touched (none for a run-level event)."""

    @property
    def typed(self) -> ev.Event:
        """The stored event as its class."""
        return self.event.event

    @property
    def ended_run(self) -> bool:
        """Whether this event ended the run (a terminal event after an active status)."""
        return self.event.terminal and self.previous_status in ACTIVE and self.run.terminal
