"""The engine's ports: the only ways the pure core touches the world.

Adapters implement them: the DBOS runtime (durable steps, child workflows, recv/send for
yields), the HTTP tool runner, the event store. In-memory implementations for tests and dry
runs live in ``engine/local.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from dynamic_tools.engine.children import ChildResult, ChildSpec
from dynamic_tools.engine.errors import EngineError
from dynamic_tools.engine.events import Event

T = TypeVar("T")


@dataclass(frozen=True)
class ToolResult:
    """What a tool call answered."""

    status_code: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """A 2xx or 3xx answer."""
        return self.status_code < 400


class ToolCallFailed(Exception):
    """A tool call could not be made or got no answer (transport failure, timeout, refusal).

    ``kind`` is ``transport``, ``timeout`` or ``refused`` (never retried).
    """

    def __init__(self, message: str, *, kind: str = "transport") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


class ToolRunner(Protocol):
    """Calls tools by name (registered tools and the built-in ``rest_call``)."""

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        """Call ``tool``; raise :class:`ToolCallFailed` when no answer was received."""
        ...

    def knows(self, tool: str) -> bool:
        """Whether ``tool`` can be called."""
        ...


@dataclass(frozen=True)
class ChildOutcome:
    """How one child (a parallel branch or a foreach item) ended.

    ``value`` is what the child returned; for a failed or cancelled child it is what the
    child had registered by then (its compensations and node states), when it got that far.
    ``cancelled`` says the child was stopped (the run was cancelled or timed out, or a
    sibling failed) rather than failing by itself. A durable runner journals it
    (:func:`~dynamic_tools.engine.journal.to_json`).
    """

    ok: bool
    value: ChildResult | None = None
    error: str | None = None
    cancelled: bool = False


class ChildFailed(EngineError, Exception):
    """A child failed; ``payload`` is what it had registered (compensations, node states)."""

    def __init__(self, message: str, payload: ChildResult, *, node_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.payload = payload
        self.node_id = node_id


class ChildCancelled(EngineError, asyncio.CancelledError):
    """A child was cancelled; ``payload`` is what it had registered (see :class:`ChildFailed`).

    A subclass of :class:`asyncio.CancelledError`, so everything that handles a cancellation
    still does.
    """

    def __init__(self, payload: ChildResult, *, node_id: str | None = None) -> None:
        super().__init__("the child was cancelled")
        self.message = "the child was cancelled"
        self.payload = payload
        self.node_id = node_id


class GatherCancelled(EngineError, asyncio.CancelledError):
    """A :meth:`StepRunner.gather` was cancelled (the run was cancelled or timed out).

    Raised only once every child it started has ended; ``outcomes`` says how each did, so the
    interpreter keeps the compensations registered inside the children (saga).
    """

    def __init__(self, outcomes: list[ChildOutcome]) -> None:
        super().__init__("the children were cancelled")
        self.message = "the children were cancelled"
        self.outcomes = outcomes


class ChildFn(Protocol):
    """Runs one child in the interpreter (``Interpreter.run_child``).

    ``steps`` replaces the run's step runner for this child: a durable runner that runs
    repeatable children side by side in the parent's workflow gives each one that does not
    journal its steps one by one.
    """

    def __call__(self, spec: ChildSpec, steps: StepRunner | None = None) -> Awaitable[ChildResult]:
        """Run ``spec``; its result, or :class:`ChildFailed` / :class:`ChildCancelled`."""
        ...


class StepRunner(Protocol):
    """Makes the interpreter's side effects durable (or not, in memory).

    Rules an implementation must keep (docs/durability.md): steps are issued in a deterministic
    order with distinct names; a completed step returns its recorded result on replay.
    """

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn`` once as the step ``name`` and record its result."""
        ...

    async def sleep(self, name: str, seconds: float) -> None:
        """Wait (durably) before a retry."""
        ...

    async def wait_for_input(self, name: str, timeout_s: float | None) -> dict[str, Any] | None:
        """Wait for the answer to yield ``name``; None on timeout."""
        ...

    async def gather(
        self,
        name: str,
        children: list[ChildSpec],
        *,
        run_child: ChildFn,
        concurrency: int | None,
        fail_fast: bool,
        repeatable: bool = False,
    ) -> list[ChildOutcome]:
        """Run children (JSON specs) at once, outcomes in the order given.

        A durable implementation runs each child as a child workflow whose id is the spec's
        ``id`` and calls ``run_child(spec)`` inside it, or, when ``repeatable`` says every
        child is one step that may run again from its start, may run them side by side in
        its own workflow and journal how each ended. With ``fail_fast`` the first failure
        cancels the children still running (their outcomes say so). ``run_child`` raises
        :class:`ChildFailed` or :class:`ChildCancelled` carrying what the child registered;
        the outcome keeps it as its ``value``.

        When the gather itself is cancelled (the run is cancelled or times out), the children
        still running are cancelled too, and once they have all ended the gather raises
        :class:`GatherCancelled` with every outcome (nothing a child registered is lost).
        """
        ...


class EventSink(Protocol):
    """Receives run events (the classes of :mod:`dynamic_tools.engine.events`)."""

    async def emit(self, event: Event) -> None:
        """Record or forward one event."""
        ...


__all__ = [
    "ChildCancelled",
    "ChildFailed",
    "ChildFn",
    "ChildOutcome",
    "EventSink",
    "GatherCancelled",
    "StepRunner",
    "T",
    "ToolCallFailed",
    "ToolResult",
    "ToolRunner",
]
