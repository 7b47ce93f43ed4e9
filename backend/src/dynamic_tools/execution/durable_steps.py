"""The interpreter's StepRunner on DBOS Transact, and cancellation of runs in flight.

DBOS replays a workflow by issuing its operations again in the same order: an operation
that has a recorded result returns it without running. So the sequence of operations a run
issues must depend only on recorded results, never on timing (docs/durability.md, rule 1):

- ``step`` is one DBOS step named as the interpreter names it (``call:<node>:<attempt>``);
- ``sleep`` is a step that records the wake-up time, then a plain wait until then;
- ``wait_for_input`` is ``recv`` on the yield's topic, with the yield's own timeout (rule 5);
- ``gather`` runs each child as a DBOS child workflow whose id is the spec's ``id``; they are
  started in list order, and :meth:`DBOS.asyncio_wait` records which ones finished, so the
  results are collected in the same order on replay. A fan-out whose children are each one
  repeatable step is instead one step whose result is every child's outcome
  (:mod:`~dynamic_tools.execution.fan_out`).

Why cancellation is not DBOS's own cancel: a cancelled DBOS workflow refuses every further
step, so the saga's compensations could not run. Instead a cancel request is recorded as the
workflow attribute ``cancel_requested`` (by :class:`~dynamic_tools.execution.durable_launcher.
DurableLauncher` or from another process by ``DurableRunClient``) and the executions of that
run in this process are told at once (:class:`LiveRuns`). An execution turns the request
into a *recorded* result at the first operation it can, so a replay takes the same path:

- a step in flight (or the next one) records :data:`CANCELLED` as its result; the tool call
  in flight is abandoned;
- a yield waiting for its answer receives :data:`CANCELLED` as a message on its own topic,
  sent from outside the workflow (so it adds no operation of its own);
- a retry delay ends early; the next step records :data:`CANCELLED`;
- a ``gather`` waits until its children, which see the same request, have ended; they end
  cancelled and hand back what they registered (their compensations) as their recorded
  result; the gather then raises :class:`~dynamic_tools.engine.ports.GatherCancelled` with
  every child's outcome.

The runner then raises :class:`asyncio.CancelledError` into the interpreter, which runs the
registered compensations, the children's included (as ordinary steps: the request is
delivered only once), and ends the run ``cancelled``.

The same mechanism stops single children without cancelling the run (each execution has its
own ``interrupted`` flag): the siblings of a failed branch (``on_partial_failure: abort``, a
foreach) and, when the workflow's timeout hits during a gather, its running children. They
end like cancelled children, so what they had booked is compensated with the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from dbos import DBOS, WorkflowHandleAsync
from loguru import logger

from dynamic_tools.engine.children import ChildSpec, child_result
from dynamic_tools.engine.events import Event
from dynamic_tools.engine.journal import from_json
from dynamic_tools.engine.local import SIBLING_FAILED
from dynamic_tools.engine.ports import ChildFn, ChildOutcome, EventSink, GatherCancelled
from dynamic_tools.execution.fan_out import FanOut, ItemJournal, NoItemJournal
from dynamic_tools.execution.local_wake import wake_local_waiter

T = TypeVar("T")

CANCEL_ATTRIBUTE = "cancel_requested"
"""The workflow attribute that records a cancel request on the run's root workflow."""

CANCEL_KEY = "__dynamic_tools_run_cancelled__"
CANCELLED: dict[str, Any] = {CANCEL_KEY: True}
"""The recorded result (of a step, or a yield's message) that says "the run was cancelled here"."""

NO_TIMEOUT_S = 100 * 365 * 86400.0
"""A yield without a timeout waits a century: DBOS's ``recv`` needs a number (60 s by default)."""

NOT_STARTED = "cancelled before it started"

SETTLE_POLL_S = 0.2
"""How often a replayed run polls the database for a child that another execution finishes."""

StartChild = Callable[[ChildSpec], Awaitable[WorkflowHandleAsync[Any]]]


