"""The run plan: a validated workflow, compiled once, ready for the interpreter.

"Validated" is a type here: :func:`compile_plan` builds a :class:`RunPlan` only when the workflow
it runs, the sub-workflows it reaches and the document itself have no validation error (a
sibling workflow's errors do not stop it: :func:`blocking_errors`), and the interpreter takes
nothing else. The plan holds what the interpreter would otherwise derive on every execution:
each reachable workflow's graph (activations, skip analysis), its node order, the
sub-workflows it calls and the references each node reads, resolved to the names they read.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dynamic_tools.engine.graph import WorkflowGraph
from dynamic_tools.engine.loaders import LoadedDocument
from dynamic_tools.engine.models import Workflow, WorkflowDocument
from dynamic_tools.engine.nodes import kind_of, sub_workflows
from dynamic_tools.engine.params import check_values
from dynamic_tools.engine.validator import (
    ValidationReport,
    node_reference_names,
    validate_document,
)
from dynamic_tools.errors import InvalidInputError, NotFoundError
from dynamic_tools.violations import Violation

__all__ = [
    "PlanRefused",
    "RunPlan",
    "WorkflowPlan",
    "blocking_errors",
    "compile_plan",
    "reachable_workflows",
    "workflow_of_path",
]


class PlanRefused(InvalidInputError):
    """The document has validation errors: no plan is made from it."""

    def __init__(self, workflow_id: str, violations: list[Violation]) -> None:
        first = violations[0]
        super().__init__(
            f"workflow '{workflow_id}' cannot run: {len(violations)} violation(s), the first "
            f"at {first.path}: {first.message}",
            violations=[v.to_dict() for v in violations],
        )
        self.report_violations = violations


@dataclass(frozen=True)
class WorkflowPlan:
    """One workflow of the plan: its graph, node order and activated nodes."""

    workflow_id: str
    workflow: Workflow
    graph: WorkflowGraph
    order: tuple[str, ...]

    @property
    def activated(self) -> frozenset[str]:
        """Nodes that run only when activated (branch targets, fallbacks, compensate)."""
        return self.graph.activated

    @cached_property
    def activates(self) -> Mapping[str, tuple[str, ...]]:
        """For each node, the nodes it can activate (known nodes only)."""
        graph = self.workflow.graph
        return {
            node_id: tuple(t for _, t in self.graph.activation_targets(node_id) if t in graph)
            for node_id in graph
        }

    @cached_property
    def activators(self) -> Mapping[str, frozenset[str]]:
        """For each node that runs only when activated, the nodes that can activate it."""
        found: dict[str, set[str]] = {target: set() for target in self.activated}
        for node_id, targets in self.activates.items():
            for target in targets:
                found.setdefault(target, set()).add(node_id)
        return {target: frozenset(names) for target, names in found.items()}

    @cached_property
    def loop_regions(self) -> Mapping[str, tuple[str, ...]]:
        """For each node a goto goes back to, the nodes a loop back to it runs again."""
        targets = {
            target
            for node in self.workflow.graph.values()
            for _, target, _ in kind_of(node).loop_targets(node)
            if target in self.workflow.graph
        }
        return {target: tuple(self.graph.reachable_from(target)) for target in targets}

    @cached_property
    def sub_workflows(self) -> frozenset[str]:
        """Workflow ids called by this workflow's nodes (parallel branches and foreach too)."""
        return sub_workflows(self.workflow.graph.values())

    @cached_property
    def references(self) -> Mapping[str, frozenset[str]]:
        """For each node, the names (params, outputs, yields, locals) its values read."""
        return {n: node_reference_names(node) for n, node in self.workflow.graph.items()}


