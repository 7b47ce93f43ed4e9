"""Run events: the closed set of things a run reports, one class each.

The interpreter emits them through the :class:`~dynamic_tools.engine.ports.EventSink` port;
the run store keeps them (as :meth:`Event.to_dict`) and projects them onto the run's view; SSE
and the UI receive the same dictionaries. Reading a stored event back goes through
:func:`event_from_dict`, the one place that maps a ``type`` name to its class, so consumers
match on classes, never on strings.

Every event carries the envelope ``run_id``, ``seq`` (numbered per execution so a replay's
duplicates can be dropped; None for events written by the store itself) and ``at`` (ISO 8601).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from dynamic_tools.engine.journal import OMIT_NONE, from_json, to_json

__all__ = [
    "EVENT_TYPES",
    "TERMINAL_STATUS",
    "AttemptFailed",
    "Compensated",
    "Event",
    "NodeEvent",
    "NodeFailed",
    "NodeInput",
    "NodeNotRun",
    "NodeSkipped",
    "NodeStarted",
    "NodeSucceeded",
    "Resumed",
    "RetryScheduled",
    "RunCancelled",
    "RunCreated",
    "RunEnded",
    "RunFailed",
    "RunStarted",
    "RunSucceeded",
    "WaitingInput",
    "event_from_dict",
    "omitted_while_none",
    "run_ended",
]

_ENVELOPE = ("run_id", "seq", "type", "at")

E = TypeVar("E", bound="Event")


@dataclass(frozen=True, kw_only=True)
class Event:
    """What every event has: its run, its number within an execution and its time."""

    TYPE: ClassVar[str] = ""

    run_id: str = ""
    seq: int | None = dataclasses.field(default=None, metadata=OMIT_NONE)
    at: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The event as stored and streamed: ``type``, the envelope and the payload.

        Converted by the journal's pair (``engine/journal.py``): fields marked
        :data:`~dynamic_tools.engine.journal.OMIT_NONE` are left out while they are None.
        """
        return {"type": self.TYPE, **to_json(self)}

    def payload(self) -> dict[str, Any]:
        """The fields that are not the envelope (optional ones only when set)."""
        return {k: v for k, v in to_json(self).items() if k not in _ENVELOPE}

    def stamped(self: E, *, run_id: str, seq: int | None, at: str) -> E:
        """This event with its envelope filled in.

        A copy of the fields as they are (they were checked when the event was made), not
        ``dataclasses.replace``, which builds the event again through ``__init__``: every
        step of a run stamps two events.
        """
        copy = object.__new__(type(self))
        fields = copy.__dict__
        fields.update(self.__dict__)
        fields["run_id"], fields["seq"], fields["at"] = run_id, seq, at
        return copy

    @property
    def source(self) -> str:
        """What the event is about (its node or compensation step); '' for run-level events."""
        return ""


# --- the run ----------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class RunCreated(Event):
    """The store recorded a new run."""

    TYPE: ClassVar[str] = "run_created"
    workflow_id: str = ""


@dataclass(frozen=True, kw_only=True)
class RunStarted(Event):
    """An execution of the run began (again, after a restart)."""

    TYPE: ClassVar[str] = "run_started"
    workflow_id: str = ""


@dataclass(frozen=True, kw_only=True)
class RunEnded(Event):
    """The run ended; ``STATUS`` is the run's final status.

    ``by`` names who recorded an end the engine could not record itself (``store``,
    ``reconcile``); None when the engine did.
    """

    STATUS: ClassVar[str] = ""
    result: Any = None
    error: dict[str, Any] | None = None
    by: str | None = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True, kw_only=True)
class RunSucceeded(RunEnded):
    """The run produced its result."""

    TYPE: ClassVar[str] = "run_succeeded"
    STATUS: ClassVar[str] = "succeeded"


@dataclass(frozen=True, kw_only=True)
class RunFailed(RunEnded):
    """The run failed; ``error`` says where and why."""

    TYPE: ClassVar[str] = "run_failed"
    STATUS: ClassVar[str] = "failed"


@dataclass(frozen=True, kw_only=True)
class RunCancelled(RunEnded):
    """The run was cancelled (a workflow whose deadline passed fails instead)."""

    TYPE: ClassVar[str] = "run_cancelled"
    STATUS: ClassVar[str] = "cancelled"


# --- nodes ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class NodeEvent(Event):
    """An event about one node (``node_id`` is prefixed inside children: ``loop[2].step``)."""

    #: the node's status after this event, for the events that end a node
    ENDS_NODE: ClassVar[str | None] = None

    node_id: str = ""

    @property
    def source(self) -> str:
        """The node."""
        return self.node_id


@dataclass(frozen=True, kw_only=True)
class NodeStarted(NodeEvent):
    """A node began; ``tool`` is set for calls."""

    TYPE: ClassVar[str] = "node_started"
    kind: str = ""
    tool: str | None = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True, kw_only=True)
