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

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.journal import to_json
from dynamic_tools.engine.nodes.steps import STEP_KIND_NAMES
from dynamic_tools.engine.state import RunOutcome
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


NEW_NODE: dict[str, Any] = {"status": "pending", "attempts": 0}
"""The state of a node no event has touched yet."""


def touched_node(event: ev.Event) -> str | None:
    """The node whose state ``event`` changes (a compensation changes its target's), if any."""
    match event:
        case ev.NodeEvent(node_id=node_id) if node_id:
            return str(node_id)
        case ev.Compensated():
            return event.target
    return None


def apply_event(
    row: Mapping[str, Any], event: ev.Event, at: datetime, node: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """What ``event`` changes: the run's columns, and the state of the node it touches.

    ``row`` is the run's current row; ``node`` the current state of :func:`touched_node`
    (None when that node has none yet). Only that one node is read and written, so applying
    an event costs the same in a run of ten nodes and in one of a thousand.
    """
    status = str(row["status"])
    waiting: dict[str, Any] = dict(row.get("waiting") or {})
    changes: dict[str, Any] = {}
    state: dict[str, Any] | None = None
    match event:
        case ev.RunStarted() if status in ACTIVE:
            changes.update(status="running", started_at=row.get("started_at") or at)
        case ev.NodeEvent(node_id=node_id) if node_id:
            state = dict(node or NEW_NODE)
            _apply_node_event(state, event, at)
            if isinstance(event, ev.WaitingInput):
                waiting[node_id] = state["detail"]
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
            state = dict(node or NEW_NODE)
            detail = dict(state.get("detail") or {})
            detail["compensations"] = [*detail.get("compensations", []), step]
            state["detail"] = detail
        case ev.RunEnded() if status in ACTIVE:
            changes.update(
                status=event.STATUS, result=event.result, error=event.error, finished_at=at
            )
            waiting = {}
    changes["waiting"] = waiting or None
    return changes, state


def _apply_node_event(node: dict[str, Any], event: ev.NodeEvent, at: datetime) -> None:
    """What one node event changes in the node's view."""
    match event:
        case ev.NodeStarted():
            node.update(
                status="running", kind=event.kind, started_at=iso(at), ended_at=None, error=None
            )
            if event.tool:
                node["tool"] = event.tool
            if event.kind in STEP_KIND_NAMES:
                node["attempts"] = max(int(node.get("attempts") or 0), 1)
        case ev.NodeSucceeded():
            node.update(
                status="succeeded", input=event.input, output=event.output, ended_at=iso(at)
            )
            if event.reused_from:  # a redrive took it from the earlier run
                node.setdefault("detail", {})["reused_from"] = event.reused_from
        case ev.NodeFailed():
            node.update(status="failed", input=event.input, error=event.error, ended_at=iso(at))
            if event.detail is not None:  # a call's tool, status and body
                node.setdefault("detail", {}).update(event.detail)
            if event.fallback:
                node.setdefault("detail", {})["fallback"] = event.fallback
        case ev.NodeSkipped():
            node.update(status="skipped", error=event.reason)
        case ev.NodeNotRun():
            node.update(status="not_run", error=event.reason)
        case ev.NodeInput():
            node["input"] = event.input
            if node.get("status") == "pending":  # an item or a branch step: it has started
                node.update(status="running", started_at=node.get("started_at") or iso(at))
        case ev.AttemptFailed() | ev.RetryScheduled():
            node["attempts"] = max(int(node.get("attempts") or 0), event.attempt)
            detail = node.setdefault("detail", {})
            if isinstance(event, ev.AttemptFailed):
                detail.update(last_error=event.error, status_code=event.status_code)
            else:
                detail.update(
                    next_attempt=event.attempt,
                    next_attempt_at=event.next_attempt_at,
                    delay_s=event.delay_s,
                )
            detail["max_attempts"] = event.max_attempts
        case ev.WaitingInput():
            node.update(
                status="waiting_input",
                detail={"message": event.message, "expects": event.expects or {}},
            )
        case ev.Resumed():
            node["status"] = "running"
            node.setdefault("detail", {})["answer"] = event.values


def merge_outcome(nodes: dict[str, Any], outcome: RunOutcome) -> dict[str, Any]:
    """Node views completed with a finished run's final states (inputs, foreach items)."""
    merged = dict(nodes)
    for node_id, state in outcome.nodes.items():
        current = dict(merged.get(node_id) or {})
        final: dict[str, Any] = to_json(state)
        detail = {**(current.get("detail") or {}), **(final.pop("detail") or {})}
        current.update({k: v for k, v in final.items() if v is not None or k not in current})
        merged[node_id] = {**current, "detail": detail}
    return merged


def _shown_status(status: str, run_ended: bool) -> str:
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
    done = sum(1 for s in steps.values() if s.get("status") in DONE_STEP)
    return StepProgress(done=done, total=len(steps), current=_current(run, steps))


def _current(run: RunRecord, steps: Mapping[str, Mapping[str, Any]]) -> str | None:
    prompt = run.waiting_prompt()
    if prompt:
        return str(prompt["node_id"])
    running = [n for n, s in steps.items() if s.get("status") in ("running", "waiting_input")]
    if running:
        return max(running, key=lambda n: str(steps[n].get("started_at") or ""))
    failed = [n for n, s in steps.items() if s.get("status") == "failed"]
    if failed:
        return failed[0]
    ended = [n for n, s in steps.items() if s.get("ended_at")]
    if run.terminal and ended:
        return max(ended, key=lambda n: str(steps[n].get("ended_at")))
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
class RunRecord:
    """One run as stored: status, params, per-node state, outcome, times."""

    run_id: str
    workflow_id: str
    document_version: str | None
    status: str
    params: dict[str, Any]
    result: Any
    error: dict[str, Any] | None
    nodes: dict[str, dict[str, Any]]
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

    @classmethod
    def from_row(
        cls, row: Mapping[Any, Any], nodes: Mapping[str, dict[str, Any]] | None = None
    ) -> RunRecord:
        """From a ``runs`` row and its ``run_nodes`` states (in their order)."""
        return cls(
            run_id=row["run_id"],
            workflow_id=row["workflow_id"],
            document_version=row["document_version"],
            status=row["status"],
            params=dict(row["params"] or {}),
            result=row["result"],
            error=row["error"],
            nodes=dict(nodes or {}),
            waiting=dict(row["waiting"] or {}),
            event_count=int(row["event_count"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            redrive_of=row.get("redrive_of"),
            owner=row.get("owner") or "admin",
            trace_link=row.get("trace_link"),
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
        }

    def to_dict(self) -> dict[str, Any]:
        """The full view: params, per-node state with timings, result, error, waiting."""
        ended = self.terminal
        nodes = {
            node_id: {
                "status": _shown_status(node.get("status", "pending"), ended),
                "kind": node.get("kind"),
                "input": node.get("input"),
                "output": node.get("output"),
                "error": node.get("error"),
                "attempts": node.get("attempts", 0),
                "started_at": node.get("started_at"),
                "ended_at": node.get("ended_at"),
                "duration_ms": _millis(node.get("started_at"), node.get("ended_at")),
                "detail": node.get("detail") or {},
            }
            for node_id, node in self.nodes.items()
        }
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
