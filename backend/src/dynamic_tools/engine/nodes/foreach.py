"""The ``foreach`` node: run ``step`` once per item; its output is the results in item order.

``items`` is an expression (or a literal list); ``as`` names the item inside the step;
``max_iterations`` is required by validation (a bound on the items); ``concurrency`` caps how
many items run at once. The first failed item fails the node (or hands over to the step's
``on_error.fallback``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field, field_validator

from dynamic_tools.engine.children import ChildSpec
from dynamic_tools.engine.node_parts import IDENTIFIER, NodeBase
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
from dynamic_tools.engine.nodes.steps import STEP_TAGS, StepNode, step_kind, step_with_kind
from dynamic_tools.engine.state import FallbackTriggered, RunFailed
from dynamic_tools.engine.xml_reading import ReadNode, error, required

if TYPE_CHECKING:
    from dynamic_tools.engine.plan import RunPlan


class ForeachNode(NodeBase):
    """Run ``step`` once per item; the output is the list of results in item order."""

    kind: Literal["foreach"] = Field(alias="type")
    items: Any
    as_: str = Field(default="item", alias="as", pattern=IDENTIFIER)
    step: StepNode
    output: str | None = Field(default=None, pattern=IDENTIFIER)
    max_iterations: int | None = Field(default=None, ge=1, le=10_000)
    concurrency: int | None = Field(default=None, ge=1, le=256)

    @field_validator("step", mode="before")
    @classmethod
    def _infer_kind(cls, value: Any) -> Any:
        return step_with_kind(value)


class ForeachKind(Kind[ForeachNode]):
    """Runs its step once per item, as children."""

    name = "foreach"
    model = ForeachNode
    written_as = "type: foreach"

    no_arazzo_equivalent = (
        "a foreach node has no Arazzo equivalent and is left out: an Arazzo step runs once"
    )
    xml_tags = ("foreach",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        data: dict[str, Any] = {**attrs, "type": "foreach"}
        for child in element:
            if child.tag == "output":
                data["output"] = required(child, "name", here)
            elif child.tag in STEP_TAGS:
                data["step"] = read_node(child, here)
            else:
                raise error(here, "xml_element", f"unexpected <{child.tag}> in <foreach>")
        return data

    def steps(self, node: ForeachNode) -> list[tuple[Path, Any]]:
        return [(("step",), node.step)]

    def outputs(self, node: ForeachNode) -> list[tuple[str, Path]]:
        return [(node.output, ("output",))] if node.output else []

    def reference_sources(self, node: ForeachNode, here: Path) -> list[ReferenceSource]:
        local = frozenset({node.as_})
        return [
            ReferenceSource(source.value, source.path, source.local | local)
            for source in step_kind(node.step).reference_sources(node.step, (*here, "step"))
        ]

    def tools(self, node: ForeachNode) -> list[str]:
        return step_kind(node.step).tools(node.step)

    def undo_tools(self, node: ForeachNode) -> list[str]:
        return step_kind(node.step).undo_tools(node.step)

    def calls(self, node: ForeachNode) -> list[CallSite]:
        return step_kind(node.step).calls(node.step)

    def reuse_refusal(self, node: ForeachNode, plan: RunPlan) -> str | None:
        if self.undo_tools(node):
            return "its items registered compensations, which a redrive cannot register again"
        return None

    def reuse(self, node: ForeachNode, at: NodeAt, output: Any, run: RunServices) -> NodeOutcome:
        at.scope.set_output(node.output, output)
        return NodeOutcome(output=output)

    def check(self, node: ForeachNode, checks: NodeChecks) -> None:
        here = checks.here
        step_kind(node.step).check_step(node.step, checks, (*here, "step"))
        if node.max_iterations is None:
            checks.add(
                here,
                "unbounded_foreach",
                f"foreach '{checks.node_id}' needs max_iterations (a bound on its items)",
                expected="max_iterations: <n>",
            )
        if isinstance(node.items, str):
            checks.expression((*here, "items"), node.items)
        if node.as_ in checks.params or node.as_ in checks.graph.output_names():
            checks.add(
                (*here, "as"),
                "name_clash",
                f"foreach variable '{node.as_}' hides a parameter or output",
                actual=node.as_,
            )

    def child_step(self, node: ForeachNode, spec: ChildSpec) -> Any:
        return node.step

    async def execute(self, node: ForeachNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        full_id, scope = at.full_id, at.scope
        items = (
            run.evaluate(node.items, scope, full_id)
            if isinstance(node.items, str)
            else run.render(node.items, scope, full_id)
        )
        if not isinstance(items, list):
            raise RunFailed(
                f"foreach '{full_id}' items must be a list, got {type(items).__name__}",
                node_id=full_id,
            )
        bound = node.max_iterations or 0
        if len(items) > bound:
            raise RunFailed(
                f"foreach '{full_id}' has {len(items)} items, more than max_iterations {bound}",
                node_id=full_id,
            )
        await run.set_input(full_id, {"items": items})
        children = [
            ChildSpec(
                id=f"{run.run_id}/{full_id}/{i}",
                child_id=f"{full_id}/{i}",
                workflow_id=at.workflow.workflow_id,
                node_id=at.node_id,
                prefix=f"{full_id}/{i}/",
                scope=scope.with_local(node.as_, item),
                seq_base=run.child_seq_base(i),
                iteration=i,
            )
            for i, item in enumerate(items)
        ]
        outcomes = await run.gather(
            f"foreach:{full_id}",
            children,
            concurrency=node.concurrency,
            fail_fast=True,
            repeatable=step_kind(node.step).repeatable(node.step),
        )
        values = [run.absorb_child(o.value) for o in outcomes]
        failed = [(i, o.error) for i, o in enumerate(outcomes) if not o.ok]
        if failed:
            index, error = failed[0]
            fallback = node.step.on_error.fallback if node.step.on_error else None
            message = f"foreach '{full_id}' item {index} failed: {error}"
            if fallback:
                raise FallbackTriggered(message, fallback)
            raise RunFailed(message, node_id=full_id)
        scope.set_output(node.output, values)
        return NodeOutcome(output=values)

    def label(self, node_id: str, node: ForeachNode) -> str:
        return f"foreach {node.as_}: {step_kind(node.step).label(node_id, node.step)}"

    def details(self, node: ForeachNode) -> dict[str, Any]:
        return {
            "items": node.items,
            "as": node.as_,
            "step": step_kind(node.step).step_details(node.step),
            "output": node.output,
            "max_iterations": node.max_iterations,
            "concurrency": node.concurrency,
        }


KIND = ForeachKind()

__all__ = ["KIND", "ForeachKind", "ForeachNode"]
