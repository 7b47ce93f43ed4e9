"""RunService: start, resume and cancel runs — the one path REST, MCP and the CLI share.

The repository checks params and the document, the store records the run, the launcher runs it.
The span current when a run starts (an MCP request's) is stored with it for the run span to
link to, and gets the run id (``observability/tracing.py``).
"""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import Field

from dynamic_tools.access.principals import Principal
from dynamic_tools.definitions.repository import PreparedRun, WorkflowRepository
from dynamic_tools.engine.params import answer_specs, check_values
from dynamic_tools.engine.redrive import Redrive, plan_redrive
from dynamic_tools.errors import (
    ConfigurationError,
    ConflictError,
    ConflictKind,
    InvalidInputError,
    NotFoundError,
)
from dynamic_tools.execution.launcher import ExecutorView, RunLauncher
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.observability.tracing import current_traceparent, note_run
from dynamic_tools.persistence.run_scopes import RunScopeStore
from dynamic_tools.persistence.run_store import RunRecord, RunStore, RunTrigger
from dynamic_tools.tools.scope import ToolScope

REDRIVABLE = frozenset({"failed", "cancelled"})
RESUME_WAIT_S = 2.0  # a resume answers once the run took the answer (or after this long)


class Recovered(LazyModel):
    """What a recovery took over."""

    executor_id: str
    runs: list[str] = Field(description="The ids of the runs resumed here")
    workflows: int = Field(description="How many DBOS workflows moved (children included)")


def visible_to(principal: Principal) -> str | None:
    """Whose runs ``principal`` sees: their own (their id), or every run (None: an admin)."""
    return None if principal.is_admin else principal.id


