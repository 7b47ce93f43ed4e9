"""Durable fan-outs of repeatable steps, run side by side inside the parent's workflow.

A child workflow per item costs a DBOS workflow row, its status updates, its step and its
result: about 8 ms of CPU each on SQLite, so a thousand items took seconds whatever the
concurrency. When every child of a ``foreach`` or ``parallel`` is one repeatable step (a
``call``: its attempts share one idempotency key, so running it again from its start is as
good as replaying it), the durable runner instead runs the whole fan-out as **one DBOS step**:

- inside it the children run as tasks, at most ``concurrency`` at once, started in list
  order; their steps run directly (:class:`ItemSteps`), not as DBOS operations, so no
  interleaving of theirs can reach the journal and replay stays deterministic;
- each child that ends is written to the item journal (``run_items``, group commits) before
  its slot is given to the next one;
- the step's recorded result is every child's outcome, so a replay after the fan-out reads
  one row; a run recovered in the middle runs the step again, which takes the outcomes the
  item journal has and starts only the other children. A child in flight at the crash runs
  again, with the same idempotency key, like a step in flight.

Stopping works as it does for child workflows: the first failure (fail-fast) or a cancel
request of the run stops the children running (their tasks are cancelled; they end with what
they registered) and starts no more. A cancellation is part of the step's recorded result;
the run's timeout is not recorded (it raises through the step, as it does through any step).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from loguru import logger

from dynamic_tools.engine.children import ChildResult, ChildSpec
from dynamic_tools.engine.journal import from_json, to_json
from dynamic_tools.engine.local import RUN_CANCELLED, SIBLING_FAILED
from dynamic_tools.engine.ports import (
    ChildCancelled,
    ChildFailed,
    ChildFn,
    ChildOutcome,
    GatherCancelled,
)

T = TypeVar("T")

NOT_STARTED = "cancelled before it started"


class ItemJournal(Protocol):
    """Where the outcomes of a fan-out's finished children wait for the fan-out's own end."""

    async def finished(self, run_id: str, fan_out: str) -> dict[int, dict[str, Any]]:
        """The outcomes stored for ``fan_out`` of ``run_id`` (``to_json`` of a ChildOutcome)."""
        ...

    async def record(self, run_id: str, fan_out: str, item: int, outcome: dict[str, Any]) -> None:
        """Store one child's outcome; return once it is stored."""
        ...

    async def forget(self, run_id: str, fan_out: str) -> None:
        """Drop the fan-out's outcomes (its own outcome is journaled)."""
        ...


class NoItemJournal:
    """No item journal: a run recovered in the middle of a fan-out runs every child again.

    For a launcher embedded without a run store (tests of the launcher itself).
    """

    async def finished(self, run_id: str, fan_out: str) -> dict[int, dict[str, Any]]:
        """Nothing is ever stored."""
        return {}

    async def record(self, run_id: str, fan_out: str, item: int, outcome: dict[str, Any]) -> None:
        """Keep nothing."""
        return None

    async def forget(self, run_id: str, fan_out: str) -> None:
        """Nothing to drop."""
        return None