class NodeSkipped(NodeEvent):
    """A node did not run; ``reason`` says why."""

    TYPE: ClassVar[str] = "node_skipped"
    ENDS_NODE: ClassVar[str | None] = "skipped"
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class NodeNotRun(NodeEvent):
    """A node was never reached: the run ended (failed, cancelled, timed out) before it."""

    TYPE: ClassVar[str] = "node_not_run"
    ENDS_NODE: ClassVar[str | None] = "not_run"
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class NodeInput(NodeEvent):
    """A running node's input, as soon as it is known.

    A call's arguments (before its first attempt), a sub-workflow's args, a foreach's items.
    """

    TYPE: ClassVar[str] = "node_input"
    input: Any = None


@dataclass(frozen=True, kw_only=True)
class NodeSucceeded(NodeEvent):
    """A node ended with ``output`` (``reused_from``: taken from that earlier run, a redrive)."""

    TYPE: ClassVar[str] = "node_succeeded"
    ENDS_NODE: ClassVar[str | None] = "succeeded"
    output: Any = None
    input: Any = None
    reused_from: str | None = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True, kw_only=True)
class NodeFailed(NodeEvent):
    """A node failed.

    ``fallback`` names the node its ``on_error`` activates instead of failing the run;
    ``detail`` holds a failed call's tool, status code and body.
    """

    TYPE: ClassVar[str] = "node_failed"
    ENDS_NODE: ClassVar[str | None] = "failed"
    error: str = ""
    input: Any = None
    fallback: str | None = dataclasses.field(default=None, metadata=OMIT_NONE)
    detail: dict[str, Any] | None = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True, kw_only=True)
class AttemptFailed(NodeEvent):
    """One attempt of a call failed (it may be retried)."""

    TYPE: ClassVar[str] = "attempt_failed"
    tool: str = ""
    attempt: int = 1
    max_attempts: int = 1
    error: str = ""
    status_code: int | None = None


@dataclass(frozen=True, kw_only=True)
class RetryScheduled(NodeEvent):
    """A call will be tried again (``attempt`` is the next one) after ``delay_s``."""

    TYPE: ClassVar[str] = "retry_scheduled"
    tool: str = ""
    attempt: int = 2
    max_attempts: int = 2
    delay_s: float = 0.0
    next_attempt_at: str = ""


@dataclass(frozen=True, kw_only=True)
class WaitingInput(NodeEvent):
    """A yield waits for an answer matching ``expects``."""

    TYPE: ClassVar[str] = "waiting_input"
    message: str = ""
    expects: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Resumed(NodeEvent):
    """A yield got its (checked) answer."""

    TYPE: ClassVar[str] = "resumed"
    values: dict[str, Any] = dataclasses.field(default_factory=dict)


# --- the saga ---------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Compensated(Event):
    """A compensation call ran (``name`` is ``saga:<node>`` or ``<compensate node>:<step>``)."""

    TYPE: ClassVar[str] = "compensated"
    name: str = ""
    call: str = ""
    ok: bool = False
    status_code: int | None = dataclasses.field(default=None, metadata=OMIT_NONE)
    error: str | None = None

    @property
    def source(self) -> str:
        """The compensation step."""
        return self.name

    @property
    def target(self) -> str:
        """The node whose compensation this was."""
        if self.name.startswith("saga:"):
            return self.name[len("saga:") :]
        return self.name.rsplit(":", 1)[0]


EVENT_TYPES: dict[str, type[Event]] = {
    cls.TYPE: cls
    for cls in (
        RunCreated,
        RunStarted,
        RunSucceeded,
        RunFailed,
        RunCancelled,
        NodeStarted,
        NodeSkipped,
        NodeNotRun,
        NodeInput,
        NodeSucceeded,
        NodeFailed,
        AttemptFailed,
        RetryScheduled,
        WaitingInput,
        Resumed,
        Compensated,
    )
}

TERMINAL_STATUS: dict[str, type[RunEnded]] = {
    cls.STATUS: cls for cls in (RunSucceeded, RunFailed, RunCancelled)
}


def run_ended(status: str, **fields: Any) -> RunEnded:
    """The end event of a run ending as ``status``; ValueError for a status that is no end."""
    cls = TERMINAL_STATUS.get(status)
    if cls is None:
        raise ValueError(f"a run cannot end as '{status}'")
    return cls(**fields)


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """The typed event of a stored or streamed dictionary; ValueError for an unknown type.

    Fields the class does not know are dropped (an older or newer writer may add some); a
    ``seq`` that is not a number is dropped and an ``at`` that is not text made text. The
    rest is decoded by the journal's pair (a field of the wrong type: a ``JournalError``,
    which is a ValueError).
    """
    kind = data.get("type")
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown run event type {kind!r}")
    fields = dict(data)
    if not isinstance(fields.get("seq"), int) or isinstance(fields.get("seq"), bool):
        fields.pop("seq", None)
    if not isinstance(fields.get("at"), str):
        fields["at"] = str(fields.get("at") or "")
    return from_json(cls, fields)


def omitted_while_none(cls: type[Event]) -> frozenset[str]:
    """The fields of ``cls`` that :meth:`Event.to_dict` leaves out while they are None."""
    return frozenset(f.name for f in dataclasses.fields(cls) if f.metadata == OMIT_NONE)