@dataclass(frozen=True)
class RunPlan:
    """A validated document compiled for one workflow and the sub-workflows it reaches."""

    document: WorkflowDocument
    workflow_id: str
    workflows: Mapping[str, WorkflowPlan]

    @property
    def root(self) -> WorkflowPlan:
        """The workflow a run of this plan starts."""
        return self.workflows[self.workflow_id]

    def of(self, workflow_id: str) -> WorkflowPlan:
        """The plan of a reachable workflow."""
        return self.workflows[workflow_id]

    @property
    def base_url(self) -> str | None:
        """The document's base URL (for ``rest_call`` without one)."""
        return self.document.base_url

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The run's parameters checked against the root workflow's, with defaults applied.

        This is :func:`~dynamic_tools.engine.params.check_values`, the one check of a run's
        parameters; production runs it before a plan exists (``prepare_run``, a draft's run,
        a session document's tool), this is the same check where a plan is at hand. Raises
        :class:`~dynamic_tools.errors.InvalidInputError` naming each bad field.
        """
        return check_values(self.root.workflow.params, params)


def compile_plan(
    document: WorkflowDocument | LoadedDocument,
    workflow_id: str,
    known_tools: Collection[str] | None = None,
    *,
    known_workflows: Collection[str] = (),
    report: ValidationReport | None = None,
) -> RunPlan:
    """Validate ``document`` (unless its ``report`` is given) and compile ``workflow_id``.

    ``known_tools`` None skips the unknown-tool check (a recorded run replayed after a tool was
    removed still runs, and fails at that call). Raises :class:`NotFoundError` for an unknown
    workflow and :class:`PlanRefused` when the report has errors in ``workflow_id``, in a
    sub-workflow it reaches or in the document itself; an error in a workflow it never reaches
    does not stop it (:func:`blocking_errors`).
    """
    model = document.document if isinstance(document, LoadedDocument) else document
    if workflow_id not in model.workflows:
        raise NotFoundError(
            f"workflow '{workflow_id}' does not exist",
            context={"workflow_id": workflow_id, "defined": sorted(model.workflows)},
        )
    if report is None:
        report = validate_document(
            document, known_tools=known_tools, known_workflows=known_workflows
        )
    blocking = blocking_errors(report.errors, model, workflow_id)
    if blocking:
        raise PlanRefused(workflow_id, blocking)
    plans: dict[str, WorkflowPlan] = {}
    pending = [workflow_id]
    while pending:
        current = pending.pop()
        if current in plans or current not in model.workflows:
            continue  # a sub-workflow of another document is resolved by the caller
        workflow = model.workflows[current]
        plan = WorkflowPlan(current, workflow, WorkflowGraph(workflow), tuple(workflow.graph))
        plans[current] = plan
        pending.extend(sorted(plan.sub_workflows))
    return RunPlan(document=model, workflow_id=workflow_id, workflows=plans)


def workflow_of_path(path: str) -> str | None:
    """The workflow a violation's ``path`` is in (``workflows.<id>...``); None: the document."""
    parts = path.split(".", 2)
    return parts[1] if len(parts) > 1 and parts[0] == "workflows" else None


def reachable_workflows(document: WorkflowDocument, workflow_id: str) -> list[str]:
    """``workflow_id`` and the workflows of ``document`` it calls, directly or not, in order.

    Sub-workflows the document does not define are left out (another document's, or none).
    """
    found: dict[str, None] = {}
    pending = [workflow_id]
    while pending:
        current = pending.pop(0)
        if current in found or current not in document.workflows:
            continue
        found[current] = None
        pending.extend(sorted(sub_workflows(document.workflows[current].graph.values())))
    return list(found)


def blocking_errors(
    errors: list[Violation], document: WorkflowDocument, workflow_id: str
) -> list[Violation]:
    """The errors that stop a run of ``workflow_id``.

    Its own, those of the sub-workflows it reaches, and the document's (not in any workflow);
    another workflow's errors do not.
    """
    reached = set(reachable_workflows(document, workflow_id))
    return [e for e in errors if (w := workflow_of_path(e.path)) is None or w in reached]
