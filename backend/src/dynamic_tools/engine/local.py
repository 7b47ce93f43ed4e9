"""In-memory ports: non-durable steps, a list of events, and mock tools for dry runs.

Used by tests and by dry runs (``mocks`` per tool, no I/O at all). The durable runtime
replaces :class:`LocalSteps` with DBOS steps; the behaviour the interpreter sees is the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from dynamic_tools.engine.children import ChildResult, ChildSpec
from dynamic_tools.engine.events import EVENT_TYPES, Event
from dynamic_tools.engine.ports import (
    ChildCancelled,
    ChildFailed,
    ChildFn,
    ChildOutcome,
    GatherCancelled,
    ToolCallFailed,
    ToolResult,
)

T = TypeVar("T")

SIBLING_FAILED = "cancelled: another child failed"
RUN_CANCELLED = "cancelled: the run was cancelled"


class LocalSteps:
    """Steps run directly; names are recorded so tests can check the order is deterministic."""

    def __init__(self, *, real_sleep: bool = False) -> None:
        self.names: list[str] = []
        self.sleeps: list[tuple[str, float]] = []
        self.real_sleep = real_sleep
        self._answers: dict[str, asyncio.Future[dict[str, Any] | None]] = {}

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn`` now."""
        if name in self.names:
            raise RuntimeError(f"step name '{name}' issued twice")
        self.names.append(name)
        return await fn()

    async def sleep(self, name: str, seconds: float) -> None:
        """Record the delay; sleep only when ``real_sleep``."""
        self.sleeps.append((name, seconds))
        if self.real_sleep:
            await asyncio.sleep(seconds)

    def _future(self, name: str) -> asyncio.Future[dict[str, Any] | None]:
        if name not in self._answers:
            self._answers[name] = asyncio.get_running_loop().create_future()
        return self._answers[name]

    async def wait_for_input(self, name: str, timeout_s: float | None) -> dict[str, Any] | None:
        """Wait until :meth:`answer` is called for ``name``."""
        future = self._future(name)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except TimeoutError:
            return None

    def waiting(self) -> list[str]:
        """Names of yields waiting for an answer."""
        return [n for n, f in self._answers.items() if not f.done()]

    def answer(self, name: str, values: dict[str, Any]) -> None:
        """Answer the yield ``name`` (it may not be waiting yet)."""
        future = self._future(name)
        if not future.done():
            future.set_result(values)

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
        """Run children as tasks, at most ``concurrency`` at once (``repeatable`` changes nothing).

        Cancelled itself (the run is cancelled or times out), it cancels the children, waits
        for them to end and raises :class:`GatherCancelled` with their outcomes.
        """
        limit = asyncio.Semaphore(concurrency or len(children) or 1)
        outcomes: list[ChildOutcome | None] = [None] * len(children)
        failed = asyncio.Event()

        def stopped(payload: ChildResult | None = None) -> ChildOutcome:
            reason = SIBLING_FAILED if failed.is_set() else RUN_CANCELLED
            return ChildOutcome(False, value=payload, error=reason, cancelled=True)

        async def one(index: int, spec: ChildSpec) -> None:
            try:
                async with limit:
                    if fail_fast and failed.is_set():
                        outcomes[index] = stopped()
                        return
                    outcomes[index] = ChildOutcome(True, value=await run_child(spec))
            except ChildCancelled as exc:
                outcomes[index] = stopped(exc.payload)
            except asyncio.CancelledError:
                outcomes[index] = stopped()
            except ChildFailed as exc:
                outcomes[index] = ChildOutcome(False, value=exc.payload, error=exc.message)
                failed.set()
            except Exception as exc:  # a child crashed outside the interpreter's handling
                outcomes[index] = ChildOutcome(False, error=str(exc) or type(exc).__name__)
                failed.set()

        tasks = [asyncio.create_task(one(i, spec)) for i, spec in enumerate(children)]
        waiter = asyncio.create_task(failed.wait())
        try:
            if fail_fast:
                pending: set[asyncio.Task[Any]] = set(tasks)
                while pending and not failed.is_set():
                    _, pending = await asyncio.wait(
                        pending | {waiter}, return_when=asyncio.FIRST_COMPLETED
                    )
                    pending.discard(waiter)
                for task in pending:
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks)  # each child ends by itself, keeping what it registered
            raise GatherCancelled([o or stopped() for o in outcomes]) from None
        finally:
            waiter.cancel()
        return [o or ChildOutcome(False, error="did not run") for o in outcomes]


class EventList:
    """Keeps every event in order: ``typed`` as emitted, ``events`` as stored (dicts)."""

    def __init__(self) -> None:
        self.typed: list[Event] = []
        self.events: list[dict[str, Any]] = []

    async def emit(self, event: Event) -> None:
        """Append ``event``."""
        self.typed.append(event)
        self.events.append(event.to_dict())

    def of(self, kind: type[Event] | str) -> list[dict[str, Any]]:
        """Events of one class (or of the class whose type name is ``kind``), as dicts."""
        cls = EVENT_TYPES[kind] if isinstance(kind, str) else kind
        return [e.to_dict() for e in self.typed if isinstance(e, cls)]


Mock = ToolResult | Exception | Callable[[Mapping[str, Any]], ToolResult] | Any


class Responses(list[Any]):
    """Mocks used one per call, in order (the last one repeats)."""


class MockTools:
    """A dry-run tool runner: answers from ``mocks`` and performs no I/O.

    A mock is a :class:`ToolResult`, a plain value (a 200 answer with that body), an
    exception to raise (e.g. :class:`ToolCallFailed`), a callable of the arguments, or
    :class:`Responses` of those used one per call (the last one repeats). A plain list is a
    body.
    """

    def __init__(self, mocks: Mapping[str, Mock]) -> None:
        self.mocks = dict(mocks)
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    def knows(self, tool: str) -> bool:
        """Whether a mock exists for ``tool``."""
        return tool in self.mocks

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        """Answer from the mock of ``tool``."""
        self.calls.append((tool, dict(args), idempotency_key))
        if tool not in self.mocks:
            raise ToolCallFailed(f"no mock response for tool '{tool}'", kind="refused")
        mock = self.mocks[tool]
        if isinstance(mock, Responses):
            count = sum(1 for c in self.calls if c[0] == tool)
            mock = mock[min(count, len(mock)) - 1]
        if isinstance(mock, Exception):
            raise mock
        if callable(mock) and not isinstance(mock, ToolResult):
            mock = mock(args)
        if isinstance(mock, ToolResult):
            return mock
        return ToolResult(200, mock)


__all__ = [
    "RUN_CANCELLED",
    "SIBLING_FAILED",
    "EventList",
    "LocalSteps",
    "Mock",
    "MockTools",
    "Responses",
    "T",
]