class RunService:
    """Starts, resumes and cancels runs (for REST, MCP and the CLI alike).

    The repository checks the params and the document, the store records the run, the
    launcher executes it.
    """

    def __init__(
        self,
        workflows: WorkflowRepository,
        store: RunStore,
        launcher: RunLauncher,
        scopes: RunScopeStore | None = None,
    ) -> None:
        self.workflows = workflows
        self.store = store
        self.launcher = launcher
        self.scopes = scopes

    async def start(
        self, workflow_id: str, params: dict[str, Any], *, principal: Principal
    ) -> RunRecord:
        """Check params (422 per field) and the document, record the run, launch it.

        The run belongs to ``principal``.
        """
        prepared = self.workflows.prepare_run(workflow_id, params)
        return await self.start_prepared(prepared, principal=principal)

    async def start_prepared(
        self,
        prepared: PreparedRun,
        *,
        principal: Principal,
        run_id: str | None = None,
        trigger: RunTrigger | None = None,
    ) -> RunRecord:
        """Record and launch a checked run (e.g. of a document an MCP session brought).

        ``run_id`` and ``trigger``: a run a schedule tick or webhook delivery starts has an id
        made from it (409 when that run exists already) and records what started it.
        """
        workflow_id = prepared.workflow_id
        run = await self.store.create_run(
            workflow_id=workflow_id,
            params=prepared.params,
            document_version=prepared.version,
            node_ids=prepared.node_ids,
            owner=principal.id,
            trace_link=current_traceparent(),
            run_id=run_id,
            trigger=trigger,
        )
        note_run(run.run_id)
        try:
            if prepared.scope is not None:
                if self.scopes is None:
                    raise ConfigurationError("this server keeps no session scopes for runs")
                await self.scopes.save(run.run_id, prepared.scope)
            await self.launcher.start(run_id=run.run_id, plan=prepared.plan, params=prepared.params)
        except BaseException:
            await self.store.finish(run.run_id, "failed", {"message": "the run could not start"})
            raise
        return await self.store.get_run(run.run_id)

    async def get(self, run_id: str, *, principal: Principal) -> RunRecord:
        """One run as ``principal`` may see it: another's run answers as an unknown id."""
        return await self.store.get_run(run_id, visible_to=visible_to(principal))

    async def preview_redrive(
        self, run_id: str, *, principal: Principal, allow_changed_document: bool = False
    ) -> Redrive:
        """What :meth:`redrive` would reuse and run again, changing nothing.

        The same refusals (404, 409) as :meth:`redrive`; no run is created.
        """
        _, _, _, redrive = await self._plan_redrive(run_id, principal, allow_changed_document)
        return redrive

    async def redrive(
        self, run_id: str, *, principal: Principal, allow_changed_document: bool = False
    ) -> tuple[RunRecord, Redrive]:
        """Run a failed or cancelled run again from where it stopped.

        A new run, linked to it (``redrive_of``), reuses the outputs of the nodes that
        succeeded and executes the rest (``engine/redrive.py`` says which); 409 when that is
        not possible. The new run belongs to ``principal``, who must own the old one.
        """
        _, prepared, scope, redrive = await self._plan_redrive(
            run_id, principal, allow_changed_document
        )
        run = await self.store.create_run(
            workflow_id=prepared.workflow_id,
            params=prepared.params,
            document_version=prepared.version,
            node_ids=prepared.node_ids,
            redrive_of=run_id,
            owner=principal.id,
            trace_link=current_traceparent(),
        )
        note_run(run.run_id)
        try:
            if scope is not None and self.scopes is not None:  # a model-composed run stays so
                await self.scopes.save(run.run_id, scope)
            await self.launcher.start(
                run_id=run.run_id, plan=prepared.plan, params=prepared.params, redrive=redrive
            )
        except BaseException:
            await self.store.finish(run.run_id, "failed", {"message": "the run could not start"})
            raise
        return await self.store.get_run(run.run_id), redrive

    async def _plan_redrive(
        self, run_id: str, principal: Principal, allow_changed_document: bool
    ) -> tuple[RunRecord, PreparedRun, ToolScope | None, Redrive]:
        """The run to redrive, its workflow prepared again, its session scope and the plan."""
        old = await self.get(run_id, principal=principal)
        if old.status not in REDRIVABLE:
            raise ConflictError(
                f"run '{run_id}' is {old.status}: only a failed or cancelled run can be "
                "re-run from where it stopped",
                kind=ConflictKind.NOT_REDRIVABLE,
                context={"run_id": run_id, "status": old.status, "reason": "not_redrivable"},
            )
        scope = await self.scopes.get(run_id) if self.scopes is not None else None
        if scope is not None and not (scope.composed and not scope.tools):
            raise ConflictError(
                f"run '{run_id}' ran an MCP session's own workflow, which this server does not "
                "keep: run it again from that session",
                kind=ConflictKind.NOT_REDRIVABLE,
                context={"run_id": run_id, "reason": "not_redrivable"},
            )
        prepared = self.workflows.prepare_run(old.workflow_id, old.params)
        changed = old.document_version is not None and prepared.version != old.document_version
        if changed and not allow_changed_document:
            raise ConflictError(
                f"the document of '{old.workflow_id}' changed since run '{run_id}' (version "
                f"{old.document_version} → {prepared.version}): its recorded outputs may not fit "
                "it. Start a new run, or redrive with allow_changed_document to reuse the "
                "outputs of the nodes that still succeed the same way",
                kind=ConflictKind.DOCUMENT_CHANGED,
                context={
                    "reason": "document_changed",
                    "run_id": run_id,
                    "recorded_version": old.document_version,
                    "current_version": prepared.version,
                },
            )
        return old, prepared, scope, plan_redrive(prepared.plan, run_id, old.nodes)

    async def resume(
        self,
        run_id: str,
        values: dict[str, Any],
        node_id: str | None = None,
        *,
        principal: Principal,
    ) -> RunRecord:
        """Answer the yield the run waits on; values are checked against its ``expects``.

        Only the run's owner (or an admin) may answer: another's run is an unknown id.
        """
        run = await self.get(run_id, principal=principal)
        note_run(run_id)
        prompt = run.waiting.get(node_id) if node_id else run.waiting_prompt()
        if run.status != "waiting_input" or prompt is None:
            raise ConflictError(
                f"run '{run_id}' is {run.status}, not waiting for "
                + (f"'{node_id}'" if node_id else "input"),
                kind=ConflictKind.NOT_WAITING,
                context={"run_id": run_id, "status": run.status},
            )
        node_id = node_id or str(prompt["node_id"])
        checked = check_values(answer_specs(prompt.get("expects") or {}), values, what="values")
        await self.launcher.resume(run_id, node_id, checked)
        answered = str(node_id)
        return await self.store.wait_until(
            run_id, lambda r: r.terminal or answered not in r.waiting, timeout_s=RESUME_WAIT_S
        )

    async def recover(self, executor_id: str) -> Recovered:
        """Resume here the unfinished runs of a replica that is gone (durable runs only).

        The launcher checks that the replica is gone (on PostgreSQL, its presence lock is
        free) and answers 409 otherwise. Returns the runs taken over.
        """
        executor_id = executor_id.strip()
        if not executor_id:
            raise InvalidInputError(
                "name the executor whose runs to recover",
                violations=[{"path": "query.executor", "message": "must not be empty"}],
            )
        try:
            workflows: list[str] = await self.launcher.take_over(executor_id)
        except ConflictError as exc:
            if exc.kind != ConflictKind.CONFLICT:
                raise
            # The launcher refuses an executor that is alive (its lock is held, or it is us).
            raise ConflictError(
                exc.message, kind=ConflictKind.EXECUTOR_ALIVE, context=exc.context
            ) from None
        runs = [w for w in workflows if "/" not in w]  # children are "<run>/<node>/<i>"
        return Recovered(executor_id=executor_id, runs=runs, workflows=len(workflows))

    async def executor_of(self, run_id: str) -> ExecutorView | None:
        """Who executes the run now, as the launcher's journal says (None when unknown)."""
        return await self.launcher.executor_of(run_id)

    async def cancel(self, run_id: str, *, principal: Principal) -> RunRecord:
        """Cancel an active run (409 when it has already ended); the owner's or an admin's."""
        run = await self.get(run_id, principal=principal)
        if run.terminal:
            raise ConflictError(
                f"run '{run_id}' has already ended ({run.status})",
                kind=ConflictKind.RUN_ENDED,
                context={"run_id": run_id, "status": run.status},
            )
        # Not running in this process (NotFoundError): the store records the cancellation.
        with contextlib.suppress(NotFoundError):
            await self.launcher.cancel(run_id)
        await self.store.finish(run_id, "cancelled", {"message": "the run was cancelled"})
        return await self.store.get_run(run_id)

    async def fail(self, run_id: str, error: dict[str, Any]) -> RunRecord:
        """End an active run as failed with ``error`` (e.g. the client it waited on is gone).

        The failure is recorded first, so the run stays failed whatever its stopped steps
        report; then the launcher stops it (compensations run). 409 when it has already ended.
        """
        if not await self.store.finish(run_id, "failed", error):
            run = await self.store.get_run(run_id)
            raise ConflictError(
                f"run '{run_id}' has already ended ({run.status})",
                context={"run_id": run_id, "status": run.status},
            )
        with contextlib.suppress(NotFoundError):
            await self.launcher.cancel(run_id)
        return await self.store.get_run(run_id)
