"""The ``workflow`` node: run another workflow of the document as one step.

Its ``args`` are checked against the sub-workflow's params; the sub-workflow's nodes run
under the ids ``<node>/<child node>``; its result becomes this node's output. When it fails,
an ``on_error.fallback`` hands over to another node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field

from dynamic_tools.engine.node_parts import (
    IDENTIFIER,
    NamedOutputs,
    NodeBase,
    OnError,
)
from dynamic_tools.engine.nodes.kind import (
    ArazzoSteps,
    CallSite,
    NodeChecks,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.nodes.step_kind import StepKind
from dynamic_tools.engine.params import check_values
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import FallbackTriggered, RunFailed
from dynamic_tools.engine.xml_reading import ReadNode, step_io
from dynamic_tools.errors import InvalidInputError

if TYPE_CHECKING:
    from dynamic_tools.engine.plan import RunPlan

MAX_WORKFLOW_DEPTH = 16
"""How deep sub-workflows may nest (a workflow calling one that calls another is 2 deep).

The validator refuses deeper documents (rule ``workflow_depth``); each level is a nested run
of the interpreter, so the bound keeps a run far from Python's recursion limit.
"""
_MAX_PREFIX_LEVELS = 3 * MAX_WORKFLOW_DEPTH  # a level inside a foreach item is 3 in its id


class WorkflowNode(NodeBase):
    """Run another workflow of the document; its result becomes this node's output."""

    kind: Literal["workflow"] = Field(default="workflow", alias="type")
    workflow: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    output: str | None = Field(default=None, pattern=IDENTIFIER)
    on_error: OnError | None = None
    outputs: NamedOutputs = Field(
        default=None,
        description="Named values taken from the sub-workflow's result ($result); when "
        "given they are the node's output instead of the result.",
    )


class WorkflowKind(StepKind[WorkflowNode]):
    """Runs a sub-workflow."""

    name = "workflow"
    model = WorkflowNode
    written_as = "workflow: book_flight"
    shorthand = "workflow"

    xml_tags = ("subworkflow",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        return {**attrs, "type": "workflow", **step_io(element, here)}

    def reference_sources(self, node: WorkflowNode, here: Path) -> list[ReferenceSource]:
        sources = [ReferenceSource(node.args, (*here, "args"))]
        if node.outputs:
            sources.append(ReferenceSource(node.outputs, (*here, "outputs"), frozenset({"result"})))
        return sources

    def calls(self, node: WorkflowNode) -> list[CallSite]:
        return [CallSite(workflow=node.workflow, args=node.args)]

    def check_step(self, node: WorkflowNode, checks: NodeChecks, here: Path) -> None:
        checks.sub_workflow((*here, "workflow"), node.workflow, node.args)

    async def run_step(
        self, node: WorkflowNode, full_id: str, prefix: str, scope: Scope, run: RunServices
    ) -> Any:
        args = run.render(node.args, scope, full_id)
        await run.set_input(full_id, args)
        child = run.plan.workflows.get(node.workflow)
        if child is None:
            raise RunFailed(f"sub-workflow '{node.workflow}' is not defined", node_id=full_id)
        if full_id.count("/") >= _MAX_PREFIX_LEVELS:  # only a plan that skipped validation
            raise RunFailed(
                f"too deep: sub-workflows nest past {MAX_WORKFLOW_DEPTH} levels at "
                f"'{node.workflow}'",
                node_id=full_id,
                context={"limit": MAX_WORKFLOW_DEPTH},
            )
        try:
            values = check_values(child.workflow.params, args, what=f"{full_id}.args")
        except InvalidInputError as exc:
            raise RunFailed(
                exc.message, node_id=full_id, context={"violations": exc.violations}
            ) from None
        try:
            result = await run.execute_workflow(child, Scope(params=values), f"{full_id}/")
        except RunFailed as failure:
            fallback = node.on_error.fallback if node.on_error else None
            if fallback:
                raise FallbackTriggered(failure.message, fallback) from None
            raise
        if node.outputs is None:
            return result
        return run.render(node.outputs, scope.with_local("result", result), full_id)

    def reuse_refusal(self, node: WorkflowNode, plan: RunPlan) -> str | None:
        from dynamic_tools.engine.nodes import kind_of  # the registry imports this module

        child = plan.workflows.get(node.workflow)
        steps = child.workflow.graph.values() if child else ()
        if any(kind_of(step).undo_tools(step) for step in steps):
            return "its steps registered compensations, which a redrive cannot register again"
        return None

    def arazzo_step(
        self, node_id: str, node: WorkflowNode, out: ArazzoSteps
    ) -> dict[str, Any] | None:
        """A ``workflowId`` step (the sub-workflow is exported beside it)."""
        step: dict[str, Any] = {"stepId": node_id, "workflowId": node.workflow}
        if node.args:
            step["parameters"] = [
                {"name": k, "value": out.value(v, node_id)} for k, v in node.args.items()
            ]
        if node.outputs:
            step["outputs"] = {
                k: out.value(v, node_id, answer={"result": "$outputs"})
                for k, v in node.outputs.items()
            }
        out.on_error(step, node_id, node.on_error)
        return step

    def label(self, node_id: str, node: WorkflowNode) -> str:
        return f"w_{node.workflow}"

    def step_details(self, node: WorkflowNode) -> dict[str, Any]:
        details: dict[str, Any] = {"workflow": node.workflow, "output": node.output}
        if node.outputs:
            details["outputs"] = sorted(node.outputs)
        return details


KIND = WorkflowKind()

__all__ = ["KIND", "MAX_WORKFLOW_DEPTH", "WorkflowKind", "WorkflowNode"]
