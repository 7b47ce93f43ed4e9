"""The DBOS workflow functions of runs: one generic workflow interprets any document.

The run id is the DBOS workflow id; the inputs are the document (as JSON), the workflow id and
the params, so editing a document never changes a run in flight. Parallel branches and
foreach items run as :func:`run_child_workflow` children (``durable_steps.py`` explains the
order of operations and how a cancel reaches a running run).

Where the tools and events come from: DBOS calls the workflow functions itself (on recovery,
after a restart), so they cannot receive them as arguments. The launcher installs the tool
runner, the event sink and the registry of live runs (:func:`install_runtime`) before DBOS
starts, and clears them when it shuts down. DBOS is a process-wide singleton, so only one
launcher can be launched per process. A plan is compiled once per document and process
(children reuse it).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from dbos import (
    DBOS,
    SetWorkflowID,
    WorkflowHandleAsync,
    WorkflowSerializationFormat,
    WorkflowStatus,
)
from loguru import logger

from dynamic_tools.engine.children import ChildSpec
from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.journal import from_json, to_json
from dynamic_tools.engine.local import RUN_CANCELLED
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.plan import RunPlan, compile_plan
from dynamic_tools.engine.ports import ChildCancelled, ChildFailed, EventSink, ToolRunner
from dynamic_tools.engine.redrive import Redrive
from dynamic_tools.engine.state import RunOutcome
from dynamic_tools.errors import ConfigurationError, ConflictError, NotFoundError
from dynamic_tools.execution.durable_config import CHILD_WORKFLOW, RUN_WORKFLOW
from dynamic_tools.execution.durable_steps import (
    DurableSteps,
    LiveExecution,
    LiveRuns,
    ShutdownAwareEvents,
)
from dynamic_tools.execution.fan_out import ItemJournal
from dynamic_tools.execution.run_context import current_run


# --- what the workflows run with (set by DurableLauncher.launch) ------------------------------
@dataclass
class WorkflowRuntime:
    """What the workflow functions run with: tools, events, live runs, the outcome hook."""

    tools: ToolRunner
    events: EventSink
    live: LiveRuns
    on_finished: Callable[[str, RunOutcome], None] | None
    items: ItemJournal | None = None


_runtime: WorkflowRuntime | None = None


def install_runtime(runtime: WorkflowRuntime) -> None:
    """Give the workflow functions what they run with (once per process, before DBOS)."""
    global _runtime
    if _runtime is not None:
        raise ConflictError("a durable launcher is already launched in this process")
    _runtime = runtime


def runtime_installed() -> bool:
    """Whether a launcher is launched in this process."""
    return _runtime is not None


def clear_runtime() -> None:
    """Forget it (the launcher shut down)."""
    global _runtime
    _runtime = None


def _current() -> WorkflowRuntime:
    if _runtime is None:  # pragma: no cover - DBOS only runs workflows after launch()
        raise ConfigurationError("no durable launcher is launched in this process")
    return _runtime


@functools.lru_cache(maxsize=64)
def _plan_of(document_json: str, workflow_id: str) -> RunPlan:
    """The plan of a journaled document, compiled once per process (children reuse it).

    The document was validated when its run was prepared; tools are not checked again, so a
    run replayed after a tool was removed fails at that call, not before it starts.
    """
    return compile_plan(WorkflowDocument.model_validate_json(document_json), workflow_id)


def _interpreter(
    document: dict[str, Any],
    workflow_id: str,
    run_id: str,
    execution: LiveExecution,
    runtime: WorkflowRuntime,
    redrive: dict[str, Any] | None = None,
) -> Interpreter:
    steps = DurableSteps(
        execution,
        runtime.live,
        functools.partial(_start_child, document, run_id),
        runtime.items,
    )
    return Interpreter(
        _plan_of(json.dumps(document, sort_keys=True), workflow_id),
        run_id=run_id,
        tools=runtime.tools,
        steps=steps,
        events=ShutdownAwareEvents(runtime.events, runtime.live),
        redrive=from_json(Redrive, redrive) if redrive else None,
    )


async def _start_child(
    document: dict[str, Any], run_id: str, spec: ChildSpec
) -> WorkflowHandleAsync[dict[str, Any]]:
    with SetWorkflowID(spec.id):
        return await DBOS.start_workflow_async(
            run_child_workflow, document, run_id, to_json(spec), spec.seq_base
        )


@DBOS.workflow(
    name=RUN_WORKFLOW,
    max_recovery_attempts=None,
    serialization_type=WorkflowSerializationFormat.PORTABLE,
)
async def run_workflow(
    document: dict[str, Any],
    workflow_id: str,
    params: dict[str, Any],
    redrive: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run ``workflow_id`` of ``document``; the DBOS workflow id is the run id.

    ``redrive`` (a :class:`Redrive` in the form :func:`~dynamic_tools.engine.journal.to_json`
    gives): the outputs this run reuses from an earlier one.

    Returns the run's outcome (a :class:`RunOutcome`, journaled by ``to_json``): a failed or
    cancelled run is a successful DBOS workflow.
    """
    runtime = _current()
    run_id = str(DBOS.workflow_id)
    current_run.set(run_id)  # this workflow's task only: the tool runner finds its scope
    with runtime.live.execution(run_id, run_id) as execution:
        interpreter = _interpreter(document, workflow_id, run_id, execution, runtime, redrive)
        try:
            outcome = await interpreter.run(params)
        except asyncio.CancelledError:
            if not execution.delivered:  # shutting down: leave the run to the next process
                raise
            outcome = RunOutcome(
                "cancelled",
                error={"message": "the run was cancelled"},
                nodes=interpreter.nodes,
            )
    if runtime.on_finished is not None:  # at least once: again if the process dies right here
        try:
            runtime.on_finished(run_id, outcome)
        except Exception as exc:  # the run's outcome is recorded regardless
            logger.warning("on_finished failed for run {}: {}", run_id, exc)
    return to_json(outcome)  # type: ignore[no-any-return]


