"""What a run records: per-node state and the run's outcome (JSON-ready, for views and audit)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from dynamic_tools.engine.errors import EngineError
from dynamic_tools.engine.journal import NOT_JOURNALED, OMIT_NONE

NodeStatus = Literal[
    "pending",
    "running",
    "succeeded",
    "failed",
    "skipped",
    "waiting_input",
    "cancelled",
    "not_run",
]
RunStatus = Literal["pending", "running", "waiting_input", "succeeded", "failed", "cancelled"]
SETTLED: frozenset[str] = frozenset({"succeeded", "failed", "skipped", "cancelled"})
FAILURE_NAME = "error"
"""``$error``: the failure that activated a fallback, readable from the fallback target on."""


@dataclass
class NodeState:
    """One node of one run: status, input, output, error, attempts and times.

    The one record of a node from the engine to the UI: the interpreter keeps one per node,
    the run view applies the run's events to the stored one, and a run's REST answer holds
    it as it is. ``kind`` and ``tool`` come with the node's start event; ``duration_ms`` is
    worked out from the times when the node is shown, never stored.
    """

    status: NodeStatus = "pending"
    input: Any = None
    output: Any = None
    error: str | None = None
    attempts: int = 0
    started_at: str | None = None
    ended_at: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    kind: str | None = field(default=None, metadata=OMIT_NONE)
    tool: str | None = field(default=None, metadata=OMIT_NONE)
    duration_ms: float | None = field(default=None, metadata=NOT_JOURNALED)


@dataclass
class RunOutcome:
    """How a run ended: a durable run's result (:func:`~dynamic_tools.engine.journal.to_json`)."""

    status: RunStatus
    result: Any = None
    error: dict[str, Any] | None = None
    nodes: dict[str, NodeState] = field(default_factory=dict)


class RunFailed(EngineError, Exception):
    """The run cannot go on: an error node, a call out of retries, a failed branch."""

    def __init__(
        self,
        message: str,
        *,
        node_id: str | None,
        context: dict[str, Any] | None = None,
        attempt: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.node_id = node_id
        self.context = context or {}
        self.attempt = attempt

    def to_dict(self) -> dict[str, Any]:
        """The run's ``error`` field."""
        return {"message": self.message, "node_id": self.node_id, **self.context}


class FallbackTriggered(EngineError, Exception):
    """A node failed and names a fallback: the run goes on at ``target``.

    ``failure`` describes the failure (``node_id``, ``call``, ``message``, ``kind``,
    ``status_code``, ``attempts``, ``body``); the fallback target reads it as ``$error``.
    """

    def __init__(self, message: str, target: str, failure: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.target = target
        self.failure = failure or {"message": message}
        self.node_id = self.failure.get("node_id")
        attempts = self.failure.get("attempts")
        self.attempt = attempts if isinstance(attempts, int) else None


__all__ = [
    "FAILURE_NAME",
    "SETTLED",
    "FallbackTriggered",
    "NodeState",
    "NodeStatus",
    "RunFailed",
    "RunOutcome",
    "RunStatus",
]
