"""The ``parallel`` node: run its branches at once; each branch is a call or a sub-workflow.

``on_partial_failure`` says what a failed branch does: ``abort`` (default: stop the others and
fail), ``continue`` (the output lists the failures under ``_failed``), ``rollback_all`` (fail;
the saga undoes what succeeded), or the id of a compensate node, run at once before failing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field, field_validator

from dynamic_tools.engine.children import ChildSpec
from dynamic_tools.engine.node_parts import NodeBase
from dynamic_tools.engine.nodes.compensate import CompensateNode, run_undo_steps
from dynamic_tools.engine.nodes.kind import (
    CallSite,
    Kind,
    NodeAt,
    NodeChecks,
    NodeOutcome,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.nodes.steps import StepNode, step_kind, step_with_kind
from dynamic_tools.engine.state import RunFailed
from dynamic_tools.engine.xml_reading import ReadNode, required

if TYPE_CHECKING:
    from dynamic_tools.engine.plan import RunPlan

PARTIAL_FAILURE_KEYWORDS = frozenset({"abort", "continue", "rollback_all"})


class ParallelNode(NodeBase):
    """Run branches at once; each branch is a call or a sub-workflow."""

    kind: Literal["parallel"] = Field(alias="type")
    branches: dict[str, StepNode] = Field(min_length=1)
    on_partial_failure: str = "abort"
    concurrency: int | None = Field(default=None, ge=1, le=256)

    @field_validator("branches", mode="before")
    @classmethod
    def _list_form(cls, value: Any) -> Any:
        if isinstance(value, list):  # branches as a list of nodes with ids (docs/design-sources.md)
            out: dict[str, Any] = {}
            for index, item in enumerate(value):
                if not isinstance(item, dict) or "id" not in item:
                    raise ValueError(f"branch {index} needs an 'id' when branches is a list")
                out[str(item["id"])] = {k: v for k, v in item.items() if k != "id"}
            value = out
        if isinstance(value, dict):
            return {k: step_with_kind(v) for k, v in value.items()}
        return value


class ParallelKind(Kind[ParallelNode]):
    """Runs its branches as children, at once."""

    name = "parallel"
    model = ParallelNode
    written_as = "type: parallel"

    no_arazzo_equivalent = (
        "a parallel node has no Arazzo equivalent and is left out: Arazzo steps run one at a time"
    )
    xml_tags = ("parallel",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        branches = {required(c, "id", here): read_node(c, f"{here}.branches") for c in element}
        return {**attrs, "type": "parallel", "branches": branches}

    def steps(self, node: ParallelNode) -> list[tuple[Path, Any]]:
        return [(("branches", name), branch) for name, branch in node.branches.items()]

    def targets(self, node: ParallelNode, node_ids: Collection[str]) -> list[tuple[Path, str]]:
        target = node.on_partial_failure
        if target not in PARTIAL_FAILURE_KEYWORDS or target in node_ids:
            return [(("on_partial_failure",), target)]
        return []

    def may_be_skipped(self, node: ParallelNode) -> bool:
        return node.on_partial_failure == "continue"

    def reference_sources(self, node: ParallelNode, here: Path) -> list[ReferenceSource]:
        return [
            source
            for name, branch in node.branches.items()
            for source in step_kind(branch).reference_sources(branch, (*here, "branches", name))
        ]

    def tools(self, node: ParallelNode) -> list[str]:
        return [
            tool for branch in node.branches.values() for tool in step_kind(branch).tools(branch)
        ]

    def undo_tools(self, node: ParallelNode) -> list[str]:
        return [
            t for branch in node.branches.values() for t in step_kind(branch).undo_tools(branch)
        ]

    def calls(self, node: ParallelNode) -> list[CallSite]:
        return [c for branch in node.branches.values() for c in step_kind(branch).calls(branch)]

    def reuse_refusal(self, node: ParallelNode, plan: RunPlan) -> str | None:
        if self.undo_tools(node):
            return "its branches registered compensations, which a redrive cannot register again"
        return None

    def reuse(self, node: ParallelNode, at: NodeAt, output: Any, run: RunServices) -> NodeOutcome:
        if isinstance(output, dict):
            for name, value in output.items():
                if name in node.branches:
                    at.scope.set_output(node.branches[name].output, value)
        return NodeOutcome(output=output)

    def check(self, node: ParallelNode, checks: NodeChecks) -> None:
        for name, branch in node.branches.items():
            step_kind(branch).check_step(branch, checks, (*checks.here, "branches", name))
        target = node.on_partial_failure
        nodes = checks.graph.nodes
        if target in nodes and not isinstance(nodes[target], CompensateNode):
            checks.add(
                (*checks.here, "on_partial_failure"),
                "invalid_partial_failure_target",
                f"on_partial_failure names '{target}', which is a "
                f"{nodes[target].kind} node, not a compensate node",
                expected="abort, continue, rollback_all or a compensate node",
                actual=target,
            )

    def child_step(self, node: ParallelNode, spec: ChildSpec) -> Any:
        if spec.branch is None or spec.branch not in node.branches:
            raise RunFailed("not a branch of this parallel node", node_id=spec.child_id)
        return node.branches[spec.branch]

    async def execute(self, node: ParallelNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        full_id, scope = at.full_id, at.scope
        children = [
            ChildSpec(
                id=f"{run.run_id}/{full_id}/{name}",
                child_id=f"{full_id}/{name}",
                workflow_id=at.workflow.workflow_id,
                node_id=at.node_id,
                prefix=f"{full_id}/{name}/",
                scope=scope.copy(),
                seq_base=run.child_seq_base(index),
                branch=name,
            )
            for index, name in enumerate(node.branches)
        ]
        mode = node.on_partial_failure
        outcomes = await run.gather(
            f"parallel:{full_id}",
            children,
            concurrency=node.concurrency,
            fail_fast=mode == "abort",
            repeatable=all(step_kind(b).repeatable(b) for b in node.branches.values()),
        )
        results: dict[str, Any] = {}
        failures: dict[str, str] = {}
        for name, outcome in zip(node.branches, outcomes, strict=True):
            value = run.absorb_child(outcome.value)
            if outcome.ok:
                results[name] = value
                scope.set_output(node.branches[name].output, value)
            else:
                failures[name] = outcome.error or "failed"
        run.node_state(full_id).detail = {
            "branches": {n: ("failed" if n in failures else "succeeded") for n in node.branches}
        }
        if not failures:
            return NodeOutcome(output=results)
        if mode == "continue":
            return NodeOutcome(output={**results, "_failed": failures})
        message = f"parallel '{full_id}': " + "; ".join(
            f"{n} failed: {e}" for n, e in failures.items()
        )
        undo = at.workflow.workflow.graph.get(mode)
        if isinstance(undo, CompensateNode):
            target_id = at.prefix + mode
            target_state = run.node_state(target_id)
            target_state.started_at = run.now()
            target_state.output = await run_undo_steps(undo, target_id, scope, run)
            target_state.status, target_state.ended_at = "succeeded", run.now()
            raise RunFailed(
                message,
                node_id=full_id,
                context={"partial_results": results, "compensated_by": mode, "handled": True},
            )
        raise RunFailed(message, node_id=full_id, context={"partial_results": results})

    def label(self, node_id: str, node: ParallelNode) -> str:
        inner = " + ".join(step_kind(b).label(k, b) for k, b in node.branches.items())
        return f"parallel({inner})"

    def details(self, node: ParallelNode) -> dict[str, Any]:
        return {
            "branches": {
                name: step_kind(branch).step_details(branch)
                for name, branch in node.branches.items()
            },
            "on_partial_failure": node.on_partial_failure,
            "concurrency": node.concurrency,
        }

    def activation(self, node: ParallelNode, path: Path) -> dict[str, Any]:
        if path[0] == "on_partial_failure":
            return {"via": "on_partial_failure", "when": "a branch failed"}
        return super().activation(node, path)

    def failure_notes(
        self, node_id: str, node: ParallelNode, nodes: Mapping[str, Any]
    ) -> list[str]:
        if node.on_partial_failure != "abort":
            return [f"{node_id}: on a failed branch → {node.on_partial_failure}"]
        return []


KIND = ParallelKind()

__all__ = ["KIND", "PARTIAL_FAILURE_KEYWORDS", "ParallelKind", "ParallelNode"]