@DBOS.workflow(
    name=CHILD_WORKFLOW,
    max_recovery_attempts=None,
    serialization_type=WorkflowSerializationFormat.PORTABLE,
)
async def run_child_workflow(
    document: dict[str, Any], run_id: str, spec: dict[str, Any], seq_base: int
) -> dict[str, Any]:
    """Run one parallel branch or foreach item of ``run_id`` (``Interpreter.run_child``).

    The result is journaled as JSON: ``ok``, ``error``, ``cancelled`` and ``value`` (the
    ``to_json`` of the :class:`ChildResult` the child registered).
    """
    runtime = _current()
    child = from_json(ChildSpec, {**spec, "seq_base": seq_base})
    current_run.set(run_id)
    with runtime.live.execution(run_id, str(DBOS.workflow_id)) as execution:
        interpreter = _interpreter(document, child.workflow_id, run_id, execution, runtime)
        try:
            result = await interpreter.run_child(child)
            return {"ok": True, "value": to_json(result)}
        except ChildCancelled as exc:
            if not execution.delivered:
                raise
            # What the child registered (its compensations) goes back to the parent.
            payload = to_json(exc.payload)
            return {"ok": False, "cancelled": True, "error": RUN_CANCELLED, "value": payload}
        except asyncio.CancelledError:
            if not execution.delivered:
                raise
            return {"ok": False, "cancelled": True, "error": RUN_CANCELLED, "value": None}
        except ChildFailed as exc:  # a failed child is an outcome, as in LocalSteps
            return {"ok": False, "error": exc.message, "value": to_json(exc.payload)}
        except Exception as exc:  # the child crashed outside the interpreter's handling
            return {"ok": False, "error": str(exc) or type(exc).__name__, "value": None}


# --- routing answers ---------------------------------------------------------------------------
Existing = Callable[[list[str]], Awaitable[set[str]]]


async def yield_owner(run_id: str, node_id: str, existing: Existing) -> str:
    """The workflow that waits for the yield ``node_id`` of ``run_id``.

    A yield inside a parallel branch or a foreach item waits in that child workflow, whose id
    (``{run_id}/{node}/{branch-or-index}``) prefixes the yield's own path: the deepest such
    workflow that exists is the one waiting.
    """
    parts = node_id.split("/")
    candidates = [run_id] + [f"{run_id}/{'/'.join(parts[:i])}" for i in range(1, len(parts))]
    found = await existing(candidates)
    if run_id not in found:
        raise NotFoundError(f"run '{run_id}' does not exist", context={"run_id": run_id})
    return max((c for c in candidates if c in found), key=len)


def statuses_to_ids(statuses: list[WorkflowStatus]) -> set[str]:
    """The workflow ids of DBOS statuses."""
    return {s.workflow_id for s in statuses}
