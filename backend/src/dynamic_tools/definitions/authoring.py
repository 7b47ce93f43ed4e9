"""Workflow authoring operations shared by REST and MCP (names mapped in docs/seed-names.md).

Every operation takes either a saved workflow (``workflow_id``) or a draft (``content``, with
``workflow`` naming one of its workflows when it has several): drafts are parsed and validated
first, and a draft that does not validate raises :class:`WorkflowInvalidError` with every
violation — except for a run, which goes on when the workflow it starts, the sub-workflows that
one reaches and the document itself are valid (the other workflows' errors are reported back in
:attr:`Target.left_out`). Nothing here writes except :meth:`WorkflowAuthoring.run` (a run) and
:meth:`WorkflowAuthoring.purge_history` (deletes ended runs).

Value providers (``provider.catalog``): a provider is a read-only list/search operation whose
result items supply values for other operations' inputs — e.g. ``search_flights`` returns
flights whose ``id`` feeds ``check_availability.flight_id``. A workflow input that is passed to
such an input can be filled from the provider's results: :meth:`resolve_inputs` offers them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any, Protocol

from dynamic_tools.access.principals import Principal
from dynamic_tools.definitions.repository import PreparedRun, WorkflowRepository
from dynamic_tools.definitions.step_views import preview_inputs, step_order
from dynamic_tools.definitions.views import (
    InputResolution,
    InputsPreview,
    Purged,
    RenderedPreview,
    StepOrder,
)
from dynamic_tools.engine.errors import UnresolvedReferenceError
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.models import Workflow, WorkflowDocument
from dynamic_tools.engine.nodes import kind_of
from dynamic_tools.engine.nodes.steps import step_kind
from dynamic_tools.engine.params import check_values
from dynamic_tools.engine.plan import blocking_errors, workflow_of_path
from dynamic_tools.engine.references import find_references, render
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import InvalidInputError, NotFoundError, WorkflowInvalidError
from dynamic_tools.persistence.run_history import purge_runs
from dynamic_tools.persistence.run_store import RunRecord, RunStore
from dynamic_tools.tools.openapi.providers import ProviderContract, find_provider_contracts
from dynamic_tools.tools.registry import ToolRegistry
from dynamic_tools.tools.scope import ToolScope

MAX_HISTORY_DAYS = 36_500  # a century: every run ever recorded


class RunStarter(Protocol):
    """What authoring needs of the run service: starting runs (``execution.runs.RunService``)."""

    async def start(
        self, workflow_id: str, params: dict[str, Any], *, principal: Principal
    ) -> RunRecord:
        """Check params and start a run of a saved workflow, owned by ``principal``."""
        ...

    async def start_prepared(self, prepared: PreparedRun, *, principal: Principal) -> RunRecord:
        """Start a run of a checked plan (a draft's), owned by ``principal``."""
        ...


@dataclass(frozen=True)
class Target:
    """The workflow an operation is about: saved or drafted."""

    workflow_id: str
    workflow: Workflow
    document: WorkflowDocument
    version: str
    saved: bool
    #: a session's own tools, for a workflow of the document it brought; or the scope of a
    #: model-composed workflow (``ToolScope.composed``), whose calls are held to the safe rule
    scope: ToolScope | None = None
    #: a draft's other workflows that do not validate, ``{workflow, violations}`` each: a run
    #: of this one goes on without them (:meth:`WorkflowAuthoring.target`, ``runnable_only``)
    left_out: tuple[dict[str, Any], ...] = ()


class WorkflowAuthoring:
    """Previews, input resolution, runs of drafts and history for authoring clients."""

    def __init__(
        self,
        workflows: WorkflowRepository,
        registry: ToolRegistry,
        runs: RunStarter,
        store: RunStore,
    ) -> None:
        self.workflows = workflows
        self.registry = registry
        self.runs = runs
        self.store = store

    # --- targets ---------------------------------------------------------------------------
    def target(
        self,
        *,
        workflow_id: str | None,
        content: str | None,
        fmt: str | None = None,
        runnable_only: bool = False,
    ) -> Target:
        """The saved workflow ``workflow_id``, or the (validated) draft ``content``.

        A draft with errors is refused, every violation listed; with ``runnable_only`` (a run)
        only errors of the chosen workflow, of the sub-workflows it reaches and of the document
        itself refuse it, and the other workflows with errors are in ``left_out``.
        """
        if content is None:
            if not workflow_id:
                raise InvalidInputError(
                    "give workflow_id (a saved workflow) or content (a draft)",
                    violations=[{"path": "workflow_id", "rule": "required", "message": "missing"}],
                )
            prepared = self.workflows.get(workflow_id)
            workflow = self.workflows.workflow(workflow_id)
            document = load_document(prepared.content, fmt=prepared.format).document
            return Target(workflow_id, workflow, document, prepared.version, True)
        loaded = load_document(content, fmt=fmt)  # type: ignore[arg-type]
        report = validate_document(
            loaded,
            known_tools=self.registry.input_schemas(),
            known_workflows=self.workflows.definitions(),
        )
        ids = list(loaded.document.workflows)
        chosen = workflow_id or ids[0]
        blocking = report.errors
        if runnable_only and chosen in loaded.document.workflows:
            blocking = blocking_errors(report.errors, loaded.document, chosen)
        if blocking:
            listed = blocking if runnable_only else report.violations
            raise WorkflowInvalidError(
                f"the draft has {len(blocking)} error(s)"
                + (f" that stop workflow '{chosen}'" if runnable_only else ""),
                violations=[v.to_dict() for v in listed],
            )
        if chosen not in loaded.document.workflows:
            raise NotFoundError(
                f"the draft has no workflow '{chosen}' (it has: {', '.join(ids)})",
                context={"workflow_id": chosen},
            )
        left_out: dict[str, list[dict[str, Any]]] = {}
        for violation in report.errors:  # none reached by the chosen workflow
            where = workflow_of_path(violation.path) or ""
            left_out.setdefault(where, []).append(violation.to_dict())
        version = "draft"
        return Target(
            chosen,
            loaded.document.workflows[chosen],
            loaded.document,
            version,
            False,
            left_out=tuple({"workflow": w, "violations": v} for w, v in left_out.items()),
        )

    async def checked_target(
        self,
        *,
        workflow_id: str | None,
        content: str | None,
        fmt: str | None = None,
        runnable_only: bool = False,
    ) -> Target:
        """:meth:`target`, a draft checked in a document worker first, the rest in a thread.

        With ``runnable_only`` the worker's check only bounds the work (time and memory); which
        errors refuse the run is :meth:`target`'s to say.
        """
        if content is not None and runnable_only:
            await self.workflows.check(content, fmt)  # type: ignore[arg-type]
        elif content is not None:
            await self.workflows.check_errors(content, fmt, "draft")  # type: ignore[arg-type]
        return await asyncio.to_thread(
            self.target,
            workflow_id=workflow_id,
            content=content,
            fmt=fmt,
            runnable_only=runnable_only,
        )

    # --- previews --------------------------------------------------------------------------
    def preview_inputs(self, target: Target) -> InputsPreview:
        """Required inputs, defaults, examples and their JSON Schema."""
        return InputsPreview.model_validate(
            {"workflow_id": target.workflow_id, **preview_inputs(target.workflow)}
        )

    def step_order(self, target: Target) -> StepOrder:
        """The ordered plan with conditions and dependencies."""
        return StepOrder(workflow_id=target.workflow_id, steps=step_order(target.workflow))

    def preview_rendered(self, target: Target, inputs: dict[str, Any]) -> RenderedPreview:
        """Each step with its arguments rendered from ``inputs`` where they allow it.

        Arguments that need an earlier step's output stay as written, listed in ``pending``.
        """
        checked, violations = self._check(target, inputs)
        values = {**checked} if not violations else {**inputs}
        steps = []
        for step in step_order(target.workflow):
            node = target.workflow.graph.get(step["node_id"])
            entry: dict[str, Any] = {
                "node_id": step["node_id"],
                "kind": step["kind"],
                "runs": step["runs"],
            }
            for path, call in kind_of(node).steps(node) if node is not None else []:
                tool = step_kind(call).tool(call)
                if path == () and tool is not None:
                    args, pending = _render_args(call.args, values, step["node_id"])
                    entry.update({"tool": tool, "args": args, "pending": pending})
            steps.append(entry)
        return RenderedPreview.model_validate(
            {
                "workflow_id": target.workflow_id,
                "inputs": values,
                "violations": violations,
                "steps": steps,
            }
        )

    def _check(
        self, target: Target, inputs: dict[str, Any]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        try:
            return check_values(target.workflow.params, inputs), []
        except InvalidInputError as exc:
            return {}, exc.violations

    # --- inputs ----------------------------------------------------------------------------
    def providers(self) -> list[ProviderContract]:
        """The value providers among the registry's read-only tools."""
        tools = self.registry.all()
        read_only = {t.name for t in tools if t.effective_annotations.read_only}
        return [c for c in find_provider_contracts(tools) if c.provider in read_only]

    def resolve_inputs(self, target: Target, inputs: dict[str, Any]) -> InputResolution:
        """Defaults applied, values checked, providers named; ``ready`` only when runnable.

        Each input gets an outcome: ``resolved`` (given or defaulted), ``prompt`` (missing and
        required: ask the user; the providers that can supply it are listed), ``optional``
        (missing, not required) or ``error`` (given but invalid).
        """
        params = target.workflow.params
        feeds = _input_feeds(target.workflow)
        providers = self.providers()
        _, violations = self._check(target, inputs)
        bad = {str(v.get("path", "")).split(".")[-1] for v in violations}
        outcomes: dict[str, Any] = {}
        resolved: dict[str, Any] = {}
        for name, spec in params.items():
            sources = [
                p.to_dict() for p in providers if any(f in p.feeds for f in feeds.get(name, ()))
            ]
            if name in inputs and name not in bad:
                resolved[name] = inputs[name]
                outcomes[name] = {"outcome": "resolved", "source": "input"}
            elif name in inputs:
                outcomes[name] = {"outcome": "error", "providers": sources}
            elif spec.default is not None:
                resolved[name] = spec.default
                outcomes[name] = {"outcome": "resolved", "source": "default"}
            elif spec.required:
                outcomes[name] = {"outcome": "prompt", "providers": sources}
            else:
                outcomes[name] = {"outcome": "optional"}
        unknown = sorted(set(inputs) - set(params))
        ready = all(o["outcome"] in ("resolved", "optional") for o in outcomes.values())
        return InputResolution.model_validate(
            {
                "workflow_id": target.workflow_id,
                "ready": ready and not violations,
                "resolved": resolved,
                "defaults": {n: s.default for n, s in params.items() if s.default is not None},
                "inputs": outcomes,
                "violations": violations,
                "unknown_inputs": unknown,
            }
        )

    # --- runs ------------------------------------------------------------------------------
    async def run(
        self, target: Target, inputs: dict[str, Any], *, principal: Principal
    ) -> RunRecord:
        """Start a run of a saved workflow or of a validated draft, owned by ``principal``.

        A target with a ``scope`` runs with it, a saved workflow too (a model-composed one:
        ``tools/safety.py``).
        """
        if target.saved and target.scope is None:
            return await self.runs.start(target.workflow_id, inputs, principal=principal)
        if target.saved:
            prepared = self.workflows.prepare_run(target.workflow_id, inputs)
            return await self.runs.start_prepared(
                replace(prepared, scope=target.scope), principal=principal
            )
        params = check_values(target.workflow.params, inputs)
        prepared = PreparedRun.of_draft(
            target.document, target.workflow_id, params, target.version, target.scope
        )
        return await self.runs.start_prepared(prepared, principal=principal)

    async def purge_history(
        self,
        *,
        workflow_id: str | None,
        older_than_days: float | None,
        input_keys: list[str] | None = None,
        dry_run: bool = False,
    ) -> Purged:
        """Delete ended runs (and their events) of one workflow or all; active runs stay.

        ``older_than_days`` must be a number from 0 to ``MAX_HISTORY_DAYS`` (a larger one
        would reach before year 1: :class:`InvalidInputError` naming the field).
        """
        if older_than_days is not None and not (
            isinstance(older_than_days, int | float)
            and not isinstance(older_than_days, bool)
            and 0 <= older_than_days <= MAX_HISTORY_DAYS
        ):
            message = f"older_than_days must be a number from 0 to {MAX_HISTORY_DAYS}"
            raise InvalidInputError(
                message,
                violations=[
                    {
                        "path": "older_than_days",
                        "rule": "range",
                        "message": message,
                        "expected": f"0..{MAX_HISTORY_DAYS}",
                        "actual": repr(older_than_days),
                    }
                ],
            )
        summary = await purge_runs(
            self.store.engine,
            workflow_id=workflow_id,
            older_than_days=older_than_days,
            input_keys=input_keys,
            dry_run=dry_run,
        )
        return Purged.model_validate({"workflow_id": workflow_id, **summary})


def _render_args(
    args: dict[str, Any], values: dict[str, Any], node_id: str
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    rendered: dict[str, Any] = {}
    pending: list[dict[str, str]] = []
    for key, raw in args.items():
        try:
            rendered[key] = render(raw, lambda name: values[name], node_id=node_id)
        except UnresolvedReferenceError:
            rendered[key] = raw
            refs = find_references(raw) if isinstance(raw, str) else []
            source = ", ".join(r.text for r in refs) or str(raw)
            pending.append({"arg": key, "from": source, "when": "at run time"})
    return rendered, pending


def _input_feeds(workflow: Workflow) -> dict[str, set[str]]:
    """Param name → the ``tool.param`` inputs it is passed to directly (``arg: $param``)."""
    feeds: dict[str, set[str]] = {}
    for node in workflow.graph.values():
        for _, step in kind_of(node).steps(node):
            tool = step_kind(step).tool(step)
            for arg, value in step.args.items() if tool is not None else ():
                if isinstance(value, str) and value.startswith("$"):
                    name = value[1:].split(".", 1)[0]
                    if name in workflow.params:
                        feeds.setdefault(name, set()).add(f"{tool}.{arg}")
    return feeds