def is_cancel_marker(value: Any) -> bool:
    """Whether a recorded result is the cancellation marker."""
    return isinstance(value, dict) and value.get(CANCEL_KEY) is True


def detached(coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """Run ``coro`` as a task outside any workflow context, so DBOS records nothing it does."""
    return asyncio.get_running_loop().create_task(coro, context=contextvars.Context())


@dataclass(eq=False)
class LiveExecution:
    """One execution, in this process, of a run's root workflow or of one of its children.

    ``delivered`` turns true once this execution raised the run's cancellation into the
    interpreter: later steps (the compensations) then run normally.
    """

    workflow_id: str
    run: LiveRun
    task: asyncio.Task[Any] | None
    waiting_topic: str | None = None
    delivered: bool = False
    interrupted: asyncio.Event = field(default_factory=asyncio.Event)
    work: set[asyncio.Task[Any]] = field(default_factory=set)
    """The work in flight that an interruption abandons (a step's call, a retry's delay)."""

    def must_interrupt(self) -> bool:
        """A cancel was requested (of the run, or of this child) and not yet delivered."""
        return self.interrupted.is_set() and not self.delivered


@dataclass(eq=False)
class LiveRun:
    """A run with executions in this process, and whether its cancellation was requested."""

    run_id: str
    cancel_requested: asyncio.Event = field(default_factory=asyncio.Event)
    executions: set[LiveExecution] = field(default_factory=set)


class LiveRuns:
    """The runs executing in this process: cancel requests reach their executions here.

    One instance per launcher. Everything runs on the event loop that launched DBOS, so no
    lock is needed.
    """

    def __init__(self) -> None:
        self._runs: dict[str, LiveRun] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self.shutting_down = False
        self.on_waiting: Callable[[str], Coroutine[Any, Any, None]] | None = None
        """Told (outside any workflow) when an execution of a run starts waiting for input."""

    def waiting(self, run_id: str) -> None:
        """An execution of ``run_id`` waits for input (the launcher frees its queue slot)."""
        if self.on_waiting is None:
            return
        task = detached(self.on_waiting(run_id))
        self._background.add(task)
        task.add_done_callback(self._sent)

    @contextlib.contextmanager
    def execution(self, run_id: str, workflow_id: str) -> Iterator[LiveExecution]:
        """Register the current task as an execution of ``run_id`` while the block runs."""
        run = self._runs.get(run_id)
        if run is None:
            run = self._runs[run_id] = LiveRun(run_id)
        execution = LiveExecution(workflow_id, run, asyncio.current_task())
        if run.cancel_requested.is_set():
            execution.interrupted.set()
        run.executions.add(execution)
        try:
            yield execution
        finally:
            run.executions.discard(execution)
            if not run.executions:
                self._runs.pop(run_id, None)

    def any_live(self) -> bool:
        """Whether any run has an execution in this process."""
        return bool(self._runs)

    def is_live(self, run_id: str) -> bool:
        """Whether ``run_id`` has an execution in this process."""
        return run_id in self._runs

    def unrequested(self) -> list[str]:
        """Live runs whose cancellation has not been requested (yet)."""
        return [r.run_id for r in self._runs.values() if not r.cancel_requested.is_set()]

    def uninterrupted(self) -> list[str]:
        """Workflow ids of the live executions that were not told to stop (yet)."""
        return [
            e.workflow_id
            for r in self._runs.values()
            for e in r.executions
            if not e.interrupted.is_set()
        ]

    def request_cancel(self, run_id: str) -> None:
        """Tell every execution of ``run_id`` here that the run is cancelled."""
        run = self._runs.get(run_id)
        if run is None or run.cancel_requested.is_set():
            return
        run.cancel_requested.set()
        for execution in run.executions:
            self._interrupt(execution)

    def interrupt(self, workflow_ids: list[str]) -> None:
        """Tell these child workflows, and the children they started, to stop.

        They stop as a cancelled run does (the step in flight is abandoned, a waiting yield
        gets the marker) and hand back what they registered; the run itself goes on.
        """
        prefixes = tuple(f"{w}/" for w in workflow_ids)
        wanted = set(workflow_ids)
        for run in self._runs.values():
            for execution in run.executions:
                if execution.workflow_id in wanted or execution.workflow_id.startswith(prefixes):
                    self._interrupt(execution)

    def _interrupt(self, execution: LiveExecution) -> None:
        if execution.interrupted.is_set():
            return
        execution.interrupted.set()
        for task in execution.work:
            task.cancel()
        if execution.waiting_topic is not None and not execution.delivered:
            self.send_marker(execution.workflow_id, execution.waiting_topic)

    def send_marker(self, workflow_id: str, topic: str) -> None:
        """Send :data:`CANCELLED` to a waiting yield, from outside any workflow."""

        async def send() -> None:
            await DBOS.send_async(workflow_id, CANCELLED, topic=topic)
            wake_local_waiter(workflow_id, topic)  # the yield waits here: now, not at a poll

        task = detached(send())
        self._background.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("background step of a live run failed: {}", task.exception())

    def tasks(self) -> list[asyncio.Task[Any]]:
        """The tasks of every live execution."""
        return [e.task for r in self._runs.values() for e in r.executions if e.task is not None]


class ShutdownAwareEvents:
    """Forwards events, except while the process shuts down.

    Shutting down cancels the executions' tasks; the interpreter takes that for a cancelled
    run and would report ``run_cancelled``. Those events are dropped: the run resumes after
    the restart, and its replay re-emits what came before (the sink drops duplicates by
    ``(run_id, seq)``).
    """

    def __init__(self, sink: EventSink, live: LiveRuns) -> None:
        self.sink = sink
        self.live = live

    async def emit(self, event: Event) -> None:
        """Forward ``event`` unless shutting down."""
        if not self.live.shutting_down:
            await self.sink.emit(event)


class DurableSteps:
    """A :class:`~dynamic_tools.engine.ports.StepRunner` whose operations are DBOS operations.

    Must be used inside a DBOS workflow; ``start_child(spec)`` starts the child workflow for
    one spec of :meth:`gather` (its id is the spec's ``id``).
    """

    def __init__(
        self,
        execution: LiveExecution,
        live: LiveRuns,
        start_child: StartChild,
        journal: ItemJournal | None = None,
    ) -> None:
        self.execution = execution
        self.live = live
        self.start_child = start_child
        self.journal: ItemJournal = journal or NoItemJournal()

    def _check(self) -> None:
        if self.live.shutting_down:  # never record anything while shutting down
            raise asyncio.CancelledError

    def _deliver(self) -> None:
        self.execution.delivered = True
        raise asyncio.CancelledError

    async def _unless_cancelled(self, work: Awaitable[T]) -> T | dict[str, Any]:
        """``work``'s result, or :data:`CANCELLED` when the run is cancelled first.

        ``work`` runs as a task of its own, which an interruption cancels
        (:meth:`LiveRuns._interrupt`): no second task waits for the interruption. Work that
        finished first keeps its result; a cancellation of this execution itself (shutdown,
        the run's timeout) goes on up.
        """
        task = asyncio.ensure_future(work)
        execution = self.execution
        if execution.delivered:
            return await task
        execution.work.add(task)
        if execution.interrupted.is_set():
            task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            ours = current is None or current.cancelling() == 0  # not this execution's own
            if ours and task.cancelled() and execution.interrupted.is_set():
                return CANCELLED
            raise
        finally:
            execution.work.discard(task)

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn`` once as the DBOS step ``name``; its result is recorded as JSON."""
        self._check()

        async def guarded() -> Any:
            if self.execution.must_interrupt():
                return CANCELLED
            return await self._unless_cancelled(fn())

        result = await DBOS.run_step_async({"name": name}, guarded)
        if is_cancel_marker(result) and not self.execution.delivered:
            self._deliver()
        return cast(T, result)

    async def sleep(self, name: str, seconds: float) -> None:
        """Record the wake-up time as the step ``name``, then wait until then.

        A cancel request ends the wait early; the next step records the cancellation.
        """
        self._check()

        async def wake_up_at() -> float:
            return time.time() + seconds

        until = float(await DBOS.run_step_async({"name": name}, wake_up_at))
        remaining = until - time.time()
        if remaining > 0:
            await self._unless_cancelled(asyncio.sleep(remaining))

    async def wait_for_input(self, name: str, timeout_s: float | None) -> dict[str, Any] | None:
        """``recv`` on the topic ``name``; None when the yield's own timeout passes."""
        self._check()
        execution = self.execution
        execution.waiting_topic = name
        self.live.waiting(execution.run.run_id)
        try:
            if execution.must_interrupt():
                self.live.send_marker(execution.workflow_id, name)
            value = await DBOS.recv_async(
                name, timeout_seconds=NO_TIMEOUT_S if timeout_s is None else timeout_s
            )
        finally:
            execution.waiting_topic = None
        if is_cancel_marker(value):
            if execution.delivered:  # a late duplicate: the cancellation is under way
                return None
            self._deliver()
        return cast("dict[str, Any] | None", value)

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
        """Run each child as a child workflow (id = the spec's ``id``); outcomes in list order.

        When ``repeatable``, the children run in this workflow instead, as one step
        (:mod:`~dynamic_tools.execution.fan_out`); what follows holds for both ways.

        At most ``concurrency`` run at once; a slot is refilled, in list order, as soon as a
        child ends. With ``fail_fast`` the first failure stops the children still running:
        they are interrupted as a cancelled run is (their step in flight is abandoned) and end
        with what they registered, which this gather waits for. A child that ends cancelled
        without being stopped here means the run was cancelled: no more children start, the
        running ones (told too) are waited for, and :class:`GatherCancelled` is raised with
        every outcome. The same happens when this gather is itself cancelled by the run's
        timeout (the running children are stopped first). Every decision depends only on
        recorded results, except the timeout's moment.
        """
        self._check()
        if repeatable:
            return await self._gather_in_place(name, children, run_child, concurrency, fail_fast)
        limit = max(1, concurrency or len(children))
        outcomes: list[ChildOutcome | None] = [None] * len(children)
        handles: dict[int, WorkflowHandleAsync[Any]] = {}
        running: dict[int, asyncio.Task[None]] = {}
        stopped: set[int] = set()  # children this gather told to stop (a sibling failed)
        next_index = 0
        run_cancelled = halted = False

        async def start_next() -> None:
            nonlocal next_index
            index, next_index = next_index, next_index + 1
            handle = await self.start_child(children[index])
            handles[index] = handle
            running[index] = detached(settled(handle))

        async def collect(index: int) -> None:
            del running[index]
            try:
                result = await handles[index].get_result()
            except Exception as exc:  # the child workflow itself crashed (a bug)
                result = {"ok": False, "error": f"the child workflow crashed: {exc}"}
            outcome = child_outcome(result)
            if outcome.cancelled and index in stopped:
                outcome = replace(outcome, error=SIBLING_FAILED)
            outcomes[index] = outcome

        try:
            while next_index < len(children) and len(running) < limit:
                await start_next()
            while running:
                order = sorted(running)
                waits: list[Awaitable[Any]] = [running[i] for i in order]
                done, _ = await DBOS.asyncio_wait(waits, return_when=asyncio.FIRST_COMPLETED)
                failed = False
                for index, wait in zip(order, waits, strict=True):
                    if wait not in done:
                        continue
                    await collect(index)
                    outcome = outcomes[index]
                    assert outcome is not None
                    if outcome.cancelled and index not in stopped:
                        run_cancelled = True
                    failed = failed or (not outcome.ok and not outcome.cancelled)
                if failed and fail_fast and not stopped and running:
                    stopped.update(running)
                    await self._stop_children(children, sorted(running))
                halted = halted or run_cancelled or (failed and fail_fast)
                if halted:
                    continue  # start nothing more; wait for the running ones to end
                while next_index < len(children) and len(running) < limit:
                    await start_next()
        except asyncio.CancelledError:
            if self.live.shutting_down or not running:
                raise
            # The run's timeout: stop the children, wait for them, keep what they registered.
            indices = sorted(running)
            await self._stop_children(children, indices)
            await asyncio.wait([running[i] for i in indices])
            for index in indices:
                await collect(index)
            raise GatherCancelled(self._final(outcomes)) from None
        finally:
            for task in running.values():
                task.cancel()
        if run_cancelled:
            self.execution.delivered = True  # the run's cancellation reached this execution
            raise GatherCancelled(self._final(outcomes))
        return self._final(outcomes)

    async def _gather_in_place(
        self,
        name: str,
        children: list[ChildSpec],
        run_child: ChildFn,
        concurrency: int | None,
        fail_fast: bool,
    ) -> list[ChildOutcome]:
        """The fan-out as one step whose result is every child's outcome (``fan_out.py``)."""
        run_id = self.execution.run.run_id
        stop = self.execution.interrupted if not self.execution.delivered else asyncio.Event()
        fan_out = FanOut(
            run_id=run_id,
            name=name,
            children=children,
            run_child=run_child,
            concurrency=concurrency,
            fail_fast=fail_fast,
            journal=self.journal,
            interrupted=stop,
        )
        result = await DBOS.run_step_async({"name": name}, fan_out.run)
        outcomes = from_json(list[ChildOutcome], result["outcomes"])
        await self.journal.forget(run_id, name)
        if result["cancelled"]:
            self.execution.delivered = True  # the run's cancellation reached this execution
            raise GatherCancelled(outcomes)
        return outcomes

    @staticmethod
    def _final(outcomes: list[ChildOutcome | None]) -> list[ChildOutcome]:
        return [o or ChildOutcome(False, error=NOT_STARTED, cancelled=True) for o in outcomes]

    async def _stop_children(self, children: list[ChildSpec], indices: list[int]) -> None:
        """Stop these children: here at once, elsewhere through their recorded attribute."""
        if not indices:
            return
        ids = [children[i].id for i in indices]
        self.live.interrupt(ids)
        for workflow_id in ids:  # outside the workflow: not an operation of this run
            await detached(
                DBOS.update_workflow_attributes_async(
                    workflow_id, {CANCEL_ATTRIBUTE: True}, merge=True
                )
            )


async def settled(handle: WorkflowHandleAsync[Any]) -> None:
    """Wait until a child workflow ends, however it ends, recording nothing."""
    task = getattr(handle, "task", None)
    with contextlib.suppress(Exception):
        if isinstance(task, asyncio.Future):
            await asyncio.shield(task)
        else:
            await handle.get_result(polling_interval_sec=SETTLE_POLL_S)


def child_outcome(result: Any) -> ChildOutcome:
    """A child workflow's result as a :class:`ChildOutcome`."""
    if not isinstance(result, dict):
        return ChildOutcome(False, error="the child workflow returned nothing")
    value = child_result(result.get("value"))
    if result.get("ok"):
        return ChildOutcome(True, value=value)
    return ChildOutcome(
        False,
        value=value,
        error=str(result.get("error") or "failed"),
        cancelled=bool(result.get("cancelled")),
    )


__all__ = [
    "CANCELLED",
    "CANCEL_ATTRIBUTE",
    "NO_TIMEOUT_S",
    "DurableSteps",
    "LiveExecution",
    "LiveRun",
    "LiveRuns",
    "ShutdownAwareEvents",
    "is_cancel_marker",
]