class ItemSteps:
    """The step runner of one child run in place: its steps are plain calls.

    The child is journaled as a whole when it ends, so nothing inside it is an operation of
    the run's workflow. Only a repeatable step runs this way: it never waits for input and
    starts no children.
    """

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn`` now."""
        return await fn()

    async def sleep(self, name: str, seconds: float) -> None:
        """Wait before a retry."""
        await asyncio.sleep(seconds)

    async def wait_for_input(self, name: str, timeout_s: float | None) -> dict[str, Any] | None:
        """Never: a repeatable step has no yield."""
        raise RuntimeError(f"'{name}' waits for input inside a fan-out run in place")

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
        """Never: a repeatable step starts no children."""
        raise RuntimeError(f"'{name}' starts children inside a fan-out run in place")


class FanOut:
    """One run of a repeatable fan-out's step (see the module docstring)."""

    def __init__(
        self,
        *,
        run_id: str,
        name: str,
        children: list[ChildSpec],
        run_child: ChildFn,
        concurrency: int | None,
        fail_fast: bool,
        journal: ItemJournal,
        interrupted: asyncio.Event,
    ) -> None:
        self.run_id = run_id
        self.name = name
        self.children = children
        self.run_child = run_child
        self.limit = max(1, concurrency or len(children))
        self.fail_fast = fail_fast
        self.journal = journal
        self.interrupted = interrupted
        self.outcomes: list[ChildOutcome | None] = [None] * len(children)
        self.stop_reason: str | None = None

    async def run(self) -> dict[str, Any]:
        """Every child's outcome (JSON) and whether the run's cancellation stopped them.

        Raises :class:`GatherCancelled` when cancelled itself (the run's timeout), once the
        children it started have ended.
        """
        stored = await self.journal.finished(self.run_id, self.name)
        for index, data in stored.items():
            if 0 <= index < len(self.children):
                self.outcomes[index] = from_json(ChildOutcome, data)
        if self.fail_fast and any(self._failed(o) for o in self.outcomes):
            self.stop_reason = SIBLING_FAILED
        if self.interrupted.is_set():
            self.stop_reason = RUN_CANCELLED
        waiting = [i for i, o in enumerate(self.outcomes) if o is None]
        running: dict[asyncio.Task[None], int] = {}
        stop = asyncio.ensure_future(self.interrupted.wait())
        watched: set[asyncio.Future[Any]] = {stop} if self.stop_reason is None else set()
        try:
            while True:
                while waiting and len(running) < self.limit and self.stop_reason is None:
                    index = waiting.pop(0)
                    running[asyncio.ensure_future(self._one(index))] = index
                if not running:
                    break
                done, _ = await asyncio.wait(
                    {*running, *watched}, return_when=asyncio.FIRST_COMPLETED
                )
                for task in [t for t in running if t in done]:
                    index = running.pop(task)
                    if self.fail_fast and self._failed(self.outcomes[index]):
                        self._stop(running, SIBLING_FAILED)
                if stop in done and watched:
                    watched = set()
                    self.stop_reason = RUN_CANCELLED  # over a sibling's failure: delivered
                    self._stop(running, RUN_CANCELLED)
        except asyncio.CancelledError:
            for task in running:
                task.cancel()
            if running:
                await asyncio.wait(running.keys())
            if self.stop_reason is None:
                self.stop_reason = RUN_CANCELLED
            raise GatherCancelled(self._final()) from None
        finally:
            stop.cancel()
        return {
            "outcomes": to_json(self._final()),
            "cancelled": self.stop_reason == RUN_CANCELLED,
        }

    @staticmethod
    def _failed(outcome: ChildOutcome | None) -> bool:
        return outcome is not None and not outcome.ok and not outcome.cancelled

    def _stop(self, running: dict[asyncio.Task[None], int], reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        for task in running:
            task.cancel()

    def _final(self) -> list[ChildOutcome]:
        return [o or ChildOutcome(False, error=NOT_STARTED, cancelled=True) for o in self.outcomes]

    async def _one(self, index: int) -> None:
        """Run child ``index``; store its outcome unless it was stopped."""
        try:
            result: ChildResult = await self.run_child(self.children[index], ItemSteps())
            outcome = ChildOutcome(True, value=result)
        except ChildCancelled as exc:
            self.outcomes[index] = self._stopped(exc.payload)
            return
        except asyncio.CancelledError:
            self.outcomes[index] = self._stopped(None)
            return
        except ChildFailed as exc:
            outcome = ChildOutcome(False, value=exc.payload, error=exc.message)
        except Exception as exc:  # the child crashed outside the interpreter's handling
            outcome = ChildOutcome(False, error=str(exc) or type(exc).__name__)
        self.outcomes[index] = outcome
        try:
            await self.journal.record(self.run_id, self.name, index, to_json(outcome))
        except asyncio.CancelledError:  # stopped while storing: it ended all the same
            pass
        except Exception as exc:  # not stored: a recovery in the middle runs it again
            logger.warning("item {} of {} not journaled: {}", index, self.name, exc)

    def _stopped(self, payload: ChildResult | None) -> ChildOutcome:
        reason = self.stop_reason or RUN_CANCELLED
        return ChildOutcome(False, value=payload, error=reason, cancelled=True)


__all__ = ["NOT_STARTED", "FanOut", "ItemJournal", "ItemSteps", "NoItemJournal"]
