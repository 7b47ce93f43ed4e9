"""The launcher port (start, resume, cancel runs) and the local, non-durable launcher.

The local launcher runs each run as an asyncio task with in-memory steps: used for dry runs
and tests. The durable launcher (DBOS) keeps the same contract; callers cannot tell them apart
except that durable runs survive a restart.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any, Protocol

from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.local import LocalSteps
from dynamic_tools.engine.plan import RunPlan
from dynamic_tools.engine.ports import EventSink, ToolRunner
from dynamic_tools.engine.redrive import Redrive
from dynamic_tools.engine.state import RunOutcome
from dynamic_tools.errors import ConflictError, ConflictKind, NotFoundError
from dynamic_tools.execution.reconcile import JournalEntry
from dynamic_tools.execution.run_context import current_run
from dynamic_tools.lazy_model import LazyModel


def yield_step_name(node_id: str) -> str:
    """The name under which a yield waits for its answer (shared by every launcher)."""
    return f"yield:{node_id}"


TakeoverHook = Callable[[str, list[str]], None]


class ExecutorView(LazyModel):
    """Who executes the run (durable runs: the journal's holder)."""

    id: str | None = None
    state: str | None = None
    alive: bool | None = None
    since: str | None = None
    detail: str | None = None


class RunLauncher(Protocol):
    """Everything a launcher does: its life cycle, runs, and what durable replicas add.

    Two implementations: :class:`LocalLauncher` (asyncio tasks, nothing survives a restart)
    and the durable launcher (DBOS). Operations that only mean something for durable runs
    have a defined answer on the local one (``durable`` False, no journal, takeover refused).
    """

    #: whether runs survive a restart (there is a journal to reconcile with)
    durable: bool
    #: called with (dead executor, the run ids taken over) after every takeover
    on_takeover: TakeoverHook | None

    async def launch(self) -> None:
        """Get ready to run (recover what the journal holds, for a durable launcher)."""
        ...

    async def shutdown(self) -> None:
        """Stop: local runs are cancelled, durable runs are left to the next process."""
        ...

    async def start(
        self,
        *,
        run_id: str,
        plan: RunPlan,
        params: dict[str, Any],
        redrive: Redrive | None = None,
    ) -> None:
        """Start a run of ``plan`` with checked ``params`` (returns once it is started).

        ``redrive`` gives the outputs it reuses from an earlier run.
        """
        ...

    async def resume(self, run_id: str, node_id: str, values: dict[str, Any]) -> None:
        """Deliver the (already validated) answer of the yield ``node_id``."""
        ...

    async def cancel(self, run_id: str) -> None:
        """Cancel a run: running steps stop and compensations run."""
        ...

    async def executor_of(self, run_id: str) -> ExecutorView | None:
        """Who executes the run: ``id``, ``state``, ``alive``, ``since``, ``detail``."""
        ...

    async def wait(self, run_id: str) -> RunOutcome:
        """The outcome of a run, once it ended."""
        ...

    async def take_over(self, executor_id: str) -> list[str]:
        """Resume the unfinished runs of a dead executor here; their workflow ids.

        :class:`ConflictError` (kind ``not_durable``) when runs are not durable.
        """
        ...

    async def journal_entries(self, run_ids: list[str]) -> dict[str, JournalEntry]:
        """What the journal says of these runs (empty when there is no journal)."""
        ...


class LocalLauncher:
    """Runs as asyncio tasks in this process; nothing survives a restart."""

    def __init__(
        self,
        *,
        tools: ToolRunner,
        events: EventSink,
        on_finished: Callable[[str, RunOutcome], None] | None = None,
    ) -> None:
        self.tools = tools
        self.events = events
        self.on_finished = on_finished
        self.durable = False
        self.on_takeover: TakeoverHook | None = None
        self._tasks: dict[str, asyncio.Task[RunOutcome]] = {}
        self._steps: dict[str, LocalSteps] = {}

    async def start(
        self,
        *,
        run_id: str,
        plan: RunPlan,
        params: dict[str, Any],
        redrive: Redrive | None = None,
    ) -> None:
        """Start the run as a task."""
        if run_id in self._tasks:
            raise ConflictError(
                f"run '{run_id}' already exists",
                kind=ConflictKind.EXISTS,
                context={"run_id": run_id},
            )
        steps = LocalSteps(real_sleep=True)
        interpreter = Interpreter(
            plan, run_id=run_id, tools=self.tools, steps=steps, events=self.events, redrive=redrive
        )
        self._steps[run_id] = steps
        context = contextvars.copy_context()
        context.run(current_run.set, run_id)
        task = asyncio.create_task(interpreter.run(params), name=f"run:{run_id}", context=context)
        self._tasks[run_id] = task
        if self.on_finished is not None:
            callback = self.on_finished
            task.add_done_callback(
                lambda t: None if t.cancelled() or t.exception() else callback(run_id, t.result())
            )
        await asyncio.sleep(0)

    async def resume(self, run_id: str, node_id: str, values: dict[str, Any]) -> None:
        """Answer the yield."""
        steps = self._steps.get(run_id)
        if steps is None:
            raise NotFoundError(f"run '{run_id}' is not running here", context={"run_id": run_id})
        steps.answer(yield_step_name(node_id), values)

    async def cancel(self, run_id: str) -> None:
        """Cancel the task (the interpreter compensates before it ends)."""
        task = self._tasks.get(run_id)
        if task is None:
            raise NotFoundError(f"run '{run_id}' is not running here", context={"run_id": run_id})
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def executor_of(self, run_id: str) -> ExecutorView | None:
        """This process, while the run's task is alive (local runs die with the process)."""
        task = self._tasks.get(run_id)
        if task is None:
            return None
        return ExecutorView(
            id="local",
            state="finished" if task.done() else "executing",
            alive=True,
            since=None,
            detail="executed in this process (DURABLE_RUNS=false: not durable)",
        )

    async def wait(self, run_id: str) -> RunOutcome:
        """The outcome of a run started here (for tests and the CLI)."""
        return await self._tasks[run_id]

    async def launch(self) -> None:
        """Nothing to recover: local runs died with the last process."""

    async def take_over(self, executor_id: str) -> list[str]:
        """Refused: there is no journal another replica left behind."""
        raise ConflictError(
            "runs are not durable on this server (DURABLE_RUNS=false): there is nothing "
            "another replica left to recover",
            kind=ConflictKind.NOT_DURABLE,
            context={"executor_id": executor_id},
        )

    async def journal_entries(self, run_ids: list[str]) -> dict[str, JournalEntry]:
        """No journal."""
        return {}

    async def shutdown(self) -> None:
        """Cancel every run still going."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
